#!/bin/bash
# gateway_slow.t — slow and hostile clients cannot take the gateway off
# line: a slowloris crowd is held to the per-address limit (the rest
# refused at once, not backlogged) and cut at the head deadline while a
# normal client's chat is answered; the connection limit refuses past it;
# a reload of the connection settings takes effect (no silent keep);
# stalled uploads are bounded by the buffer budget and answered 408/503.
# Engine: tests/gateway/engine.py; clients: tests/gateway/*.py (loopback,
# several 127.x source addresses).
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
. "$SRC/tests/gateway/lib.sh"
gw_test_env
eng_start || skip_all "the scripted engine did not start"
D=$TMP/deploy
SET="LOBES_GATEWAY_MAX_CONNECTIONS=600 LOBES_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS=300 LOBES_GATEWAY_HEADER_TIMEOUT=3"
eng_env "$D" "$ENG_PORT" $SET
gw_start "$D"
ok $? "the gateway starts"
CHAT='{"model":"cortex","messages":[{"role":"user","content":"hi"}]}'
chat_from() { # SOURCE: one chat from that address; prints code and seconds
	curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 10 --interface "$1" \
		-H 'Content-Type: application/json' -d "$CHAT" "http://127.0.0.1:$GW_PORT/v1/chat/completions"
}
refused() { # LIMIT: connections refused for it, from the event lines
	grep "\"event\":\"connections-refused\",\"limit\":\"$1\"" "$GW_ERR" |
		sed -n 's/.*"count":\([0-9]*\).*/\1/p' | awk '{s+=$1} END {print s+0}'
}

# --- 1,000 slowloris connections from one address -------------------------------
python3 "$SRC/tests/gateway/slowloris.py" "$GW_PORT" 1000 127.0.0.1 60 >"$TMP/loris" &
LORIS=$!
gw_wait_for eval '[ "$(refused per_address)" -ge 690 ]'
ok $? "past 300 from one address, the rest are refused at once ($(refused per_address) refused)"
good=0
for i in 1 2 3 4 5; do
	r=$(chat_from 127.0.0.2)
	echo "# a normal client's chat during the attack: $r"
	[ "${r%% *}" = 200 ] && good=$((good + 1))
done
is "$good" 5 "a normal client (another address) gets its 5 chats answered during the attack"
wait $LORIS
res=$(cat "$TMP/loris")
echo "# slowloris: $res"
like "$res" '"opened": 1000, "closed": 1000, "open": 0, "answers": 0' \
	"every slowloris connection is closed by the gateway (refused, or cut at the 3 s head deadline)"

# --- a reload applies the connection settings ----------------------------------
eng_env "$D" "$ENG_PORT" LOBES_GATEWAY_MAX_CONNECTIONS=100 LOBES_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS=1000 \
	LOBES_GATEWAY_HEADER_TIMEOUT=3 LOBES_GATEWAY_IDLE_TIMEOUT=2
kill -HUP "$GW_PID"
gw_wait_for grep -q '"event":"reloaded"' "$GW_ERR"
ok $? "SIGHUP with new connection limits and idle timeout is reloaded"
unlike "$(cat "$GW_ERR")" 'reload-warning' "with no warning: they are applied"
python3 "$SRC/tests/gateway/slowloris.py" "$GW_PORT" 150 127.0.0.3 30 >"$TMP/loris2"
gw_wait_for eval '[ "$(refused max_connections)" -ge 45 ]'
ok $? "the new MAX_CONNECTIONS (100) holds: past it connections are refused ($(refused max_connections))"
out=$(printf 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n' | python3 "$SRC/tests/gateway/raw.py" "$GW_PORT" 30)
like "$out" '^HTTP/1.1 200 ' "a kept-alive connection is answered"
is "$(printf '%s' "$out" | tail -1)" closed "then closed at the new idle timeout (2 s; it was 60)"

# --- 40 stalled uploads -----------------------------------------------------------
gw_stop_all
eng_env "$D" "$ENG_PORT" LOBES_GATEWAY_MAX_BODY_BYTES=4194304 LOBES_GATEWAY_MAX_BUFFERED_BYTES=16777216 \
	LOBES_GATEWAY_MIN_UPLOAD_RATE=1024
gw_start "$D"
ok $? "the gateway starts with a 4 MiB body cap and a 16 MiB buffer budget"
before=$(gw_hwm_kb)
res=$(python3 "$SRC/tests/gateway/stall.py" "$GW_PORT" 40 4194304 127.0.0.4 120)
hwm=$(gw_hwm_kb)
echo "# 40 uploads stalled one byte short of 4 MiB: $res; peak RSS before ${before} kB, after ${hwm} kB"
n408=$(printf '%s' "$res" | sed -n 's/.*"408": \([0-9]*\).*/\1/p')
n503=$(printf '%s' "$res" | sed -n 's/.*"503": \([0-9]*\).*/\1/p')
is "$(( ${n408:-0} + ${n503:-0} ))" 40 "every stalled upload is answered 408 or 503 ($res)"
rss_ok $([ "$hwm" -lt $((before + 16384 + 4096)) ]; echo $?) \
	"the gateway's peak RSS rises less than the 16 MiB budget + 4 MiB (${before} -> ${hwm} kB; 40 x 4 MiB = 160 MiB)"
like "$(grep '"status":408' "$GW_ERR" | head -1)" '"outcome":"request_timeout"' "an access line says request_timeout"
gw POST /v1/chat/completions "$CHAT"
is "$code" 200 "afterwards a chat passes (the budget was given back)"
done_testing
