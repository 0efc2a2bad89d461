#!/bin/bash
# verify_accuracy.t — `lobes verify fp8-kv-accuracy` against a real dockerd
# with the vLLM stand-in (a test double) as the cortex of a simulated GB10
# (fp8 KV boots there; the checkpoint ships no KV scales): the cortex is
# rebooted with auto, then with the operator's fp8, through the memory
# gate, compared with eval, and everything is put back. With
# STANDIN_FP8_NOISE=0 the fp8 run is identical (no measurable loss); with a
# large noise the KL divergence routes to a loss. Each time: the operator's
# .env byte for byte, the cortex back on fp8, the senses never touched, an
# evidence record of mode 0600 holding both runs.
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

D=$TMP/gb10
onbox --dir "$D" init --profile spark --apply
is "$rc" 0 "init the spark profile"
sed -i "s|^\([A-Z]*\)_IMAGE=.*|\1_IMAGE=lobes-standin:test|; s|^LOBES_HF_CACHE=.*|LOBES_HF_CACHE=$HF|;
	s|^COMPOSE_FILE=.*|COMPOSE_FILE=docker-compose.yml:docker-compose.test.yml|;
	s|^COMPOSE_PROJECT_NAME=.*|COMPOSE_PROJECT_NAME=lobes-accuracy|" "$D/.env"
# the operator's own bytes: a comment and a line without a final newline
printf '# the operator was here\nMY_NOTE="keep me"' >>"$D/.env"
# overlay NOISE: the stand-in's card, its speed and the fp8 noise it models
overlay() {
	{
		echo "services:"
		for r in cortex senses; do
			printf '  %s:\n    environment:\n' "$r"
			printf '      STANDIN_CARD: spark\n      STANDIN_MEM_SCALE: "0.01"\n'
			printf '      STANDIN_LOAD_MS: "200"\n      STANDIN_PROFILE_MS: "200"\n      STANDIN_WARMUP_MS: "100"\n'
			printf '      STANDIN_FP8_NOISE: "%s"\n' "$1"
			printf '    ulimits:\n      memlock: %s\n' "$(docker_memlock)"
		done
	} >"$D/docker-compose.test.yml"
}
overlay 0
docker_compose_project lobes-accuracy "$D/docker-compose.yml"
(cd "$D" && compose up -d cortex senses >/dev/null 2>&1)
_has_log() { (cd "$D" && compose logs --no-color "$1" 2>/dev/null) | grep -qF "$2"; }
wait_for "$WAIT" _has_log cortex "Application startup complete."; ok $? "the cortex boots with fp8 KV"
wait_for "$WAIT" _has_log senses "Application startup complete."; ok $? "the senses boots"
cid() { (cd "$D" && compose ps -q "$1" 2>/dev/null); }
SENSES=$(cid senses)
cp "$D/.env" "$TMP/env.orig"

# verify_once NOISE ROUTE: one experiment, its decision and what it leaves
verify_once() {
	local noise=$1 route=$2 ev
	overlay "$noise"
	onbox --dir "$D" --json verify --max-tasks 8 --boot-wait "$WAIT" --timeout 60 fp8-kv-accuracy
	is "$rc" 0 "noise $noise: verify fp8-kv-accuracy decides"
	is "$(j 'd["decision"]["route"]')" "$route" "noise $noise: route $route"
	cmp -s "$D/.env" "$TMP/env.orig"
	ok $? "noise $noise: the operator's .env is back byte for byte"
	is "$(j 'd["experiment"]["env_restored_byte_for_byte"]')" true "and the record says so"
	is "$(j 'd["experiment"]["order"]')" '["auto", "fp8"]' "the setting it does not run first, the operator's fp8 last"
	is "$(j '[d["experiment"]["runs"][k]["kv_cache_dtype"] for k in ("auto","fp8")]')" '["auto", "fp8"]' \
		"both runs, each with the setting it booted with"
	is "$(j 'len(d["experiment"]["runs"]["fp8"]["answers"])')" 8 "each run's answers are in the record"
	is "$(j 'd["checkpoint"]["kv_scales"]')" absent "the record says the checkpoint ships no KV scales"
	like "$(j 'd["image"]["id"]')" "^sha256:" "and names the image"
	like "$(docker inspect -f '{{join .Args " "}}' "$(cid cortex)")" "--kv-cache-dtype=fp8" \
		"the cortex runs the operator's fp8 again"
	is "$(cid senses)" "$SENSES" "the senses was not touched (same container)"
	is "$(docker inspect -f '{{.State.Running}}' "$SENSES")" true "and still runs"
	ev=$(j 'd["evidence_files"][1]')
	is "$(stat -c %a "$ev" 2>/dev/null)" 600 "the evidence record is mode 0600"
	is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(d["experiment"]["runs"]))' "$ev")" \
		"['auto', 'fp8']" "and holds both runs"
	like "$(cat "${ev%.json}.txt")" "KLD\(auto\|\|fp8\) mean" "its text form has the comparison"
}
verify_once 0 no-measurable-loss
is "$(j 'd["experiment"]["comparison"]["logprobs"]["kld_mean"] == 0')" true "noise 0: KLD 0"
verify_once 1.0 loss-distribution
kld=$(j 'd["experiment"]["comparison"]["logprobs"]["kld_mean"]')
ok $(python3 -c "import sys; sys.exit(0 if float('$kld') > 0.02 else 1)"; echo $?) "noise 1.0: mean KLD $kld above the loss threshold"

# no cortex to look at: could not verify, before anything is changed
(cd "$D" && compose down -t 1 >/dev/null 2>&1)
onbox --dir "$D" verify --max-tasks 2 fp8-kv-accuracy
is "$rc" 4 "no cortex container: could not verify (exit 4)"
cmp -s "$D/.env" "$TMP/env.orig"
ok $? "and .env is untouched"
done_testing
