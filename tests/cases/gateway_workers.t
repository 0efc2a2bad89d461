#!/bin/bash
# gateway_workers.t — `lobes gateway` with several worker loops
# (LOBES_GATEWAY_WORKERS): the setting is validated with its position, every
# worker listens on the one port (SO_REUSEPORT), requests on many
# connections are all served, the per-role concurrency cap holds across the
# workers, and SIGTERM drains every worker (each request still held by the
# silent engine is cancelled and counted).
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
gw_test_env
[ -r /proc/net/tcp ] || skip_all "no /proc/net/tcp"
CORTEX_ID=LiquidAI/LFM2.5-1.2B-Instruct
EMBED_ID=Qwen/Qwen3-Embedding-0.6B

standin_start cortex "$CORTEX_ID" --served-model-name cortex --gpu-memory-utilization 0.1 ||
	skip_all "the stand-in did not start"
P_CORTEX=$STANDIN_PORT
# an embedder that accepts requests and never answers (the stand-in's sm_110
# pooling hang): a request to it stays in flight
STANDIN_CARD=thor VLLM_LOGGING_LEVEL=DEBUG standin_start hang "$EMBED_ID" --served-model-name embedder \
	--runner pooling --convert embed --gpu-memory-utilization 0.1
P_HANG=$STANDIN_PORT

D=$TMP/deploy
write_env() { # [LINES]: the fleet's .env, then LINES
	gw_env "$D" "cortex:$P_CORTEX:$CORTEX_ID" "embedder:$P_HANG:$EMBED_ID" LOBES_GATEWAY_HEALTH_INTERVAL_MS=200 "$*"
}

# --- the setting ---------------------------------------------------------------
for bad in 0 65 x 2.5 -1; do
	write_env "LOBES_GATEWAY_WORKERS=$bad"
	run "$LOBES" --dir "$D" gateway --check
	is "$rc" 3 "LOBES_GATEWAY_WORKERS=$bad is refused (exit 3)"
	like "$errout" "\.env:[0-9]+: LOBES_GATEWAY_WORKERS '$bad' is not valid; expected an integer 1-64" \
		"with the file, line and what was expected"
done
write_env "LOBES_GATEWAY_WORKERS=4"
run "$LOBES" --dir "$D" --json gateway --check
is "$rc" 0 "LOBES_GATEWAY_WORKERS=4 is accepted"
like "$out" '"workers": 4' "and reported by --check"
write_env
run "$LOBES" --dir "$D" --json gateway --check
like "$out" '"workers": [1-8],' "unset: the online CPUs, at most 8"

# --- four workers on one port --------------------------------------------------
write_env "LOBES_GATEWAY_WORKERS=4
LOBES_GATEWAY_MAX_INFLIGHT_EMBEDDER=2
LOBES_GATEWAY_DRAIN_TIMEOUT=1"
gw_start "$D"
ok $? "the gateway starts with 4 workers (port $GW_PORT)"
like "$(cat "$GW_OUT")" "listening on http://127.0.0.1:$GW_PORT \(no API key, 4 workers\)" "its start line says so"
listeners() { # sockets in LISTEN (0A) on 127.0.0.1:GW_PORT
	awk -v p="$(printf '0100007F:%04X' "$GW_PORT")" '$2 == p && $4 == "0A"' /proc/net/tcp | wc -l
}
is "$(listeners)" 4 "four sockets listen on the one port (one per worker)"
ready() { gw GET /v1/models; [[ "$body" == *'"cortex"'* ]]; }
gw_wait_for ready
ok $? "the cortex role is ready"

# 32 clients at once, each on its own connection: the kernel spreads them
# over the workers, and every one is answered
Q='{"model":"cortex","messages":[{"role":"user","content":"hi"}],"max_tokens":4}'
many=""
for i in $(seq 32); do
	curl -s -o "$TMP/many.$i" -w '%{http_code}' --max-time 60 -H 'Content-Type: application/json' \
		-d "$Q" "http://127.0.0.1:$GW_PORT/v1/chat/completions" >"$TMP/many.$i.code" 2>/dev/null &
	many="$many $!"
done
for p in $many; do wait "$p"; done
n=0
for i in $(seq 32); do
	[ "$(cat "$TMP/many.$i.code")" = 200 ] && grep -q '"chat.completion"' "$TMP/many.$i" && n=$((n + 1))
done
is "$n" 32 "32 concurrent connections: all 32 answered 200 with the engine's completion"

# the per-role cap (2) holds across workers: of 8 held requests on 8
# connections, 2 reach the engine and 6 are refused with 429
accepted() { grep -c 'embeddings request accepted' "$TMP/hang.log"; }
n0=$(accepted)
held=""
for i in $(seq 8); do
	curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 -d '{"model":"embedder","input":"x"}' \
		"http://127.0.0.1:$GW_PORT/v1/embeddings" >"$TMP/cap.$i" 2>/dev/null &
	held="$held $!"
done
refused() { [ "$(cat "$TMP"/cap.* 2>/dev/null | grep -c '^429$')" -ge 6 ]; }
gw_wait_for refused
ok $? "6 of 8 concurrent requests past the cap of 2 are refused with 429"
two_in() { [ "$(( $(accepted) - n0 ))" -ge 2 ]; }
gw_wait_for two_in
ok $? "2 reached the engine"
is "$(( $(accepted) - n0 ))" 2 "and no more than 2 (the cap is one count for all workers)"
is "$(cat "$TMP"/cap.* | grep -c '^429$')" 6 "exactly 6 were refused"

# SIGTERM: every worker stops accepting; both held requests are cut at the
# drain bound, whichever worker holds them
kill -TERM "$GW_PID"
gw_wait_exit "$GW_PID"
is "$GW_RC" 0 "SIGTERM: the gateway exits 0 after the drain bound"
like "$(cat "$GW_OUT")" 'stopped \(2 in-flight requests cancelled' "cancelling the 2 requests still in flight"
GW_PIDS=""
for p in $held; do wait "$p" 2>/dev/null; done
is "$(listeners)" 0 "nothing listens on the port any more"
is "$(cat "$TMP"/cap.* | grep -c '^503$')" 2 "the 2 held clients got an answer (503) at the drain"
is "$(grep '"path":"/v1/embeddings"' "$GW_ERR" | grep -c '"status":503')" 2 "and both are in the access log"

# --- one worker: the old shape, still whole ------------------------------------
write_env "LOBES_GATEWAY_WORKERS=1"
gw_start "$D"
ok $? "the gateway starts with 1 worker"
like "$(cat "$GW_OUT")" "\(no API key, 1 worker\)" "its start line says so"
is "$(listeners)" 1 "one socket listens"
gw POST /v1/chat/completions "$Q"
is "$code" 200 "and it serves"
gw_stop_all

done_testing
