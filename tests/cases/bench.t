#!/bin/bash
# bench.t — `lobes bench` against the vLLM stand-in (a test double) with
# known timings: a first token after STANDIN_FIRST_TOKEN_MS, then one token
# every STANDIN_TOKEN_MS. No figure is compared with a time here (speed is a
# benchmark's business; on a loaded box any latency can grow): the test
# asserts what holds at any load — every summary is ordered (median <= p90
# <= p99); TTFT and end-to-end latency are never below the stand-in's own
# delays (load only adds); each request's TPOT is (E2EL - TTFT) over its
# tokens after the first, so the means agree exactly; at concurrency 1 the
# requests' latencies add up to no more than the run (one at a time), at 16
# to more (side by side). Token counts are the engine's usage, errors are
# counted by kind (503, dropped connections, refused), --json, the text
# table and the --out report agree.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
[ -x "$STANDIN" ] || skip_all "stand-in not built ($STANDIN; make test-helpers)"
command -v jq >/dev/null || skip_all "jq is not installed"
command -v curl >/dev/null || skip_all "curl is not installed"
gw_test_env
CORTEX=unsloth/Qwen3.8-27B-NVFP4
FIRST_MS=300
TOKEN_MS=40

OUT_LEN=8

STANDIN_FIRST_TOKEN_MS=$FIRST_MS STANDIN_TOKEN_MS=$TOKEN_MS standin_start timed "$CORTEX" \
	--served-model-name cortex --gpu-memory-utilization 0.1
ok $? "a stand-in with a ${FIRST_MS} ms first token and ${TOKEN_MS} ms tokens is up"
URL=http://127.0.0.1:$STANDIN_PORT
B=(--url "$URL/v1" --model cortex --input-len 20 --output-len $OUT_LEN)

# ---- timing at concurrency 1 and 16 ------------------------------------------
run "$LOBES" --json bench "${B[@]}" --concurrency 1,16 --requests 32 --out "$TMP/report.md"
is "$rc" 0 "bench exits 0 when every request answered"
J=$out
is "$(jq -r '[.runs[].concurrency] | join(",")' <<<"$J")" "1,16" "one run per concurrency, in order"
for i in 0 1; do
	c=$(jq -r ".runs[$i].concurrency" <<<"$J")
	R=$(jq -c ".runs[$i]" <<<"$J")
	echo "# c=$c: medians TTFT $(jq .ttft_ms.median <<<"$R") ms, TPOT $(jq .tpot_ms.median <<<"$R") ms," \
		"ITL $(jq .itl_ms.median <<<"$R") ms (the stand-in: $FIRST_MS ms, then $TOKEN_MS ms a token)"
	is "$(jq -r '[.ttft_ms, .tpot_ms, .itl_ms, .e2el_ms] | map(.median <= .p90 and .p90 <= .p99 and .mean > 0) | all' <<<"$R")" \
		true "c=$c: TTFT, TPOT, ITL and E2EL summaries are ordered (median <= p90 <= p99), means above 0"
	is "$(jq -r ".ttft_ms.median >= $FIRST_MS" <<<"$R")" true \
		"c=$c: median TTFT is not below the stand-in's $FIRST_MS ms prefill"
	is "$(jq -r ".e2el_ms.median >= $FIRST_MS + ($OUT_LEN - 1) * $TOKEN_MS" <<<"$R")" true \
		"c=$c: median E2EL is not below the prefill and $((OUT_LEN - 1)) token steps"
	is "$(jq -r "(.tpot_ms.mean * ($OUT_LEN - 1) - (.e2el_ms.mean - .ttft_ms.mean)) | fabs < 0.001" <<<"$R")" true \
		"c=$c: mean TPOT x $((OUT_LEN - 1)) = mean E2EL - mean TTFT (each request's TPOT is its time after the first token)"
	is "$(jq -r "[.sent, .completed, .failed, (.errors | length), .output_tokens] | join(\",\")" <<<"$R")" \
		"32,32,0,0,$((32 * OUT_LEN))" "c=$c: 32 sent, 32 completed, no error, $OUT_LEN tokens each"
