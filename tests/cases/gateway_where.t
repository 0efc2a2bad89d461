#!/bin/bash
# gateway_where.t — where the front door is looked for, and what of a peer's
# address is ever printed.
#
# Proves: `status` and `doctor` find a gateway bound to 127.0.0.2 (its
# LOBES_GATEWAY_BIND), not only one on 127.0.0.1, and print that address;
# credentials in a peer origin (peers.yaml, or LOBES_GATEWAY_PEER_<ROLE>)
# are refused with the position and never printed — not by `gateway
# --check`, `doctor`, `status --fleet`, the `serve` dry run (text and
# --json), nor by the gateway's reload-failed event; a second YAML document
# in peers.yaml is an error at its position and changes nothing.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
gw_test_env

D=$TMP/deploy
mkdir -p "$D"
P_DOWN=$(standin_free_port)
PG=$(standin_free_port)
while [ "$PG" = "$P_DOWN" ]; do PG=$(standin_free_port); done
write_env() {
	{
		cat "$SRC/tests/goldens/thor/.env"
		for r in CORTEX SENSES HAND EMBEDDER RERANKER; do echo "${r}_PORT=$P_DOWN"; done
		echo "LOBES_GATEWAY_PORT=$PG"
		printf '%s\n' "$@"
	} >"$D/.env"
	chmod 600 "$D/.env"
}
# doctor: the Thor fixture box with the fake docker CLI
doctor() {
	run env PATH="$SRC/tests/fixtures/doctor/bin:$PATH" LOBES_SYSROOT="$SRC/tests/fixtures/hosts/thor" \
		LOBES_NVIDIA_SMI="$SRC/tests/fixtures/hosts/thor/bin/nvidia-smi" LOBES_NVML_LIB="$TMP/absent.so" \
		"$LOBES" --dir "$D" "$@" doctor
}

# --- a gateway on 127.0.0.2 ------------------------------------------------------
write_env "LOBES_GATEWAY_BIND=127.0.0.2"
"$LOBES" --dir "$D" gateway --pid-file "$TMP/gw.pid" >"$TMP/gw.out" 2>"$TMP/gw.err" &
GW_PID=$!
GW_PIDS="$GW_PIDS $GW_PID"
gw_wait_for grep -q "listening on http://127.0.0.2:$PG" "$TMP/gw.out"
ok $? "the gateway listens on 127.0.0.2:$PG, as LOBES_GATEWAY_BIND says" \
	"$(cat "$TMP/gw.out" "$TMP/gw.err" 2>/dev/null | tail -3)"
curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$PG/health"
ok $([ $? != 0 ]; echo $?) "nothing answers on 127.0.0.1:$PG (the test would prove nothing otherwise)"
doctor
like "$out" "gateway answers on 127.0.0.2:$PG" "doctor finds the gateway where it is bound"
unlike "$out" "gateway not running" "and does not call it not running"
run "$LOBES" --dir "$D" --json status
like "$(printf '%s' "$out" | tr -d ' \n')" "\"gateway\":\\{\"bind\":\"127.0.0.2\",\"port\":$PG,\"running\":true" \
	"status --json: the gateway on 127.0.0.2 is running"
run "$LOBES" --dir "$D" status
like "$out" "gateway +127.0.0.2:$PG +running" "status prints the address it is bound to"
gw_stop_all
doctor
like "$out" "gateway not running \(nothing answers on 127.0.0.2:$PG\)" "once stopped, doctor says where it looked"
run "$LOBES" --dir "$D" status
like "$out" "gateway +127.0.0.2:$PG +not running" "and status says it is not running"

# --- credentials in a peer origin are never printed ------------------------------
CANARY=canary-$RANDOM$RANDOM
write_env
gw_keyfile "$D/spark.key" "spark-key-$RANDOM"
good_peers() {
	printf 'box: thor\npeers:\n  spark:\n    origin: http://127.0.0.1:%s\n    key_file: spark.key\nroles:\n  hand: {refer: spark}\n' \
		"$P_DOWN" >"$D/peers.yaml"
}
bad_peers() {
	printf 'box: thor\npeers:\n  spark:\n    origin: http://admin:%s@127.0.0.1:%s\n    key_file: spark.key\nroles:\n  hand: {refer: spark}\n' \
		"$CANARY" "$P_DOWN" >"$D/peers.yaml"
}
bad_peers
all=""
for args in "gateway --check" "--json gateway --check" "status --fleet" "--json status --fleet" "serve" "--json serve"; do
	# shellcheck disable=SC2086
	run "$LOBES" --dir "$D" $args
	all="$all$out$errout"
	[ "$args" = "gateway --check" ] && { c_rc=$rc; c_err=$errout; }
done
doctor
all="$all$out$errout"
doctor --json
all="$all$out$errout"
is "$c_rc" 3 "gateway --check refuses an origin with credentials (exit 3)"
like "$c_err" "peers.yaml:4:13: origin 'http://<hidden>@127.0.0.1:$P_DOWN' of peer 'spark' is not valid" \
	"naming its position, with the credentials masked"
unlike "$all" "$CANARY|admin:" "the credentials appear in no output of check, status --fleet, serve, doctor"
like "$all" "<hidden>@127.0.0.1" "(the outputs did reach the origin)"

# the same in the environment's referral address
good_peers
write_env "LOBES_GATEWAY_PEER_SENSES=http://admin:$CANARY@127.0.0.1:$P_DOWN"
line=$(grep -n '^LOBES_GATEWAY_PEER_SENSES=' "$D/.env" | cut -d: -f1)
run "$LOBES" --dir "$D" --json gateway --check
is "$rc" 3 "a LOBES_GATEWAY_PEER_<ROLE> with credentials is refused"
like "$errout" "\\.env:$line: LOBES_GATEWAY_PEER_SENSES 'http://<hidden>@127.0.0.1:$P_DOWN' is not valid; expected http\\(s\\)://HOST\\[:PORT\\]" \
	"at its line, masked"
unlike "$out$errout" "$CANARY" "without the credentials"
write_env "LOBES_GATEWAY_PEER_SENSES=http://orin.example:8000/"
run "$LOBES" --dir "$D" --json gateway --check
is "$rc" 0 "a plain referral origin is accepted"

# the reload-failed event of a running gateway
write_env
good_peers
gw_start "$D"
ok $? "the gateway starts with a good peers.yaml"
bad_peers
kill -HUP "$GW_PID"
gw_wait_for grep -q '"event":"reload-failed"' "$GW_ERR"
ok $? "a peers.yaml with credentials on SIGHUP: reload-failed"
unlike "$(cat "$GW_OUT" "$GW_ERR")" "$CANARY" "and the event does not print them"
like "$(grep reload-failed "$GW_ERR")" "<hidden>@127.0.0.1" "(it names the masked origin)"

# --- one document per file -------------------------------------------------------
good_peers
printf -- '---\nbox: other\n' >>"$D/peers.yaml"
sum=$(cksum <"$D/peers.yaml")
run "$LOBES" --dir "$D" gateway --check
is "$rc" 3 "a second YAML document in peers.yaml is refused"
like "$errout" "peers.yaml:9:1: a second YAML document; expected one document per file" "at its position"
is "$(cksum <"$D/peers.yaml")" "$sum" "and the file is unchanged"
kill -HUP "$GW_PID"
gw_wait_for grep -q '"event":"reload-failed".*second YAML document' "$GW_ERR"
ok $? "a running gateway refuses it on reload too"
gw GET /health
is "$code" 200 "and keeps serving on the settings it had"
gw_stop_all
done_testing
