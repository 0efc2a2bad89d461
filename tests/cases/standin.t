#!/bin/bash
# standin.t — the vLLM stand-in (a test double), run directly without Docker:
# its command line, vLLM log lines, memory gates, HTTP surface, the
# correctness-probe semantics and every recorded fault it reproduces.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
# A fixed environment (standin_test_env): no VLLM_* from the caller.
standin_test_env
command -v jq >/dev/null || skip_all "jq is not installed"
HTTP_MAX_TIME=5

CORTEX=unsloth/Qwen3.8-27B-NVFP4
SENSES=coolthor/gemma-4-12B-it-NVFP4A16
HAND=LiquidAI/LFM2.5-1.2B-Instruct
EMBEDDER=Qwen/Qwen3-Embedding-0.6B
RERANKER=Qwen/Qwen3-Reranker-0.6B
TRITON='{"backend": "TRITON_ATTN"}'
PARIS_Q='What is the capital city of France? Reply with only the city name.'
SKY_Q='What color is a cloudless daytime sky? Answer with one word.'
# vLLM's documented overrides for the original Qwen3-Reranker checkpoint
HF_RERANK='{"architectures": ["Qwen3ForSequenceClassification"], "classifier_from_token": ["no", "yes"], "is_original_qwen3_reranker": true}'
RERANK_BODY='{"model":"reranker","query":"What is the capital of France?","documents":["Bananas are rich in potassium.","Paris is the capital and largest city of France.","The Great Wall of China is visible from space."]}'

chat_body() { jq -cn --arg q "$1" '{model:"m",messages:[{role:"user",content:$q}],max_tokens:16,temperature:0,chat_template_kwargs:{enable_thinking:false}}'; }
log() { cat "$STANDIN_LOG"; }
# has_line TEXT NAME — the log holds TEXT verbatim (fixed string)
has_line() { if grep -qF -- "$1" "$STANDIN_LOG"; then ok 0 "$2"; else ok 1 "$2"; sed 's/^/#   /' "$STANDIN_LOG" | tail -n 25; fi; }
hasnt_line() { if grep -qF -- "$1" "$STANDIN_LOG"; then ok 1 "$2"; else ok 0 "$2"; fi; }

# ---- command line ---------------------------------------------------------
run "$STANDIN" serve --help
is "$rc" 0 "serve --help exits 0"
like "$out" "TEST DOUBLE" "--help says it is a test double"
run "$STANDIN" --version
like "$out" '^0\.23\.' "--version prints a vLLM-like version"
run "$STANDIN" serve "$CORTEX" --no-such-flag 1
is "$rc" 2 "an unknown flag exits 2, like argparse"
like "$errout" "^usage: vllm serve" "argparse usage line"
like "$errout" "vllm serve: error: unrecognized arguments: --no-such-flag" "argparse names the unknown flag"
run "$STANDIN" serve "$CORTEX" --kv-cache-dtype fp9
is "$rc" 2 "an invalid choice exits 2"
like "$errout" "argument --kv-cache-dtype: invalid choice: 'fp9'" "the invalid choice is named"
run "$STANDIN" serve "$CORTEX" --enforce-eager=yes
like "$errout" "argument --enforce-eager: ignored explicit argument 'yes'" "a boolean flag takes no value"
run "$STANDIN" serve "$CORTEX" --port
like "$errout" "argument --port: expected one argument" "a missing value is an argparse error"
run "$STANDIN" serve "$CORTEX" --attention-config '{"backend": "NOPE_ATTN"}'
is "$rc" 2 "an unknown attention backend exits 2"
run "$STANDIN" serve "$CORTEX" --attention-config 'not json'
like "$errout" "argument --attention-config: Value not json cannot be converted" "attention config must be JSON"
# Every option of vLLM's flag list of each recorded version parses (the boot
# then stops at the model missing from the cache: exit 1, never argparse's 2).
# value_for FLAG KIND LIST_DIR: a value argparse accepts for a flag of KIND
value_for() {
	case $2 in
	bool | bool-neg | store_true | optional-value) ;;
	int) echo 1 ;;
	float) echo 0.5 ;;
	hrint) echo 1k ;;
	hrint-or-auto) echo auto ;;
	choice-*) awk -F'\t' -v f="$1" '$1 == f { split($2, v, " "); print v[1] }' "$3/choices.txt" ;;
	str-enum:AttentionBackendEnum) echo TRITON_ATTN ;;
	json*) echo '{}' ;;
	*) echo x ;;
	esac
}
for dir in "$SRC"/data/vllm/*/; do
	version=$(sed -n '1s/^# vLLM \([^ ]*\) .*/\1/p' "$dir/flags.txt")
	bad=""
	n=0
	port=$(standin_free_port)
	while IFS=$'\t' read -r flag kind _; do
		case $flag in '#'* | -h | --help) continue ;; esac
		v=$(value_for "$flag" "$kind" "$dir")
		STANDIN_VERSION=$version "$STANDIN" serve no-such/model --port "$port" "$flag" ${v:+"$v"} >/dev/null 2>"$TMP/flag.err"
		r=$?
		n=$((n + 1))
		{ [ "$r" = 2 ] || grep -q '^usage:' "$TMP/flag.err"; } && bad="$bad $flag($(tail -n1 "$TMP/flag.err"))"
	done <"$dir/flags.txt"
	is "${bad:-none}" none "vLLM $version: all $n options of its flag list are accepted"
