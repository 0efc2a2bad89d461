#!/bin/bash
# gateway.t — the front door end to end on a real dockerd: the thor fleet
# (rendered by `lobes init` on a fixture Thor) runs as stand-in containers
# (a test double of vLLM), and `lobes serve --apply` starts `lobes gateway`
# as a background process after the engines; `lobes stop --apply` stops it
# (draining) before them. Through the gateway: every route, by role name,
# checkpoint id and alias; the infeasible hand's 404; a stopped engine's
# 503; 401 without the key; after `serve --apply` again (a SIGHUP reload)
# with new limits, 413 and 429; a client that goes away mid-stream (a stream
# of 20,000 tokens, 200 ms apart: only an abort ends it within the wait)
# shows as an aborted request in the engine container's log, stamped by
# Docker after the disconnect (the delay is printed, not asserted). The log collector: `serve --apply` starts it
# before the engines (pid DIR/collector.pid; the cortex's boot is kept under
# DIR/logs/cortex/), a second serve leaves it running, a serve after it was
# killed starts a new one, `stop --apply` stops it; status shows it. The
# gateway logs under DIR/logs/gateway/.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
. "$SRC/tests/integration/docker.sh"
. "$SRC/tests/integration/fleet_lib.sh"
PROJECT_PREFIX=lobes-gw
T=$TMP/thor
# the gateway and the log collector serve starts outlive serve: stop them
# (by their pid files) at exit
docker_test_cleanup() {
	local p
	p=$(cat "$T/gateway.pid" 2>/dev/null) && kill -KILL "$p" 2>/dev/null
	p=$(cat "$T/collector.pid" 2>/dev/null) && kill -KILL "$p" 2>/dev/null
	return 0
}
fast="--poll-ms 200 --window-wait $WAIT --ready-wait $WAIT --mem-wait $WAIT"

# streamed tokens 200 ms apart, so a stream is in flight long enough to act on
STANDIN_EXTRA_ENV=STANDIN_TOKEN_MS=200 deploy "$T" thor thor || { ok 1 "deploy thor"; done_testing; }
GWP=$(standin_free_port)
KEY=gw-$RANDOM$RANDOM$RANDOM
GW_PORT=$GWP GW_KEY=$KEY HTTP_MAX_TIME=30 # for gw (tests/gateway_lib.sh)
printf '%s\n' "$KEY" >"$T/gateway.key"
chmod 600 "$T/gateway.key"
cat >>"$T/.env" <<EOF
LOBES_GATEWAY_PORT=$GWP
LOBES_GATEWAY_HEALTH_INTERVAL_MS=300
EOF

# --- serve starts the gateway after the engines -------------------------------
run "$LOBES" --dir "$T" serve $fast
like "$out" "then start the gateway on http://127.0.0.1:$GWP \(log $T/logs/gateway/\)" \
	"serve's dry run says it will start the gateway, where, and its log"
like "$out" "first start the log collector" "and the log collector"
GL=$T/logs/gateway/000001.log
run "$LOBES" --dir "$T" --json serve --apply $fast
is "$rc" 0 "serve --apply brings the thor fleet and the gateway up"
if [ "$rc" != 0 ]; then
	printf '%s\n%s\n' "$out" "$errout" | sed 's/^/# /' | tail -n 30
	tail -n 20 "$GL" 2>/dev/null | sed 's/^/# gateway log: /'
	done_testing
fi
is "$(j 'd["gateway"]["action"]')" start "the result says the gateway was started"
is "$(j 'd["gateway"]["log"]')" "$GL" "its log is the first start's file under DIR/logs/gateway/"
is "$(j 'd["collector"]["action"]')" start "and the log collector was started"
COL_PID=$(j 'd["collector"]["pid"]')
is "$(cat "$T/collector.pid" 2>/dev/null)" "$COL_PID" "with the pid it wrote to DIR/collector.pid"
like "$(tr '\0' ' ' </proc/"$COL_PID"/cmdline)" "logs --collect --pid-file $T/collector.pid" "it runs as lobes logs --collect of this deploy dir"
GW_PID=$(j 'd["gateway"]["pid"]')
is "$(cat "$T/gateway.pid" 2>/dev/null)" "$GW_PID" "with the pid the gateway wrote to DIR/gateway.pid"
ok "$(kill -0 "$GW_PID" 2>/dev/null; echo $?)" "the gateway runs after serve exited"
is "$(stat -c %a "$GL")" 600 "its log is mode 0600"
has_log() { [ -s "$T/logs/cortex/000001.log" ]; }
wait_for "$WAIT" has_log
ok $? "the collector keeps the cortex's boot under DIR/logs/cortex/"
run "$LOBES" --dir "$T" logs cortex -n 5
is "$rc" 0 "lobes logs cortex reads it"
like "$(tr '\0' ' ' </proc/"$GW_PID"/cmdline)" "gateway --pid-file $T/gateway.pid" "it runs as lobes gateway of this deploy dir"
run "$LOBES" --dir "$T" --json status
is "$(j 'd["gateway"]["running"]'):$(j 'd["gateway"]["pid"]')" "true:$GW_PID" "status shows the gateway running, with its pid"
is "$(j 'd["collector"]["running"]'):$(j 'd["collector"]["pid"]')" "true:$COL_PID" "and the log collector, with its pid"
run "$LOBES" --dir "$T" status
like "$out" "gateway +127.0.0.1:$GWP running \(pid $GW_PID, started by lobes serve; log $GL\)" \
	"status's table says serve started it and where its log is"
