#!/bin/bash
# gateway_keys.t — named API keys (DIR/keys.yaml, `lobes keys`) as clients
# and operators see them: a key printed once and stored as its SHA-256 only
# (0600); bad input refused with nothing changed; keys with different
# allowlists and limits — exactly the configured number of requests pass
# per window, the rest 429 rate_limited with Retry-After and the
# x-ratelimit-* headers; a tokens-per-minute limit from the engine's usage;
# a concurrent slot released when a stream is cancelled; 403
# role_not_allowed; gateway.key still the key `default`; X-Lobes-Hop
# believed from a peer key only; /metrics and the access log name the key;
# a revoke or rotate applied by SIGHUP while another client's stream goes
# on; a bad keys.yaml on reload keeps the old keys; no key value (nor a
# canary key a client sent) in any log, metric, error or output.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
gw_test_env
command -v sha256sum >/dev/null || skip_all "sha256sum is not installed"
CORTEX_ID=LiquidAI/LFM2.5-1.2B-Instruct
STANDIN_TOKEN_MS=50 standin_start cortex "$CORTEX_ID" --served-model-name cortex \
	--gpu-memory-utilization 0.1 || skip_all "the stand-in did not start"
P_CORTEX=$STANDIN_PORT
standin_start hand "$CORTEX_ID" --served-model-name hand --gpu-memory-utilization 0.1
P_HAND=$STANDIN_PORT
P_DOWN=$(standin_free_port)
D=$TMP/deploy
gw_env "$D" "cortex:$P_CORTEX:$CORTEX_ID" "hand:$P_HAND:$CORTEX_ID" senses:off embedder:off reranker:off \
	LOBES_GATEWAY_HEALTH_INTERVAL_MS=200
K0=default-$RANDOM$RANDOM$RANDOM
gw_keyfile "$D/gateway.key" "$K0"
OUTS=$TMP/outputs # every output of the commands, for the canary grep
: >"$OUTS"
keys() { run "$LOBES" --dir "$D" keys "$@"; printf '%s\n%s\n' "$out" "$errout" >>"$OUTS"; }

# --- lobes keys -------------------------------------------------------------------
keys add alice --roles cortex --rpm 3
is "$rc" 0 "keys add alice"
like "$out" '^sk-lobes-[0-9a-f]{64}$' "the new key alone on stdout"
KA=$out
like "$errout" "key 'alice' added" "what was done, on stderr"
is "$(stat -c %a "$D/keys.yaml")" 600 "keys.yaml is 0600"
H=$(printf '%s' "$KA" | sha256sum | cut -d' ' -f1)
grep -q "hash: sha256:$H" "$D/keys.yaml"
ok $? "keys.yaml holds the key's SHA-256"
grep -qF "$KA" "$D/keys.yaml"
ok $((!$?)) "and not the key"
keys add bob --roles cortex,hand --concurrent 1
KB=$out
keys add carol --tpm 1
KC=$out
keys add spark --peer
KS=$out
keys add erin
KE=$out
cp "$D/keys.yaml" "$TMP/keys.before"
keys add alice
is "$rc" 3 "a name taken: exit 3"
like "$errout" "key 'alice' exists already" "saying so"
is "$out" "" "no key printed"
keys add 'a b'
is "$rc" 2 "a bad name: exit 2"
keys add dave --roles cortex,brain
is "$rc" 2 "a bad role: exit 2"
like "$errout" "'brain' is not a role" "naming it"
keys add dave --rpm 0
is "$rc" 2 "a zero limit: exit 2"
keys revoke nobody
is "$rc" 3 "revoke of an unknown name: exit 3"
keys rotate alice --json
is "$rc" 2 "rotate --json without --out: exit 2 (--json never holds a key)"
keys add default
is "$rc" 2 "'default' is the gateway.key's name"
cmp -s "$D/keys.yaml" "$TMP/keys.before"
ok $? "keys.yaml unchanged by every refused edit"
keys list
like "$out" 'alice +cortex +3 +- +- +no' "list: alice's roles and limit"
like "$out" 'spark +all .* yes' "list: spark is a peer key"
like "$out" 'default \(gateway.key\)' "list: the default key"
keys list --json
like "$out" '"name": "bob",' "list --json"
unlike "$out" 'sha256' "no hash in list --json"

# --- keys.yaml checked when the gateway loads ---------------------------------------
chmod 644 "$D/keys.yaml"
run "$LOBES" --dir "$D" gateway --check
is "$rc" 3 "a keys.yaml readable by others: exit 3"
like "$errout" "keys.yaml' has mode 0644; expected 0600" "saying why"
chmod 600 "$D/keys.yaml"
sed 's/concurrent: 1/concurrent: many/' "$TMP/keys.before" >"$D/keys.yaml"
run "$LOBES" --dir "$D" gateway --check
is "$rc" 3 "a bad limit: exit 3"
like "$errout" "keys.yaml:[0-9]+:17: concurrent of key 'bob' is 'many'; expected a whole number" \
	"with file:line:column"
