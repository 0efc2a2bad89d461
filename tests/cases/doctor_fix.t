#!/bin/bash
# doctor_fix.t — `lobes doctor --fix [--apply]` on a deploy dir rendered by
# `lobes init --apply` for a fixture box: each finding with one safe fix
# (a missing compose file, a missing unit, a missing .env key, a
# placeholder and an empty value, an unregistered VLLM_* name, a stale
# .lobes-journal) is healed by --fix --apply and a second doctor no longer
# reports it; the operator's lines that are not findings survive byte for
# byte; the dry run changes no file (checksums); the --json shape; the
# findings without a safe fix are left and listed; usage errors.
. "${LOBES_SRC:-.}/tests/lib.sh"
HOSTS=$SRC/tests/fixtures/hosts
export LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1
export HF_HUB_CACHE=$SRC/tests/fixtures/checkpoints/noscales/hub
export PATH="$SRC/tests/fixtures/doctor/bin:$PATH" FAKE_DOCKER_NVIDIA=1
export FAKE_ENV_LIST=$SRC/tests/fixtures/doctor/image-env.txt FAKE_DOCKER_LOG=$TMP/docker.log
unset LOBES_SYSROOT HF_HOME LOBES_DIR LOBES_DOCKER LOBES_COMPOSE LOBES_FAULT_AT
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"

