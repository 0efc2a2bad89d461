#!/bin/bash
# env_reader.t — every command reads a deploy dir's .env through the one
# reader (deploy_env_read): the file as committed (a pending journal's .env,
# not the one it replaces) and refused with a position where it cannot be
# read whole (a NUL byte), the same way init and doctor refuse it.
. "${LOBES_SRC:-.}/tests/lib.sh"
unset LOBES_SYSROOT
export DOCKER_HOST=unix://$TMP/no-docker.sock
D=$TMP/deploy
"$LOBES" --dir "$D" init --profile spark --apply >/dev/null
ok $? "a spark deploy dir"

# A NUL byte: the rest of the line would be lost, so every reader refuses.
cp -a "$D" "$TMP/nul"
printf 'X=a\0b\n' >>"$TMP/nul/.env"
line=$(wc -l <"$TMP/nul/.env")
for c in status probe explain; do
	run "$LOBES" --dir "$TMP/nul" "$c"
	is "$rc" 3 "$c: a .env with a NUL byte is a config error"
	like "$errout" "\.env:$line:4: a NUL byte; expected text" "$c: named with its position"
done

# A commit killed after its commit point: readers see the committed state.
for n in $(seq 200); do
	rm -rf "$TMP/pending" && cp -a "$D" "$TMP/pending"
	LOBES_FAULT_AT=$n "$LOBES" --dir "$TMP/pending" init --profile thor --apply >/dev/null 2>&1
	[ -e "$TMP/pending/.lobes-journal" ] && break
done
ok "$([ -e "$TMP/pending/.lobes-journal" ]; echo $?)" "a kill can leave a committed journal behind"
grep -q '^LOBES_PROFILE=spark$' "$TMP/pending/.env"; ok $? "whose .env on disk is still the old (spark) one"
run "$LOBES" --dir "$TMP/pending" --json status
like "$out" '"profile": "thor"' "status reads the committed (thor) .env"
done_testing