cp "$TMP/keys.before" "$D/keys.yaml"
run "$LOBES" --dir "$D" gateway --check --json
is "$rc" 0 "keys.yaml loads"
printf '%s\n' "$out" >>"$OUTS"
cat >"$D/peers.yaml" <<EOF
box: thor
peers:
  far:
    origin: http://127.0.0.1:$P_DOWN
    key_file: far.key
roles:
  embedder: {proxy: far}
EOF
gw_keyfile "$D/far.key" "far-$RANDOM$RANDOM"

gw_start "$D"
ok $? "the gateway starts"
ready() { GW_KEY=$K0 gw POST /v1/chat/completions '{"model":"hand","messages":[{"role":"user","content":"hi"}]}'; [ "$code" = 200 ]; }
gw_wait_for ready
ok $? "hand answers with the default key"
Q='"messages":[{"role":"user","content":"hi"}],"max_tokens":4'
chat() { GW_KEY=$1 gw POST /v1/chat/completions "{\"model\":\"$2\",$Q}"; }
hdr() { printf '%s\n' "$hdrs" | sed -n "s/^$1: //Ip"; }

# --- allowlist: 403 -----------------------------------------------------------------
chat "$KA" hand
is "$code" 403 "alice may not use hand: 403"
like "$body" '"type":"permission_error","code":"role_not_allowed"' "role_not_allowed, OpenAI's shape"
like "$body" '"allowed_roles":\["cortex"\]' "naming the roles it may use"
chat "$KB" hand
is "$code" 200 "bob may use hand"

# --- requests per minute: exactly 3 pass, then 429 ----------------------------------
codes=""
for i in 1 2 3 4 5; do chat "$KA" cortex; codes="$codes$code "; done
is "$codes" "200 200 200 429 429 " "alice's 3 requests a minute: exactly 3 pass"
like "$body" '"type":"rate_limit_error","code":"rate_limited"' "429 rate_limited"
like "$(hdr Retry-After)" '^[1-9][0-9]?$' "Retry-After in seconds"
is "$(hdr x-ratelimit-limit-requests)" 3 "x-ratelimit-limit-requests"
is "$(hdr x-ratelimit-remaining-requests)" 0 "x-ratelimit-remaining-requests"
like "$(hdr x-ratelimit-reset-requests)" '^([0-9]+s|1m0s)$' "x-ratelimit-reset-requests"
is "$(hdr x-ratelimit-limit-tokens)" "" "no token headers without a token limit"
chat "$KB" cortex
is "$code" 200 "another key is not limited by alice's window"
chat "$K0" cortex
is "$code" 200 "nor is the default key"

# --- tokens per minute, from the engine's usage ---------------------------------------
chat "$KC" cortex
is "$code" 200 "carol's first request (no tokens used yet)"
like "$body" '"total_tokens":[1-9]' "its answer carries usage"
tokens_counted() { chat "$KC" cortex; [ "$code" = 429 ]; }
gw_wait_for tokens_counted
ok $? "once its usage is counted, carol's next request: 429"
like "$body" "over its limit of 1 tokens per minute" "the tokens limit"
is "$(hdr x-ratelimit-limit-tokens)" 1 "x-ratelimit-limit-tokens"
is "$(hdr x-ratelimit-remaining-tokens)" 0 "x-ratelimit-remaining-tokens"
like "$(hdr x-ratelimit-reset-tokens)" '^([0-9]+s|1m0s)$' "x-ratelimit-reset-tokens"

# --- concurrent: one at a time, released when a stream is cancelled -----------------------
stream() { # KEY FILE: a long stream in the background; sets SPID
	curl -sN --max-time 120 -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
		-d '{"model":"cortex","stream":true,"max_tokens":150,"messages":[{"role":"user","content":"x"}]}' \
		"http://127.0.0.1:$GW_PORT/v1/chat/completions" >"$2" 2>/dev/null &
	SPID=$!
}
stream "$KB" "$TMP/s1"
flowing() { [ "$(grep -c '^data: {' "$1")" -ge 2 ]; }
gw_wait_for flowing "$TMP/s1"
ok $? "bob's stream flows"
chat "$KB" hand
is "$code" 429 "bob's second request at once: 429"
like "$body" "over its limit of 1 concurrent requests" "the concurrent limit"
is "$(hdr Retry-After)" 1 "Retry-After: 1"
kill "$SPID"
wait "$SPID" 2>/dev/null
released() { chat "$KB" hand; [ "$code" = 200 ]; }
gw_wait_for released
ok $? "the cancelled stream's slot is released: bob's next request passes"

