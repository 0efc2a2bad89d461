#!/bin/bash
# gateway_timeouts.t — honest timeouts: an engine that takes its answer's
# head past LOBES_GATEWAY_FIRST_BYTE_TIMEOUT is 503 at that bound (not at the
# 600 s read timeout); a frozen engine (SIGSTOP) is seen by the health
# poll's own bound and its role answered 503 at once, with the reason and
# since when, instead of a forward that hangs; it is served again once it
# thaws. Engines: tests/gateway/engine.py on loopback.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
. "$SRC/tests/gateway/lib.sh"
gw_test_env
eng_start --head-delay 60 || skip_all "the scripted engine did not start"
ENG_HAND_PORT=$ENG_PORT
eng_start
CORTEX_PID=$ENG_PID
D=$TMP/deploy
eng_env "$D" "$ENG_PORT" LOBES_GATEWAY_FIRST_BYTE_TIMEOUT=2 LOBES_GATEWAY_HEALTH_TIMEOUT_MS=500
run "$LOBES" --dir "$D" --json gateway --check
like "$out" '"connect_timeout_s": 2' "the connect timeout is 2 s by default"
gw_start "$D"
ok $? "the gateway starts"
CHAT='"messages":[{"role":"user","content":"hi"}]'
ready() { grep -q "\"event\":\"health\",\"role\":\"$1\",\"ready\":$2" "$GW_ERR"; }
gw_wait_for ready cortex true && gw_wait_for ready hand true
ok $? "both engines are ready"

# --- first byte ---------------------------------------------------------------------
HTTP_MAX_TIME=30 gw POST /v1/chat/completions "{\"model\":\"hand\",$CHAT}"
is "$code" 503 "an engine with no answer's head within the 2 s first-byte timeout: 503 (its head would come at 60 s)"
like "$body" '"message":"the engine of role .hand. [^"]*sent no answer within the first-byte timeout \(2 s' "saying so"
like "$hdrs" 'Retry-After: 5' "with Retry-After"
like "$(grep '"role":"hand"' "$GW_ERR" | tail -1)" '"status":503,.*"outcome":"(upstream_timeout|backend_unavailable)"' \
	"the access line says why"

# --- a frozen engine ------------------------------------------------------------------
gw POST /v1/chat/completions "{\"model\":\"cortex\",$CHAT}"
is "$code" 200 "cortex answers"
kill -STOP "$CORTEX_PID"
gw_wait_for ready cortex false
ok $? "the frozen engine is seen not ready by the health poll's 500 ms bound"
HTTP_MAX_TIME=30 gw POST /v1/chat/completions "{\"model\":\"cortex\",$CHAT}"
is "$code" 503 "a request for the frozen role: 503 at once, not a forward"
like "$body" "is not ready since [0-9-]+T[0-9:]+Z: its /health did not answer within 500 ms" \
	"with the reason and since when"
like "$body" '"not_ready_since":"[0-9-]+T[0-9:]+Z"' "and since when as a member"
like "$(grep '"role":"cortex"' "$GW_ERR" | tail -1)" '"status":503,.*"outcome":"backend_unavailable","upstream_ms":null' \
	"the access line: 503 backend_unavailable, no upstream time (nothing was forwarded)"
kill -CONT "$CORTEX_PID"
gw_wait_for eval 'gw POST /v1/chat/completions "{\"model\":\"cortex\",$CHAT}"; [ "$code" = 200 ]'
ok $? "once the engine thaws, its role is served again"
done_testing
