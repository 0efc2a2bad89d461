#!/bin/bash
# gateway_failover.t — failover that never lies: a role's `fallback:` list
# (peers.yaml: another replica on this box, a peer's gateway) is tried in
# order ONLY when the primary refuses the connection or answers 5xx before
# its first byte; every relayed answer says who served it
# (X-Lobes-Served-By); a peer is asked for the role's checkpoint id, never
# another model; a stream that breaks after its first byte ends with an
# error event and is never replayed; a frozen fallback is 503 within the
# first-byte bound; bad fallback entries are load errors with their
# position. Engines: tests/gateway/engine.py on loopback.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
. "$SRC/tests/gateway/lib.sh"
gw_test_env
# a port nothing listens on: an engine started and stopped
dead_port() {
	eng_start || return 1
	kill "$ENG_PID"
	wait "$ENG_PID" 2>/dev/null
	DEAD=$ENG_PORT
	curl -s --max-time 2 "http://127.0.0.1:$DEAD/health" >/dev/null && return 1
	return 0
}
dead_port || skip_all "the scripted engine did not start"
P_CORTEX=$DEAD
dead_port && P_RERANKER=$DEAD
eng_start --echo cortex-replica && P_CREP=$ENG_PORT && PID_CREP=$ENG_PID
eng_start --echo spark && P_PEER=$ENG_PORT
eng_start --echo hand --status 503 && P_HAND=$ENG_PORT
eng_start --echo hand-replica && P_HREP=$ENG_PORT
eng_start --big 65536 --break-after 3 && P_EMB=$ENG_PORT
eng_start --echo embedder-replica && P_EREP=$ENG_PORT
eng_start --echo frozen && P_FROZEN=$ENG_PORT && PID_FROZEN=$ENG_PID
D=$TMP/deploy
gw_env "$D" "cortex:$P_CORTEX:x/cortex" "hand:$P_HAND:x/hand" "embedder:$P_EMB:x/embedder" \
	"reranker:$P_RERANKER:x/reranker" senses:off LOBES_GATEWAY_HEALTH_INTERVAL_MS=200 \
	LOBES_GATEWAY_FIRST_BYTE_TIMEOUT=2
gw_keyfile "$D/spark.key" peerkey
cat >"$D/peers.yaml" <<EOF
box: thor
peers:
  spark:
    origin: http://127.0.0.1:$P_PEER
    key_file: spark.key
roles:
  cortex: {fallback: [{port: $P_CREP}, spark]}
  hand: {fallback: [{port: $P_HREP}]}
  embedder: {fallback: [{port: $P_EREP}]}
  reranker: {fallback: [{port: $P_FROZEN}]}
EOF

# --- bad fallback entries: load errors with their position ----------------------------
bad() { # YAML-ROLES-LINE EXPECTED-MESSAGE NAME
	mkdir -p "$TMP/bad"
	cp "$D/.env" "$D/spark.key" "$TMP/bad/"
	printf 'peers:\n  spark: {origin: "http://127.0.0.1:1", key_file: spark.key}\n  orin: {origin: "http://127.0.0.1:2"}\nroles:\n  %s\n' "$1" >"$TMP/bad/peers.yaml"
	run "$LOBES" --dir "$TMP/bad" gateway --check
	is "$rc" 3 "$3: refused (exit 3)"
	like "$errout" "peers.yaml:5:[0-9]+: $2" "$3: $2"
}
bad 'cortex: {fallback: [nope]}' "fallback 'nope' of role 'cortex' is not a declared peer" "an undeclared peer"
bad 'cortex: {fallback: [orin]}' "fallback peer 'orin' of role 'cortex' has no key_file" "a peer without a key"
bad "cortex: {fallback: [{port: $P_CORTEX}]}" "fallback port $P_CORTEX of role 'cortex' is its own engine's port" "the primary's own port"
bad 'cortex: {fallback: [{port: 70000}]}' "fallback of role 'cortex' is not valid; expected a peer name or \{port: N\}" "a port out of range"
bad 'cortex: {fallback: spark}' "fallback of role 'cortex' is not a list" "not a list"
bad 'cortex: {fallback: [spark, spark]}' "fallback of role 'cortex' is listed twice" "a duplicate"
bad 'senses: {refer: spark, fallback: [spark]}' "role 'senses' is referred and has a fallback" "a referred role"
bad 'senses: {fallback: [spark]}' "role 'senses' has a fallback but is neither served here nor proxied" "a role with no primary"
bad 'cortex: {fallback: [spark], retry: 3}' "'retry' for role 'cortex' is not a mode; expected refer, proxy or fallback" "an unknown key"

