#!/bin/bash
# init.t — lobes init: dry-run changes nothing, --apply is atomic and
# idempotent, operator edits survive, secrets never print, bad input writes
# nothing, and a deploy dir of today's render stays valid (the .env contract).
. "${LOBES_SRC:-.}/tests/lib.sh"
sum() { (cd "$1" 2>/dev/null && find . -type f -print0 | sort -z | xargs -0 sha256sum 2>/dev/null); }
D="$TMP/deploy"
unset LOBES_SYSROOT

# Dry run on a fresh dir: profile and why, a diff, nothing written.
run "$LOBES" --dir "$D" init
is "$rc" 0 "dry run exits 0"
like "$out" "^card: unknown" "dry run names the card (unknown here)"
like "$out" "profile: base \(unvalidated\)" "the unknown card gets the base profile"
like "$out" "warning: no known card matched this machine" "with a warning"
like "$out" "facts: gpu_name=unknown compute_cap=unknown" "naming the detected facts"
like "$out" "\+\+\+ b/docker-compose.yml" "a diff of the files it would write"
like "$out" "dry run: nothing written" "says nothing was written"
ok "$([ ! -e "$D" ]; echo $?)" "dry run creates nothing"

# Forced profile on a card it was not validated for: a warning, then proceed.
run "$LOBES" --dir "$D" init --profile thor
like "$out" "profile: thor \(validated\), forced, unvalidated for this card" "forced profile flagged"
like "$out" "warning: profile 'thor' is for card 'thor'; this card is unknown; proceeding as asked" "and warned"

# Apply.
run "$LOBES" --dir "$D" init --profile thor --apply
is "$rc" 0 "--apply exits 0"
like "$out" "wrote $D/.env" "--apply says what it wrote"
is "$(stat -c %a "$D/.env")" 600 ".env is mode 0600"
is "$(stat -c %a "$D/.lobes-state.json")" 600 "state file is mode 0600"
like "$(cat "$D/.env")" "LOBES_PROFILE=thor" "the forced profile is rendered"
like "$(cat "$D/.env")" "LOBES_CARD=unknown" "with the card as detected, not as the profile assumes"
# the gateway's systemd unit: a template whose instance is the deploy dir
U="$D/lobes-gateway@.service"
like "$out" "wrote $U" "--apply writes the gateway's systemd unit"
is "$(stat -c %a "$U")" 644 "the unit is mode 0644 (it holds no secret)"
like "$(cat "$U")" $'\nExecStart=lobes --dir %f gateway\n' "it runs lobes gateway on the instance's deploy dir"
like "$(cat "$U")" $'\nExecReload=/bin/kill -HUP \\$MAINPID\n' "reload is the gateway's SIGHUP"
if command -v systemd-analyze >/dev/null && command -v systemd-escape >/dev/null; then
	# systemd's own check, on the instance for this dir (lobes named by its
	# path: the test binary is not on systemd's search path)
	mkdir -p "$TMP/unit"
	sed "s|^ExecStart=lobes |ExecStart=$LOBES |" "$U" >"$TMP/unit/lobes-gateway@.service"
	inst="lobes-gateway@$(systemd-escape --path "$D").service"
	ln -s lobes-gateway@.service "$TMP/unit/$inst"
	v=$(systemd-analyze verify --man=no "$TMP/unit/$inst" 2>&1)
	is "$?:$v" "0:" "systemd-analyze verify accepts the unit, without a warning"
else
	ok 0 "# SKIP systemd-analyze is not installed"
fi
before=$(sum "$D")
run "$LOBES" --dir "$D" init --apply
like "$out" "is up to date: nothing to write" "a second --apply is a no-op (profile sticks)"
like "$out" "from the deploy dir" "and says the profile came from the deploy dir"
is "$(sum "$D")" "$before" "the second --apply changes no byte"
ok "$(ls "$D" | grep -q bak; [ $? = 1 ]; echo $?)" "and makes no backup"

