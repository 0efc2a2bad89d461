#!/bin/bash
# switch.t — `lobes switch ROLE MODEL --apply` against a real dockerd with
# the vLLM stand-in (a test double) as the cortex and senses of a
# simulated GB10: switching the cortex to another cached checkpoint
# restarts only the cortex (the senses keeps its container and its start
# time), through the memory gate, and the new checkpoint answers its
# probes (the tool-call probe included); a switch to a checkpoint whose
# boot fails (the stand-in's STANDIN_FAIL_MODEL) rolls back: .env and the
# compose files byte for byte, the old checkpoint serving again, exit 1
# naming the cause triage read in the boot log. Progress on stderr.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/integration/docker.sh"
HOSTS=$SRC/tests/fixtures/hosts
HF=$SRC/tests/fixtures/hf
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"
docker_start
docker_build_standin || { ok 1 "build the stand-in image"; done_testing; }
unset LOBES_SYSROOT
export HF_HUB_CACHE=$HF/hub LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1
j() { printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); v=$1; print(v if isinstance(v,str) else json.dumps(v))"; }
onbox() { run env LOBES_SYSROOT="$HOSTS/gb10" LOBES_NVIDIA_SMI="$HOSTS/gb10/bin/nvidia-smi" "$LOBES" "$@"; }
GOOD=Qwen/Qwen3.5-4B
FAILING=coolthor/gemma-4-12B-it-NVFP4A16

D=$TMP/gb10
onbox --dir "$D" init --profile spark --apply
is "$rc" 0 "init the spark profile"
sed -i "s|^\([A-Z]*\)_IMAGE=.*|\1_IMAGE=lobes-standin:test|; s|^LOBES_HF_CACHE=.*|LOBES_HF_CACHE=$HF|;
	s|^COMPOSE_FILE=.*|COMPOSE_FILE=docker-compose.yml:docker-compose.test.yml|;
	s|^COMPOSE_PROJECT_NAME=.*|COMPOSE_PROJECT_NAME=lobes-switch|;
	s|^CORTEX_PORT=.*|CORTEX_PORT=8311|; s|^SENSES_PORT=.*|SENSES_PORT=8312|" "$D/.env"
printf '# the operator was here\nMY_NOTE="keep me"\n' >>"$D/.env"
{
	echo "services:"
	for r in cortex senses; do
		printf '  %s:\n    environment:\n' "$r"
		printf '      STANDIN_CARD: spark\n      STANDIN_MEM_SCALE: "0.01"\n      STANDIN_DEVICE_BYTES: 8G\n'
		printf '      STANDIN_LOAD_MS: "200"\n      STANDIN_PROFILE_MS: "200"\n      STANDIN_WARMUP_MS: "100"\n'
		[ "$r" = cortex ] && printf '      STANDIN_FAIL_MODEL: %s\n' "$FAILING"
		printf '    ulimits:\n      memlock: %s\n' "$(docker_memlock)"
	done
} >"$D/docker-compose.test.yml"
docker_compose_project lobes-switch "$D/docker-compose.yml"
(cd "$D" && compose up -d cortex senses >/dev/null 2>&1)
_has_log() { (cd "$D" && compose logs --no-color "$1" 2>/dev/null) | grep -qF "$2"; }
wait_for "$WAIT" _has_log cortex "Application startup complete."; ok $? "the cortex boots"
wait_for "$WAIT" _has_log senses "Application startup complete."; ok $? "the senses boots"
cid() { (cd "$D" && compose ps -q "$1" 2>/dev/null); }
started() { docker inspect -f '{{.State.StartedAt}}' "$1"; }
args() { docker inspect -f '{{join .Args " "}}' "$(cid cortex)"; }
SENSES=$(cid senses)
SENSES_AT=$(started "$SENSES")
CORTEX=$(cid cortex)
like "$(args)" "unsloth/Qwen3.8-27B-NVFP4" "the cortex serves the profile's checkpoint"

# --- a switch that boots: only the cortex changes ---------------------------
onbox --dir "$D" --json switch cortex "$GOOD" --apply --boot-wait "$WAIT"
is "$rc" 0 "switch cortex $GOOD --apply exits 0"
is "$(j 'd["restarted"]')" true "--json: restarted"
is "$(j 'd["boot"]["ok"]')" true "--json: the boot is ok"
is "$(j 'sorted(p["probe"] + ":" + p["status"] for p in d["probes"]["probes"])')" \
	'["chat-capital:pass", "reasoning-split:pass", "tool-call:pass"]' "the new checkpoint answers its probes, tool-call included"
like "$errout" "lobes switch: cortex \[new checkpoint\]: start" "progress on stderr while it boots"
like "$errout" "lobes switch: cortex: ready; asking its probes" "… and when it asks the probes"
like "$(args)" "$GOOD" "the cortex container runs the new checkpoint"
ok "$([ "$(cid cortex)" != "$CORTEX" ]; echo $?)" "the cortex is a new container"
is "$(cid senses)" "$SENSES" "the senses keeps its container id"
is "$(started "$SENSES")" "$SENSES_AT" "… and its start time (not restarted)"
grep -qx "CORTEX_MODEL=$GOOD" "$D/.env"; ok $? ".env names the new checkpoint"
tail -n 2 "$D/.env" | grep -qx 'MY_NOTE="keep me"'; ok $? "the operator's own lines are kept"
run "$LOBES" --dir "$D" --json probe --timeout 60 cortex
is "$rc" 0 "lobes probe cortex passes afterwards"

# --- a switch whose boot fails: rolled back ----------------------------------
cp "$D/.env" "$TMP/env.before"
cp "$D/docker-compose.yml" "$TMP/compose.before"
onbox --dir "$D" --json switch cortex "$FAILING" --apply --boot-wait "$WAIT"
is "$rc" 1 "a switch whose boot fails exits 1"
like "$errout" "switching cortex to '$FAILING' failed: memory profiling left nothing for the KV cache" "naming the cause triage read"
like "$errout" "rolled back: .env and the compose files are as they were, and $GOOD serves again" "… and the rollback"
like "$errout" "rolling back to $GOOD" "progress says it rolls back"
is "$(j 'd["rolled_back"]')" true "--json: rolled_back"
is "$(j 'd["boot"]["cause"]["signature"]')" no-cache-blocks "--json: the triaged signature of the failed boot"
is "$(j 'd["rollback_boot"]["ok"]')" true "--json: the old checkpoint booted again"
cmp -s "$D/.env" "$TMP/env.before"; ok $? "the old .env byte for byte"
cmp -s "$D/docker-compose.yml" "$TMP/compose.before"; ok $? "the old compose file byte for byte"
like "$(args)" "$GOOD" "the cortex serves the old checkpoint again"
is "$(docker inspect -f '{{.State.Running}}' "$(cid cortex)")" true "… and runs"
run "$LOBES" --dir "$D" --json probe --timeout 60 cortex
is "$rc" 0 "… and passes its probes"
is "$(cid senses)" "$SENSES" "the senses was never touched"
is "$(started "$SENSES")" "$SENSES_AT" "… not even restarted"
done_testing
