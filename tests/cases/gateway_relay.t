#!/bin/bash
# gateway_relay.t — the relay's memory is bounded per connection and in
# total: a stream longer than any buffer passes whole at a slow client's
# speed while the gateway's peak RSS stays flat, and the shared buffer
# budget (LOBES_GATEWAY_MAX_BUFFERED_BYTES) answers 503 server_busy when
# it is spent and pushes back on relays (they still finish). The engine is
# tests/gateway/engine.py (a scripted test double) on loopback.
#
# Size and rate: 100 MiB read at 10 MB/s by default (~11 s): past the old
# 64 MiB cut, the engine always ahead of the client. GW_BIG_BYTES and
# GW_BIG_RATE set them (200 MB at 2 MB/s: GW_BIG_BYTES=209715200
# GW_BIG_RATE=2000000, ~100 s).
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
. "$SRC/tests/gateway/lib.sh"
gw_test_env
BIG=${GW_BIG_BYTES:-104857600}
RATE=${GW_BIG_RATE:-10000000}

eng_start --big "$BIG" || skip_all "the scripted engine did not start"
D=$TMP/deploy
eng_env "$D" "$ENG_PORT"
gw_start "$D"
ok $? "the gateway starts"
before=$(gw_hwm_kb)
res=$(python3 "$SRC/tests/gateway/slowread.py" "$GW_PORT" /v1/chat/completions "$RATE")
like "$res" "\"status\": 200, \"bytes\": $BIG, \"frames\": [0-9]+, \"ok\": true" \
	"a $BIG-byte stream read at $RATE B/s arrives whole and in order"
hwm=$(gw_hwm_kb)
echo "# gateway peak RSS: before ${before} kB, after the stream ${hwm} kB; client: $res"
rss_ok $([ "$hwm" -lt 65536 ]; echo $?) "the gateway's peak RSS stays below 64 MB (${hwm} kB)"
rss_ok $([ "$hwm" -lt $((before + 16384)) ]; echo $?) "and within 16 MB of what it was before the stream"
like "$(grep '"path":"/v1/chat/completions"' "$GW_ERR" | tail -1)" "\"status\":200,\"bytes\":$BIG,\"outcome\":\"ok\"" \
	"the access line counts every byte, outcome ok"
gw_stop_all

# --- the shared budget ---------------------------------------------------------
eng_env "$D" "$ENG_PORT" LOBES_GATEWAY_MAX_BUFFERED_BYTES=1048576
gw_start "$D"
ok $? "the gateway starts with a 1 MiB buffer budget"
req=$(printf '{"model":"cortex","messages":[{"role":"user","content":"%02000000d"}]}' 0)
printf '%s' "$req" >"$TMP/big.json"
code=$(curl -s -o "$TMP/.body" -D "$TMP/.hdrs" -w '%{http_code}' --max-time 60 \
	-H 'Content-Type: application/json' --data-binary @"$TMP/big.json" \
	"http://127.0.0.1:$GW_PORT/v1/chat/completions")
is "$code" 503 "a 2 MB body past the 1 MiB budget: 503"
like "$(cat "$TMP/.body")" '^\{"error":\{"message":"the gateway holds 1048576 bytes[^"]*","type":"server_busy","code":"server_busy"' \
	"server_busy, in OpenAI's error shape"
like "$(tr -d '\r' <"$TMP/.hdrs")" 'Retry-After: 5' "with Retry-After"
small=16777216
eng_start --big $small
eng_env "$D" "$ENG_PORT" LOBES_GATEWAY_MAX_BUFFERED_BYTES=1048576
kill -HUP "$GW_PID"
gw_wait_for grep -q '"event":"reloaded"' "$GW_ERR"
pids=""
for i in 1 2 3; do
	python3 "$SRC/tests/gateway/slowread.py" "$GW_PORT" /v1/chat/completions 40000000 >"$TMP/r$i" &
	pids="$pids $!"
done
wait $pids
for i in 1 2 3; do
	like "$(cat "$TMP/r$i")" "\"status\": 200, \"bytes\": $small, \"frames\": [0-9]+, \"ok\": true" \
		"stream $i of 3 under the 1 MiB budget arrives whole (relays wait for room, none fails)"
done
gw POST /v1/chat/completions '{"model":"cortex","messages":[]}'
is "$code" 200 "once they are done, a small request passes again (the budget was given back)"
done_testing