# Operator edits are kept, secrets are never printed.
sed -i 's/^CORTEX_GPU_MEM_UTIL=.*/CORTEX_GPU_MEM_UTIL=0.25/; s/^SENSES_ATTENTION_BACKEND=.*/SENSES_ATTENTION_BACKEND=FLASHINFER/' "$D/.env"
echo "HF_TOKEN=hf_SECRETvalue123" >> "$D/.env"
run "$LOBES" --dir "$D" init
like "$out" "CORTEX_GPU_MEM_UTIL=0.25 \(lobes would write 0.30\)" "dry run names the kept edit"
like "$out" "HF_TOKEN=<hidden> \(yours only\)" "an added secret is kept and masked"
unlike "$out$errout" "hf_SECRETvalue123" "the secret value is never printed"
run "$LOBES" --json --dir "$D" init
unlike "$out" "hf_SECRETvalue123" "nor in --json"
like "$("$LOBES" --dir "$D" render --check "$D")" "CORTEX_GPU_MEM_UTIL" "the edit differs from the pure render"
run "$LOBES" --dir "$D" init --apply
like "$(cat "$D/.env")" "CORTEX_GPU_MEM_UTIL=0.25" "--apply keeps the edited value"
like "$(cat "$D/.env")" "HF_TOKEN=hf_SECRETvalue123" "--apply keeps the operator's secret"
like "$(cat "$D/docker-compose.yml")" "'--attention-config=\{\"backend\": \"FLASHINFER\"\}'" "an edited knob re-renders the compose around it (written literally, checked by init)"
run "$LOBES" --dir "$D" explain senses
like "$out" "<- override at .env:[0-9]+ SENSES_ATTENTION_BACKEND \(operator edit\)" "explain names the operator override"
run "$LOBES" --dir "$D" init --apply
like "$out" "up to date" "applying again with the edits is a no-op"

# --reset drops an edit; the replaced file is kept as .bak.N.
cp "$D/.env" "$TMP/env.before"
run "$LOBES" --dir "$D" init --apply --reset CORTEX_GPU_MEM_UTIL
like "$out" "reset: CORTEX_GPU_MEM_UTIL" "--reset is reported"
like "$(cat "$D/.env")" "CORTEX_GPU_MEM_UTIL=0.30" "--reset restores the lobes value"
bak=$(ls "$D" -a | grep '^\.env\.bak\.' | sort -t. -k4 -n | tail -1)
like "$out" "previous kept as $D/$bak" "init names the backup"
ok "$(cmp -s "$D/$bak" "$TMP/env.before"; echo $?)" "the replaced .env is kept as .env.bak.N"
is "$(stat -c %a "$D/$bak")" 600 "the .env backup keeps mode 0600"

# The operator's comment lines are data: kept in place across --apply.
sed -i 's/^CORTEX_GPU_MEM_UTIL=.*/# lowered for the demo box (ticket 42)\n\n#   ask before raising\nCORTEX_GPU_MEM_UTIL=0.26/' "$D/.env"
printf '# end of my notes\n' >>"$D/.env"
run "$LOBES" --dir "$D" init --apply
is "$rc" 0 "--apply over a .env with the operator's comments"
like "$(cat "$D/.env")" $'\n# lowered for the demo box \\(ticket 42\\)\n\n#   ask before raising\nCORTEX_GPU_MEM_UTIL=0.26\n' \
	"the comment block stays before the key it annotates, its blank line inside it kept"
is "$(tail -n 1 "$D/.env")" "# end of my notes" "a comment after the last key stays at the end"
is "$(grep -c '^# lowered for the demo box' "$D/.env")" 1 "once"
cp "$D/.env" "$TMP/env.commented"
run "$LOBES" --dir "$D" init --apply
like "$out" "up to date" "applying again is a no-op"
ok "$(cmp -s "$D/.env" "$TMP/env.commented"; echo $?)" "the commented .env round-trips byte for byte"

