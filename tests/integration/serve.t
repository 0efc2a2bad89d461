#!/bin/bash
# serve.t — lobes serve / probe / status / stop against a real dockerd and
# the vLLM stand-in (a test double) pretending to be on a Thor (sm_110):
#  - the spark profile reproduces the 1-of-4 baseline (FACTS.md), and serve
#    stops at the crash-looping cortex with its cause, within the bound;
#  - the thor profile brings every feasible role up and every probe passes
#    (the reranker, served with its overrides, ranks right: no known
#    failure left); stop gives the memory back.
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
# j EXPR: a python expression over d, the JSON output (whole, or its last
# line when the output is event lines followed by a result line)
j() { printf '%s' "$out" | python3 -c "
import json,sys
t=sys.stdin.read()
try: d=json.loads(t)
except ValueError: d=json.loads(t.strip().splitlines()[-1])
v=$1; print(v if isinstance(v,str) else json.dumps(v))"; }

# deploy DIR PROFILE UTIL: init on a (fixture) Thor box, then point the
# fleet at the stand-in image and a test overlay that tells it its card.
deploy() {
	local d=$1 p=$2 util=$3 r
	env LOBES_SYSROOT="$HOSTS/thor" LOBES_NVIDIA_SMI="$HOSTS/thor/bin/nvidia-smi" \
		"$LOBES" --dir "$d" init --profile "$p" --apply >/dev/null || return 1
	sed -i "s|^\([A-Z]*\)_IMAGE=.*|\1_IMAGE=lobes-standin:test|; s|^LOBES_HF_CACHE=.*|LOBES_HF_CACHE=$HF|;
		s|^COMPOSE_FILE=.*|COMPOSE_FILE=docker-compose.yml:docker-compose.test.yml|;
		s|^COMPOSE_PROJECT_NAME=.*|COMPOSE_PROJECT_NAME=lobes-$p|" "$d/.env"
	[ -n "$util" ] && sed -i -E "s|^([A-Z]+)_GPU_MEM_UTIL=.*|\1_GPU_MEM_UTIL=$util|" "$d/.env"
	{
		echo "services:"
		for r in $(grep -oE '^  [a-z]+:$' "$d/docker-compose.yml" | tr -d ' :'); do
			printf '  %s:\n    environment:\n' "$r"
			printf '      STANDIN_CARD: thor\n      STANDIN_LOAD_MS: "400"\n'
			printf '      STANDIN_PROFILE_MS: "300"\n      STANDIN_WARMUP_MS: "300"\n'
			printf '      STANDIN_MEM_SCALE: "%s"\n' "${SCALE:-0.01}"
			printf '    ulimits:\n      memlock: %s\n' "$(docker_memlock)"
		done
	} > "$d/docker-compose.test.yml"
	docker_compose_project "lobes-$p" "$d/docker-compose.yml"
}
# Bounds far above an idle box's times (CI runs loaded): a bound is a
# deadline for a condition, never a timing assertion.
fast="--poll-ms 200 --window-wait $WAIT --ready-wait $WAIT --mem-wait $WAIT"

# --- the spark profile on a simulated Thor --------------------------------
S=$TMP/spark
deploy "$S" spark "" || { ok 1 "deploy spark"; done_testing; }
like "$(cat "$S/.env")" "CORTEX_KV_CACHE_DTYPE=fp8" "spark keeps fp8 for the cortex (no sm_110 trait in its list)"
run "$LOBES" --dir "$S" --json serve --apply --no-gateway $fast
is "$rc" 1 "serve of spark on a thor exits 1"
is "$(j '[r["outcome"] for r in d["roles"]][:2]')" '["failed", "not-started"]' "it stops at the cortex and starts nothing after it"
is "$(j 'd["roles"][0]["cause"]["signature"]')" fp8-k-scale-assert "the cause is the fp8 k_scale assert signature"
like "$(j 'd["roles"][0]["cause"]["trait"]')" "fp8-kv-needs-scales-on-triton" "naming the trait that fixes it"
like "$(j 'd["roles"][0]["cause"]["line"]')" "assert layer.k_scale > 0.0" "with the log line the cause came from"
# The line number points at that line in the log, wherever the tail is (a
# restart or stderr's traceback can push it out of the last lines).
is "$(j 'd["roles"][0]["log_tail_from"] + len(d["roles"][0]["log_tail"].split(chr(10))) - 1 == d["roles"][0]["log_lines"] and 1 <= d["roles"][0]["cause"]["line_no"] <= d["roles"][0]["log_lines"]')" true \
	"the cause line number and the tail's numbers are within the log"
ok "$([ -n "$(j 'd["roles"][0]["log_tail"]')" ]; echo $?)" "and the last log lines"
run "$LOBES" --dir "$S" serve --apply --no-gateway $fast
like "$out" "cortex: the engine (died|exited)" "text output names the failed role"
like "$out" "from log line [0-9]+: .*assert layer.k_scale > 0.0" "text output shows the cause's line with its number"
like "$out" "roles already up are left running" "and says what it left"
(cd "$S" && compose down -t 1 >/dev/null 2>&1)

# The baseline: everything started at once (tiny memory, so no race), then probes.
(cd "$S" && compose up -d >/dev/null 2>&1)
three_up() {
	local port
	for port in 8002 8004 8005; do curl -fs --max-time 10 -o /dev/null "http://127.0.0.1:$port/health" || return 1; done
}
wait_for "$WAIT" three_up; ok $? "senses, embedder and reranker answer /health"
run "$LOBES" --dir "$S" --json probe --timeout 30 cortex senses embedder reranker
is "$rc" 1 "the spark fleet on a thor fails its probes"
# a role is correct when every probe of it passes (its known answer, and the
# tool-call and reasoning-split probes where it is rendered with parsers)
correct='sorted({r["role"] for r in d["probes"]} - {r["role"] for r in d["probes"] if r["status"] != "pass"})'
is "$(j "len($correct)")" 1 "exactly 1 of 4 roles is correct (the FACTS.md baseline)"
is "$(j "$correct")" '["senses"]' "the one that works is senses"
(cd "$S" && compose down -t 1 >/dev/null 2>&1)

# --- the thor profile ------------------------------------------------------
T=$TMP/thor
SCALE=1 deploy "$T" thor 0.03 || { ok 1 "deploy thor"; done_testing; }
like "$(cat "$T/.env")" "CORTEX_KV_CACHE_DTYPE=auto" "thor resolves kv auto for the cortex (trait 3)"
run "$LOBES" --dir "$T" serve
like "$out" "dry run: nothing started" "serve without --apply only prints the plan"
run "$LOBES" --dir "$T" --json serve --apply --no-gateway $fast
is "$rc" 0 "serve brings the thor fleet up"
is "$(j '[r["outcome"] for r in d["roles"]]')" '["ready", "ready", "ready", "ready"]' "every feasible role is ready (hand is not rendered)"
is "$(j 'all(d["roles"][i]["start_ms"] >= d["roles"][i-1]["window_ms"] for i in range(1, len(d["roles"])))')" true \
	"each role started after the previous one's memory window closed"
run "$LOBES" --dir "$T" --json probe --timeout 30
is "$rc" 0 "probes pass on the thor fleet"
is "$(j '[r["role"] + ":" + r["probe"] for r in d["probes"] if r["status"] != "pass"]')" '[]' "every probe passes, none a known failure"
is "$(j '{r["role"]: r["status"] for r in d["probes"] if r["probe"] == "rerank-order"}["reranker"]')" pass "the reranker's ordering passes"
run "$LOBES" --dir "$T" status
is "$rc" 0 "status: every feasible role running"
before=$(awk '/MemFree/ {print $2}' /proc/meminfo)
run "$LOBES" --dir "$T" --json stop --apply --wait "$WAIT"
is "$rc" 0 "stop exits 0"
is "$(j 'd["memory_back"]')" true "stop waited until the fleet's memory came back"
run "$LOBES" --dir "$T" status
is "$rc" 1 "status after stop: roles are not running"
done_testing
