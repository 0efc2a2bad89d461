# tests/gateway/lib.sh — the scripted engine (engine.py) for the gateway's
# shell tests; source after tests/gateway_lib.sh.
#
#   eng_start [engine.py args...]   start one on a free port; sets ENG_PORT,
#       ENG_PID (killed when the test exits)
#   eng_env DIR PORT [lines...]     a deploy dir whose cortex is on PORT
#       (hand on ENG_HAND_PORT when set; the other roles infeasible), with
#       extra .env lines
#   gw_hwm_kb                       the gateway's peak RSS (VmHWM) in kB
#   rss_ok STATUS NAME              ok, or a skip under ASan
ENG_PIDS=""
trap 'gw_stop_all; for p in $ENG_PIDS; do kill -CONT "$p"; kill "$p"; done 2>/dev/null; rm -rf "$TMP"' EXIT
command -v python3 >/dev/null || skip_all "python3 is not installed"

eng_start() {
	local out=$TMP/eng.$RANDOM i
	python3 "$SRC/tests/gateway/engine.py" "$@" >"$out" 2>&1 &
	ENG_PID=$!
	ENG_PIDS="$ENG_PIDS $ENG_PID"
	for i in $(seq "$TEST_POLLS"); do
		ENG_PORT=$(sed -n 's/^port //p' "$out")
		[ -n "$ENG_PORT" ] && return 0
		sleep 0.1
	done
	return 1
}

eng_env() {
	local dir=$1 port=$2 roles=(senses:off hand:off)
	shift 2
	[ -n "${ENG_HAND_PORT:-}" ] && roles=("hand:$ENG_HAND_PORT:x/hand" senses:off)
	gw_env "$dir" "cortex:$port:x/cortex" "${roles[@]}" embedder:off reranker:off \
		LOBES_GATEWAY_HEALTH_INTERVAL_MS=200 "$@"
}

# rss_ok COND NAME: an RSS bound, skipped when the gateway is built with
# ASan (its quarantine keeps freed memory, so RSS says nothing there)
rss_ok() {
	if ldd "$LOBES" 2>/dev/null | grep -q libasan; then
		ok 0 "$2 # SKIP built with ASan"
	else
		ok "$1" "$2"
	fi
}
gw_hwm_kb() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$GW_PID/status"; }
