#!/bin/bash
# top.t — `lobes top` without a real dockerd: a fake Docker Engine API
# (tests/secrets/fake_engine.py) holds a running cortex container, whose
# port is a vLLM stand-in's, and a restarting hand container whose log is a
# real boot failure (tests/fixtures/logs/train/, CUDA error 804). The box is
# fixture /proc files (LOBES_SYSROOT).
#   --once --json agrees with the stand-in's own /metrics (running, waiting,
#   KV usage, token counters; rates from two looks), names where its metric
#   names came from (the stand-in's image is unrecorded: its /version), says
#   why hand is not ready (the cause triage names), and reads the box as the
#   memory gate does;
#   the text snapshot when stdout is not a terminal; status --watch is top;
#   in a real terminal (tmux) the role rows show and q quits;
#   no .env: exit 3.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed for the fake engine"
command -v curl >/dev/null || skip_all "curl is not installed"
command -v jq >/dev/null || skip_all "jq is not installed"
[ -x "$STANDIN" ] || skip_all "stand-in not built ($STANDIN; make test-helpers)"
for v in $(env | sed -n 's/^\(VLLM_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(STANDIN_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(LOBES_GATEWAY_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
unset LOBES_SYSROOT LOBES_DIR DOCKER_HOST HF_HOME
export LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1 NO_COLOR=1
export HF_HUB_CACHE=$SRC/tests/fixtures/hf/hub
export STANDIN_LOAD_MS=30 STANDIN_PROFILE_MS=30 STANDIN_WARMUP_MS=10
export STANDIN_DEVICE_BYTES=2G STANDIN_MEM_SCALE=0.01

# --- the stand-in cortex: two streams held open, one running, one waiting -------
STANDIN_VERSION=0.26.1rc1.dev942+standin STANDIN_TOKEN_MS=1000 STANDIN_KV_TOKENS=1000 \
	standin_start cortex unsloth/Qwen3.8-27B-NVFP4 --served-model-name cortex --max-num-seqs 1
ok $? "the stand-in cortex starts"
CPORT=$STANDIN_PORT
HPORT=$(standin_free_port)
req() { jq -cn --arg q "$1" --argjson s "$2" '{model:"cortex",messages:[{role:"user",content:$q}],stream:$s,chat_template_kwargs:{enable_thinking:false}}'; }
http POST /v1/chat/completions "$(req 'Name three colours' false)"
is "$code" 200 "one answered request (its tokens in the counters)"
pids=
# the streams run until they are killed at the end (3,000 tokens a second
# apart): on a loaded box the checks below can come minutes later, and a
# stream that ended before them would change the counters and the rows
for i in 1 2; do
	curl -sN --max-time 3600 -H 'Content-Type: application/json' \
		-d '{"model":"cortex","prompt":"Name three colours","stream":true,"max_tokens":3000,"ignore_eos":true}' \
		"http://127.0.0.1:$CPORT/v1/completions" >/dev/null 2>&1 &
	pids+="$! "
done
metric() { printf '%s\n' "$body" | sed -n "s/^$1{[^}]*} \([0-9.e+-]*\)\$/\1/p"; }
for i in $(seq "$TEST_POLLS"); do
	http GET /metrics
	[ "$(metric vllm:num_requests_waiting)" = 1.0 ] && break
	sleep 0.1
done
is "$(metric vllm:num_requests_running)/$(metric vllm:num_requests_waiting)" "1.0/1.0" "two streams open: one running, one waiting"
M=$body

# --- a deploy dir, a fake engine, a fixture box ---------------------------------
D=$TMP/deploy
"$LOBES" --dir "$D" init --profile thor --apply >/dev/null
ok $? "a thor deploy dir"
sed -i "s/^COMPOSE_PROJECT_NAME=.*/COMPOSE_PROJECT_NAME=fleetx/; s/^CORTEX_PORT=.*/CORTEX_PORT=$CPORT/; s/^HAND_PORT=.*/HAND_PORT=$HPORT/" "$D/.env"
E=$TMP/engine
mkdir -p "$E"
HLOG=$SRC/tests/fixtures/logs/train/gpustack-1254-cudagetdevicecount-error-804.log
python3 - "$SRC/tests/fixtures/engine" "$E" "$HLOG" <<'PY'
import json, shutil, sys
src, out, hlog = sys.argv[1:]
base_l = json.load(open(src + "/containers-list.json"))[0]
base_i = json.load(open(src + "/inspect-senses.json"))
lst = []
for role, cid, state in (("cortex", "c0" * 32, "running"), ("hand", "d0" * 32, "restarting")):
    l, i = json.loads(json.dumps(base_l)), json.loads(json.dumps(base_i))
    l["Id"] = i["Id"] = cid
    l["Names"] = ["/fleetx_%s_1" % role]; i["Name"] = "/fleetx_%s_1" % role
    l["State"] = i["State"]["Status"] = state
    i["State"]["Running"] = state == "running"
    i["State"]["Restarting"] = state == "restarting"
    if state != "running":
        i["State"]["ExitCode"] = 1
        i["State"]["FinishedAt"] = "2026-01-05T10:03:00Z"
        i["RestartCount"] = 3
    i["Config"]["Image"] = l["Image"] = "lobes-standin:test"
    for labels in (l["Labels"], i["Config"]["Labels"]):
        labels["com.docker.compose.project"] = "fleetx"
        labels["com.docker.compose.service"] = labels["lobes.role"] = role
    lst.append(l)
    json.dump(i, open(out + "/inspect-%s.json" % cid, "w"))
json.dump(lst, open(out + "/list.json", "w"))
shutil.copy(hlog, out + "/log-%s.txt" % ("d0" * 32))
PY
python3 "$SRC/tests/secrets/fake_engine.py" "$TMP/docker.sock" "$E" &
FAKE=$!
trap 'kill "$FAKE" 2>/dev/null; wait "$FAKE" 2>/dev/null; kill $pids 2>/dev/null; standin_stop_all; tmux -L "lobes-top-$$" kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
for i in $(seq "$TEST_POLLS"); do [ -S "$TMP/docker.sock" ] && break; sleep 0.1; done
export DOCKER_HOST=unix://$TMP/docker.sock
R=$TMP/root
mkdir -p "$R/proc/pressure"
printf 'MemTotal:       131072000 kB\nMemFree:         4096000 kB\nMemAvailable:   65536000 kB\nSwapTotal:       16777216 kB\nSwapFree:        16252928 kB\n' >"$R/proc/meminfo"
printf 'cpu  100 0 100 700 100 0 0 0 0 0\n' >"$R/proc/stat"
printf 'some avg10=1.25 avg60=0.50 avg300=0.10 total=12345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n' >"$R/proc/pressure/io"
export LOBES_SYSROOT=$R

# --- --once --json --------------------------------------------------------------
run "$LOBES" --dir "$D" --json top --once --interval 0.5
is "$rc" 0 "top --once --json exits 0"
j=$out
c() { printf '%s' "$j" | jq -r ".roles[] | select(.role == \"$1\") | $2"; }
is "$(c cortex .state)/$(c cortex .ready)" "running/true" "cortex: running and ready (/health 200)"
is "$(c cortex .metrics.running)" "$(metric vllm:num_requests_running | sed 's/\.0$//')" "cortex running = the stand-in's vllm:num_requests_running"
is "$(c cortex .metrics.waiting)" "$(metric vllm:num_requests_waiting | sed 's/\.0$//')" "cortex waiting = its vllm:num_requests_waiting"
is "$(c cortex '.metrics.kv_usage' | awk '{ printf "%.6f", $1 }')" "$(metric vllm:kv_cache_usage_perc | awk '{ printf "%.6f", $1 }')" \
	"cortex KV usage = its vllm:kv_cache_usage_perc"
is "$(c cortex .metrics.prompt_tokens)" "$(metric vllm:prompt_tokens_total | sed 's/\.0$//')" "cortex prompt tokens = its vllm:prompt_tokens_total"
is "$(c cortex .metrics.generation_tokens)" "$(metric vllm:generation_tokens_total | sed 's/\.0$//')" "cortex generation tokens = its vllm:generation_tokens_total"
is "$(c cortex .rates.prompt_tokens_per_s)" "0" "no new prompt between the two looks: 0 tokens/s"
is "$(c cortex .metrics.spec_drafts)/$(c cortex .rates.mtp_acceptance)" "null/null" "no speculative decoding: MTP figures null"
is "$(c cortex .metric_names.vllm)" "5a4c8d992" "an unrecorded image: names of the recorded version its /version names"
like "$(c cortex .metric_names.from)" "^version 0\.26\.1rc1\.dev942\+standin$" "… and it says so"
is "$(c hand .state)/$(c hand .ready)/$(c hand .restart_count)/$(c hand .exit_code)" "restarting/false/3/1" "hand: restarting, not ready, 3 restarts, exit 1"
like "$(c hand .why)" "forward-compatibility" "hand: why names the cause triage finds in its log"
is "$(c senses .state)/$(c senses .ready)" "not running/false" "senses: no container, not running"
is "$(printf '%s' "$j" | jq -r '.box.mem_available, .box.mem_free, .box.swap_used' | tr '\n' ' ')" \
	"67108864000 4194304000 536870912 " "box: MemAvailable, MemFree and swap used from /proc/meminfo"
is "$(printf '%s' "$j" | jq -r '.box.io_pressure_some_avg10')" "1.25" "box: /proc/pressure/io some avg10"
is "$(printf '%s' "$j" | jq -r '.box.iowait_pct')" "null" "box: iowait unknown when no CPU time passed between the looks (fixture /proc/stat)"
is "$(printf '%s' "$j" | jq -r '.docker.reachable')" "true" "the docker engine was reached"

# --- text, not a terminal; status --watch ----------------------------------------
run "$LOBES" --dir "$D" top --interval 0.2
is "$rc" 0 "top with stdout not a terminal: one snapshot, exit 0"
like "$out" "^cortex +running +yes +1 +1 " "the cortex row: running, ready, 1 running, 1 waiting"
like "$out" "why: the image's CUDA runtime is newer" "hand's why under its row"
like "$out" "memory available 62\.5 GiB, free 3\.9 GiB" "the box line"
unlike "$out" $'\033' "no escape sequences when stdout is not a terminal"
run "$LOBES" --dir "$D" status --watch
is "$rc" 0 "status --watch is top (one snapshot here)"
like "$out" "^ROLE +STATE +READY +RUN +WAIT +KV" "… its table"
run "$LOBES" --dir "$D" status --watch --fleet
is "$rc" 2 "status --watch --fleet is a usage error"

# --- a real terminal ---------------------------------------------------------------
if command -v tmux >/dev/null; then
	T="tmux -L lobes-top-$$"
	$T -f /dev/null new-session -d -s top -x 160 -y 40 \
		"env DOCKER_HOST=$DOCKER_HOST LOBES_SYSROOT=$R NO_COLOR=1 $LOBES --dir $D top; echo top-exit-\$?; sleep 60"
	screen=
	for i in $(seq "$TEST_POLLS"); do
		screen=$($T capture-pane -p -t top 2>/dev/null)
		printf '%s' "$screen" | grep -q "^hand " && break
		sleep 0.1
	done
	like "$screen" "\(q quits\)" "in a terminal: the live header says q quits"
	like "$screen" "^cortex +running +yes +1 +1 " "… the cortex row"
	like "$screen" "^hand +restarting +no " "… the hand row"
	$T send-keys -t top q
	for i in $(seq "$TEST_POLLS"); do
		screen=$($T capture-pane -p -t top 2>/dev/null)
		printf '%s' "$screen" | grep -q "top-exit-" && break
		sleep 0.1
	done
	like "$screen" "top-exit-0" "q quits, exit 0"
	$T kill-server 2>/dev/null
else
	ok 0 "# SKIP tmux is not installed"
fi

kill $pids 2>/dev/null
rm -f "$D/.env"
run "$LOBES" --dir "$D" top --once
is "$rc" 3 "no .env: exit 3"
done_testing
