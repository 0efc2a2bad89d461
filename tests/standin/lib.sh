# tests/standin/lib.sh — run the vLLM stand-in (a test double) from shell
# tests. Source tests/lib.sh first (it provides $TMP and $SRC).
#
#   standin_start NAME [serve args...]   boot on a free 127.0.0.1 port and wait
#       (bounded) for "Application startup complete." or for the process to
#       exit. Returns 0 when serving, 1 when it exited. Sets STANDIN_PORT,
#       STANDIN_PID, STANDIN_LOG (stdout+stderr), STANDIN_RC (exit status, or
#       empty while it runs). The caller's environment (STANDIN_*, HF_*,
#       VLLM_*) passes through.
#   standin_spawn NAME [serve args...]   the same without waiting
#   standin_wait_ready                   the waiting half of standin_start
#   standin_wait_exit                    wait (bounded) for STANDIN_PID to exit
#   standin_test_env [MS]                skip without the stand-in or curl;
#       then a clean environment for stand-ins (no VLLM_* or STANDIN_* of
#       the caller, no HF_HOME), the fixture HF cache, quick boots (load and
#       profile MS each, 30 by default; warm-up 10 ms) on a 2 GiB "device"
#       (free memory is clamped to it, so host noise does not move the
#       numbers) with 1% of the budget really allocated
#   http METHOD PATH [JSON]              request to the last stand-in: sets
#       $code (HTTP status, 000 when no answer) and $body; curl's exit in $curl_rc
#
# Every stand-in started here is killed when the test exits.
STANDIN=${STANDIN:-${LOBES_BUILD:-$SRC/build}/tests/standin/vllm-standin}
STANDIN_PIDS=""
HTTP_MAX_TIME=${HTTP_MAX_TIME:-10}
trap 'standin_stop_all; rm -rf "$TMP"' EXIT

standin_test_env() {
	local v ms=${1:-30}
	[ -x "$STANDIN" ] || skip_all "stand-in not built ($STANDIN; make test-helpers)"
	command -v curl >/dev/null || skip_all "curl is not installed"
	for v in $(env | sed -n 's/^\(VLLM_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(STANDIN_[A-Za-z0-9_]*\)=.*/\1/p'); do
		unset "$v"
	done
	unset HF_HOME
	export HF_HUB_CACHE=$SRC/tests/fixtures/hf/hub
	export STANDIN_LOAD_MS=$ms STANDIN_PROFILE_MS=$ms STANDIN_WARMUP_MS=10
	export STANDIN_DEVICE_BYTES=2G STANDIN_MEM_SCALE=0.01
}

# SIGTERM (the stand-in shuts down at once, even with a hung request),
# then SIGKILL for anything still there after ~2 s.
standin_stop_all() {
	local p i
	for p in $STANDIN_PIDS; do kill -TERM "$p" 2>/dev/null; done
	for p in $STANDIN_PIDS; do
		for i in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	STANDIN_PIDS=""
}

# A port on 127.0.0.1 nobody answers on (the stand-in reports a bind clash,
# which standin_start retries). Drawn below Linux's ephemeral range
# (32768-60999): a port there may be the source port of some open
# connection, which a listener cannot bind although nothing answers on it.
standin_free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

standin_spawn() {
	local name=$1
	shift
	STANDIN_PORT=$(standin_free_port)
	STANDIN_LOG=$TMP/$name.log
	STANDIN_RC=
	"$STANDIN" serve "$@" --host 127.0.0.1 --port "$STANDIN_PORT" >"$STANDIN_LOG" 2>&1 &
	STANDIN_PID=$!
	STANDIN_PIDS="$STANDIN_PIDS $STANDIN_PID"
}

# Poll (bounded by TEST_POLLS) until startup completes or the process exits.
standin_wait_ready() {
	local i
	for i in $(seq "$TEST_POLLS"); do
		grep -q 'Application startup complete\.' "$STANDIN_LOG" 2>/dev/null && return 0
		if ! kill -0 "$STANDIN_PID" 2>/dev/null; then
			wait "$STANDIN_PID"
			STANDIN_RC=$?
			return 1
		fi
		sleep 0.1
	done
	echo "# stand-in $STANDIN_PID did not finish booting" >&2
	return 1
}

standin_start() {
	local try
	for try in 1 2 3 4 5; do
		standin_spawn "$@"
		standin_wait_ready && return 0
		grep -q 'Address already in use' "$STANDIN_LOG" || return 1
	done
	return 1
}

# Wait (bounded by TEST_POLLS) for STANDIN_PID to exit; sets STANDIN_RC.
standin_wait_exit() {
	local i
	for i in $(seq "$TEST_POLLS"); do
		if ! kill -0 "$STANDIN_PID" 2>/dev/null; then
			wait "$STANDIN_PID"
			STANDIN_RC=$?
			return 0
		fi
		sleep 0.1
	done
	STANDIN_RC=timeout
	return 1
}

http() {
	local method=$1 path=$2 data=${3:-} out
	if [ -n "$data" ]; then
		out=$(curl -sS -X "$method" --max-time "$HTTP_MAX_TIME" -H 'Content-Type: application/json' \
			${HTTP_AUTH:+-H "Authorization: Bearer $HTTP_AUTH"} -d "$data" \
			-w '\n%{http_code}' "http://127.0.0.1:$STANDIN_PORT$path" 2>/dev/null)
	else
		out=$(curl -sS -X "$method" --max-time "$HTTP_MAX_TIME" \
			${HTTP_AUTH:+-H "Authorization: Bearer $HTTP_AUTH"} \
			-w '\n%{http_code}' "http://127.0.0.1:$STANDIN_PORT$path" 2>/dev/null)
	fi
	curl_rc=$?
	code=${out##*$'\n'}
	body=${out%$'\n'*}
	[ "$body" = "$out" ] && body=
	return 0
}
