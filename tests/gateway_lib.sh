# tests/gateway_lib.sh — run `lobes gateway` from shell tests (after
# tests/lib.sh and tests/standin/lib.sh).
#
#   gw_start DIR [args...]   start the gateway on a free port of 127.0.0.1
#       and wait (bounded) for its start line. Sets GW_PORT, GW_PID, GW_OUT
#       (stdout), GW_ERR (stderr: JSON access/event lines). Returns 1 when it
#       exited instead (GW_RC holds the status).
#   gw_env DIR [LINE...]     DIR/.env (0600; DIR made): LOBES_PROFILE and
#       LOBES_CARD thor, then each LINE in order. A LINE `role:PORT:MODEL`
#       (role in lower case) is a feasible role: its _FEASIBLE=true, _PORT and
#       _MODEL lines; `role:off` is ROLE_FEASIBLE=false; any other LINE
#       (KEY=VALUE, or several lines in one) is written as it is (a later
#       line wins over an earlier one of the same key)
#   gw_keyfile FILE VALUE    FILE holding VALUE and a newline, 0600 (a key
#       file: gateway.key, a peer's key)
#   gw_test_env              standin_test_env with 10 ms boots and a 4G
#       device, and no LOBES_GATEWAY_* or LOBES_SYSROOT of the caller
#   gw METHOD PATH [JSON]    request to the gateway: sets $code, $body, $hdrs
#       (GW_KEY, when set, is sent as the bearer key; HTTP_MAX_TIME bounds
#       it, 10 s by default); the body as received is in $TMP/.body
#   gw_wait_for CMD...       poll CMD (every 0.1 s, at most TEST_POLLS times) until it succeeds
#   gw_stop                  SIGTERM, wait (bounded), then SIGKILL
GW_PIDS=""
trap 'gw_stop_all; standin_stop_all; rm -rf "$TMP"' EXIT

gw_env() {
	local dir=$1 a role rest
	shift
	mkdir -p "$dir"
	{
		printf 'LOBES_PROFILE=thor\nLOBES_CARD=thor\n'
		for a in "$@"; do
			case $a in
			cortex:off | senses:off | hand:off | embedder:off | reranker:off)
				role=${a%%:*}
				printf '%s_FEASIBLE=false\n' "${role^^}"
				;;
			cortex:*:* | senses:*:* | hand:*:* | embedder:*:* | reranker:*:*)
				role=${a%%:*} rest=${a#*:}
				role=${role^^}
				printf '%s_FEASIBLE=true\n%s_PORT=%s\n%s_MODEL=%s\n' \
					"$role" "$role" "${rest%%:*}" "$role" "${rest#*:}"
				;;
			*) printf '%s\n' "$a" ;;
			esac
		done
	} >"$dir/.env"
	chmod 600 "$dir/.env"
}

gw_keyfile() {
	printf '%s\n' "$2" >"$1"
	chmod 600 "$1"
}

gw_test_env() {
	local v
	standin_test_env 10
	for v in $(env | sed -n 's/^\(LOBES_GATEWAY_[A-Za-z0-9_]*\)=.*/\1/p'); do
		unset "$v"
	done
	unset LOBES_SYSROOT
	export STANDIN_DEVICE_BYTES=4G
}

gw_start() {
	local dir=$1 i
	shift
	GW_OUT=$TMP/gw.$RANDOM.out
	GW_ERR=${GW_OUT%.out}.err
	GW_RC=
	"$LOBES" --dir "$dir" gateway --port 0 "$@" >"$GW_OUT" 2>"$GW_ERR" &
	GW_PID=$!
	GW_PIDS="$GW_PIDS $GW_PID"
	for i in $(seq "$TEST_POLLS"); do
		GW_PORT=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\).*|\1|p' "$GW_OUT" 2>/dev/null)
		[ -n "$GW_PORT" ] && return 0
		if ! kill -0 "$GW_PID" 2>/dev/null; then
			wait "$GW_PID"
			GW_RC=$?
			tail -n 5 "$GW_OUT" "$GW_ERR" 2>/dev/null | sed 's/^/# /'
			return 1
		fi
		sleep 0.1
	done
	echo "# the gateway did not say it listens in time"
	return 1
}

gw() {
	local method=$1 path=$2 data=${3:-}
	local args=(-sS -X "$method" --max-time "${HTTP_MAX_TIME:-10}" -D "$TMP/.hdrs" -o "$TMP/.body" -w '%{http_code}')
	[ -n "${GW_KEY:-}" ] && args+=(-H "Authorization: Bearer $GW_KEY")
	[ -n "$data" ] && args+=(-H 'Content-Type: application/json' --data-binary "$data")
	rm -f "$TMP/.body" "$TMP/.hdrs"
	code=$(curl "${args[@]}" "http://127.0.0.1:$GW_PORT$path" 2>/dev/null)
	curl_rc=$?
	body=$(cat "$TMP/.body" 2>/dev/null)
	hdrs=$(tr -d '\r' <"$TMP/.hdrs" 2>/dev/null)
	return 0
}

gw_wait_for() {
	local i
	for i in $(seq "$TEST_POLLS"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

gw_wait_exit() {
	local pid=$1 i
	for i in $(seq "$TEST_POLLS"); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			GW_RC=$?
			return 0
		fi
		sleep 0.1
	done
	GW_RC=timeout
	return 1
}

gw_stop_all() {
	local p
	for p in $GW_PIDS; do
		kill -TERM "$p" 2>/dev/null
		gw_wait_exit "$p" || kill -9 "$p" 2>/dev/null
	done
	GW_PIDS=""
}