done
only26=$(comm -13 <(grep -v '^#' "$SRC/data/vllm/93d8f834d/flags.txt" | cut -f1 | sort) \
	<(grep -v '^#' "$SRC/data/vllm/5a4c8d992/flags.txt" | cut -f1 | grep -- '^--enable-' | sort) | head -n1)
run env STANDIN_VERSION=0.23.1rc1.dev672+standin "$STANDIN" serve "$CORTEX" "$only26"
like "$errout" "unrecognized arguments: $only26" "a 0.26-only option ($only26) is unrecognized by a 0.23 stand-in"
run env STANDIN_VERSION=0.26.1rc1.dev942+standin "$STANDIN" serve no-such/model --port "$(standin_free_port)" "$only26"
is "$rc" 1 "and accepted by a 0.26 one"
run "$STANDIN" serve "$CORTEX" --disable-log-requests
like "$errout" "unrecognized arguments: --disable-log-requests" "an option no recorded version has is unrecognized"
run "$STANDIN" serve "$CORTEX" --served-model-name
like "$errout" "argument --served-model-name: expected at least one argument" "--served-model-name needs a value"
run "$STANDIN" serve "$CORTEX" --hf-overrides '{not json'
is "$rc" 2 "--hf-overrides must be JSON"
run "$STANDIN" serve "$CORTEX" --speculative-config '[1]'
like "$errout" "argument --speculative-config: Value \[1\] cannot be converted" "--speculative-config must be a JSON object"
run "$STANDIN" serve "$CORTEX" --max-lora-rank 7
like "$errout" "argument --max-lora-rank: invalid choice: '7' \(choose from '1', '8'" "choices come from vLLM's list"
run "$STANDIN" frobnicate
is "$rc" 2 "an unknown subcommand exits 2"

# ---- a healthy generate boot (spark), both flag spellings --------------------
STANDIN_LOAD_MS=800 standin_spawn cortex "$CORTEX" --served-model-name=cortex --gpu-memory-utilization 0.30 \
	--max-model-len=131072 --max_num_seqs 2 --quantization compressed-tensors \
	--kv-cache-dtype=fp8