gw_start "$D"
ok $? "the gateway starts"
ready() { grep -q "\"event\":\"health\",\"role\":\"$1\",\"ready\":$2" "$GW_ERR"; }
gw_wait_for ready hand true && gw_wait_for ready embedder true
ok $? "the health poll has seen the engines"
CHAT='"messages":[{"role":"user","content":"hi"}]'
served_by() { sed -n 's/^X-Lobes-Served-By: //p' <<<"$hdrs"; }
last_line() { grep "\"role\":\"$1\"" "$GW_ERR" | grep '"status"' | tail -1; }

# --- refused → the replica, then the peer ---------------------------------------------
gw POST /v1/chat/completions "{\"model\":\"cortex\",$CHAT}"
is "$code" 200 "the cortex's engine refuses: the request is answered"
like "$body" '"engine": "cortex-replica"' "by the first fallback, the replica on this box"
is "$(served_by)" "thor/cortex:$P_CREP" "X-Lobes-Served-By names the replica"
like "$(last_line cortex)" "\"served_by\":\"thor/cortex:$P_CREP\",\"failed_over\":\"thor/cortex: [^\"]*\"" \
	"the access line says who served it and that the primary failed"
kill "$PID_CREP"
wait "$PID_CREP" 2>/dev/null
gw POST /v1/chat/completions "{\"model\":\"x/cortex\",$CHAT}"
is "$code" 200 "primary and replica refuse: answered"
like "$body" '"engine": "spark"' "by the next fallback, the peer"
is "$(served_by)" "spark/cortex" "X-Lobes-Served-By names the peer"
like "$body" '"model": "x/cortex"' "the peer is asked for the role's checkpoint id, not any model it calls cortex"
like "$body" '"bearer": true, "hop": "thor"' "with the peer's key and the hop header"
like "$(last_line cortex)" "\"failed_over\":\"thor/cortex: [^;]*; thor/cortex:$P_CREP: " "both failures on the access line"

# --- 5xx before the first byte → the replica ------------------------------------------
gw POST /v1/chat/completions "{\"model\":\"hand\",$CHAT}"
is "$code" 200 "the hand's engine answers 503 before any byte: answered"
like "$body" '"engine": "hand-replica"' "by its replica"
is "$(served_by)" "thor/hand:$P_HREP" "X-Lobes-Served-By names the replica"
like "$(last_line hand)" '"failed_over":"thor/hand: HTTP 503"' "the access line: the primary's 503"

# --- a stream that breaks after its first byte is never replayed ----------------------
gw POST /v1/embeddings '{"model":"embedder","input":"x","stream":true}'
is "$code" 200 "a stream from the embedder's engine starts"
is "$(served_by)" "thor/embedder" "served by the primary (X-Lobes-Served-By on a local answer)"
like "$body" 'data: 00000002 ' "its first frames reached the client"
like "$body" '"code":"upstream_error"' "the break ends it with an error event"
unlike "$body" 'embedder-replica' "never a second stream from the fallback"
unlike "$(last_line embedder)" 'failed_over' "the access line shows no failover"

# --- a frozen fallback: 503 within the first-byte bound -------------------------------
kill -STOP "$PID_FROZEN"
HTTP_MAX_TIME=60 gw POST /v1/rerank '{"model":"reranker","query":"q","documents":["a"]}'
is "$code" 503 "the reranker's engine refuses and its fallback is frozen: 503"
like "$body" "role 'reranker' is unavailable: thor/reranker: [^;]*; thor/reranker:$P_FROZEN: it sent no answer within the first-byte timeout \\(2 s" \
	"at the first-byte bound (the read timeout is 600 s), naming what was tried"
like "$hdrs" 'Retry-After: 5' "with Retry-After"
kill -CONT "$PID_FROZEN"

# --- no fallback: a refused engine is answered 503 as before --------------------------
sed -i '/reranker:/d' "$D/peers.yaml"
kill -HUP "$GW_PID"
gw_wait_for grep -q '"event":"reloaded"' "$GW_ERR"
ok $? "reloaded without the reranker's fallback"
gw_wait_for ready reranker false
gw POST /v1/rerank '{"model":"reranker","query":"q","documents":["a"]}'
is "$code" 503 "without a fallback, a refusing engine: 503"
unlike "$body" "$P_FROZEN" "the old fallback is not tried"
done_testing
