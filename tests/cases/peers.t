#!/bin/bash
# peers.t — two simulated boxes on this machine: a Thor deploy dir and a
# GB10 (Spark) deploy dir, rendered .env files taken from the goldens of
# those profiles (on the Thor, hand is infeasible; on the Spark it is served),
# each with its engines replaced by vLLM stand-ins (test doubles) on loopback
# ports and its own `lobes gateway`, each gateway with its own inbound key.
#
# Proves: peers.yaml validation with positions (and the key never printed);
# hand asked at the Thor is answered by the Spark's hand through the hop,
# with the Spark's key (the caller's key never leaves the Thor); the Thor's
# /capabilities and /v1/models show hand proxied, hosted_by, ready from the
# Spark's own /v1/models with the Spark's served id; a stream through the hop
# arrives frame by frame; referral only gives 404 role_infeasible +
# hosted_by; a pair that proxies hand to each other gives 508, not a loop; a
# wrong peer key is the Thor's 502 peer_auth_failed, not a 401 to the client;
# the Spark's gateway stopped gives 503 naming the peer with Retry-After;
# `lobes status --fleet` (text and --json) shows role x box for both boxes;
# `lobes probe --fleet` with no box answering is "could not verify" (exit 4).
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
gw_test_env
HAND_ID=LiquidAI/LFM2.5-1.2B-Instruct

# --- the two boxes' engines -------------------------------------------------------
# the Spark's hand streams one token every 150 ms, so a relay that buffered
# would show as frames arriving together
STANDIN_TOKEN_MS=150 standin_start spark-hand "$HAND_ID" --served-model-name hand "$HAND_ID" \
	--gpu-memory-utilization 0.1 || skip_all "the stand-in did not start"
P_SPARK_HAND=$STANDIN_PORT
standin_start thor-cortex "$HAND_ID" --served-model-name cortex --gpu-memory-utilization 0.1
P_THOR_CORTEX=$STANDIN_PORT
P_DOWN=$(standin_free_port)
P_TGW=$(standin_free_port)
P_SGW=$(standin_free_port)
while [ "$P_SGW" = "$P_TGW" ]; do P_SGW=$(standin_free_port); done

T=$TMP/thor S=$TMP/spark
mkdir -p "$T" "$S"
# deploy_env DIR PROFILE [lines...]: the profile's rendered .env, every engine
# port moved off the fixed 800x ports (to a port nobody answers on), then the
# given lines (later lines win)
deploy_env() {
	local d=$1 p=$2
	shift 2
	{
		cat "$SRC/tests/goldens/$p/.env"
		for r in CORTEX SENSES HAND EMBEDDER RERANKER; do echo "${r}_PORT=$P_DOWN"; done
		echo LOBES_GATEWAY_HEALTH_INTERVAL_MS=200
		echo LOBES_GATEWAY_HEALTH_TIMEOUT_MS=2000
		printf '%s\n' "$@"
	} >"$d/.env"
	chmod 600 "$d/.env"
}
key() { printf '%s\n' "$2" >"$1"; chmod 600 "$1"; }
# doctor DIR: `lobes doctor` on the Thor fixture box with the fake docker CLI;
# $out holds its peer findings, one per line
doctor() {
	run env PATH="$SRC/tests/fixtures/doctor/bin:$PATH" LOBES_SYSROOT="$SRC/tests/fixtures/hosts/thor" \
		LOBES_NVIDIA_SMI="$SRC/tests/fixtures/hosts/thor/bin/nvidia-smi" LOBES_NVML_LIB="$TMP/absent.so" \
		"$LOBES" --dir "$1" doctor
	out=$(printf '%s\n' "$out" | grep -E '^[a-z]+ +(peers|peer-[a-z]+):')
}
deploy_env "$T" thor "CORTEX_PORT=$P_THOR_CORTEX" "LOBES_GATEWAY_PORT=$P_TGW"
deploy_env "$S" spark "HAND_PORT=$P_SPARK_HAND" "LOBES_GATEWAY_PORT=$P_SGW"
grep -q '^HAND_FEASIBLE=false' "$T/.env" && grep -q '^HAND_FEASIBLE=true' "$S/.env"
ok $? "the Thor render has hand infeasible, the GB10 render serves it"
K_THOR=thor-in-$RANDOM$RANDOM
K_SPARK=spark-in-$RANDOM$RANDOM
key "$T/gateway.key" "$K_THOR"
key "$S/gateway.key" "$K_SPARK"
key "$T/spark.key" "$K_SPARK"   # the key the Spark accepts, held by the Thor
key "$S/thor.key" "$K_THOR"
thor_peers() {
	cat >"$T/peers.yaml" <<EOF
box: thor
peers:
  spark:
    origin: http://127.0.0.1:$P_SGW
    key_file: spark.key
roles:
  hand: {$1: spark}
EOF
}
spark_peers() {
	cat >"$S/peers.yaml" <<EOF
box: spark
peers:
  thor:
    origin: http://127.0.0.1:$P_TGW/
    key_file: thor.key
$*
EOF
}

