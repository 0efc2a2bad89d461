#!/bin/bash
# verify_mtp.t — `lobes verify mtp-acceptance` against a real dockerd with
# the vLLM stand-in (a test double) as the cortex of a simulated GB10, whose
# profile (spark) runs it with MTP: the cortex is rebooted with MTP off (the
# compose file rendered without --speculative-config), then with the
# operator's MTP, through the memory gate; each run benched at concurrency
# 1, its spec-decode counters read from /metrics and its task answers
# asked; then everything is put back. The stand-in divides its token
# spacing by 1+k*A with MTP (k=2, A=0.7: 2.4x), so the speed-up is
# unmistakable: "helps"; with STANDIN_MTP_DRIFT=1 (a fault: MTP changes
# every answer) "answers changed". Each time: the operator's .env and
# compose file byte for byte, the cortex back on MTP, the senses never
# touched, an evidence record of mode 0600 holding both runs.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/integration/docker.sh"
docker_start
docker_build_standin || { ok 1 "build the stand-in image"; done_testing; }
D=$TMP/gb10
. "$SRC/tests/integration/experiment_lib.sh"
MTP='{"method": "mtp", "num_speculative_tokens": 2}'
xp_init lobes-mtp
grep -qxF "CORTEX_SPECULATIVE_CONFIG=$MTP" "$D/.env"; ok $? "the spark cortex runs MTP (2 speculative tokens)"
# overlay DRIFT: the stand-in's token spacing and the MTP fault
overlay() { xp_overlay 'STANDIN_TOKEN_MS: "20"' "STANDIN_MTP_DRIFT: \"$1\""; }
overlay 0
xp_up "with MTP"
SENSES=$(cid senses)
cp "$D/.env" "$TMP/env.orig"
cp "$D/docker-compose.yml" "$TMP/compose.orig"
cp "$D/.lobes-state.json" "$TMP/state.orig"
ls "$D" >"$TMP/ls.orig"

# verify_once DRIFT ROUTE: one experiment, its decision and what it leaves
verify_once() {
	local drift=$1 route=$2 ev
	overlay "$drift"
	onbox --dir "$D" --json verify --max-tasks 8 --requests 4 --boot-wait "$WAIT" --timeout 60 mtp-acceptance
	is "$rc" 0 "drift $drift: verify mtp-acceptance decides"
	is "$(j 'd["decision"]["route"]')" "$route" "drift $drift: route $route"
	cmp -s "$D/.env" "$TMP/env.orig"
	ok $? "drift $drift: the operator's .env is back byte for byte"
	cmp -s "$D/docker-compose.yml" "$TMP/compose.orig"
	ok $? "… and the compose file"
	cmp -s "$D/.lobes-state.json" "$TMP/state.orig"
	ok $? "… and the state file was not touched"
	is "$(ls "$D" | grep -v '^evidence$')" "$(cat "$TMP/ls.orig")" "… nor any file added (no backup)"
	is "$(j '[d["experiment"][k] for k in ("env_restored_byte_for_byte","files_restored_byte_for_byte")]')" \
		'[true, true]' "and the record says so"
	is "$(j 'd["experiment"]["files"]')" '[".env", "docker-compose.yml"]' "the trial changed .env and the compose file"
	is "$(j 'd["experiment"]["order"]')" "[\"none\", $(printf '%s' "$MTP" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')]" \
		"MTP off first (the setting it does not run), the operator's MTP last"
	is "$(j '[d["experiment"]["runs"][k]["speculative_config"] for k in ("off","on")]')" \
		"[\"none\", $(printf '%s' "$MTP" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')]" \
		"both runs, each with the setting it booted with"
	is "$(j '[d["experiment"]["runs"][k]["bench"]["completed"] for k in ("off","on")]')" '[4, 4]' \
		"each run benched (4 requests)"
	is "$(j 'd["experiment"]["runs"]["off"]["spec_decode"]')" null "MTP off: no spec-decode counters"
	# the stand-in's image is not recorded: the counters are read by the
	# names of the vLLM version the engine reports (its GET /version)
	is "$(j '[d["experiment"]["runs"][k]["metric_names"]["from"].split()[0] for k in ("off","on")]')" \
		'["version", "version"]' "both runs read the counters by the names of the engine's vLLM version"
	is "$(j 'd["decision"]["thresholds"]')" declared "the decision says its thresholds are declared"
	is "$(j 'len(d["experiment"]["runs"]["on"]["answers"]["tasks"]["answers"])')" 8 "each run's answers are in the record"
	acc=$(j 'd["experiment"]["comparison"]["acceptance_rate"]')
	ok $(python3 -c "import sys; sys.exit(0 if abs(float('$acc') - 0.7) < 0.01 else 1)"; echo $?) \
		"drift $drift: acceptance $acc from /metrics is the stand-in's 0.7"
	like "$(docker inspect -f '{{join .Args " "}}' "$(cid cortex)")" "--speculative-config=\{\"method\": \"mtp\"" \
		"the cortex runs the operator's MTP again"
	is "$(cid senses)" "$SENSES" "the senses was not touched (same container)"
	is "$(docker inspect -f '{{.State.Running}}' "$SENSES")" true "and still runs"
	ev=$(j 'd["evidence_files"][1]')
	is "$(stat -c %a "$ev" 2>/dev/null)" 600 "the evidence record is mode 0600"
	is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(d["experiment"]["runs"]), "image" in d, d["checkpoint"]["model"])' "$ev")" \
		"['off', 'on'] True unsloth/Qwen3.8-27B-NVFP4" "and holds both runs, the image and the checkpoint"
	like "$(cat "${ev%.json}.txt")" "TPOT speedup \(off/on\) [0-9.]+, output tok/s on/off [0-9.]+, acceptance 0\.[0-9]+" \
		"its text form has the comparison"
}
verify_once 0 helps
speed=$(j 'd["experiment"]["comparison"]["tpot_speedup"]')
ok $(python3 -c "import sys; sys.exit(0 if float('$speed') >= 1.15 else 1)"; echo $?) "drift 0: TPOT speed-up $speed (the stand-in's 2.4x, loosely)"
is "$(j 'd["experiment"]["comparison"]["tasks"]["agreement"]')" 1.0 "drift 0: every answer the same"
verify_once 1 answers-changed
is "$(j 'd["experiment"]["comparison"]["tasks"]["agreement"]')" 0.0 "drift 1: no answer the same"
like "$(j 'd["experiment"]["comparison"]["tasks"]["disagreements"][0]["b"]')" "^Perhaps " "the record shows the changed answer"

# no cortex to look at: could not verify, before anything is changed
(cd "$D" && compose down -t 1 >/dev/null 2>&1)
onbox --dir "$D" verify --max-tasks 2 mtp-acceptance
is "$rc" 4 "no cortex container: could not verify (exit 4)"
cmp -s "$D/.env" "$TMP/env.orig" && cmp -s "$D/docker-compose.yml" "$TMP/compose.orig"
ok $? "and .env and the compose file are untouched"
done_testing