like "$out" "logs +running \(pid $COL_PID;" "and that the log collector runs"

all_ready() {
	GW_KEY= gw GET /capabilities
	[ "$(jq -c '[.roles[] | select(.feasible) | .ready] | all' <<<"$body" 2>/dev/null)" = true ]
}
wait_for "$WAIT" all_ready
ok $? "/capabilities (keyless) shows every feasible role ready"

# --- routes --------------------------------------------------------------------
Q='"messages":[{"role":"user","content":"What is the capital of France?"}]'
CKPT=$(sed -n 's/^CORTEX_MODEL=//p' "$T/.env")
for m in cortex "$CKPT" chat; do
	gw POST /v1/chat/completions "{\"model\":\"$m\",$Q}"
	is "$code" 200 "chat by '$m' answers 200"
	is "$(jq -r .model <<<"$body")" cortex "answered by the cortex engine"
done
gw POST /v1/chat/completions "{$Q}"
is "$code:$(jq -r .model <<<"$body")" 200:cortex "chat without a model goes to the cortex"
gw POST /v1/completions '{"model":"cortex","prompt":"The capital of France is","max_tokens":8}'
is "$code" 200 "completions answer 200"
is "$(jq -r .object <<<"$body")" text_completion "as a text completion"
gw POST /v1/embeddings '{"model":"embed","input":"hello"}'
is "$code" 200 "embeddings by alias answer 200"
ok "$([ "$(jq '.data[0].embedding | length' <<<"$body")" -gt 0 ]; echo $?)" "with an embedding"
DOCS='"query":"What is the capital of France?","documents":["Paris is the capital of France.","Bananas are yellow."]'
for p in /v1/rerank /rerank /v2/rerank; do
	gw POST $p "{\"model\":\"reranker\",$DOCS}"
	is "$code:$(jq -r '.results[0].index' <<<"$body")" 200:0 "$p answers 200, Paris first"
done
gw POST /v1/score '{"model":"reranker","text_1":"What is the capital of France?","text_2":"Paris is the capital of France."}'
is "$code" 200 "score answers 200"
gw GET /v1/models
is "$code" 200 "/v1/models answers 200"
ids=$(jq -r '[.data[].id] | sort | join(" ")' <<<"$body")
for r in $(roles_of "$T"); do
	like " $ids " " $r " "/v1/models lists $r by role name"
	like " $ids " " $(sed -n "s/^$(upper "$r")_MODEL=//p" "$T/.env") " "and $r by its checkpoint id"
done
unlike " $ids " " hand " "/v1/models does not list the infeasible hand"
GW_KEY= gw GET /health
is "$code" 200 "/health answers without a key"
# an engine's own error is relayed as it is: status and body byte for byte
BAD='{"model":"cortex","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}'
gw POST /v1/chat/completions "$BAD"
PC=$(sed -n 's/^CORTEX_PORT=//p' "$T/.env")
direct=$(curl -s -o "$TMP/direct" -w '%{http_code}' -H 'Content-Type: application/json' -d "$BAD" \
	"http://127.0.0.1:$PC/v1/chat/completions")
is "$code" "$direct" "an engine's 400 comes through with its status"
ok "$(cmp -s "$TMP/.body" "$TMP/direct"; echo $?)" "and its body byte for byte"