# --- peers.yaml validation ---------------------------------------------------------
thor_peers proxy
printf '  cortex: {proxy: spark}\n' >>"$T/peers.yaml"
run "$LOBES" --dir "$T" gateway --check
is "$rc" 3 "proxying a role this box serves is refused (exit 3)"
like "$errout" "peers.yaml:8:3: role 'cortex' is feasible on this box \(profile 'thor'\)" \
	"with file:line:column and why"
thor_peers proxy
sed -i 's/key_file: spark.key/key_file: spark.key\n    colour: red/' "$T/peers.yaml"
run "$LOBES" --dir "$T" gateway --check
like "$errout" "peers.yaml:6:5: unknown key 'colour' in peer 'spark'; expected origin or key_file" \
	"an unknown key is refused with its position"
thor_peers proxy
sed -i 's|origin: http://127.0.0.1:[0-9]*|origin: ftp://127.0.0.1:1|' "$T/peers.yaml"
run "$LOBES" --dir "$T" gateway --check
like "$errout" "peers.yaml:4:13: origin 'ftp://127.0.0.1:1' of peer 'spark' is not valid" "a bad origin is refused"
thor_peers proxy
sed -i 's/{proxy: spark}/{proxy: orin}/' "$T/peers.yaml"
run "$LOBES" --dir "$T" gateway --check
like "$errout" "peers.yaml:7:17: role 'hand' names peer 'orin'; expected a peer declared" "an undeclared peer is refused"
thor_peers proxy
chmod 644 "$T/spark.key"
run "$LOBES" --dir "$T" gateway --check
is "$rc" 3 "a peer key file readable by others is refused"
like "$errout" "peers.yaml:5:15: key file '$T/spark.key' of peer 'spark' has mode 0644; expected 0600" "saying which and why"
chmod 600 "$T/spark.key"
run "$LOBES" --dir "$T" --json gateway --check
is "$rc" 0 "a good peers.yaml passes --check"
like "$out" '"mode": "proxy"' "hand is proxied"
like "$out" "\"key_file\": \"$T/spark.key\"" "the key file is named"
unlike "$out$errout" "$K_SPARK" "the peer's key is never printed"

# --- two gateways ---------------------------------------------------------------------
spark_peers
gw_start "$S" --port "$P_SGW"
ok $? "the Spark's gateway starts (port $GW_PORT)"
S_PID=$GW_PID S_ERR=$GW_ERR
gw_start "$T" --port "$P_TGW"
ok $? "the Thor's gateway starts (port $GW_PORT)"
T_PID=$GW_PID T_ERR=$GW_ERR T_OUT=$GW_OUT
export GW_KEY=$K_THOR # the caller knows only the Thor's key

hand_ready() { gw GET /capabilities; [[ "$body" == *'"role":"hand"'*'"ready":true'*'"proxied":true'* ]]; }
gw_wait_for hand_ready
ok $? "the Thor's /capabilities shows hand ready once its peer lists it"
like "$body" "\"role\":\"hand\",\"model\":\"$HAND_ID\",\"served_names\":\[\"hand\",\"$HAND_ID\"\]" \
	"with the Spark's own served id"
like "$body" "\"role\":\"hand\"[^}]*\"feasible\":false[^}]*\"hosted_by\":\"http://127.0.0.1:$P_SGW\",\"hosted_by_box\":\"spark\",\"proxied\":true" \
	"feasible false here, proxied, hosted_by the Spark"
like "$body" '"box":"thor"' "the box names itself"
gw GET /v1/models
like "$body" "\"id\":\"hand\"[^}]*\"proxied\":true,\"hosted_by\":\"http://127.0.0.1:$P_SGW\"" "/v1/models lists hand as proxied"
like "$body" "\"id\":\"$HAND_ID\"" "under its served id too"

