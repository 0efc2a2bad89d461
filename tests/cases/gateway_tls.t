#!/bin/bash
# gateway_tls.t — an https peer carries traffic: the peer (a scripted engine
# standing for a peer box's gateway, tests/gateway/engine.py --tls) has a
# certificate for 127.0.0.1 signed by a test CA made here with openssl; with
# LOBES_GATEWAY_PEER_CA_FILE naming that CA the proxied role is ready and
# answered through TLS; without it the peer's certificate is not trusted and
# the role is 503 peer_unavailable (never an unverified connection); a CA
# file that cannot be read is refused by --check at its line; `status
# --fleet` and doctor's link checks use the same CA file.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
. "$SRC/tests/gateway/lib.sh"
gw_test_env
command -v openssl >/dev/null || skip_all "openssl is not installed"
C=$TMP/ca
mkdir -p "$C"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=lobes test CA" \
	-keyout "$C/ca.key" -out "$C/ca.pem" >/dev/null 2>&1 &&
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$C/peer.key" -out "$C/peer.csr" >/dev/null 2>&1 &&
	printf 'subjectAltName=IP:127.0.0.1\n' >"$C/ext" &&
	openssl x509 -req -in "$C/peer.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial -days 2 \
		-extfile "$C/ext" -out "$C/peer.pem" >/dev/null 2>&1
ok $? "a test CA and a peer certificate for 127.0.0.1"
eng_start --tls "$C/peer.pem" "$C/peer.key" --models hand || skip_all "the TLS engine did not start"
P_PEER=$ENG_PORT
eng_start
D=$TMP/deploy
mkdir -p "$D"
gw_keyfile "$D/spark.key" "k-$RANDOM$RANDOM"
cat >"$D/peers.yaml" <<EOF
box: thor
peers:
  spark:
    origin: https://127.0.0.1:$P_PEER
    key_file: spark.key
roles:
  hand: {proxy: spark}
EOF
eng_env "$D" "$ENG_PORT" LOBES_GATEWAY_PEER_CA_FILE=absent.pem
run "$LOBES" --dir "$D" gateway --check
is "$rc" 3 "a CA file that cannot be read: --check exits 3"
like "$errout" "\.env:[0-9]+: LOBES_GATEWAY_PEER_CA_FILE 'absent.pem' cannot be read" "naming the file and line"

cp "$C/ca.pem" "$D/peers-ca.pem"
eng_env "$D" "$ENG_PORT" LOBES_GATEWAY_PEER_CA_FILE=peers-ca.pem
gw_start "$D"
ok $? "the gateway starts with the test CA for its peers"
hand_ready() { gw GET /capabilities; [[ "$body" == *'"role":"hand"'*'"ready":true'* ]]; }
gw_wait_for hand_ready
ok $? "the https peer's role is ready (its /v1/models read over TLS, verified)"
gw POST /v1/chat/completions '{"model":"hand","messages":[{"role":"user","content":"hi"}]}'
is "$code" 200 "a chat for the proxied role is answered through the https peer"
like "$body" '"content":"ok"' "with the peer's answer"
# the fleet view and doctor's link checks ask the peer with the same CA
run "$LOBES" --dir "$D" --json status --fleet
like "$(printf '%s' "$out" | tr -d ' \n')" '"name":"spark","origin":"https://127.0.0.1:[0-9]+","self":false,"reachable":true' \
	"status --fleet reaches the https peer, verified with the CA file"
run "$LOBES" --dir "$D" doctor
like "$out" "peer 'spark' \(https://127.0.0.1:$P_PEER\) answers" "doctor: the https peer answers"
like "$out" "peer 'spark' accepts the key" "doctor: and accepts the key, over TLS"
gw_stop_all

eng_env "$D" "$ENG_PORT"
gw_start "$D"
ok $? "the gateway starts without the CA file"
gw_wait_for grep -q '"event":"peer-health".*"ready":false' "$GW_ERR"
ok $? "the peer's certificate is not trusted: its role is not ready"
gw POST /v1/chat/completions '{"model":"hand","messages":[{"role":"user","content":"hi"}]}'
is "$code" 503 "and a chat for it is 503, never sent unverified"
like "$body" '"code":"peer_unavailable"' "peer_unavailable"
run "$LOBES" --dir "$D" --json status --fleet
like "$(printf '%s' "$out" | tr -d ' \n')" '"name":"spark",[^}]*"reachable":false,"error":"[^"]*certificate' \
	"without the CA file status --fleet does not trust the peer either"
done_testing
