#!/bin/bash
# gateway_access.t — what the relay path must keep while it is made
# cheaper: an engine on loopback is reached directly even when the
# gateway's environment names a proxy (http_proxy, no no_proxy: libcurl
# would send the engine's traffic, and the /health poll, to it), and every
# request leaves one access line in its JSON shape — also one whose path
# is not UTF-8 (it used to be lost). Engine: tests/gateway/engine.py.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
. "$SRC/tests/gateway/lib.sh"
gw_test_env
eng_start || skip_all "the scripted engine did not start"
D=$TMP/deploy
eng_env "$D" "$ENG_PORT"
# a proxy that is not there: a request sent to it fails to connect
unset no_proxy NO_PROXY
export http_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9
gw_start "$D"
ok $? "the gateway starts with a proxy in its environment"
unset http_proxy HTTP_PROXY ALL_PROXY
ready() { grep -q '"event":"health","role":"cortex","ready":true' "$GW_ERR"; }
gw_wait_for ready
ok $? "the engine's /health poll reaches the engine, not the proxy"
gw POST /v1/chat/completions '{"model":"cortex","messages":[{"role":"user","content":"hi"}]}'
is "$code" 200 "a chat is relayed to the engine, not to the proxy"

line() { grep "\"path\":\"$1\"" "$GW_ERR" | tail -1; }
gw_wait_for line /v1/chat/completions >/dev/null
like "$(line /v1/chat/completions)" \
	'^\{"id":"gw-[0-9a-f]+","method":"POST","path":"/v1/chat/completions","role":"cortex","status":200,"bytes":[1-9][0-9]*,"outcome":"ok","upstream_ms":[0-9.e-]+,"total_ms":[0-9.e-]+,"served_by":"thor/cortex"\}$' \
	"its access line: every key, in order (served_by: who answered, docs/peers.md)"
gw GET '/v1/%FF%FE/x'
is "$code" 404 "a path that is not UTF-8: 404"
gw_wait_for line '/v1/??/x' >/dev/null
like "$(line '/v1/??/x')" '"method":"GET","path":"/v1/\?\?/x","role":"","status":404,"bytes":[0-9]+,"outcome":"not_found","upstream_ms":null' \
	"and its access line is written, the bytes that are not UTF-8 as '?'"
n=$(grep -c '"outcome":' "$GW_ERR")
is "$n" 2 "one access line per request"
gw_stop_all
done_testing