# Invalid operator values and malformed .env: clear error, nothing written.
before=$(sum "$D")
sed -i 's/^CORTEX_MAX_MODEL_LEN=.*/CORTEX_MAX_MODEL_LEN=-5/' "$D/.env"
before=$(sum "$D")
run "$LOBES" --dir "$D" init --apply
is "$rc" 3 "an invalid edited value is a config error"
like "$errout" "\.env:[0-9]+:[0-9]+: CORTEX_MAX_MODEL_LEN=-5 is not valid; expected a positive integer" "with file:line:col and what was expected"
is "$(sum "$D")" "$before" "and nothing is written"
printf 'this is not an assignment\n' >> "$D/.env"
before=$(sum "$D")
run "$LOBES" --dir "$D" init --apply
is "$rc" 3 "a malformed .env line is a config error"
like "$errout" "\.env:[0-9]+:1: 'this is not an assignment' is not an assignment; expected KEY=VALUE" "named with its position"
is "$(sum "$D")" "$before" "and nothing is written"

# Killed mid-apply: every file is the old or the new one, never torn.
K="$TMP/kill"
"$LOBES" --dir "$K" init --profile spark --apply >/dev/null
cp -r "$K" "$TMP/kill.old"
LOBES_FAULT_AFTER_TEMP=1 "$LOBES" --dir "$K" init --profile thor --apply >/dev/null 2>&1
is "$?" 99 "the fault hook killed init mid-apply"
"$LOBES" render --profile thor --out "$TMP/kill.new" >/dev/null
for f in docker-compose.yml docker-compose.gpu.yml .env; do
	if cmp -s "$K/$f" "$TMP/kill.old/$f" || cmp -s "$K/$f" "$TMP/kill.new/$f"; then r=0; else r=1; fi
	ok $r "$f is either the old or the new file after a kill"
done
run "$LOBES" --dir "$K" init --profile thor --apply
is "$rc" 0 "a later init completes after the kill"

# Bad deploy dirs and profile names: clear error, nothing written.
touch "$TMP/afile"
run "$LOBES" --dir "$TMP/afile" init --apply
is "$rc" 3 "a file where the deploy dir should be is a config error"
like "$errout" "is a file; expected a directory" "and says so"
run "$LOBES" --dir "$TMP/afile/sub" init --apply
is "$rc" 3 "a file in the deploy dir's path is a config error"
ok "$([ -f "$TMP/afile" ] && [ ! -s "$TMP/afile" ]; echo $?)" "the file is untouched"
run "$LOBES" --dir /proc/lobes-deploy init --apply
is "$rc" 3 "an unwritable deploy dir is a config error"
like "$errout" "deploy dir" "naming the deploy dir"
run "$LOBES" --dir "$TMP/new" init --profile ../../etc --apply
is "$rc" 3 "a profile name with .. is rejected"
ok "$([ ! -e "$TMP/new" ]; echo $?)" "and nothing is created"

# Upgrade contract: a deploy dir written today must read the same tomorrow.
F="$SRC/tests/fixtures/deploy/v0.1.0-spark"
cp -r "$F" "$TMP/old" && chmod 600 "$TMP/old/.env"
before=$(sum "$TMP/old")
for c in "explain" "init" "render --check $TMP/old"; do
	"$LOBES" --dir "$TMP/old" $c >/dev/null 2>&1
done
is "$(sum "$TMP/old")" "$before" "read-only commands and a dry-run init change zero bytes of an old deploy dir"
run "$LOBES" --dir "$TMP/old" init
unlike "$out" "operator (key|override) kept" "today's init of the v0.1.0 fixture takes none of its keys for an operator's (no renamed key)"
like "$out" "^-LOBES_IMAGE=vllm/vllm-openai@sha256:7c5a10e9$" "the v0.1.0 digest prefix is dropped"
like "$out" "^\+CORTEX_IMAGE=vllm/vllm-openai@sha256:[0-9a-f]{64}$" "… for a full digest per role"
expected_keys=$(cat "$SRC/tests/fixtures/deploy/env-keys.txt")
got_keys=$(for p in spark thor base orin orin-nano-super; do grep -v '^#' "$SRC/tests/goldens/$p/.env" | grep = | cut -d= -f1; done | sort -u)
is "$got_keys" "$expected_keys" "tripwire: the .env key names are exactly the contract list (tests/fixtures/deploy/env-keys.txt)"
done_testing