done
# Little's law without a clock: the latencies of a run's requests add up to
# the time they were in flight; one at a time that is within the run's
# duration, 16 started at once (each lasting at least the stand-in's delays)
# add up to more than it.
is "$(jq -r '.runs[0] | (.completed * .e2el_ms.mean / 1000 <= .duration_s)' <<<"$J")" true \
	"concurrency 1 runs the requests one at a time (their latencies add up to no more than the run)"
is "$(jq -r '.runs[1] | (.completed * .e2el_ms.mean / 1000 > .duration_s)' <<<"$J")" true \
	"concurrency 16 runs them side by side (their latencies add up to more than the run)"
is "$(jq -r '.box.vllm_version' <<<"$J")" "0.23.1rc1.dev672+standin" "the box names the engine's vLLM version (/version)"

# ---- the report agrees with --json (the same run) -------------------------------
[ -f "$TMP/report.md" ]
ok $? "--out writes the report"
like "$(cat "$TMP/report.md")" 'Command: `lobes bench --url' "the report names the command"
like "$(cat "$TMP/report.md")" 'vLLM 0\.23\.1rc1\.dev672\+standin, load average [0-9.]+ ' "and the box: vLLM version, load average"
like "$(cat "$TMP/report.md")" 'c=16 +\|[=#]+ [0-9.]+ ms' "and plots the latency against concurrency"
for i in 0 1; do
	want=$(jq -r ".runs[$i] | \"| \(.target) | \(.concurrency) | inf | - | \(.completed)/\(.sent) | \(.request_throughput*100|round/100) | \" +
		\"\(.output_throughput*10|round/10) | \(.ttft_ms.median*10|round/10) | \(.ttft_ms.p99*10|round/10) | \" +
		\"\(.tpot_ms.median*10|round/10)\"" <<<"$J")
	row=$(grep -F "| $(jq -r ".runs[$i].target" <<<"$J") | $(jq -r ".runs[$i].concurrency" <<<"$J") |" "$TMP/report.md")
	# printf rounds like jq's round for these values except exact halves; compare numerically
	ok $(paste <(tr '|' '\n' <<<"$want" | sed -n '7,11p') <(tr '|' '\n' <<<"$row" | sed -n '7,11p') |
		awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 0.051) bad = 1 } END { exit bad }'; echo $?) \
		"report row $i agrees with --json: $row"
done

# ---- the text table agrees with --json -------------------------------------------
# Counts are the same in any two runs; timings only within one run, so the
# text run's figures are compared with its own --out report, whose rows were
# shown above to agree with --json of their run.
run "$LOBES" bench "${B[@]}" --concurrency 4 --requests 8 --out "$TMP/text.md"
is "$rc" 0 "the text run exits 0"
T=$out
run "$LOBES" --json bench "${B[@]}" --concurrency 4 --requests 8
J=$out
like "$T" "concurrency 4  rate inf  $(jq -r '.runs[0] | "\(.completed)/\(.sent)"' <<<"$J") completed" "text and --json: the same counts"
like "$T" "input tokens $(jq -r '.runs[0].input_tokens' <<<"$J")   output tokens $(jq -r '.runs[0].output_tokens' <<<"$J")" "the same token counts"
trow=$(grep -E '^\| [^|]+ \| 4 \|' "$TMP/text.md")
# same_figure A B: equal to the report's one decimal
same_figure() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 0.051) }'; }
tt=$(awk '$1 == "TTFT" { print $3 }' <<<"$T")
same_figure "$tt" "$(tr '|' '\n' <<<"$trow" | sed -n '9p')"
ok $? "the text table's TTFT median ($tt) is its run's (report: $trow)"
tp=$(awk '$1 == "TPOT" { print $3 }' <<<"$T")
same_figure "$tp" "$(tr '|' '\n' <<<"$trow" | sed -n '11p')"
ok $? "the text table's TPOT median ($tp) is its run's"
like "$T" "errors: none" "the text says there were no errors"