Q='"messages":[{"role":"user","content":"What is the capital city of France? Reply with only the city name."}],"max_tokens":8,"temperature":0'
gw POST /v1/chat/completions "{\"model\":\"hand\",$Q}"
is "$code" 200 "hand asked at the Thor answers 200"
like "$body" 'Paris' "answered by an engine"
gw POST /v1/chat/completions "{\"model\":\"$HAND_ID\",$Q}"
is "$code" 200 "asked by the served id the Thor's /v1/models lists for it, hand is proxied too"
like "$body" '"model":"hand"' "and answered by the Spark's hand"
gw_wait_for grep -q '"path":"/v1/chat/completions","role":"hand","status":200' "$S_ERR"
ok $? "the Spark's gateway served it with the Spark's key (the caller's key is not the Spark's)"
like "$(grep -c 'chat/completions' "$TMP/spark-hand.log")" '^[1-9]' "the Spark's hand engine got the request"
unlike "$(cat "$T_OUT" "$T_ERR" "$S_ERR")" "$K_SPARK|$K_THOR" "no key in any log"

# a stream through the hop: frames leave the Thor as the Spark's hand makes them
exec 3< <(curl -sS -N --max-time 60 -H "Authorization: Bearer $K_THOR" -H 'Content-Type: application/json' \
	-d '{"model":"hand","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"Tell me about the four seasons of the year in a few words"}]}' "http://127.0.0.1:$P_TGW/v1/chat/completions" |
	while IFS= read -r l; do [ -n "$l" ] && printf '%s %s\n' "${EPOCHREALTIME/./}" "$l"; done)
frames=$(cat <&3)
exec 3<&-
n=$(grep -c ' data: {' <<<"$frames")
first=$(grep ' data: {' <<<"$frames" | head -1 | cut -d' ' -f1)
last=$(grep ' data: {' <<<"$frames" | tail -1 | cut -d' ' -f1)
ok $([ "$n" -ge 4 ]; echo $?) "a streamed chat through the hop: $n data frames"
like "$frames" 'data: \[DONE\]' "relayed to its end"
# the engine spaces tokens 150 ms apart: relayed frame by frame they span
# at least half of that per gap; buffered anywhere they would arrive together
span=$(( (last - first) / 1000 ))
ok $([ "$span" -ge $(( (n - 2) * 75 )) ]; echo $?) "frames arrive one by one (first to last: ${span} ms for $n frames)"

# --- status --fleet -----------------------------------------------------------------
run "$LOBES" --dir "$T" --json status --fleet
is "$rc" 0 "status --fleet --json exits 0"
like "$out" '"name": "thor"' "it lists the Thor"
like "$out" '"name": "spark"' "and the Spark"
fleet_json=$out
hand_row=$(printf '%s' "$out" | tr -d ' \n' | grep -o '"role":"hand","boxes":{[^]]*}}}')
like "$hand_row" '"thor":\{"feasible":false,"ready":true,"proxied":true,"hosted_by":"spark"' "hand at the Thor: infeasible, ready, proxied to the Spark"
like "$hand_row" '"spark":\{"feasible":true,"ready":true,"proxied":false' "hand at the Spark: feasible and ready"
like "$(printf '%s' "$out" | tr -d ' \n')" '"name":"spark","origin":"http://127.0.0.1:'"$P_SGW"'","self":false,"reachable":true,"profile":"spark","card":"spark"' \
	"the Spark: its profile and detected card"
run "$LOBES" --dir "$T" status --fleet
is "$rc" 0 "status --fleet exits 0"
like "$out" '^role +thor +spark' "a table: one column per box"
like "$out" 'hand +proxied>spark ready +ready' "hand: proxied at the Thor, served at the Spark"
like "$out" 'cortex +ready +not ready' "cortex: ready at the Thor, down at the Spark"
like "$out" 'profile +thor \(card thor\) +spark \(card spark\)' "what each box runs and detected"
for b in thor spark; do
	for r in cortex senses hand embedder reranker; do
		j=$(printf '%s' "$fleet_json" | tr -d ' \n' | sed 's/{"role":"/\n/g' | grep "^$r\"" |
			grep -o "\"$b\":{[^}]*}" | sed 's/.*"ready":\([a-z]*\).*"proxied":\([a-z]*\).*/\1 \2/')
		case $j in "true true") want='proxied>[a-z]+ ready' ;; "true false") want='^ready$' ;; *) want='^(not ready|infeasible|refer>.*)$' ;; esac
		col=1; [ $b = spark ] && col=2
		t=$(printf '%s\n' "$out" | grep "^$r " | sed 's/   */\t/g' | cut -f$((col + 1)))
		like "$t" "$want" "the text row of $r agrees with --json at $b ($j)"
	done