# --- honesty and auth ------------------------------------------------------------
gw POST /v1/chat/completions "{\"model\":\"hand\",$Q}"
is "$code:$(jq -r .error.code <<<"$body")" 404:role_infeasible "the infeasible hand answers 404 role_infeasible"
gw POST /v1/chat/completions "{\"model\":\"nope\",$Q}"
is "$code:$(jq -r .error.code <<<"$body")" 404:model_not_found "an unknown model answers 404 model_not_found"
GW_KEY= gw POST /v1/chat/completions "{\"model\":\"cortex\",$Q}"
is "$code:$(jq -r .error.code <<<"$body")" 401:invalid_api_key "no key: 401 invalid_api_key"
like "$hdrs" 'WWW-Authenticate: Bearer' "with WWW-Authenticate"
GW_KEY="x$KEY" gw POST /v1/chat/completions "{\"model\":\"cortex\",$Q}"
is "$code" 401 "a wrong key: 401"
ok "$(grep -qF "$KEY" "$GL"; [ $? = 1 ]; echo $?)" "the key never reaches the gateway's log"

# a stopped engine: 503 with Retry-After, and ready false; back when it is
(cd "$T" && compose stop -t 1 embedder >/dev/null 2>&1)
gw POST /v1/embeddings '{"model":"embedder","input":"hello"}'
is "$code:$(jq -r .error.type <<<"$body")" 503:backend_unavailable "a stopped engine answers 503 backend_unavailable"
like "$hdrs" 'Retry-After: 5' "with Retry-After: 5"
emb_ready() { GW_KEY= gw GET /capabilities; [ "$(jq -r '.roles[] | select(.role=="embedder") | .ready' <<<"$body")" = "$1" ]; }
wait_for "$WAIT" emb_ready false
ok $? "/capabilities shows the embedder not ready"
(cd "$T" && compose start embedder >/dev/null 2>&1)
wait_for "$WAIT" emb_ready true
ok $? "and ready again once its container is back"
gw POST /v1/embeddings '{"model":"embedder","input":"hello"}'
is "$code" 200 "then embeddings answer 200 again"

# --- serve --apply again: the running gateway reloads the deploy dir -------------
cat >>"$T/.env" <<EOF
LOBES_GATEWAY_MAX_BODY_BYTES=4096
LOBES_GATEWAY_MAX_INFLIGHT_CORTEX=1
EOF
run "$LOBES" --dir "$T" --json serve --apply $fast
is "$rc" 0 "serve --apply on the running fleet"
is "$(j 'd["gateway"]["action"]'):$(j 'd["gateway"]["pid"]')" "reload:$GW_PID" \
	"tells the same gateway to reload (SIGHUP), not a second one"
is "$(j 'd["collector"]["action"]'):$(j 'd["collector"]["pid"]')" "running:$COL_PID" \
	"and leaves the running log collector as it is, not a second one"
# the collector crashes: the next serve starts a new one
kill -KILL "$COL_PID"
col_gone() { ! kill -0 "$COL_PID" 2>/dev/null || grep -q '^State:.*Z' /proc/"$COL_PID"/status 2>/dev/null; }
wait_for "$WAIT" col_gone
run "$LOBES" --dir "$T" --json status
is "$(j 'd["collector"]["running"]')" false "status: after a crash the log collector is not running"
run "$LOBES" --dir "$T" --json serve --apply $fast
is "$(j 'd["collector"]["action"]')" start "serve after the crash starts the log collector again"
COL_PID2=$(j 'd["collector"]["pid"]')
ok "$([ "$COL_PID2" != "$COL_PID" ] && kill -0 "$COL_PID2"; echo $?)" "a new one runs ($COL_PID2)"
COL_PID=$COL_PID2
wait_for "$WAIT" grep -q '"event":"reloaded"' "$GL"
ok $? "the gateway logs the reload"
big=$(head -c 6000 /dev/zero | tr '\0' a)
gw POST /v1/chat/completions "{\"model\":\"cortex\",\"messages\":[{\"role\":\"user\",\"content\":\"$big\"}]}"
is "$code" 413 "a body over the reloaded cap answers 413"

LONG=$(printf 'word%.0s ' $(seq 30))
SREQ="{\"model\":\"cortex\",\"stream\":true,\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"$LONG\"}]}"
# the held stream runs until the client goes away (20,000 tokens): a short
# answer could end on its own before the kill on a loaded box, and no abort
# would ever show
CID=$(cd "$T" && compose ps -q cortex)
aborts() { docker logs "$CID" 2>&1 | grep -c 'Aborted request'; }
n0=$(aborts)
HELD='{"model":"cortex","stream":true,"max_tokens":20000,"ignore_eos":true,"prompt":"x"}'
curl -sN --max-time 3600 -H "Authorization: Bearer $KEY" -d "$HELD" "http://127.0.0.1:$GWP/v1/completions" \
	>"$TMP/held" 2>/dev/null &
