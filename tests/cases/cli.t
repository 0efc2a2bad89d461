#!/bin/bash
# cli.t — the command skeleton: help, usage errors, exit codes, version.
. "${LOBES_SRC:-.}/tests/lib.sh"
run "$LOBES" --help
is "$rc" 0 "--help exits 0"
like "$out" "exit codes:" "--help documents exit codes"
run "$LOBES"
is "$rc" 2 "no command is a usage error"
run "$LOBES" no-such-verb
is "$rc" 2 "unknown command exits 2"
like "$errout" "'no-such-verb' is not a command" "unknown command is named"
run "$LOBES" --version
like "$out" "^lobes [0-9]+\.[0-9]+\.[0-9]+" "--version prints a version"
run "$LOBES" --json --version
like "$out" '"version"' "--version --json is JSON"
for v in $("$LOBES" --help | awk '/^commands:/{f=1;next} /^$/{f=0} f{print $1}'); do
	run "$LOBES" "$v" -h
	is "$rc" 0 "$v -h exits 0"
	like "$out" "^usage: lobes $v" "$v -h prints its synopsis"
done
run "$LOBES" --dir
is "$rc" 2 "--dir without a value is a usage error"
run "$LOBES" --man
like "$out" '^\.TH LOBES 1' "--man prints a man page"
is "$out" "$(cat "$SRC/docs/lobes.1")" "docs/lobes.1 is the man page of this binary (make man)"
done_testing