done

# --- probe --fleet: every role once, where it is served --------------------------------
run "$LOBES" --dir "$T" probe --fleet
is "$rc" 1 "probe --fleet exits 1 (the fleets' other engines are down)"
like "$out" '^cortex +thor +pass .*chat-capital' "cortex probed at the Thor, through its gateway, and right"
like "$out" '^hand +spark +pass .*chat-known-answer' "hand probed at the Spark (where it is served), and right"
like "$out" '^embedder +thor +FAIL' "a feasible role whose engine is down fails"
is "$(printf '%s\n' "$out" | grep -cE '^(cortex|senses|hand|embedder|reranker) ')" 5 "each role probed once"
gw_wait_for grep -q '"role":"hand","status":200' "$S_ERR"
run "$LOBES" --dir "$T" --json probe --fleet
like "$(printf '%s' "$out" | tr -d ' \n')" '"role":"hand","probe":"chat-known-answer","status":"pass".*"url":"http://127.0.0.1:'"$P_SGW"'/v1/chat/completions".*"box":"spark"' \
	"--json: hand passed through the Spark's gateway, naming the box"

# --- doctor: the links ---------------------------------------------------------------
doctor "$T"
like "$out" "ok +peer-reachable: peer 'spark' \(http://127.0.0.1:$P_SGW\) answers" "doctor: the Spark is reachable"
like "$out" "ok +peer-key: peer 'spark' accepts the key in '$T/spark.key'" "doctor: its key is accepted"
like "$out" "ok +peer-proxy: role 'hand' is proxied to peer 'spark' and ready there" "doctor: the proxied role is ready at its host"
doctor "$S"
like "$out" "ok +peer-key: peer 'thor' accepts the key in '$S/thor.key'" "doctor at the Spark: the Thor accepts its key"

# --- referral only ----------------------------------------------------------------
reloaded() { [ "$(grep -c '"event":"reloaded"' "$1")" -ge "$2" ]; }
thor_peers refer
kill -HUP "$T_PID"
gw_wait_for reloaded "$T_ERR" 1
gw POST /v1/chat/completions "{\"model\":\"hand\",$Q}"
is "$code" 404 "referral only: hand at the Thor is 404"
like "$body" '"type":"role_infeasible","code":"role_infeasible"' "role_infeasible"
like "$body" "\"hosted_by\":\"http://127.0.0.1:$P_SGW\"" "with hosted_by the Spark"
gw GET /capabilities
like "$body" '"role":"hand"[^}]*"ready":false[^}]*"hosted_by_box":"spark","proxied":false' "/capabilities: referred, not proxied, not ready"

# --- a pair that points both ways: 508, not a loop -----------------------------------
thor_peers proxy
kill -HUP "$T_PID"
gw_wait_for reloaded "$T_ERR" 2
deploy_env "$S" spark "HAND_FEASIBLE=false" "LOBES_GATEWAY_PORT=$P_SGW"
kill -HUP "$S_PID"
gw_wait_for reloaded "$S_ERR" 1
ok $? "the Spark reloads with hand switched off"
gw POST /v1/chat/completions "{\"model\":\"hand\",$Q}"
is "$code" 404 "the peer's own role_infeasible is final: relayed as 404"
like "$body" "profile 'spark' declares it infeasible\",\"type\":\"role_infeasible\",\"code\":\"role_infeasible\"" "with the peer's own answer"
spark_peers 'roles:
  hand: {proxy: thor}'
kill -HUP "$S_PID"
gw_wait_for reloaded "$S_ERR" 2
ok $? "the Spark reloads with hand proxied back to the Thor"
n_t=$(grep -c '"role":"hand"' "$T_ERR")
n_s=$(grep -c '"role":"hand"' "$S_ERR")
gw POST /v1/chat/completions "{\"model\":\"hand\",$Q}"
is "$code" 508 "a request for hand at the Thor gets 508"
like "$body" '"code":"proxy_loop"' "proxy_loop"
like "$body" '"from":"thor"' "naming where the hop came from"
sleep_until_logged() { [ "$(grep -c '"role":"hand"' "$S_ERR")" -gt "$n_s" ]; }
gw_wait_for sleep_until_logged
is "$(( $(grep -c '"role":"hand"' "$T_ERR") - n_t )) $(( $(grep -c '"role":"hand"' "$S_ERR") - n_s ))" "1 1" \
	"one request at each box: no loop"