http GET /health
is "$code" 000 "/health refuses connections while the engine loads"
standin_wait_ready
ok $? "the cortex boots on spark with fp8 KV and no checkpoint scales"
http GET /health
is "$code" 200 "/health is 200 after startup"
has_line "Model loading took 0.0000 GiB memory and " "weight load line"
has_line "Using fp8 data type to store kv cache." "fp8 KV info line"
has_line "Checkpoint does not provide a q scaling factor. Setting it to k_scale. This only matters for FP8 Attention backends (flash-attn or flashinfer)." "q scale warning (FACTS text)"
has_line "Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify that k/v_scale scaling factors are properly set in the checkpoint." "scale 1.0 warning (FACTS text)"
has_line "Using uncalibrated q_scale 1.0 and/or prob_scale 1.0 with fp8 attention. This may cause accuracy issues." "uncalibrated q_scale warning (FACTS text)"
has_line "Using FLASH_ATTN attention backend out of potential backends" "spark generate picks FLASH_ATTN"
like "$(log)" "^WARNING [0-9]{2}-[0-9]{2} [0-9:]{8} \[kv_cache\.py:[0-9]+\] " "WARNING lines use vLLM's format"
like "$(log)" "INFO [0-9]{2}-[0-9]{2} [0-9:]{8} \[gpu_worker\.py:[0-9]+\] Available KV cache memory: 0\.[0-9]{2} GiB" "KV memory line, util x device - weights"
like "$(log)" "GPU KV cache size: [0-9,]+ tokens" "KV cache size line"
like "$(log)" "Maximum concurrency for 131,072 tokens per request: " "concurrency line"
like "$(log)" "non-default args: \{.*'max_num_seqs': 2" "underscore flag spelling accepted"
has_line "Application startup complete." "uvicorn's startup line"
http GET /v1/models
is "$(jq -r '.data[0].id' <<<"$body")" cortex "/v1/models lists the served name"
is "$(jq -r '.object' <<<"$body")" list "/v1/models is a list"
http POST /v1/chat/completions "$(chat_body "$PARIS_Q" | jq -c '.model="cortex"')"
is "$code" 200 "chat answers 200"
like "$(jq -r '.choices[0].message.content' <<<"$body" | tr A-Z a-z)" paris "cortex probe: the capital of France is Paris"
http POST /v1/chat/completions "$(chat_body "$PARIS_Q" | jq -c '.model="cortex" | .stream=true')"
like "$body" '^data: \{' "streaming answers SSE data lines"
like "$body" 'data: \[DONE\]' "streaming ends with data: [DONE]"
is "$(sed -n 's/^data: //p' <<<"$body" | grep -v DONE | jq -rj '.choices[0].delta.content // empty')" Paris "streamed deltas assemble the answer"
http POST /v1/chat/completions "$(chat_body "$PARIS_Q" | jq -c '.model="nope"')"
is "$code" 404 "an unknown model is 404"
is "$(jq -r '.error | [.type, .param, .code] | join(",")' <<<"$body")" "NotFoundError,model,404" "error shape {error:{message,type,param,code}}"
like "$(jq -r '.error.message' <<<"$body")" 'The model `nope` does not exist' "error message names the model"
http POST /v1/chat/completions '{"messages":'
is "$code" 400 "malformed JSON is 400"
http POST /v1/embeddings '{"input":["x"]}'
is "$code" 400 "a generate model refuses embeddings"
http GET /no/such/route
is "$code" 404 "an unknown route is 404"
http GET /version
like "$body" '"version":"0\.23\.' "/version answers"
# Called as curl, the binary answers container healthchecks (FROM scratch image).
ln -s "$STANDIN" "$TMP/curl"
run "$TMP/curl" -fsS "http://127.0.0.1:$STANDIN_PORT/health"
is "$rc" 0 "curl personality: a healthy /health exits 0"
run "$TMP/curl" -fsS "http://127.0.0.1:$STANDIN_PORT/version"
like "$out" '"version"' "curl personality: the body goes to stdout"
run "$TMP/curl" -fsS "http://127.0.0.1:$STANDIN_PORT/no/such/route"
is "$rc" 22 "curl personality: -f turns an HTTP error into exit 22"
like "$errout" "curl: \(22\) The requested URL returned error: 404" "curl personality: curl's error text"
kill -TERM "$STANDIN_PID"
standin_wait_exit
is "$STANDIN_RC" 0 "SIGTERM shuts down cleanly (exit 0)"
run "$TMP/curl" -fsS "http://127.0.0.1:$STANDIN_PORT/health"
is "$rc" 7 "curl personality: a closed port exits 7"
has_line "INFO:     Shutting down" "shutdown is logged"

