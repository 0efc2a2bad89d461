#!/bin/bash
# standin_mtp.t — the vLLM stand-in's (a test double's) MTP model
# (tests/standin/metrics.c): with an MTP --speculative-config the token
# spacing is divided by 1+k*A (STANDIN_MTP_ACCEPT = A), GET /metrics carries
# vLLM's spec-decode counters at acceptance A, and the answers are the same
# as without it; without one /metrics has no spec-decode counters. The fault
# knob STANDIN_MTP_DRIFT changes a share of the answers with MTP on only.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
standin_test_env
command -v jq >/dev/null || skip_all "jq is not installed"
HTTP_MAX_TIME=5
CORTEX=unsloth/Qwen3.8-27B-NVFP4
QS=('What is the capital of France?' 'Tell me about the long winding river that runs through the old quiet valley town' 'Name three colours')
chat() { jq -cn --arg q "$1" '{model:"cortex",messages:[{role:"user",content:$q}],chat_template_kwargs:{enable_thinking:false}}'; }
# metric NAME: its value in the last /metrics body ($body), "" when absent
metric() { printf '%s\n' "$body" | sed -n "s/^$1{[^}]*} \([0-9.]*\)\$/\1/p"; }

# ask: the three questions; sets ANSWERS (one line each) and NTOK (completion tokens, one each)
ask() {
	ANSWERS= NTOK=
	local q
	for q in "${QS[@]}"; do
		http POST /v1/chat/completions "$(chat "$q")"
		ANSWERS+="$(printf '%s' "$body" | jq -r '.choices[0].message.content')"$'\n'
		NTOK+="$(printf '%s' "$body" | jq -r '.usage.completion_tokens') "
	done
}

# ---- off ---------------------------------------------------------------------------
STANDIN_TOKEN_MS=20 standin_start off "$CORTEX" --served-model-name cortex
ok $? "the stand-in starts without a speculative config"
unlike "$(cat "$STANDIN_LOG")" "standin: MTP" "no MTP line without a speculative config"
ask
OFF_ANSWERS=$ANSWERS
like "$OFF_ANSWERS" "Paris" "the stand-in answers (the capital of France is Paris)"
total=0; for n in $NTOK; do total=$((total + n)); done
http GET /metrics
is "$code" 200 "GET /metrics answers 200"
[ "$total" -gt 0 ]; ok $? "the replies report completion tokens ($total)"
is "$(metric 'vllm:generation_tokens_total')" "$total.0" "generation_tokens_total is the sum of the replies' usage.completion_tokens"
unlike "$body" "spec_decode" "no spec-decode counters without speculative decoding (vLLM registers none)"
standin_stop_all

# ---- on: k=2, A=0.5 ----------------------------------------------------------------
STANDIN_TOKEN_MS=20 STANDIN_MTP_ACCEPT=0.5 standin_start on "$CORTEX" --served-model-name cortex \
	--speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
ok $? "the stand-in starts with an MTP speculative config"
like "$(cat "$STANDIN_LOG")" "standin: MTP k=2, acceptance 0\.50: token spacing 10 ms" "20 ms token spacing divided by 1+2*0.5"
http GET /metrics
is "$(metric 'vllm:spec_decode_num_draft_tokens_total')" "0.0" "the counters start at 0"
ask
is "$ANSWERS" "$OFF_ANSWERS" "the answers are the same as without MTP"
drafts=0; for n in $NTOK; do drafts=$((drafts + (n + 1) / 2)); done   # ceil(n / (1+2*0.5))
http GET /metrics
is "$(metric 'vllm:spec_decode_num_drafts_total')" "$drafts.0" "one draft per decode step: ceil(n/2) per reply"
is "$(metric 'vllm:spec_decode_num_draft_tokens_total')" "$((2 * drafts)).0" "k=2 draft tokens per draft"
is "$(metric 'vllm:spec_decode_num_accepted_tokens_total')" "$drafts.0" "accepted = floor(0.5 * draft tokens)"
like "$body" "# TYPE vllm:spec_decode_num_accepted_tokens_total counter" "typed as a Prometheus counter"
like "$body" "model_name=\"cortex\"" "labelled with the served model name"
standin_stop_all

# ---- on: defaults (k=1 without num_speculative_tokens, A=0.7), A held in [0,1] -------
STANDIN_TOKEN_MS=17 standin_start dflt "$CORTEX" --served-model-name cortex --speculative-config '{"method": "mtp"}'
like "$(cat "$STANDIN_LOG")" "standin: MTP k=1, acceptance 0\.70: token spacing 10 ms" "defaults: k=1, A=0.7 (17/1.7 = 10 ms)"
standin_stop_all
STANDIN_MTP_ACCEPT=3 standin_start clamp "$CORTEX" --served-model-name cortex --speculative-config '{"method": "mtp"}'
like "$(cat "$STANDIN_LOG")" "standin: MTP k=1, acceptance 1\.00" "an acceptance above 1 is held at 1"
standin_stop_all
# ---- the fault: STANDIN_MTP_DRIFT changes answers with MTP on, never without it -------
STANDIN_MTP_DRIFT=1 standin_start drift "$CORTEX" --served-model-name cortex \
	--speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
ask
is "$ANSWERS" "$(printf '%s' "$OFF_ANSWERS" | sed 's/^/Perhaps /')"$'\n' "drift 1: every answer changed (\"Perhaps \" in front)"
standin_stop_all
STANDIN_MTP_DRIFT=0.5 standin_start half "$CORTEX" --served-model-name cortex \
	--speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
ask
HALF=$ANSWERS
changed=$(printf '%s' "$HALF" | grep -c '^Perhaps ')
[ "$changed" -gt 0 ] && [ "$changed" -lt 3 ]; ok $? "drift 0.5: some answers changed, not all ($changed of 3)"
ask
is "$ANSWERS" "$HALF" "the same prompts change on every ask (a hash of the prompt)"
standin_stop_all
STANDIN_MTP_DRIFT=1 standin_start driftoff "$CORTEX" --served-model-name cortex
ask
is "$ANSWERS" "$OFF_ANSWERS" "drift without MTP: the answers are unchanged"
standin_stop_all

standin_start ngram "$CORTEX" --served-model-name cortex --speculative-config '{"method": "ngram", "num_speculative_tokens": 2}'
unlike "$(cat "$STANDIN_LOG")" "standin: MTP" "a non-MTP speculative method is not modelled"
standin_stop_all

done_testing