doctor "$T"
like "$out" "error +peer-proxy: role 'hand' is proxied to peer 'spark', which proxies it on to http://127.0.0.1:$P_TGW: the two boxes proxy it to each other" \
	"doctor names the pair that proxies hand both ways"
deploy_env "$S" spark "HAND_PORT=$P_SPARK_HAND" "LOBES_GATEWAY_PORT=$P_SGW"
spark_peers
kill -HUP "$S_PID"
gw_wait_for reloaded "$S_ERR" 3
gw_wait_for hand_ready

# --- the Spark rotates its key: the Thor's link into it breaks ------------------------
K_SPARK=spark-in-rotated-$RANDOM$RANDOM
key "$S/gateway.key" "$K_SPARK"
kill -HUP "$S_PID"
gw_wait_for reloaded "$S_ERR" 4
gw POST /v1/chat/completions "{\"model\":\"hand\",$Q}"
is "$code" 502 "the Spark rotated its key: the Thor's proxied request gets 502, not 401"
like "$body" '"code":"peer_auth_failed"' "peer_auth_failed"
like "$body" "peer 'spark' \(http://127.0.0.1:$P_SGW\) rejected this box's key" "saying the peer rejected it"
unlike "$hdrs" 'WWW-Authenticate' "no auth challenge to the client"
doctor "$T"
like "$out" "error +peer-key: peer 'spark' rejects the key in '$T/spark.key' \(HTTP 401\)" \
	"doctor at the Thor: the Spark rejects the key it holds, naming the file"
unlike "$out" "peer-reachable: .*not reachable" "the Spark itself is still reachable"
doctor "$S"
like "$out" "ok +peer-key: peer 'thor' accepts the key in '$S/thor.key'" \
	"the Spark's own link into the Thor is unaffected (per-pair keys)"
not_ready() { gw GET /capabilities; [[ "$body" == *'"role":"hand"'*'"ready":false'*'"proxied":true'* ]]; }
gw_wait_for not_ready
ok $? "hand is not ready at the Thor while its key is rejected"
key "$T/spark.key" "$K_SPARK"
kill -HUP "$T_PID"
gw_wait_for reloaded "$T_ERR" 3
gw_wait_for hand_ready
ok $? "the Thor given the Spark's new key: ready again"
gw POST /v1/chat/completions "{\"model\":\"hand\",$Q}"
is "$code" 200 "and hand at the Thor is answered again"

# --- the Spark's gateway stops: 503 naming the peer -----------------------------------
kill -TERM "$S_PID"
gw_wait_exit "$S_PID"
is "$GW_RC" 0 "the Spark's gateway drains and exits 0"
gw POST /v1/chat/completions "{\"model\":\"hand\",$Q}"
is "$code" 503 "the Spark's gateway stopped: hand at the Thor is 503"
like "$body" "\"code\":\"peer_unavailable\"" "peer_unavailable"
like "$body" "peer 'spark' \(http://127.0.0.1:$P_SGW\)" "naming the peer"
like "$hdrs" 'Retry-After: 5' "with Retry-After"
run "$LOBES" --dir "$T" status --fleet
like "$out" 'spark.*unreachable' "status --fleet marks the Spark unreachable"
is "$rc" 1 "and exits 1"
kill -TERM "$T_PID"
gw_wait_exit "$T_PID"
is "$GW_RC" 0 "the Thor's gateway drains and exits 0 (its peer poll stopped)"
# --- no box answers: probe --fleet has verified nothing ---------------------------------
run "$LOBES" --dir "$T" probe --fleet
is "$rc" 4 "probe --fleet with no box answering: exit 4 (could not verify), not 0"
like "$errout" "could not verify: no box of the fleet answered /capabilities" "… saying why"
like "$out" "thor: unreachable" "… and naming each box that did not answer"
like "$out" "^0 probed, 0 failed" "… after probing nothing"
run "$LOBES" --dir "$T" --json probe --fleet
is "$rc" 4 "--json: exit 4 too"
grep -h 'Sanitizer' "$T_ERR" "$S_ERR" | head -5
gw_stop_all
done_testing
