#!/bin/bash
# standin_api.t — the vLLM stand-in (a test double) models the API server's
# start: with STANDIN_API_MS the memory window closes ("init engine ...
# took") well before /health answers; without it, at once.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
[ -x "$STANDIN" ] || skip_all "stand-in not built ($STANDIN; make test-helpers)"
command -v curl >/dev/null || skip_all "curl is not installed"
for v in $(env | sed -n 's/^\(VLLM_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(STANDIN_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
unset HF_HOME
export HF_HUB_CACHE=$SRC/tests/fixtures/hf/hub
export STANDIN_LOAD_MS=30 STANDIN_PROFILE_MS=30 STANDIN_WARMUP_MS=10
export STANDIN_DEVICE_BYTES=2G STANDIN_MEM_SCALE=0.01
HTTP_MAX_TIME=2
EMBEDDER=Qwen/Qwen3-Embedding-0.6B

run "$STANDIN" serve --help
like "$out" "STANDIN_API_MS" "--help names STANDIN_API_MS"

# wait_window: poll (at most ~20 s) for the window-closed line, then ask /health at once
wait_window() {
	local i
	for i in $(seq 200); do
		grep -q 'init engine (profile, create kv cache, warmup model) took' "$STANDIN_LOG" && break
		sleep 0.1
	done
	http GET /health
}

STANDIN_API_MS=5000 standin_spawn slow "$EMBEDDER" --gpu-memory-utilization 0.2
wait_window
is "$code" 000 "with STANDIN_API_MS=5000, /health does not answer when the window has just closed"
unlike "$(cat "$STANDIN_LOG")" "Application startup complete" "and startup is not complete yet"
standin_wait_ready
ok $? "then startup completes"
http GET /health
is "$code" 200 "and /health answers 200"
standin_stop_all

standin_spawn quick "$EMBEDDER" --gpu-memory-utilization 0.2
standin_wait_ready
ok $? "without STANDIN_API_MS the stand-in starts as before"
like "$(sed -n '/init engine/,$p' "$STANDIN_LOG")" "Application startup complete" "startup completes after the window closes"
done_testing