# ---- goodput: the completed requests meeting every SLO, per second ---------------
# (an hour is met at any load; a TTFT under the stand-in's prefill never is)
run "$LOBES" --json bench "${B[@]}" --concurrency 4 --requests 8 --slo ttft=3600000,tpot=3600000,e2el=3600000
is "$(jq -r '.runs[0] | (.goodput == .request_throughput)' <<<"$out")" true "SLOs every request meets: goodput = request throughput"
run "$LOBES" --json bench "${B[@]}" --concurrency 4 --requests 8 --slo ttft=$((FIRST_MS / 4)),tpot=3600000
is "$(jq -r '.runs[0].goodput' <<<"$out")" 0 "a TTFT SLO under the prefill, which no request meets: goodput 0"
is "$(jq -r '.runs[0].goodput' <<<"$J")" null "no --slo: goodput null"

# ---- token counts are the engine's usage -------------------------------------------
# Without ignore_eos the stand-in answers "This is a stand-in reply ..." cut at
# max_tokens WORDS (the chunks), while its usage counts "-" as a token too:
# 5 chunks, 7 completion tokens. bench must report usage, not chunks.
http_body=$(curl -s --max-time 10 -d '{"model":"cortex","prompt":"one two three","max_tokens":5}' "$URL/v1/completions")
per=$(jq -r '.usage.completion_tokens' <<<"$http_body")
words=$(jq -r '.choices[0].text' <<<"$http_body" | wc -w)
ok $([ "$per" -gt "$words" ]; echo $?) "the stand-in's usage ($per) counts more tokens than its $words chunks"
run "$LOBES" --json bench "${B[@]}" --output-len 5 --no-ignore-eos --requests 6 --concurrency 3
is "$(jq -r '.runs[0].output_tokens' <<<"$out")" "$((per * 6))" "output tokens are the sum of usage.completion_tokens ($per x 6)"
is "$(jq -r '.runs[0].input_tokens' <<<"$out")" "$((20 * 6))" "input tokens are the sum of usage.prompt_tokens (20 words x 6)"

# ---- roles of a deploy dir, directly and through the gateway, side by side ----------
D=$TMP/dir
mkdir -p "$D"
printf 'LOBES_PROFILE=spark\nLOBES_CARD=spark\nCORTEX_FEASIBLE=true\nCORTEX_PORT=%s\nHAND_FEASIBLE=false\n' "$STANDIN_PORT" >"$D/.env"
chmod 600 "$D/.env"
GW_KEY=bench-test-key-$RANDOM
printf '%s\n' "$GW_KEY" >"$D/gateway.key"
chmod 600 "$D/gateway.key"
gw_start "$D"
ok $? "a gateway in front of the stand-in"
echo "LOBES_GATEWAY_PORT=$GW_PORT" >>"$D/.env"
run "$LOBES" --dir "$D" --json bench --via both --input-len 20 --output-len 8 --concurrency 2 --requests 4 --out "$TMP/both.md" cortex
is "$rc" 0 "bench cortex --via both exits 0 (the gateway's key is used)"
is "$(jq -r '[.runs[] | "\(.target) \(.url | sub("[0-9]+$"; "P")) \(.completed)"] | join(",")' <<<"$out")" \
	"cortex http://127.0.0.1:P 4,cortex via gateway http://127.0.0.1:P 4" "one run on the engine's port, one through the gateway"
