#!/bin/bash
# gateway_ui.t — the status page GET /ui in a real headless browser
# (Debian's chromium, driven over the DevTools protocol by tests/ui_cdp.py
# with Debian's python3-websocket; every wait bounded): it loads without
# console errors, shows every role with its state, and the same page,
# never reloaded, turns a role to down when its stand-in is stopped.
# Screenshots are kept in $LOBES_TEST_ARTIFACTS/gateway_ui/ (default
# build/test-artifacts/gateway_ui/). The page itself: self-contained (no
# URL of another origin in it), served with a Content-Security-Policy that
# lets it talk to this gateway only.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
gw_test_env
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	skip_all "Debian's chromium is not installed (make deps installs it)"
/usr/bin/python3 -c 'import websocket' 2>/dev/null ||
	skip_all "Debian's python3-websocket is not installed (make deps installs it)"
ART=${LOBES_TEST_ARTIFACTS:-${LOBES_BUILD:-$SRC/build}/test-artifacts}/gateway_ui
rm -rf "$ART"
mkdir -p "$ART"
CORTEX_ID=LiquidAI/LFM2.5-1.2B-Instruct
standin_start cortex "$CORTEX_ID" --served-model-name cortex --gpu-memory-utilization 0.1 ||
	skip_all "the stand-in did not start"
P_CORTEX=$STANDIN_PORT
standin_start hand "$CORTEX_ID" --served-model-name hand --gpu-memory-utilization 0.1
P_HAND=$STANDIN_PORT
PID_HAND=$STANDIN_PID
D=$TMP/deploy
gw_env "$D" "cortex:$P_CORTEX:$CORTEX_ID" senses:off "hand:$P_HAND:org/Hand-1B" embedder:off reranker:off \
	LOBES_GATEWAY_HEALTH_INTERVAL_MS=200
gw_start "$D"
ok $? "the gateway starts"

gw GET /ui
is "$code" 200 "/ui answers 200"
like "$hdrs" 'Content-Type: text/html' "with HTML"
like "$hdrs" "Content-Security-Policy: default-src 'none'.*connect-src 'self'" "under a policy that allows this gateway only"
unlike "$body" '(src|href)="(https?:)?//|url\((https?:)?//|fetch\("http' "the page fetches nothing from elsewhere"
is "$(cmp "$TMP/.body" "$SRC/data/gateway/ui.html" >/dev/null; echo $?)" 0 "it is data/gateway/ui.html, embedded in the binary"
Q='{"model":"cortex","messages":[{"role":"user","content":"hi"}],"max_tokens":4}'
for i in 1 2 3; do gw POST /v1/chat/completions "$Q"; done

# the page in chromium: phase 1, every role with its state; then the hand's
# engine stops and the open page shows it down
/usr/bin/python3 "$SRC/tests/ui_cdp.py" "http://127.0.0.1:$GW_PORT/ui" "$ART" \
	cortex=ready senses=infeasible hand=ready embedder=infeasible reranker=infeasible -- \
	cortex=ready hand=down >"$TMP/cdp.json" 2>"$TMP/cdp.err" &
cdp=$!
phase1() { [ -e "$ART/phase1" ] || ! kill -0 "$cdp" 2>/dev/null; }
gw_wait_for phase1
ok "$([ -e "$ART/phase1" ]; echo $?)" "the page shows every role with its state"
kill -TERM "$PID_HAND"
done_cdp() { ! kill -0 "$cdp" 2>/dev/null; }
gw_wait_for done_cdp
wait "$cdp"
rc=$?
is "$rc" 0 "the same page shows the hand down once its engine stopped"
[ "$rc" = 0 ] || sed 's/^/# /' "$TMP/cdp.json" "$TMP/cdp.err"
res=$(cat "$TMP/cdp.json")
like "$res" '"rows": \{"cortex": "ready", "senses": "infeasible", "hand": "down", "embedder": "infeasible", "reranker": "infeasible"\}' \
	"every role's row, with its state"
like "$res" '"errors": \[\]' "no console error, exception or failed load"
like "$res" '"page_error": ""' "and the page reports no read error"
ok "$([ -s "$ART/ui-1.png" ] && [ -s "$ART/ui-2.png" ]; echo $?)" "screenshots kept: $ART/ui-1.png, ui-2.png"
gw_stop_all
done_testing
