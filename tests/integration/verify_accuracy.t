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
docker_start
docker_build_standin || { ok 1 "build the stand-in image"; done_testing; }
D=$TMP/gb10
. "$SRC/tests/integration/experiment_lib.sh"
xp_init lobes-accuracy
# overlay NOISE: the fp8 noise the stand-in models
overlay() { xp_overlay "STANDIN_FP8_NOISE: \"$1\""; }
overlay 0
xp_up "with fp8 KV"
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