is "$(jq -r '.runs[0].url' <<<"$out")" "$URL" "the role's port comes from the deploy dir"
is "$(jq -r '.box | [.card, .profile] | join(",")' <<<"$out")" "spark,spark" "the box names the card and profile"
like "$(cat "$TMP/both.md")" "side by side" "the report sets direct and gateway side by side"
like "$(grep -F '| cortex | 2 |' "$TMP/both.md" | tail -1)" '^\| cortex \| 2 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x \|' "a row per concurrency: both throughputs and their ratio"
run "$LOBES" --dir "$TMP/none" --json bench --input-len 20 --output-len 8 --requests 2 "cortex@$D"
is "$rc" 0 "bench ROLE@DIR: a role of another deploy dir than --dir"
is "$(jq -r '[.runs[] | "\(.target) \(.url) \(.completed)"] | join(",")' <<<"$out")" "cortex@$D $URL 2" \
	"… on that dir's engine port (loopback), labelled ROLE@DIR"
run "$LOBES" --dir "$TMP/none" bench "hand@$D"
is "$rc" 2 "ROLE@DIR of a role not feasible there is a usage error"
run "$LOBES" bench "cortex@"
is "$rc" 2 "ROLE@ without a dir is a usage error"
run "$LOBES" bench "brain@$D"
is "$rc" 2 "an unknown ROLE@DIR is a usage error"
like "$errout" "expected ROLE or ROLE@DIR" "… saying what was expected"
run "$LOBES" --dir "$D" bench hand
is "$rc" 2 "a role that is not feasible is a usage error"
run "$LOBES" --dir "$D" bench --url "$URL" cortex
is "$rc" 2 "--url and ROLE do not mix"
gw_stop_all
standin_stop_all

# ---- errors by kind ------------------------------------------------------------------
STANDIN_503_EVERY=4 STANDIN_DROP_EVERY=5 STANDIN_TOKEN_MS=5 standin_start faulty "$CORTEX" \
	--served-model-name cortex --gpu-memory-utilization 0.1
URL=http://127.0.0.1:$STANDIN_PORT
run "$LOBES" --json bench --url "$URL" --model cortex --input-len 20 --output-len 8 --requests 20 --concurrency 4
is "$rc" 1 "bench exits 1 when requests failed"
# requests 4, 8, 12, 16, 20 are 503; of the 15 streams, 5, 10 and 15 are cut
is "$(jq -c '.runs[0].errors' <<<"$out")" '{"http-503":5,"dropped":3}' "a 503 and a dropped connection are counted by kind"
is "$(jq -r '.runs[0] | [.sent, .completed, .failed] | join(",")' <<<"$out")" "20,12,8" "12 of 20 completed"
is "$(jq -r '.runs[0].output_tokens' <<<"$out")" "96" "only the completed requests' usage counts (12 x 8)"
run "$LOBES" bench --url "$URL" --model cortex --input-len 20 --output-len 8 --requests 20 --concurrency 4
like "$out" "errors: (http-503 5 dropped 3|dropped 3 http-503 5)" "the text names the kinds too"
standin_stop_all
P=$(standin_free_port)
run "$LOBES" --json bench --url "http://127.0.0.1:$P" --model cortex --input-len 4 --output-len 2 --requests 3
is "$rc" 1 "nothing listening: exit 1"
is "$(jq -c '.runs[0] | [.errors, .completed, .request_throughput]' <<<"$out")" '[{"refused":3},0,0]' \
	"every request is counted as refused"

# ---- usage errors ------------------------------------------------------------------------
run "$LOBES" bench --url "$URL" --model cortex --concurrency 0
is "$rc" 2 "--concurrency 0 is a usage error"
run "$LOBES" bench --url "$URL" --model cortex --shape wide
is "$rc" 2 "an unknown --shape is a usage error"
like "$errout" "balanced, prompt-heavy or decode-heavy" "naming the shapes"
run "$LOBES" bench --url "$URL" --model cortex --slo ttft=abc
is "$rc" 2 "a bad --slo is a usage error"
run "$LOBES" bench
is "$rc" 2 "no ROLE and no --url is a usage error"
run "$LOBES" --dir "$TMP/none" bench cortex
is "$rc" 3 "a ROLE without a deploy dir: exit 3"

done_testing
