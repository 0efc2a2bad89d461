#!/bin/bash
# standin_metrics.t — the stand-in's (a test double's) GET /metrics speaks
# the names vLLM records for the version the stand-in reports
# (data/vllm/<commit>/metrics.txt): every family it types is recorded with
# that type and every sample is one of the family's exposed names, for both
# recorded versions; its load figures follow the streams open (running up
# to --max-num-seqs, the rest waiting, KV usage = held tokens over
# STANDIN_KV_TOKENS) and its prompt counter the replies' usage; and lobes'
# scraper (engine_metrics_scrape, through runtime-tool) reads the same
# figures the body shows.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
standin_test_env
command -v jq >/dev/null || skip_all "jq is not installed"
TOOL=${LOBES_BUILD:-$SRC/build}/tests/runtime-tool
[ -x "$TOOL" ] || skip_all "runtime-tool not built (make test-helpers)"
HTTP_MAX_TIME=5
CORTEX=unsloth/Qwen3.8-27B-NVFP4
MTP='{"method": "mtp", "num_speculative_tokens": 2}'
# metric NAME: its value in the last /metrics body ($body), "" when absent
metric() { printf '%s\n' "$body" | sed -n "s/^$1{[^}]*} \([0-9.e+-]*\)\$/\1/p"; }

# ---- names: both recorded versions --------------------------------------------------
for pair in 0.23.1rc1.dev672+g93d8f834d:93d8f834d 0.26.1rc1.dev942+g5a4c8d992:5a4c8d992; do
	version=${pair%%:*} folder=${pair##*:}
	list=$SRC/data/vllm/$folder/metrics.txt
	like "$(head -1 "$list")" "^# vLLM .* commit $folder" "$folder: metrics.txt names its commit on the first line"
	STANDIN_VERSION=$version standin_start "v$folder" "$CORTEX" --served-model-name cortex --speculative-config "$MTP"
	ok $? "$folder: the stand-in starts reporting $version"
	http GET /metrics
	is "$code" 200 "$folder: GET /metrics answers 200"
	# every "# TYPE NAME KIND": NAME (less a counter's _total) is a recorded family of that type
	bad=
	while read -r _ _ name kind; do
		fam=$name
		[ "$kind" = counter ] && fam=${name%_total}
		rec=$(awk -F'\t' -v f="$fam" '$1 == f { print $2 }' "$list")
		[ "$rec" = "$kind" ] || bad+="$name ($kind, recorded: ${rec:-none}) "
	done < <(printf '%s\n' "$body" | grep '^# TYPE ')
	is "$bad" "" "$folder: every family served is recorded for that version, with its type"
	# every sample's name is one of the names its recorded family is exposed as
	exposed=$(awk -F'\t' '!/^#/ { n = split($3, a, " "); for (i = 1; i <= n; i++) print a[i] }' "$list")
	bad=
	for s in $(printf '%s\n' "$body" | grep -v '^#' | sed 's/[{ ].*//' | sort -u); do
		printf '%s\n' "$exposed" | grep -qxF "$s" || bad+="$s "
	done
	is "$bad" "" "$folder: every sample name is an exposed name of a recorded family"
	nfam=$(printf '%s\n' "$body" | grep -c '^# TYPE ')
	is "$nfam" 8 "$folder: running, waiting, KV usage, prompt and generation tokens, three spec-decode counters"
	standin_stop_all
done

# ---- figures: streams open, then closed ------------------------------------------------
STANDIN_TOKEN_MS=1000 STANDIN_KV_TOKENS=1000 standin_start load "$CORTEX" --served-model-name cortex --max-num-seqs 1
ok $? "the stand-in starts with --max-num-seqs 1 and a 1000-token KV cache"
http GET /metrics
is "$(metric vllm:num_requests_running)/$(metric vllm:num_requests_waiting)/$(metric vllm:kv_cache_usage_perc)" \
	"0.0/0.0/0.0" "idle: nothing running, nothing waiting, the KV cache empty"
unlike "$body" "spec_decode" "no spec-decode families without speculative decoding"
req() { jq -cn --arg q "$1" --argjson s "$2" '{model:"cortex",messages:[{role:"user",content:$q}],stream:$s,chat_template_kwargs:{enable_thinking:false}}'; }
http POST /v1/chat/completions "$(req 'Name three colours' false)"
ptok=$(printf '%s' "$body" | jq -r .usage.prompt_tokens)
ctok=$(printf '%s' "$body" | jq -r .usage.completion_tokens)
http GET /metrics
is "$(metric vllm:prompt_tokens_total)" "$ptok.0" "prompt_tokens_total is the reply's usage.prompt_tokens"
is "$(metric vllm:generation_tokens_total)" "$ctok.0" "generation_tokens_total is its usage.completion_tokens"
is "$(metric vllm:num_requests_running)" "0.0" "a non-streamed answer is over: nothing running"
# two streams held open (a token a second): one runs, one waits
pids=
for i in 1 2; do
	curl -sN --max-time 120 -H 'Content-Type: application/json' -d "$(req 'Name three colours' true)" \
		"http://127.0.0.1:$STANDIN_PORT/v1/chat/completions" >"$TMP/stream$i" 2>/dev/null &
	pids+="$! "
done
for i in $(seq "$TEST_POLLS"); do
	http GET /metrics
	[ "$(metric vllm:num_requests_waiting)" = 1.0 ] && break
	sleep 0.1
done
is "$(metric vllm:num_requests_running)/$(metric vllm:num_requests_waiting)" "1.0/1.0" \
	"two streams open with --max-num-seqs 1: one running, one waiting"
kv=$(metric vllm:kv_cache_usage_perc)
want=$(awk -v p="$ptok" -v c="$ctok" 'BEGIN { printf "%.6f", 2 * (p + c) / 1000 }')
is "$(awk -v k="$kv" 'BEGIN { printf "%.6f", k }')" "$want" "KV usage: both streams' prompt and completion tokens over 1000"
run "$TOOL" metrics "$STANDIN_PORT" 5a4c8d992
is "$rc" 0 "lobes' scraper reads the stand-in's /metrics"
like "$out" "^running 1$" "scraper: running 1"
like "$out" $'\n'"waiting 1"$'\n' "scraper: waiting 1"
like "$out" "kv_usage $kv" "scraper: the KV usage the body shows"
like "$out" "prompt_tokens $((3 * ptok))"$'\n' "scraper: prompt tokens of the three requests"
like "$out" "spec_drafts nan" "scraper: no spec-decode figure without speculative decoding"
kill $pids 2>/dev/null
wait $pids 2>/dev/null
for i in $(seq "$TEST_POLLS"); do
	http GET /metrics
	[ "$(metric vllm:num_requests_running)" = 0.0 ] && [ "$(metric vllm:num_requests_waiting)" = 0.0 ] && break
	sleep 0.1
done
is "$(metric vllm:num_requests_running)/$(metric vllm:num_requests_waiting)/$(metric vllm:kv_cache_usage_perc)" \
	"0.0/0.0/0.0" "the clients gone: nothing running or waiting, the KV cache free again"
standin_stop_all
run "$TOOL" metrics "$STANDIN_PORT" 5a4c8d992
is "$rc" 4 "scraper: nothing listening is a runtime error (exit 4)"
like "$errout" "engine on port $STANDIN_PORT: /metrics: " "scraper: the error names the engine's port"
done_testing
