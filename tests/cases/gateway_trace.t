#!/bin/bash
# gateway_trace.t — one request followed from the client to the engine: the
# gateway passes a W3C traceparent/tracestate and the X-Request-Id (its own
# when the client sent none) to the engine (the stand-in logs what it
# received) and back on the answer, and every access line carries the
# request id and, with a traceparent, the trace id. A malformed traceparent
# is dropped, and none is made up.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
gw_test_env
CORTEX_ID=LiquidAI/LFM2.5-1.2B-Instruct
standin_start cortex "$CORTEX_ID" --served-model-name cortex --gpu-memory-utilization 0.1 ||
	skip_all "the stand-in did not start"
P_CORTEX=$STANDIN_PORT
D=$TMP/deploy
gw_env "$D" "cortex:$P_CORTEX:$CORTEX_ID" senses:off LOBES_GATEWAY_HEALTH_INTERVAL_MS=200
gw_start "$D"
ok $? "the gateway starts"

Q='{"model":"cortex","messages":[{"role":"user","content":"hi"}],"max_tokens":4}'
TID=4bf92f3577b34da6a3ce929d0e0e4736
TP="00-$TID-00f067aa0ba902b7-01"
# send HEADER... : a chat (DATA, URLP override) with extra headers; sets code, body, hdrs
send() {
	local args=() h
	for h in "$@"; do args+=(-H "$h"); done
	code=$(curl -sS --max-time 10 -D "$TMP/.h" -o "$TMP/.b" -w '%{http_code}' "${args[@]}" \
		-H 'Content-Type: application/json' -d "${DATA:-$Q}" "http://127.0.0.1:$GW_PORT${URLP:-/v1/chat/completions}")
	hdrs=$(tr -d '\r' <"$TMP/.h")
	body=$(cat "$TMP/.b")
}
access() { grep "\"id\":\"$1\"" "$GW_ERR"; }

send "traceparent: $TP" "tracestate: congo=t61rcWkgMzE,rojo=00f067aa0ba902b7" "X-Request-Id: req-trace-1"
is "$code" 200 "a chat with a traceparent and a request id answers 200"
line=$(grep 'traceparent=' "$STANDIN_LOG" | tail -1)
like "$line" "traceparent=00-$TID-00f067aa0ba902b7-01 " "the engine received the traceparent: the trace id matches"
like "$line" "tracestate=congo=t61rcWkgMzE,rojo=00f067aa0ba902b7 " "and the tracestate"
like "$line" "x-request-id=req-trace-1 " "and the client's request id"
like "$hdrs" "X-Request-Id: req-trace-1" "the answer carries the request id back"
like "$hdrs" "traceparent: $TP" "and the traceparent"
gw_wait_for access req-trace-1 >/dev/null
like "$(access req-trace-1)" "\"trace_id\":\"$TID\"" "the access line carries the request id and the trace id"

# no request id: the gateway's own, the same at the engine, on the answer and in the log
TID2=0af7651916cd43dd8448eb211c80319c
send "traceparent: 00-$TID2-b7ad6b7169203331-00"
is "$code" 200 "a chat with a traceparent and no request id answers 200"
rid=$(printf '%s\n' "$hdrs" | sed -n 's/^X-Request-Id: //p')
like "$rid" '^gw-[0-9a-f]+$' "the gateway made a request id ($rid)"
like "$(grep "$TID2" "$STANDIN_LOG")" "x-request-id=$rid " "the engine got the same request id"
gw_wait_for access "$rid" >/dev/null
like "$(access "$rid")" "\"trace_id\":\"$TID2\"" "and so does the access line, with the trace id"

# a stream
DATA='{"model":"cortex","stream":true,"messages":[{"role":"user","content":"hi"}],"max_tokens":4}' \
	send "traceparent: 00-11111111111111111111111111111111-2222222222222222-01"
is "$code" 200 "a stream with a traceparent answers 200"
like "$(grep -c 'traceparent=00-11111111111111111111111111111111-' "$STANDIN_LOG")" '^1$' "and its traceparent reached the engine"

# malformed: not passed on, not echoed, not logged
n0=$(grep -c 'traceparent=' "$STANDIN_LOG")
for bad in "00-$(echo $TID | tr a-f A-F)-00f067aa0ba902b7-01" "00-00000000000000000000000000000000-00f067aa0ba902b7-01" \
	"00-$TID-0000000000000000-01" "ff-$TID-00f067aa0ba902b7-01" "00-$TID-00f067aa0ba902b7-01-extra" "garbage"; do
	send "traceparent: $bad" "tracestate: a=b" "X-Request-Id: req-bad-$RANDOM"
	is "$code" 200 "a malformed traceparent ($bad) does not fail the request"
	unlike "$hdrs" 'traceparent|tracestate' "and is not echoed"
done
is "$(grep -c 'traceparent=' "$STANDIN_LOG")" "$n0" "no malformed traceparent reached the engine"
# a later version may carry more after a '-'
send "traceparent: 01-$TID-00f067aa0ba902b7-01-future"
like "$(grep -c "traceparent=01-$TID-00f067aa0ba902b7-01-future " "$STANDIN_LOG")" '^1$' "a later version's traceparent is passed on"

# none sent: none made up, the request id still logged
send "X-Request-Id: req-plain"
is "$code" 200 "a chat without a traceparent answers 200"
unlike "$hdrs" 'traceparent' "no traceparent is made up"
gw_wait_for access req-plain >/dev/null
unlike "$(access req-plain)" 'trace_id' "the access line has no trace id"
like "$(access req-plain)" '"id":"req-plain"' "but has the request id"

# the gateway's own answers carry them too
DATA='{"model":"nope"}' send "traceparent: $TP" "X-Request-Id: req-404"
is "$code" 404 "an unknown model: 404"
like "$hdrs" "traceparent: $TP" "the gateway's own answer echoes the traceparent"
gw_wait_for access req-404 >/dev/null
like "$(access req-404)" "\"trace_id\":\"$TID\"" "and its access line has the trace id"
# every access line has a request id
is "$(grep -c '"method"' "$GW_ERR")" "$(grep '"method"' "$GW_ERR" | grep -c '"id":"[A-Za-z0-9._-]\+"')" \
	"every access line carries a request id"
gw_stop_all
done_testing
