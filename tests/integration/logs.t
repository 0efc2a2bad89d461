#!/bin/bash
# logs.t — durable per-boot logs on a real dockerd (the private one of
# docker.sh; the stand-in image is FROM scratch, the engines listen on
# loopback in the host network), kept by the log collector `serve --apply`
# starts:
#  - the spark profile on a (simulated) Thor: the cortex's engine exits 1
#    at its fp8 k_scale assert and Docker's restart policy (unless-stopped)
#    starts it again; `lobes logs cortex --previous` shows a failed boot's
#    lines, and `lobes triage --role cortex --previous` names its cause;
#  - a healthy role whose engine process is killed (SIGKILL from the host,
#    exit 137; `docker kill` would count as a manual stop and Docker would
#    not restart it) and restarted by Docker: `lobes logs senses
#    --previous` shows the killed boot's lines, `lobes logs senses` the new
#    boot's; the files are 0600;
#  - `stop --apply` stops the collector (its last pass keeps the lines
#    logged until then).
# Uses the fixed engine ports of the spark profile (8001-8005): run alone.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/integration/docker.sh"
. "$SRC/tests/integration/fleet_lib.sh"
PROJECT_PREFIX=lobes-logs
S=$TMP/spark
docker_test_cleanup() {
	local p
	p=$(cat "$S/collector.pid" 2>/dev/null) && kill -KILL "$p" 2>/dev/null
	return 0
}
fast="--poll-ms 200 --window-wait $WAIT --ready-wait $WAIT --mem-wait $WAIT"
deploy "$S" spark thor || { ok 1 "deploy spark"; done_testing; }
boots() { ls "$S/logs/$1" 2>/dev/null | grep -c '^[0-9]\{6\}\.log$'; }

# --- a crash loop: the engine exits 1, Docker restarts it ----------------------
run "$LOBES" --dir "$S" --json serve --apply --no-gateway $fast
is "$rc" 1 "serve of spark on a thor stops at the crash-looping cortex"
is "$(j 'd["collector"]["action"]')" start "serve started the log collector first"
COL=$(j 'd["collector"]["pid"]')
ok "$(kill -0 "$COL" 2>/dev/null; echo $?)" "it runs after serve exited (pid $COL)"
two_boots() { [ "$(boots cortex)" -ge 2 ] && grep -q 'k_scale' "$S/logs/cortex/000001.log"; }
wait_for "$WAIT" two_boots
ok $? "Docker restarted the cortex and the collector kept each boot ($(boots cortex))"
restarts=$(docker inspect -f '{{.RestartCount}}' "$(cd "$S" && compose ps -aq cortex)")
ok "$([ "${restarts:-0}" -ge 1 ]; echo $?)" "by its restart policy (RestartCount $restarts)"
run "$LOBES" --dir "$S" logs cortex --previous
is "$rc" 0 "lobes logs cortex --previous"
like "$out" "^# lobes boot [0-9]{6} container [0-9a-f]{64} started " "… a boot of the cortex's container"
like "$out" "assert layer.k_scale > 0.0" "… with the failed boot's assert line"
run "$LOBES" --dir "$S" --json triage --role cortex --previous
is "$rc" 1 "triage --role cortex --previous: fatal (exit 1)"
like "$out" '"id": "fp8-k-scale-assert"' "… names the failed boot's cause"
(cd "$S" && compose stop -t 1 cortex >/dev/null 2>&1)

# --- a healthy role's engine killed: Docker restarts it ------------------------
(cd "$S" && compose up -d senses >/dev/null 2>&1)
senses_up() { curl -fs --max-time 5 -o /dev/null http://127.0.0.1:8002/health && [ "$(boots senses)" -ge 1 ] &&
	grep -q 'Application startup complete' "$S/logs/senses/000001.log"; }
wait_for "$WAIT" senses_up
ok $? "senses answers /health and its first boot is kept"
CID=$(cd "$S" && compose ps -q senses)
EPID=$(docker inspect -f '{{.State.Pid}}' "$CID")
kill -KILL "$EPID"
ok $? "its engine process (host pid $EPID) is killed"
restarted() { [ "$(docker inspect -f '{{.RestartCount}}' "$CID")" -ge 1 ] && [ "$(boots senses)" -ge 2 ] &&
	grep -q 'Application startup complete' "$S/logs/senses/000002.log" 2>/dev/null; }
wait_for "$WAIT" restarted
ok $? "Docker restarted it and the collector began its second boot"
is "$(docker inspect -f '{{.State.Running}}' "$CID")" true "the same container runs again"
run "$LOBES" --dir "$S" logs senses --previous
like "$out" "^# lobes boot 000001 container $CID started " "logs senses --previous: the killed boot"
like "$out" "Application startup complete" "… with its lines"
run "$LOBES" --dir "$S" logs senses
like "$out" "^# lobes boot 000002 container $CID started " "logs senses: the new boot"
is "$(find "$S/logs" -name '*.log*' -type f ! -perm 600 | wc -l)" 0 "every kept file is 0600"

# --- stop stops the collector --------------------------------------------------
run "$LOBES" --dir "$S" --json stop --apply --no-gateway --wait "$WAIT"
is "$(j 'd["collector"]["action"]'):$(j 'd["collector"]["ok"]')" stop:true "stop --apply stopped the collector"
ok "$(kill -0 "$COL" 2>/dev/null; [ $? = 1 ]; echo $?)" "its process is gone"
ok "$([ ! -e "$S/collector.pid" ]; echo $?)" "and its pid file"
done_testing
