#!/bin/bash
# gateway_status.t — GET /status: each role's state (ready, down,
# infeasible, proxied), ready, port and model; the box's memory as the
# memory gate reads it (MemAvailable, MemFree from /proc/meminfo under
# LOBES_SYSROOT), swap and iowait as the pressure policy reads them; the
# gateway's and each role's requests/s and tokens/s (from the engines'
# usage); keyless unless LOBES_GATEWAY_METRICS_AUTH=key. A stopped engine
# turns its role to down.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
gw_test_env
command -v python3 >/dev/null || skip_all "python3 is not installed"
CORTEX_ID=LiquidAI/LFM2.5-1.2B-Instruct
STANDIN_TOKEN_MS=50 standin_start cortex "$CORTEX_ID" --served-model-name cortex --gpu-memory-utilization 0.1 ||
	skip_all "the stand-in did not start"
P_CORTEX=$STANDIN_PORT
standin_start hand "$CORTEX_ID" --served-model-name hand --gpu-memory-utilization 0.1
P_HAND=$STANDIN_PORT
PID_HAND=$STANDIN_PID
# the image whose recorded metric names the gateway reads the cortex's /metrics by
IMAGE=$(sed -n 's/^ref: //p' "$SRC/data/images/vllm-0.26.1rc1.dev942.yaml")
FOLDER=$(sed -n 's/^registry: //p' "$SRC/data/images/vllm-0.26.1rc1.dev942.yaml")
D=$TMP/deploy
mkdir -p "$TMP/root/proc"
printf 'MemTotal: 131072000 kB\nMemFree: 1000000 kB\nMemAvailable: 64000000 kB\nSwapTotal: 1000 kB\nSwapFree: 250 kB\n' \
	>"$TMP/root/proc/meminfo"
printf 'cpu 100 0 100 800 0 0 0 0 0 0\n' >"$TMP/root/proc/stat"
env_file() { # [LINE...]: the fleet's .env, then each LINE
	gw_env "$D" "cortex:$P_CORTEX:$CORTEX_ID" "CORTEX_IMAGE=$IMAGE" senses:off "hand:$P_HAND:org/Hand-1B" \
		embedder:off reranker:off LOBES_GATEWAY_HEALTH_INTERVAL_MS=200 "$@"
}
env_file
LOBES_SYSROOT=$TMP/root gw_start "$D"
ok $? "the gateway starts"
both_ready() { gw GET /status; [[ "$body" == *'"role":"cortex","state":"ready"'* && "$body" == *'"role":"hand","state":"ready"'* ]]; }
gw_wait_for both_ready
ok $? "/status shows both engines ready"
is "$code" 200 "/status answers 200"
like "$hdrs" 'Content-Type: application/json' "as JSON"
# field FILTER: one value of the last /status body, through python
field() { printf '%s' "$body" | python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps($1))"; }
is "$(field 'd["box"]["mem_available_bytes"]')" $((64000000 * 1024)) "box: MemAvailable, in bytes"
is "$(field 'd["box"]["mem_free_bytes"]')" $((1000000 * 1024)) "box: MemFree, in bytes"
is "$(field 'd["box"]["mem_total_bytes"]')" $((131072000 * 1024)) "box: MemTotal"
is "$(field 'd["box"]["swap_used_pct"]')" 75.0 "box: swap used, as the pressure policy reads it"
is "$(field '[r["role"] for r in d["roles"]]')" '["cortex", "senses", "hand", "embedder", "reranker"]' "every role is listed"
is "$(field '[r["state"] for r in d["roles"]]')" '["ready", "infeasible", "ready", "infeasible", "infeasible"]' "each with its state"
is "$(field '[r["port"] for r in d["roles"]][:3]')" "[$P_CORTEX, null, $P_HAND]" "and its port"
is "$(field 'd["roles"][0]["model"]')" "\"$CORTEX_ID\"" "and its model"
is "$(field 'd["gateway"]["version"]')" "\"$("$LOBES" --version | sed 's/^lobes //')\"" "the gateway's version"
is "$(field 'd["gateway"]["requests_per_s"]')" null "no rate before a base sample"

