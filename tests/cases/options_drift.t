#!/bin/bash
# options_drift.t — every command's options agree in its `-h`, its man page
# entry (`lobes --man`), its row of README's command table and the getopt
# table of its src/cmd file (tools/check-options.py); and the check fails
# on each kind of drift planted in copies of those texts: an option dropped
# from -h, from the man page or from the code's knowledge of -h, an option a
# README row shows that -h does not, a command without a row, a row for no
# command.
. "${LOBES_SRC:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed for tools/check-options.py"
CHECK="$SRC/tools/check-options.py"

run "$CHECK" "$LOBES" "$SRC/README.md" "$SRC/src/cmd"
is "$out" "" "-h, the man page, README's table and the getopt tables agree"
is "$rc" 0 "… exit 0"

# Captured outputs, then one planted drift at a time.
C=$TMP/cap
mkdir -p "$C"
"$LOBES" --help >"$C/help.txt"
"$LOBES" --man >"$C/man.txt"
cmds=$(sed -n '/^commands:/,/^$/p' "$C/help.txt" | sed -n 's/^  \([a-z]*\) .*/\1/p')
for c in $cmds; do "$LOBES" "$c" -h >"$C/h-$c.txt"; done
ok "$(echo "$cmds" | grep -qx stop; echo $?)" "the commands are read from lobes --help"
cp "$SRC/README.md" "$TMP/README.md"
cp -r "$SRC/src/cmd" "$TMP/cmd"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
is "$rc" 0 "the captured outputs agree too"

cp "$C/h-stop.txt" "$TMP/h-stop.orig"
grep -v -- '--wait S' "$TMP/h-stop.orig" | sed 's/ \[--wait S\]//' >"$C/h-stop.txt"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
is "$rc" 1 "an option dropped from -h fails"
like "$out" "^stop: --wait is in the man page but not in -h" "… naming it against the man page"
like "$out" "^stop: .*stop.c accepts --wait, which -h does not print" "… and against the code"
cp "$TMP/h-stop.orig" "$C/h-stop.txt"

cp "$C/man.txt" "$TMP/man.orig"
sed -i 's/\\-\\-image\\-probe/--image-probe-gone/g; s/\[--image-probe\]//; s/\[\\-\\-image\\-probe\]//' "$C/man.txt"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
is "$rc" 1 "an option dropped from the man page fails"
like "$out" "^doctor: --image-probe is in -h but not in the man page" "… naming the command and the option"
cp "$TMP/man.orig" "$C/man.txt"

sed -i 's/^| `lobes stop \[--apply\]/| `lobes stop [--apply] [--bogus]/' "$TMP/README.md"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
is "$rc" 1 "an option a README row shows that -h does not print fails"
like "$out" "^stop: README's row shows --bogus, which -h does not print" "… naming it"
cp "$SRC/README.md" "$TMP/README.md"

grep -v '^| `lobes verify' "$SRC/README.md" >"$TMP/README.md"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
is "$rc" 1 "a command without a README row fails"
like "$out" "^verify: no row in README's command table" "… naming it"
awk '/^\| `lobes stop/ { print ""; } { print }' "$SRC/README.md" >"$TMP/README.md"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
like "$out" "^stop: no row in README's command table" "a row cut off the table by a blank line does not count"
cp "$SRC/README.md" "$TMP/README.md"
sed -i 's/^| `lobes stop \[--apply\]/| `lobes halt [--apply]/' "$TMP/README.md"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
like "$out" "^halt: README's command table has a row for it, but lobes has no such command" "a row for no command fails"
cp "$SRC/README.md" "$TMP/README.md"

sed -i 's/{ "wait", required_argument, NULL, .w. },/&\n\t{ "linger", required_argument, NULL, '"'"'L'"'"' },/' "$TMP/cmd/stop.c"
grep -q '"linger"' "$TMP/cmd/stop.c"
ok $? "(planted an option in a copy of stop.c)"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
is "$rc" 1 "an option the code accepts but -h does not print fails"
like "$out" "^stop: .*stop.c accepts --linger, which -h does not print" "… naming it"
sed -i 's/getopt_long(argc, argv, "", opts/getopt_long(argc, argv, "w:", opts/' "$TMP/cmd/stop.c"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
like "$out" "^stop: .*stop.c accepts -w, which -h does not print" "an undocumented short option fails too"
cp "$SRC/src/cmd/stop.c" "$TMP/cmd/stop.c"

sed -i 's/^  stop .*/&\n  halt       a command added to the table/' "$C/help.txt"
echo "usage: lobes halt [--now]" >"$C/h-halt.txt"
run "$CHECK" --captured "$C" "$TMP/README.md" "$TMP/cmd"
like "$out" "^halt: no entry in the man page" "a new command is checked as it appears: no man entry"
like "$out" "^halt: no row in README's command table" "… no README row"
like "$out" "^halt: no CMD\(halt\)" "… no code"

run "$CHECK"
is "$rc" 2 "no arguments: a usage error"
done_testing
