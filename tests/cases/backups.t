#!/bin/bash
# backups.t — `init --apply` keeps the last N backups of each file it
# replaces (5, --keep-backups N, or LOBES_KEEP_BACKUPS in .env), numbered
# upwards, and removes temp files a killed run left (ours only).
. "${LOBES_SRC:-.}/tests/lib.sh"
unset LOBES_SYSROOT
D=$TMP/deploy
baks() { ls -a "$D" | grep "^$1\.bak\.[0-9]*$" | sed "s/^$1\.bak\.//" | sort -n | tr '\n' ' '; }

"$LOBES" --dir "$D" init --profile spark --apply >/dev/null
for i in 1 2 3 4 5 6 7 8; do
	if [ $((i % 2)) = 1 ]; then p=thor; else p=spark; fi
	"$LOBES" --dir "$D" init --profile $p --apply >/dev/null || break
done
is "$(baks .env)" "4 5 6 7 8 " "after 9 applies the last 5 .env backups are kept (the highest numbers)"
is "$(baks docker-compose.yml)" "4 5 6 7 8 " "and the last 5 of docker-compose.yml"
grep -q '^LOBES_PROFILE=thor$' "$D/.env.bak.8"; ok $? "the newest backup is the .env just replaced (thor)"

run "$LOBES" --dir "$D" init --profile thor --apply --keep-backups 2
is "$rc" 0 "--keep-backups 2"
is "$(baks .env)" "8 9 " "leaves the last 2"
run "$LOBES" --dir "$D" init --profile spark --apply --keep-backups x
is "$rc" 2 "--keep-backups needs a whole number"
like "$errout" "--keep-backups 'x' is not a whole number" "and says so"

printf 'LOBES_KEEP_BACKUPS=1\n' >>"$D/.env"
run "$LOBES" --dir "$D" init --profile spark --apply
is "$rc" 0 "LOBES_KEEP_BACKUPS in .env"
is "$(baks .env)" "10 " "keeps 1"
like "$(cat "$D/.env")" "LOBES_KEEP_BACKUPS=1" "and stays in .env as the operator's key"
sed -i 's/^LOBES_KEEP_BACKUPS=.*/LOBES_KEEP_BACKUPS=-3/' "$D/.env"
before=$(cd "$D" && find . -type f | sort | xargs sha256sum)
run "$LOBES" --dir "$D" init --profile thor --apply
is "$rc" 3 "an invalid LOBES_KEEP_BACKUPS is a config error"
like "$errout" "\.env:[0-9]+:20: LOBES_KEEP_BACKUPS=-3 is not valid; expected a whole number" "with its position"
is "$(cd "$D" && find . -type f | sort | xargs sha256sum)" "$before" "and nothing is written"
sed -i '/^LOBES_KEEP_BACKUPS=/d' "$D/.env"

# Temps a killed run left: ours (new and old naming) go, others stay.
touch "$D/.env.lobes-tmp-0123456789abcdef" "$D/docker-compose.yml.tmp.4242" "$D/notes.tmp.1" "$D/.x.lobes-tmp-short"
ln -s /etc/hostname "$D/.docker-compose.yml.lobes-tmp-fedcba9876543210"
run "$LOBES" --dir "$D" init --apply
is "$rc" 0 "the next apply runs"
is "$(ls -a "$D" | grep -E 'tmp' | tr '\n' ' ')" ".x.lobes-tmp-short notes.tmp.1 " "it removed the temps of its own naming, not the others"
ok "$([ -s /etc/hostname ] || [ ! -e /etc/hostname ]; echo $?)" "a planted link was removed, not followed"
# A dry run removes nothing.
touch "$D/.env.lobes-tmp-0123456789abcdef"
"$LOBES" --dir "$D" init >/dev/null
ok "$([ -e "$D/.env.lobes-tmp-0123456789abcdef" ]; echo $?)" "a dry run changes nothing"

# --keep-backups 0: no backup is kept, and none is claimed.
D0=$TMP/nobak
"$LOBES" --dir "$D0" init --profile spark --apply >/dev/null
run "$LOBES" --dir "$D0" init --profile thor --apply --keep-backups 0
is "$rc" 0 "--keep-backups 0"
like "$out" "wrote .*/\.env" "writes the changed files"
unlike "$out" "previous kept as" "and claims no backup"
is "$(ls -a "$D0" | grep -c '\.bak\.')" 0 "and keeps none"
run "$LOBES" --dir "$D0" --json init --profile spark --apply --keep-backups 0
like "$out" '"status": "changed"' "--json: files changed"
unlike "$out" '"backup": "' "and none names a backup"
done_testing
