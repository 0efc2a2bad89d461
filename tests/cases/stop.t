#!/bin/bash
# stop.t — `lobes stop` without a real dockerd. The dry run, against a fake
# Docker Engine API (tests/secrets/fake_engine.py), names the compose
# project and the deploy dir, each once. `stop --apply` with an unreachable
# Docker Engine (DOCKER_HOST naming a socket nobody listens on) stops the
# front door first — the gateway `serve` starts, found by its pid file,
# drains and exits — and only then reports the engine error (exit 4), as
# docs/gateway.md says: no gateway is left sending requests to engines.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed for the fake engine"
command -v curl >/dev/null || skip_all "curl is not installed"
for v in $(env | sed -n 's/^\(LOBES_GATEWAY_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset LOBES_SYSROOT LOBES_DIR DOCKER_HOST
export LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1 NO_COLOR=1

D=$TMP/deploy
"$LOBES" --dir "$D" init --profile thor --apply >/dev/null
ok $? "a thor deploy dir"
sed -i 's/^COMPOSE_PROJECT_NAME=.*/COMPOSE_PROJECT_NAME=fleetx/' "$D/.env"
echo LOBES_GATEWAY_DRAIN_TIMEOUT=2 >>"$D/.env"

# --- the dry run: the project and the deploy dir --------------------------------
E=$TMP/engine
mkdir -p "$E"
python3 - "$SRC/tests/fixtures/engine" "$E" <<'PY'
import json, sys
src, out = sys.argv[1:]
l = json.load(open(src + "/containers-list.json"))[0]
i = json.load(open(src + "/inspect-senses.json"))
cid = "5e5e" * 16
l["Id"] = i["Id"] = cid
l["Names"] = ["/fleetx_cortex_1"]; i["Name"] = "/fleetx_cortex_1"
for labels in (l["Labels"], i["Config"]["Labels"]):
    labels["com.docker.compose.project"] = "fleetx"
    labels["com.docker.compose.service"] = labels["lobes.role"] = "cortex"
json.dump([l], open(out + "/list.json", "w"))
json.dump(i, open(out + "/inspect-%s.json" % cid, "w"))
PY
python3 "$SRC/tests/secrets/fake_engine.py" "$TMP/docker.sock" "$E" &
FAKE=$!
trap 'kill "$FAKE" 2>/dev/null; wait "$FAKE" 2>/dev/null; gw_stop_all; rm -rf "$TMP"' EXIT
for i in $(seq "$TEST_POLLS"); do [ -S "$TMP/docker.sock" ] && break; sleep 0.1; done
DOCKER_HOST=unix://$TMP/docker.sock run "$LOBES" --dir "$D" stop
is "$rc" 0 "the dry run exits 0"
like "$out" "^would stop 1 container of project fleetx in $D\$" "it names the project, then the deploy dir"
like "$out" "^  fleetx_cortex_1 \(running\)" "and lists the container"

# --- --apply, Docker unreachable: the gateway still goes first ------------------
gw_start "$D" --pid-file "$D/gateway.pid" || skip_all "the gateway did not start"
gw_wait_for test -s "$D/gateway.pid"
NOSOCK=$TMP/no-docker.sock
DOCKER_HOST=unix://$NOSOCK run "$LOBES" --dir "$D" stop
is "$rc" 4 "the dry run cannot list the containers: exit 4"
like "$out" "first stop the gateway \(pid $GW_PID\)" "… after saying the gateway would stop first"
kill -0 "$GW_PID" 2>/dev/null
ok $? "a dry run leaves the gateway running"

DOCKER_HOST=unix://$NOSOCK run "$LOBES" --dir "$D" stop --apply
is "$rc" 4 "stop --apply with Docker unreachable: exit 4 (runtime error)"
like "$out" "^gateway: stopped \(pid $GW_PID\)" "the gateway was stopped first"
like "$errout" "docker engine at '$NOSOCK'" "then the engine error is reported, naming the socket"
gw_wait_exit "$GW_PID"
is "$GW_RC" 0 "the gateway drained and exited 0"
ok "$([ ! -e "$D/gateway.pid" ]; echo $?)" "its pid file is gone"

gw_start "$D" --pid-file "$D/gateway.pid" || skip_all "the gateway did not start again"
gw_wait_for test -s "$D/gateway.pid"
DOCKER_HOST=unix://$NOSOCK run "$LOBES" --dir "$D" --json stop --apply
is "$rc" 4 "--json: exit 4 as well"
is "$(printf '%s' "$out" | python3 -c 'import json,sys; g=json.load(sys.stdin)["gateway"]; print(g["action"], g["ok"], g["pid"])')" \
	"stop True $GW_PID" "--json: the result says the gateway was stopped"
gw_wait_exit "$GW_PID"
is "$GW_RC" 0 "… and it was"

DOCKER_HOST=unix://$NOSOCK run "$LOBES" --dir "$D" stop --apply
is "$rc" 4 "no gateway running: still the engine error"
unlike "$out" "gateway:" "… with nothing said of a gateway"
done_testing