on() { run env LOBES_SYSROOT="$HOSTS/gb10" LOBES_NVIDIA_SMI="$HOSTS/gb10/bin/nvidia-smi" "$LOBES" "$@"; }
# q PY: evaluate a Python expression over the --json in $out as d
q() { printf '%s' "$out" | python3 -c 'import json,sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
# findings NAME: "id:severity:fix" of the warnings and errors of doctor about NAME
findings() { on --json --dir "$D" doctor; q "','.join(c['id']+':'+c['severity']+':'+c.get('fix','') for c in d['checks'] if c.get('name') == '$1' and c['severity'] in ('warning', 'error'))"; }
sums() { (cd "$D" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

FRESH=$TMP/fresh
on --dir "$FRESH" init --apply
is "$rc" 0 "init renders the fleet"
D=$TMP/d
reset_dir() { rm -rf "$D" && cp -a "$FRESH" "$D"; }

# --- a missing compose file and a missing unit: written as rendered --------
for f in docker-compose.gpu.yml lobes-gateway@.service; do
	reset_dir
	rm "$D/$f"
	is "$(findings "$f")" "deploy-dir:$([ "$f" = docker-compose.gpu.yml ] && echo error || echo warning):write-file" \
		"$f missing: a deploy-dir finding with the write-file fix"
	on --dir "$D" doctor --fix --apply
	is "$rc" 0 "$f: --fix --apply exits 0"
	like "$out" "^fix deploy-dir $f: write '$f' as \`lobes init\` renders it now" "$f: the fix is named"
	cmp -s "$FRESH/$f" "$D/$f"; ok $? "$f: written byte for byte as init renders it"
	cmp -s "$FRESH/.env" "$D/.env"; ok $? "$f: .env untouched"
	is "$(findings "$f")" "" "$f: a second doctor no longer reports it"
done

# --- a missing .env key: appended with its rendered value ------------------
reset_dir
grep -v '^HAND_PORT=' "$FRESH/.env" >"$D/.env"
printf '# my own note\nLOBES_HF_CACHE_NOTE="a b # c"\n' >>"$D/.env"
is "$(findings HAND_PORT)" "deploy-dir:warning:add-key" "a deleted key: a deploy-dir finding with the add-key fix"
cp "$D/.env" "$TMP/env.before"
on --dir "$D" doctor --fix --apply
is "$rc" 0 "missing key: --fix --apply exits 0"
is "$(tail -n 1 "$D/.env")" "HAND_PORT=8003" "the key is appended with the value lobes renders"
is "$(head -n -1 "$D/.env" | sha256sum)" "$(sha256sum <"$TMP/env.before")" "every other byte of .env is kept, the operator's lines too"
is "$(findings HAND_PORT)" "" "a second doctor no longer reports the key"
ok "$([ "$(stat -c %a "$D/.env")" = 600 ]; echo $?)" ".env stays mode 0600"
ls "$D"/.env.bak.* >/dev/null 2>&1; ok $? "the replaced .env is kept as .env.bak.N"

# --- a placeholder and an empty value: lobes' value on the named line ------
reset_dir
sed -i 's/^CORTEX_MAX_MODEL_LEN=.*/CORTEX_MAX_MODEL_LEN=none/; s/^SENSES_TOOL_CALL_PARSER=.*/SENSES_TOOL_CALL_PARSER=/' "$D/.env"
sed -i 's/^HAND_MAX_NUM_SEQS=.*/HAND_MAX_NUM_SEQS=3  # mine/' "$D/.env"
on --json --dir "$D" doctor
is "$(q "[c['severity']+':'+c.get('fix','')+':'+str(c.get('line')) for c in d['checks'] if c['id'] == 'placeholder' and c.get('name') == 'CORTEX_MAX_MODEL_LEN']")" \
	"['error:set-value:$(grep -n '^CORTEX_MAX_MODEL_LEN=' "$D/.env" | cut -d: -f1)']" "a placeholder: an error naming its line, with the set-value fix"
is "$(q "[c.get('fix') for c in d['checks'] if c.get('name') == 'SENSES_TOOL_CALL_PARSER']")" "['set-value']" "an empty value: the set-value fix"
is "$(q "[c.get('fix') for c in d['checks'] if c.get('name') == 'HAND_MAX_NUM_SEQS']")" "[None]" "an operator's valid edit not in effect: no fix offered"
cp "$D/.env" "$TMP/env.before"
sums >"$TMP/sums.before"
on --json --dir "$D" doctor --fix
is "$rc" 0 "the dry run exits 0"
sums >"$TMP/sums.after"
cmp -s "$TMP/sums.before" "$TMP/sums.after"; ok $? "the dry run changes no file of the deploy dir (checksums)"
is "$(q "d['applied']")" False "--json: applied is false on a dry run"
is "$(q "sorted(d.keys())")" "['applied', 'diff', 'dir', 'fixes', 'unfixed']" "--json: the result's keys"
is "$(q "sorted(d['fixes'][0].keys())")" "['action', 'after', 'before', 'file', 'finding', 'line', 'what']" "--json: a fix's keys"
is "$(q "sorted((f['finding']['id'], f['finding']['name'], f['action'], f['after']) for f in d['fixes'])")" \
	"[('placeholder', 'CORTEX_MAX_MODEL_LEN', 'set-value', 'CORTEX_MAX_MODEL_LEN=131072'), ('placeholder', 'SENSES_TOOL_CALL_PARSER', 'set-value', 'SENSES_TOOL_CALL_PARSER=gemma4')]" \
	"--json: each fix with the finding id it heals and the line it writes"
is "$(q "[f['before'] for f in d['fixes'] if f['finding']['name'] == 'CORTEX_MAX_MODEL_LEN']")" "['CORTEX_MAX_MODEL_LEN=none']" "--json: the line as it was"
like "$(q "d['diff']")" "^-CORTEX_MAX_MODEL_LEN=none" "--json: the diff"
like "$(q "[u['id'] for u in d['unfixed']]")" "placeholder" "--json: the finding without a safe fix is listed as unfixed"
on --dir "$D" doctor --fix --apply
is "$rc" 0 "placeholder: --fix --apply exits 0"
grep -q '^CORTEX_MAX_MODEL_LEN=131072$' "$D/.env"; ok $? "the placeholder line holds the rendered value"
grep -q '^SENSES_TOOL_CALL_PARSER=gemma4$' "$D/.env"; ok $? "the empty value holds the family's parser"
grep -q '^HAND_MAX_NUM_SEQS=3  # mine$' "$D/.env"; ok $? "the operator's edit that is no finding survives byte for byte"
is "$(diff "$TMP/env.before" "$D/.env" | grep -c '^[<>]')" 4 "only the two named lines changed"
on --json --dir "$D" doctor
is "$(q "[c['severity'] for c in d['checks'] if c.get('name') in ('CORTEX_MAX_MODEL_LEN', 'SENSES_TOOL_CALL_PARSER')]")" "[]" \
	"a second doctor reports neither"

# --- an unregistered VLLM_* name: commented out, not deleted ----------------
reset_dir
printf 'VLLM_NOT_A_REAL_NAME=1\n' >>"$D/.env"
is "$(findings VLLM_NOT_A_REAL_NAME)" "env-registry:warning:comment-out" "an unregistered name in .env: the comment-out fix"
on --dir "$D" doctor --fix --apply
is "$rc" 0 "unregistered name: --fix --apply exits 0"
is "$(tail -n 2 "$D/.env")" "# lobes doctor --fix: VLLM_NOT_A_REAL_NAME is not registered in the vLLM of the image
#VLLM_NOT_A_REAL_NAME=1" "the line is commented out with a note, not deleted"
is "$(head -n -2 "$D/.env" | sha256sum)" "$(sha256sum <"$FRESH/.env")" "the rest of .env is unchanged"
is "$(findings VLLM_NOT_A_REAL_NAME)" "" "a second doctor no longer reports it"

# --- a stale journal: finished --------------------------------------------
for n in $(seq 200); do
	reset_dir
	LOBES_FAULT_AT=$n LOBES_SYSROOT="$HOSTS/gb10" LOBES_NVIDIA_SMI="$HOSTS/gb10/bin/nvidia-smi" \
		"$LOBES" --dir "$D" init --profile thor --apply >/dev/null 2>&1
	[ -e "$D/.lobes-journal" ] && break
done
ok "$([ -e "$D/.lobes-journal" ]; echo $?)" "a killed commit leaves a journal behind"
is "$(findings .lobes-journal)" "deploy-dir:warning:finish-commit" "a stale journal: the finish-commit fix"
sums >"$TMP/sums.before"
on --dir "$D" doctor --fix
like "$out" "^fix deploy-dir .lobes-journal: finish the interrupted commit" "the dry run names it"
sums >"$TMP/sums.after"
cmp -s "$TMP/sums.before" "$TMP/sums.after"; ok $? "the dry run leaves the journal and the files as they are"
on --dir "$D" doctor --fix --apply
is "$rc" 0 "journal: --fix --apply exits 0"
ok "$([ ! -e "$D/.lobes-journal" ]; echo $?)" "the journal is gone"
grep -q '^LOBES_PROFILE=thor$' "$D/.env"; ok $? "its commit is finished (the thor .env is in place)"
is "$(findings .lobes-journal)" "" "a second doctor no longer reports it"

# --- nothing to fix; usage ---------------------------------------------------
reset_dir
sums >"$TMP/sums.before"
on --dir "$D" doctor --fix --apply
is "$rc" 0 "a healthy dir: --fix --apply exits 0"
like "$out" "nothing doctor --fix can heal safely" "… and says there is nothing to heal"
sums >"$TMP/sums.after"
cmp -s "$TMP/sums.before" "$TMP/sums.after"; ok $? "… and writes nothing"
on --dir "$D" doctor --apply
is "$rc" 2 "--apply without --fix is a usage error"
on --dir "$D" doctor --fix --kubernetes "$TMP/k8s"
is "$rc" 2 "--fix with --kubernetes is a usage error"
done_testing
