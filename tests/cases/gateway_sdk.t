#!/bin/bash
# gateway_sdk.t — the official OpenAI Node SDK (npm `openai`, installed once
# into a cache outside the tree) against the gateway, as a client of the
# front door would use it: models, chat, a stream, a tool call, embeddings,
# the gateway's error answers mapped to the SDK's error classes (401, 404,
# 503; 403 and 429 with a named key and its limit, with the rate-limit
# headers), and 100 sequential calls reusing their
# connection (keep-alive on every answer): as many connections as the same
# calls straight to the engine. The checks are in
# tests/sdk/openai_client.mjs; this file starts the stand-ins and the
# gateway and passes its TAP lines on.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
gw_test_env

SDK_VERSION=6.49.0
SDK=${LOBES_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lobes-test}/openai-$SDK_VERSION
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	skip_all "node/npm are not installed: the OpenAI SDK checks did not run"
fi
if [ ! -f "$SDK/node_modules/openai/package.json" ]; then
	mkdir -p "$SDK"
	timeout 300 npm install --loglevel=error --no-audit --no-fund --prefix "$SDK" "openai@$SDK_VERSION" \
		>"$TMP/npm.log" 2>&1
fi
if [ ! -f "$SDK/node_modules/openai/package.json" ]; then
	sed 's/^/#   /' "$TMP/npm.log" | tail -5
	skip_all "npm install openai@$SDK_VERSION failed: the OpenAI SDK checks did not run"
fi

CORTEX_ID=LiquidAI/LFM2.5-1.2B-Instruct
EMBED_ID=Qwen/Qwen3-Embedding-0.6B
standin_start cortex "$CORTEX_ID" --served-model-name cortex --gpu-memory-utilization 0.1 \
	--enable-auto-tool-choice --tool-call-parser hermes || skip_all "the stand-in did not start"
P_CORTEX=$STANDIN_PORT
standin_start embedder "$EMBED_ID" --served-model-name embedder --runner pooling --convert embed \
	--gpu-memory-utilization 0.1
P_EMBED=$STANDIN_PORT
P_DOWN=$(standin_free_port)

D=$TMP/deploy
gw_env "$D" "cortex:$P_CORTEX:$CORTEX_ID" CORTEX_TOOL_CALL_PARSER=hermes senses:off "hand:$P_DOWN:org/Down-1B" \
	"embedder:$P_EMBED:$EMBED_ID" reranker:off LOBES_GATEWAY_HEALTH_INTERVAL_MS=200
export SDK_KEY=sk-lobes-$RANDOM$RANDOM$RANDOM
gw_keyfile "$D/gateway.key" "$SDK_KEY"
gw_start "$D"
ok $? "the gateway starts"
export SDK_BASE=http://127.0.0.1:$GW_PORT/v1 SDK_CHAT=cortex SDK_EMBED=embedder SDK_DOWN=hand SDK_RESPONSES=1

# the cortex and embedder are ready (listed by /v1/models); the hand's
# engine is down
ready() {
	curl -s --max-time 5 -H "Authorization: Bearer $SDK_KEY" "http://127.0.0.1:$GW_PORT/v1/models" >"$TMP/models" &&
		grep -q '"cortex"' "$TMP/models" && grep -q '"embedder"' "$TMP/models"
}
gw_wait_for ready
ok $? "the gateway lists the cortex and the embedder"

# sdk SCENARIO: run the SDK's checks and pass its TAP lines on
sdk() {
	node "$SRC/tests/sdk/openai_client.mjs" "$SDK/node_modules" "$1" >"$TMP/sdk.tap" 2>"$TMP/sdk.err"
	local rc=$? line
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok 0 "sdk: ${line#ok * - }" ;;
		"not ok "*) ok 1 "sdk: ${line#not ok * - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$TMP/sdk.tap"
	grep -q '^ok \|^not ok ' "$TMP/sdk.tap" || { sed 's/^/# /' "$TMP/sdk.err" | tail -5; ok 1 "sdk $1 printed no check"; }
	is "$rc" 0 "the SDK's $1 run exits 0"
}
sdk api
sdk reuse
via_gw=$(sed -n 's/^# connections=//p' "$TMP/sdk.tap")
# the same 100 calls straight to the engine (the stand-in keeps connections
# alive): the gateway adds no connection
SDK_BASE=http://127.0.0.1:$P_CORTEX/v1 SDK_KEY=none sdk reuse
direct=$(sed -n 's/^# connections=//p' "$TMP/sdk.tap")
is "$via_gw" "$direct" "the SDK opens as many connections to the gateway as to the engine itself ($direct)"

# named keys: one allowed the cortex only, 3 requests a minute; the gateway
# reads keys.yaml again on SIGHUP (gateway.key stays the key "default")
export SDK_LIMITED=$("$LOBES" --dir "$D" keys add sdk-limited --roles cortex --rpm 3 2>/dev/null) SDK_RPM=3
like "$SDK_LIMITED" '^sk-lobes-' "lobes keys add prints the new key"
kill -HUP "$GW_PID"
reloaded() { grep -q '"event":"reloaded"' "$GW_ERR"; }
gw_wait_for reloaded
ok $? "the gateway reloads its keys"
sdk keys
gw_stop_all
done_testing