held=$!
frames() { [ "$(grep -c '^data: {' "$1")" -ge 2 ]; }
wait_for "$WAIT" frames "$TMP/held"
ok $? "a stream to the cortex is flowing through the gateway"
gw POST /v1/chat/completions "{\"model\":\"cortex\",$Q}"
is "$code:$(jq -r .error.code <<<"$body")" 429:concurrency_limit "a second cortex request past its cap of 1: 429"
like "$hdrs" 'Retry-After: ' "with Retry-After"

# the client goes away mid-stream: the engine's request is aborted (the
# stream would otherwise run for 4,000 s)
t_kill=$(date +%s.%N)
kill "$held"
wait "$held" 2>/dev/null
more_aborts() { [ "$(aborts)" -gt "$n0" ]; }
wait_for "$WAIT" more_aborts
ok $? "the client's disconnect shows as an aborted request in the cortex container's log"
# Docker stamps each log line when it reads it from the container (ns)
t_abort=$(docker logs -t "$CID" 2>&1 | grep 'Aborted request' | tail -n1 | cut -d' ' -f1)
delay=$(python3 -c "
import datetime,sys
s=sys.argv[1].rstrip('Z'); base,frac=(s.split('.')+['0'])[:2]
t=datetime.datetime.strptime(base,'%Y-%m-%dT%H:%M:%S').replace(tzinfo=datetime.timezone.utc).timestamp()+float('0.'+frac)
print('%.3f' % (t-float(sys.argv[2])))" "$t_abort" "$t_kill")
echo "# the abort was logged $delay s after the disconnect (Docker's log timestamps)"
ok "$(python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0 else 1)" "$delay"; echo $?)" \
	"the abort is logged after the disconnect, by Docker's log timestamps"
slot_free() { gw POST /v1/chat/completions "{\"model\":\"cortex\",$Q}"; [ "$code" = 200 ]; }
wait_for "$WAIT" slot_free
ok $? "the cortex slot is free again"

# --- stop drains the gateway first, then the engines go ----------------------------
curl -sN --max-time 120 -H "Authorization: Bearer $KEY" -d "$SREQ" "http://127.0.0.1:$GWP/v1/chat/completions" \
	>"$TMP/drain" 2>/dev/null &
cpid=$!
wait_for "$WAIT" frames "$TMP/drain"
ok $? "a stream is in flight when stop begins"
run "$LOBES" --dir "$T" stop
like "$out" "first stop the gateway \(pid $GW_PID\)" "stop's dry run says it stops the gateway first"
run "$LOBES" --dir "$T" --json stop --apply --wait "$WAIT"
is "$(j 'd["gateway"]["action"]'):$(j 'd["gateway"]["ok"]'):$(j 'd["gateway"]["killed"]')" stop:true:false \
	"stop --apply stopped the gateway within its drain bound"
wait "$cpid"
like "$(tail -c 200 "$TMP/drain")" 'data: \[DONE\]' "the in-flight stream finished before the gateway exited"
ok "$(kill -0 "$GW_PID" 2>/dev/null; [ $? = 1 ]; echo $?)" "the gateway process is gone"
ok "$([ ! -e "$T/gateway.pid" ]; echo $?)" "and its pid file"
like "$(cat "$GL")" '"event":"draining"' "its log shows the drain"
is "$(j 'd["collector"]["action"]'):$(j 'd["collector"]["ok"]'):$(j 'd["collector"]["killed"]')" stop:true:false \
	"stop --apply stopped the log collector within its bound"
ok "$(kill -0 "$COL_PID" 2>/dev/null; [ $? = 1 ]; echo $?)" "the collector process is gone"
ok "$([ ! -e "$T/collector.pid" ]; echo $?)" "and its pid file"
is "$(cd "$T" && compose ps -q | wc -l)" 0 "then the engines were taken down"
run "$LOBES" --dir "$T" --json serve --no-gateway
is "$(j 'd["gateway"]["action"]')" skip "serve --no-gateway would leave the gateway alone"
run "$LOBES" --dir "$T" --json stop
is "$(j 'd["gateway"]["action"]')" none "stop with no gateway running has none to stop"
done_testing