# --- X-Lobes-Hop: believed from a peer key only ------------------------------------------
E='{"model":"embedder","input":"x"}'
hop() { code=$(curl -s -o "$TMP/.body" -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $1" \
	-H 'X-Lobes-Hop: elsewhere' -H 'Content-Type: application/json' -d "$E" \
	"http://127.0.0.1:$GW_PORT/v1/embeddings"); body=$(cat "$TMP/.body"); }
hop "$KS"
is "$code" 508 "a hop header on the peer key's request is believed: 508 proxy_loop"
like "$body" '"from":"elsewhere"' "naming where it came from"
hop "$KE"
is "$code" 503 "on a client key it is stripped: the request is proxied (the peer is down: 503)"
like "$body" '"code":"peer_unavailable"' "peer_unavailable, not proxy_loop"
hop "$K0"
is "$code" 503 "the default key is no peer key once keys.yaml names one"

# --- the access log and /metrics name the key ------------------------------------------
CANARY=canary-$RANDOM$RANDOM$RANDOM
chat "$CANARY" cortex
is "$code" 401 "an unknown key: 401"
logged() { grep -q '"key":"unknown"' "$GW_ERR"; }
gw_wait_for logged
ok $? "its access line says key unknown"
grep -q '"key":"alice".*"status":429\|"status":429.*"key":"alice"' "$GW_ERR"
ok $? "alice's 429 access line names her key"
gw GET /metrics
printf '%s\n' "$body" >"$TMP/metrics"
like "$body" 'lobes_gateway_key_requests_total\{key="alice"\} 6' "key_requests_total of alice (403, 3 ok, 2 429)"
like "$body" 'lobes_gateway_key_throttled_total\{key="alice",limit="requests"\} 2' "her 2 throttled"
like "$body" 'lobes_gateway_key_denied_total\{key="alice"\} 1' "her 403"
like "$body" 'lobes_gateway_key_throttled_total\{key="bob",limit="concurrent"\} 1' "bob's concurrent 429"
like "$body" 'lobes_gateway_key_requests_total\{key="unknown"\} [1-9]' "the unknown key collapsed to unknown"
like "$body" 'lobes_gateway_key_tokens_total\{key="carol",kind="completion"\} [1-9]' "carol's tokens"
unlike "$body" "key=\"$CANARY\"" "no label a client chose"
like "$body" 'lobes_gateway_throttled_total\{role="cortex",route="/v1/chat/completions",reason="key"\} 3' \
	"throttled_total counts the key limits' 429s as reason key (alice 2, carol 1)"
like "$body" 'lobes_gateway_error_answers_total\{role="hand",route="/v1/chat/completions",code="role_not_allowed"\} 1' \
	"error_answers_total counts the 403"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/metrics" >"$TMP/promtool" 2>&1
	ok $? "promtool check metrics accepts the key families"; sed "s/^/# /" "$TMP/promtool"
fi

# --- revoke and rotate by SIGHUP, while another client's stream goes on ---------------------
reloaded() { [ "$(grep -c '"event":"reloaded"' "$GW_ERR")" -ge "$1" ]; }
stream "$K0" "$TMP/s2"
gw_wait_for flowing "$TMP/s2"
ok $? "a stream on the default key flows"
keys revoke alice
is "$rc" 0 "keys revoke alice"
keys rotate bob
is "$rc" 0 "keys rotate bob"
KB2=$out
like "$KB2" '^sk-lobes-[0-9a-f]{64}$' "the rotated key, printed once"
kill -HUP "$GW_PID"
gw_wait_for reloaded 1
ok $? "the gateway reloads"
chat "$KA" cortex
is "$code" 401 "alice's key is revoked: 401"
chat "$KB" cortex
is "$code" 401 "bob's old key: 401"
chat "$KB2" cortex
is "$code" 200 "bob's new key: 200"
wait "$SPID"
is "$?" 0 "the default key's stream ended normally across the reload"
grep -q '^data: \[DONE\]' "$TMP/s2"
ok $? "and was whole ([DONE])"
printf 'keys:\n  - name: eve\n    hash: sha256:xyz\n' >"$D/keys.yaml"
kill -HUP "$GW_PID"
failed() { grep -q '"event":"reload-failed".*keys.yaml:3:11: hash of key' "$GW_ERR"; }
gw_wait_for failed
ok $? "a bad keys.yaml on reload: reload-failed, with its position"
chat "$KB2" cortex
is "$code" 200 "the old keys stay in use"

# --- no key value anywhere ----------------------------------------------------------------
gw_stop_all
leaks=""
for k in "$K0" "$KA" "$KB" "$KB2" "$KC" "$KS" "$KE" "$CANARY"; do
	for f in "$GW_OUT" "$GW_ERR" "$TMP/metrics" "$OUTS" "$D/keys.yaml"; do
		[ "$f" = "$OUTS" ] && { [ "$k" = "$KA" ] || [ "$k" = "$KB" ] || [ "$k" = "$KC" ] ||
			[ "$k" = "$KS" ] || [ "$k" = "$KE" ] || [ "$k" = "$KB2" ]; } && continue # printed once, on purpose
		grep -qF -- "$k" "$f" && leaks="$leaks ${k:0:12}..@$(basename "$f")"
	done
done
is "$leaks" "" "no key value (nor the canary) in the gateway's log, /metrics, keys.yaml or other outputs"
n=$(grep -hoF -- "sk-lobes-" "$OUTS" | wc -l)
is "$n" 6 "the commands printed exactly the 6 keys they made (5 added, 1 rotated), once each"
done_testing