# ---- memory: the KV cache is really held, scaled ----------------------------
STANDIN_MEM_SCALE=0.05 standin_start held "$CORTEX" --gpu-memory-utilization 0.3
rss_kb=$(awk '/^VmRSS:/{print $2}' "/proc/$STANDIN_PID/status")
# 0.3 x 2 GiB = 614 MiB budget, minus 5% activation reserve = ~583 MiB; x 0.05 = ~29 MiB
ok $([ "${rss_kb:-0}" -ge 28000 ] && echo 0 || echo 1) "the KV budget is allocated and touched (RSS ${rss_kb:-?} kB >= 28000)"
standin_stop_all

# ---- weights: read in full from a local directory; HF_HOME/hub -------------
mkdir -p "$TMP/local-model"
cp "$HF_HUB_CACHE"/models--Qwen--Qwen3.5-4B/snapshots/*/config.json "$TMP/local-model/"
head -c 4194304 /dev/zero >"$TMP/local-model/model-00001-of-00001.safetensors"
standin_start local "$TMP/local-model" --gpu-memory-utilization 0.2
ok $? "a local model directory boots"
has_line "Model loading took 0.0039 GiB memory" "the weight size is the files' size (4 MiB)"
rchar=$(awk '/^rchar:/{print $2}' "/proc/$STANDIN_PID/io")
ok $([ "${rchar:-0}" -ge 4194304 ] && echo 0 || echo 1) "the weight file is read in full (rchar ${rchar:-?} >= 4194304), so the page cache grows"
standin_stop_all
mkdir -p "$TMP/hfhome"
ln -s "$HF_HUB_CACHE" "$TMP/hfhome/hub"
HF_HUB_CACHE= HF_HOME=$TMP/hfhome standin_start hfhome "$CORTEX" --gpu-memory-utilization 0.2
ok $? "the cache is found under \$HF_HOME/hub"
standin_stop_all

# ---- memory gates, vLLM's unified-memory arithmetic -----------------------
memfree_kb=$(awk '/^MemFree:/{print $2}' /proc/meminfo)
STANDIN_DEVICE_BYTES=$((memfree_kb * 1024 * 4)) standin_start gate "$CORTEX" --gpu-memory-utilization 0.5
is "$STANDIN_RC" 1 "asking for more than MemFree fails the boot (exit 1)"
like "$(log)" "ValueError: Free memory on device cuda:0 \([0-9.]+/[0-9.]+ GiB\) on startup is less than desired GPU memory utilization \(0\.5, [0-9.]+ GiB\)\. Decrease GPU memory utilization or reduce GPU memory used by other processes\." "the free-memory ValueError (FACTS text)"
has_line "EngineCore failed to start." "engine core failure headline"
has_line "Engine core initialization failed. See root cause above." "API server's root-cause line"
hasnt_line "Model loading took" "the gate fires before weights load"

STANDIN_WEIGHT_BYTES=1G standin_start nokv "$CORTEX" --gpu-memory-utilization 0.3
is "$STANDIN_RC" 1 "weights larger than the budget fail the boot"
like "$(log)" "Available KV cache memory: -0\.[0-9]{2} GiB" "negative KV memory is logged"
has_line 'No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.' "no-cache-blocks error (FACTS text)"
STANDIN_FAIL_MODEL="$CORTEX" standin_start failmodel "$CORTEX" --gpu-memory-utilization 0.3
is "$STANDIN_RC" 1 "STANDIN_FAIL_MODEL naming the model fails its boot"
has_line 'No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.' "… with the no-cache-blocks error"
STANDIN_FAIL_MODEL="$SENSES" standin_start failother "$CORTEX" --gpu-memory-utilization 0.2
ok $? "STANDIN_FAIL_MODEL naming another model: the boot goes on"

# ---- environment lint --------------------------------------------------------
VLLM_ATTENTION_BACKEND=TRITON_ATTN VLLM_LOGGING_LEVEL=INFO VLLM_HOST_IP=127.0.0.1 \
	VLLM_USE_MODELSCOPE=False VLLM_WORKER_MULTIPROC_METHOD=spawn \
	standin_start envlint "$CORTEX" --gpu-memory-utilization 0.2
ok $? "unknown VLLM_* variables do not stop the boot"
like "$(log)" "^WARNING [0-9-]+ [0-9:]+ \[envs\.py:[0-9]+\] Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND$" "VLLM_ATTENTION_BACKEND is unknown (dead knob)"
unlike "$(log)" "detected: VLLM_(LOGGING_LEVEL|HOST_IP|USE_MODELSCOPE|WORKER_MULTIPROC_METHOD)" "registered variables are not warned about"
standin_stop_all
VLLM_ATTENTION_BACKEND=TRITON_ATTN standin_start envfail "$CORTEX" --fail-on-environ-validation
is "$STANDIN_RC" 1 "--fail-on-environ-validation makes an unknown variable fatal"

# ---- fp8 KV without scales on the Triton path (thor) ------------------------
STANDIN_CARD=thor standin_start thor-cortex "$CORTEX" --gpu-memory-utilization 0.3 --kv-cache-dtype fp8
is "$STANDIN_RC" 1 "thor: scale-less fp8 on Triton kills the boot (exit 1)"
has_line "    assert layer.k_scale > 0.0" "the assert line is in the traceback"
like "$(grep -A1 -F 'assert layer.k_scale > 0.0' "$STANDIN_LOG" | tail -n1)" "AssertionError$" "the traceback ends in AssertionError"
has_line "Using TRITON_ATTN attention backend" "thor generate lands on TRITON_ATTN"
hasnt_line "Available KV cache memory" "it dies during memory profiling"
STANDIN_CARD=thor standin_start thor-cortex-auto "$CORTEX" --gpu-memory-utilization 0.3 --kv-cache-dtype auto
ok $? "thor: the same checkpoint boots with kv_cache_dtype=auto"
standin_stop_all
STANDIN_CARD=thor standin_start thor-scaled lobes-fixtures/Scaled-ModelOpt-FP4 --kv-cache-dtype fp8 --gpu-memory-utilization 0.3
ok $? "thor: fp8 boots when the checkpoint declares KV scales (ModelOpt)"
hasnt_line "Using KV cache scaling factor 1.0" "no scale-1.0 warning with scales"
standin_stop_all
STANDIN_FP8_ASSERT=0 STANDIN_CARD=thor standin_start thor-later "$CORTEX" --kv-cache-dtype fp8 --gpu-memory-utilization 0.3
ok $? "STANDIN_FP8_ASSERT=0 reproduces the later thor boot that only warned"
standin_stop_all
run "$STANDIN" serve "$CORTEX" --quantization fp8
is "$rc" 1 "a --quantization that contradicts the checkpoint fails"
like "$errout" "Quantization method specified in the model config \(compressed-tensors\) does not match" "quantization mismatch message"

# ---- MTP speculative decoding (FACTS.md trait 8) -----------------------------
MTP='{"method": "mtp", "num_speculative_tokens": 2}'
standin_start spark-mtp "$CORTEX" --served-model-name cortex --speculative-config "$MTP" --gpu-memory-utilization 0.3
http POST /v1/chat/completions "$(chat_body "$PARIS_Q" | jq -c '.model="cortex"')"
is "$(jq -r '.choices[0].message.content' <<<"$body")" Paris "spark: the cortex serves with MTP"
standin_stop_all
STANDIN_CARD=thor standin_start thor-mtp "$CORTEX" --served-model-name cortex --speculative-config "$MTP" --kv-cache-dtype auto --gpu-memory-utilization 0.3
ok $? "thor: the GDN-hybrid Qwen cortex with MTP boots"
http POST /v1/chat/completions "$(chat_body "$PARIS_Q" | jq -c '.model="cortex"')"
is "$code" 500 "thor: its first decode fails"
standin_wait_exit
is "$STANDIN_RC" 1 "and the engine dies"
has_line "RuntimeError: launch_gdn_decode_post_conv_mtp ... no kernel image is available for execution on the device" "with the missing-kernel error (FACTS text)"
STANDIN_CARD=thor standin_start thor-nomtp "$CORTEX" --served-model-name cortex --kv-cache-dtype auto --gpu-memory-utilization 0.3
http POST /v1/chat/completions "$(chat_body "$PARIS_Q" | jq -c '.model="cortex"')"
is "$(jq -r '.choices[0].message.content' <<<"$body")" Paris "thor: without MTP the cortex serves"
standin_stop_all

# ---- senses: Gemma 4 heterogeneous head dims ---------------------------------
standin_start senses "$SENSES" --served-model-name senses --gpu-memory-utilization 0.14 --max-model-len 32768
ok $? "senses boots"
has_line "Gemma4 model has heterogeneous head dimensions (head_dim=256, global_head_dim=512). FA4 not available, forcing TRITON_ATTN backend." "Gemma 4 forcing line (FACTS text)"
has_line "Using TRITON_ATTN attention backend" "Gemma 4 lands on TRITON_ATTN"
http POST /v1/chat/completions "$(chat_body "$SKY_Q" | jq -c '.model="senses"')"
like "$(jq -r '.choices[0].message.content' <<<"$body" | tr A-Z a-z)" blue "senses probe: the sky is blue"
http POST /v1/chat/completions "$(jq -cn '{messages:[{role:"user",content:[{type:"text",text:"Hello there"}]}]}')"
like "$(jq -r '.choices[0].message.content' <<<"$body")" "stand-in reply to: Hello there" "other prompts get an echo (content parts read)"
standin_stop_all

# ---- embedder --------------------------------------------------------------
EMB_REQ='{"model":"embedder","input":["The cat sat on the warm windowsill.","A cat was resting on the sunny windowsill.","Quarterly revenue exceeded analyst expectations."]}'
cosines() { jq -r '[.data[].embedding] as $e | [($e[0] | [., $e[1]] | transpose | map(.[0]*.[1]) | add), ($e[0] | [., $e[2]] | transpose | map(.[0]*.[1]) | add)] | @tsv'; }
standin_start embedder "$EMBEDDER" --served-model-name embedder --runner=pooling --convert embed --gpu-memory-utilization 0.06 --max-model-len 8192
ok $? "the embedder boots on spark"
http POST /v1/embeddings "$EMB_REQ"
is "$code" 200 "embeddings answer 200"
is "$(jq '.data | length' <<<"$body")" 3 "one embedding per input"
is "$(jq '.data[0].embedding | length' <<<"$body")" 1024 "width is the config's hidden_size"
is "$(jq -r '[.data[].index] | join(",")' <<<"$body")" "0,1,2" "indices in input order"
read -r cos_para cos_unrel < <(cosines <<<"$body")
ok $(awk -v a="$cos_para" -v b="$cos_unrel" 'BEGIN{exit !(a > b)}'; echo $?) "embedder probe: cos(paraphrase)=$cos_para > cos(unrelated)=$cos_unrel"
ok $(awk -v a="$(jq '[.data[0].embedding[] | .*.] | add' <<<"$body")" 'BEGIN{exit !(a > 0.999 && a < 1.001)}'; echo $?) "embeddings are L2-normalised"
http POST /v1/embeddings '{"input":"one string"}'
is "$(jq '.data | length' <<<"$body")" 1 "a single string input is accepted"
http POST /v1/chat/completions "$(chat_body "$PARIS_Q")"
is "$code" 400 "a pooling model refuses chat"
standin_stop_all

# (DEBUG: the stand-in logs when it takes a request it will never answer,
# so /health is asked while one hangs, not after a sleep that may be early)
STANDIN_CARD=thor VLLM_LOGGING_LEVEL=DEBUG standin_start thor-embedder "$EMBEDDER" --served-model-name embedder --runner pooling --convert embed
ok $? "thor: the embedder boots on the auto backend"
has_line "Using FLASH_ATTN attention backend" "thor pooling auto-selects FLASH_ATTN"
curl -s -o /dev/null --max-time 3600 -H 'Content-Type: application/json' -d "$EMB_REQ" \
	"http://127.0.0.1:$STANDIN_PORT/v1/embeddings" 2>/dev/null &
hung=$!
taken() { grep -qF "/v1/embeddings request accepted (standin: sm_110 pooling hang)" "$STANDIN_LOG"; }
for i in $(seq "$TEST_POLLS"); do taken && break; sleep 0.1; done
taken
ok $? "thor FLASH_ATTN pooling: embeddings are accepted …"
http GET /health
is "$code" 200 "thor FLASH_ATTN pooling: /health stays green while a request hangs"
ok "$(kill -0 "$hung" 2>/dev/null; echo $?)" "thor FLASH_ATTN pooling: … and never answered (its client still waits)"
kill "$hung" 2>/dev/null
wait "$hung" 2>/dev/null
standin_stop_all
STANDIN_CARD=thor standin_start thor-embedder-triton "$EMBEDDER" --served-model-name embedder --runner pooling --convert embed --attention-config "$TRITON"
http POST /v1/embeddings "$EMB_REQ"
is "$code" 200 "thor with TRITON_ATTN: embeddings answer"
standin_stop_all

# ---- reranker ----------------------------------------------------------------
standin_start reranker-bare "$RERANKER" --served-model-name reranker --runner pooling --convert classify --gpu-memory-utilization 0.06
ok $? "the reranker boots on spark without its --hf-overrides"
http POST /v1/rerank "$RERANK_BODY"
is "$code" 200 "without the overrides it serves"
is "$(jq -r '.results[0].index != 1' <<<"$body")" true "without the overrides the ordering is wrong (classifier head not the trained one)"
http POST /v1/score '{"model":"reranker","text_1":"What is the capital of France?","text_2":["Bananas are rich in potassium.","Paris is the capital and largest city of France."]}'
is "$(jq -r '.data[1].score < .data[0].score' <<<"$body")" true "and /v1/score scores the Paris document lower"
standin_stop_all
standin_start reranker "$RERANKER" --served-model-name reranker --runner pooling --convert classify --gpu-memory-utilization 0.06 --hf-overrides "$HF_RERANK"
ok $? "the reranker boots on spark with its --hf-overrides"
for route in /v1/rerank /rerank /v2/rerank; do
	http POST "$route" "$RERANK_BODY"
	is "$(jq -r '.results[0].index' <<<"$body")" 1 "reranker probe via $route: the Paris document ranks first"
done
is "$(jq -r '.results[0].document.text' <<<"$body")" "Paris is the capital and largest city of France." "results carry document.text"
is "$(jq -r '[.results[].relevance_score] | . == (sort | reverse)' <<<"$body")" true "results are sorted by relevance_score"
http POST /v1/rerank "$(jq -c '.top_n=1' <<<"$RERANK_BODY")"
is "$(jq '.results | length' <<<"$body")" 1 "top_n limits the results"
for route in /v1/score /score; do
	http POST "$route" '{"model":"reranker","text_1":"What is the capital of France?","text_2":["Bananas are rich in potassium.","Paris is the capital and largest city of France."]}'
	is "$(jq -r '[.object, (.data | length), .data[1].index, (.data[1].score > .data[0].score)] | join(",")' <<<"$body")" "list,2,1,true" "$route (text_1/text_2): one score per document, in order, Paris higher"
done
http POST /v1/score '{"queries":"What is the capital of France?","documents":["Paris is the capital and largest city of France.","Bananas are rich in potassium."]}'
is "$(jq -r '.data[0].score > .data[1].score' <<<"$body")" true "/v1/score takes queries/documents too"
http POST /v1/embeddings "$EMB_REQ"
is "$code" 400 "a classify model refuses embeddings"
standin_stop_all

STANDIN_CARD=thor standin_start thor-reranker "$RERANKER" --served-model-name reranker --runner pooling --convert classify --attention-config "$TRITON" --hf-overrides "$HF_RERANK"
ok $? "thor: the reranker with CUDA graphs boots"
http POST /v1/rerank "$RERANK_BODY"
is "$code" 500 "thor CUDA graphs: the first rerank fails"
standin_wait_exit
is "$STANDIN_RC" 1 "thor CUDA graphs: the engine dies (exit 1)"
has_line "cudaErrorLaunchFailure" "the log names cudaErrorLaunchFailure"
has_line "CUDA error: unspecified launch failure" "the log names the launch failure"

STANDIN_CARD=thor standin_start thor-reranker-eager "$RERANKER" --served-model-name reranker --runner pooling --convert classify --attention-config "$TRITON" --enforce-eager --hf-overrides "$HF_RERANK"
http POST /v1/rerank "$RERANK_BODY"
is "$code" 200 "thor eager: the reranker serves"
is "$(jq -r '.results[0].index' <<<"$body")" 1 "thor TRITON_ATTN + eager + overrides: the ordering is right (the later Thor pass)"
standin_stop_all
STANDIN_CARD=thor standin_start thor-reranker-eager-bare "$RERANKER" --served-model-name reranker --runner pooling --convert classify --attention-config "$TRITON" --enforce-eager
http POST /v1/rerank "$RERANK_BODY"
is "$(jq -r '.results[0].index != 1' <<<"$body")" true "thor eager without the overrides: the ordering is wrong, as on every card"
standin_stop_all
STANDIN_CARD=thor VLLM_LOGGING_LEVEL=DEBUG standin_start thor-reranker-eager-fa "$RERANKER" --served-model-name reranker --runner pooling --convert classify --enforce-eager --hf-overrides "$HF_RERANK"
curl -s -o /dev/null --max-time 3600 -H 'Content-Type: application/json' -d "$RERANK_BODY" \
	"http://127.0.0.1:$STANDIN_PORT/v1/rerank" 2>/dev/null &
hung=$!
taken() { grep -qF "/v1/rerank request accepted (standin: sm_110 pooling hang)" "$STANDIN_LOG"; }
for i in $(seq "$TEST_POLLS"); do taken && break; sleep 0.1; done
taken
ok $? "thor eager on FLASH_ATTN: rerank is accepted …"
http GET /health
ok "$([ "$code" = 200 ] && kill -0 "$hung" 2>/dev/null; echo $?)" "thor eager on FLASH_ATTN: … and hangs (/health answers, the rerank does not)"
kill "$hung" 2>/dev/null
wait "$hung" 2>/dev/null
standin_stop_all

# ---- hand: LFM2.5-1.2B on thor -------------------------------------------
STANDIN_CARD=thor standin_start thor-hand "$HAND" --served-model-name hand --gpu-memory-utilization 0.06 --max-model-len 32768
ok $? "thor: the hand boots"
http POST /v1/chat/completions "$(chat_body "$PARIS_Q" | jq -c '.model="hand"')"
is "$code" 200 "thor hand: the first answer arrives"
unlike "$(jq -r '.choices[0].message.content' <<<"$body")" '^Paris$' "thor hand: ... corrupted"
http POST /v1/chat/completions "$(chat_body "$PARIS_Q" | jq -c '.model="hand"')"
is "$code" 500 "thor hand: a later request fails"
standin_wait_exit
is "$STANDIN_RC" 1 "thor hand: the engine dies (exit 1)"
has_line "CUDA error: unspecified launch failure" "thor hand: launch failure logged"
standin_start spark-hand "$HAND" --served-model-name hand --gpu-memory-utilization 0.06
http POST /v1/chat/completions "$(chat_body "$PARIS_Q" | jq -c '.model="hand"')"
is "$(jq -r '.choices[0].message.content' <<<"$body")" Paris "spark hand: the same config answers"
standin_stop_all

# ---- API key, missing model, port clash -------------------------------------
standin_start keyed "$CORTEX" --api-key sekrit --gpu-memory-utilization 0.2
http GET /v1/models
is "$code" 401 "--api-key: /v1 needs the bearer token"
HTTP_AUTH=sekrit http GET /v1/models
is "$code" 200 "--api-key: the token opens /v1"
http GET /health
is "$code" 200 "--api-key: /health stays open"
busy=$STANDIN_PORT
run "$STANDIN" serve "$CORTEX" --host 127.0.0.1 --port "$busy"
is "$rc" 1 "a port in use fails the boot"
like "$errout" "OSError: \[Errno 98\] Address already in use" "port clash names vLLM's OSError"
standin_stop_all
run "$STANDIN" serve no-such/model --port "$(standin_free_port)"
is "$rc" 1 "a model missing from the cache fails"
like "$errout" "Invalid repository ID or local directory specified: 'no-such/model'" "missing model error (FACTS text)"

done_testing