# traffic, then the rates: requests and tokens per second over the window
Q='{"model":"cortex","messages":[{"role":"user","content":"hi"}],"max_tokens":4}'
sleep 1.1 # a base sample a second old: the rate needs two samples
for i in 1 2 3 4; do gw POST /v1/chat/completions "$Q"; done
gw GET /status
is "$(field 'd["gateway"]["requests_per_s"] > 0')" true "the gateway's requests/s is above 0 after traffic"
is "$(field 'd["roles"][0]["requests_per_s"] > 0 and d["roles"][0]["completion_tokens_per_s"] > 0')" true \
	"the cortex's requests/s and tokens/s (from usage) are above 0"
is "$(field 'd["roles"][2]["requests_per_s"]')" 0.0 "the hand had none"

# the engines' own figures, from their /metrics, agree with the stand-in's
engine_of() { curl -s --max-time 5 "http://127.0.0.1:$P_CORTEX/metrics" | sed -n "s/^$1{[^}]*} //p" | head -1; }
is "$(field 'd["roles"][2]["engine"]')" null "a role whose image is not in .env has no engine figures"
like "$(field 'd["roles"][2]["engine_error"]')" "no image in .env" "and says why"
# a stream held open until it is killed below: 20,000 tokens 50 ms apart
# (STANDIN_TOKEN_MS above), past any wait on a loaded box
SLOW='{"model":"cortex","stream":true,"max_tokens":20000,"ignore_eos":true,"prompt":"x"}'
curl -sN --max-time 3600 -d "$SLOW" "http://127.0.0.1:$GW_PORT/v1/completions" >/dev/null 2>&1 &
held=$!
running_one() { [ "$(engine_of vllm:num_requests_running)" = 1.0 ] || [ "$(engine_of vllm:num_requests_running)" = 1 ]; }
gw_wait_for running_one
ok $? "the stand-in reports one request running"
engine_running() { gw GET /status; [ "$(field 'd["roles"][0]["engine"] and d["roles"][0]["engine"]["running"]')" = 1.0 ]; }
gw_wait_for engine_running
ok $? "/status shows the cortex's engine running one request, as its /metrics says"
is "$(field 'd["roles"][0]["engine"]["waiting"]')" "$(engine_of vllm:num_requests_waiting | sed 's/^\([0-9]*\)$/\1.0/')" \
	"waiting agrees with the engine's /metrics"
is "$(field 'd["roles"][0]["engine"]["metric_names"]')" "\"$FOLDER\"" "read by the names recorded for its image (data/vllm/$FOLDER)"
kill "$held" 2>/dev/null
wait "$held" 2>/dev/null
# generation tokens/s: the engine counts a request's tokens when it ends, and
# the rate covers one poll interval, so a single stream shows a rate for a
# moment only (a loaded box polled past it). Short streams one after another
# keep the counter moving for as long as the check takes.
( while :; do curl -sN --max-time 60 -d '{"model":"cortex","stream":true,"max_tokens":8,"ignore_eos":true,"prompt":"x"}' \
	"http://127.0.0.1:$GW_PORT/v1/completions" >/dev/null 2>&1; done ) &
streams=$!
gen_rate() { gw GET /status; [ "$(field '(d["roles"][0]["engine"] or {}).get("generation_tokens_per_s") or 0')" != 0 ]; }
gw_wait_for gen_rate
ok $? "the engine's generation tokens/s is above 0 while it streams"
kill "$streams" 2>/dev/null
wait "$streams" 2>/dev/null

# a stopped engine: down
kill -TERM "$PID_HAND"
hand_down() { gw GET /status; [[ "$body" == *'"role":"hand","state":"down","ready":false'* ]]; }
gw_wait_for hand_down
ok $? "a stopped engine turns its role to down"
gw_stop_all

# the key setting
KEY=k-$RANDOM$RANDOM
gw_keyfile "$D/gateway.key" "$KEY"
gw_start "$D"
gw GET /status
is "$code" 200 "/status is keyless by default"
gw_stop_all
env_file LOBES_GATEWAY_METRICS_AUTH=key
gw_start "$D"
gw GET /status
is "$code" 401 "with LOBES_GATEWAY_METRICS_AUTH=key it needs the key"
GW_KEY=$KEY gw GET /status
is "$code" 200 "and answers with it"
gw GET /ui
is "$code" 200 "/ui (the page holds no data) stays keyless; it asks for the key"
gw_stop_all
done_testing
