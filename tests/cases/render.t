#!/bin/bash
# render.t — goldens for every shipped profile, byte-stable renders,
# isolation between machines, compose validity, and the thor/spark divergence
# being exactly the knobs of FACTS.md traits 1-3 and 6.
. "${LOBES_SRC:-.}/tests/lib.sh"
export LOBES_DIR="$TMP/nodeploy"

# Every shipped profile has a golden, and the render matches it byte for byte.
for f in "$SRC"/data/profiles/*.yaml; do
	p=$(basename "$f" .yaml)
	ok "$([ -f "$SRC/tests/goldens/$p/docker-compose.yml" ] && [ -f "$SRC/tests/goldens/$p/.env" ] &&
		[ -f "$SRC/tests/goldens/$p/docker-compose.gpu.yml" ]; echo $?)" "golden for profile $p exists"
	run "$LOBES" render --check "$SRC/tests/goldens/$p" --profile "$p"
	is "$rc" 0 "render of $p matches its golden"
done

# A missing golden file is a failure, not a pass.
mkdir -p "$TMP/g" && cp -r "$SRC/tests/goldens/spark/." "$TMP/g/"
rm "$TMP/g/docker-compose.gpu.yml"
run "$LOBES" render --check "$TMP/g" --profile spark
is "$rc" 1 "a missing golden file fails the check"
like "$out" "docker-compose.gpu.yml: missing" "the missing file is named"
# A changed byte is reported with a unified diff.
cp -r "$SRC/tests/goldens/spark/." "$TMP/g/"
sed -i 's/CORTEX_GPU_MEM_UTIL=0.30/CORTEX_GPU_MEM_UTIL=0.31/' "$TMP/g/.env"
run "$LOBES" render --check "$TMP/g"
is "$rc" 1 "a changed golden fails the check (profile taken from .env)"
like "$out" "^-CORTEX_GPU_MEM_UTIL=0.31" "the diff shows the old line"
like "$out" "\+CORTEX_GPU_MEM_UTIL=0.30" "the diff shows the new line"

# Byte-stable: no clock, host or environment in the output.
"$LOBES" render --profile thor --out "$TMP/a" >/dev/null
(cd / && env -i PATH="$PATH" HOME=/nonexistent LOBES_DIR=/x TZ=Asia/Tokyo HF_HOME=/elsewhere \
	LOBES_SYSROOT="$SRC/tests/fixtures/hosts/gb10" "$LOBES" render --profile thor --out "$TMP/b" >/dev/null)
ok "$(diff -r "$TMP/a" "$TMP/b" >/dev/null; echo $?)" "render is the same under another env, cwd, clock zone and host"
is "$(stat -c %a "$TMP/a/.env")" 600 ".env is written with mode 0600"

# No dead env anywhere, the attention backend only via --attention-config, no stray tokens.
all=$(cat "$SRC"/tests/goldens/*/docker-compose*.yml "$SRC"/tests/goldens/*/.env)
unlike "$all" "VLLM_ATTENTION_BACKEND" "VLLM_ATTENTION_BACKEND appears in no render"
like "$(cat "$SRC/tests/goldens/thor/docker-compose.yml")" \
	"- '--attention-config=\{\"backend\": \"TRITON_ATTN\"\}'" \
	"attention backend is single-quoted --attention-config JSON, written by init (never interpolated)"
unlike "$(cat "$SRC/tests/goldens/spark/docker-compose.yml")" "HAND_QUANTIZATION|--enforce-eager|- ''" \
	"a bf16 model has no --quantization item, eager off has no item, no empty items"
like "$(cat "$SRC/tests/goldens/thor/docker-compose.yml")" "- '--enforce-eager'" "thor reranker renders --enforce-eager"
unlike "$(cat "$SRC/tests/goldens/base/docker-compose.yml" "$SRC/tests/goldens/base/.env")" \
	"Qwen3.8-27B" "the base render never contains the 27B cortex model"
unlike "$(cat "$SRC/tests/goldens/thor/docker-compose.yml")" "^  hand:" "infeasible hand renders no service on thor"
like "$(cat "$SRC/tests/goldens/thor/.env")" "^HAND_FEASIBLE=false$" "infeasible role leaves only its FEASIBLE=false marker"
unlike "$(cat "$SRC/tests/goldens/thor/.env")" "^HAND_(MODEL|PORT|GPU_MEM_UTIL)=" "infeasible role renders no knobs"
like "$(cat "$SRC/tests/goldens/orin/docker-compose.gpu.yml")" "runtime: nvidia" "orin attaches the GPU with runtime: nvidia"
like "$(cat "$SRC/tests/goldens/spark/docker-compose.gpu.yml")" "driver: nvidia" "spark attaches the GPU with a device reservation"
unlike "$(cat "$SRC/tests/goldens/spark/docker-compose.yml")" "nvidia" "the base compose file needs no GPU"
like "$(cat "$SRC/tests/goldens/spark/docker-compose.yml")" "image: '\\$\{CORTEX_IMAGE:-vllm/vllm-openai@sha256:[0-9a-f]{64}\}'" "image pinned per role by full digest, overridable with <ROLE>_IMAGE"

# thor differs from spark in exactly the knobs of traits 1-3, 6 and 8 and
# the images the pooling lanes were validated with on the Thor.
keys() { grep -v '^#' "$1" | grep '=' | sort; }
changed=$(diff <(keys "$SRC/tests/goldens/spark/.env") <(keys "$SRC/tests/goldens/thor/.env") |
	grep '^[<>]' | sed 's/^[<>] //; s/=.*//' | grep -v '^HAND_' | sort -u | tr '\n' ' ')
is "$changed" "CORTEX_KV_CACHE_DTYPE CORTEX_SPECULATIVE_CONFIG EMBEDDER_ATTENTION_BACKEND EMBEDDER_IMAGE LOBES_CARD LOBES_ORDER LOBES_PROFILE RERANKER_ATTENTION_BACKEND RERANKER_ENFORCE_EAGER RERANKER_IMAGE " \
	"thor .env differs from spark only in trait 1-3 and 8 knobs and the pooling images (plus identity and order)"
is "$(grep -c '^HAND_' "$SRC/tests/goldens/thor/.env")" 1 "the hand (trait 6) leaves only HAND_FEASIBLE on thor"

# Isolation: a thor-only value or an sm_110 trait changes thor, never spark; and vice versa.
mkdir -p "$TMP/op1/profiles"
sed 's/gpu_mem_util: 0.30/gpu_mem_util: 0.25/' "$SRC/data/profiles/thor.yaml" > "$TMP/op1/profiles/thor.yaml"
run "$LOBES" --dir "$TMP/op1" render --check "$SRC/tests/goldens/spark" --profile spark
is "$rc" 0 "a thor-only value leaves the spark render byte-identical"
run "$LOBES" --dir "$TMP/op1" render --check "$SRC/tests/goldens/thor" --profile thor
is "$rc" 1 "the same change does change thor"
mkdir -p "$TMP/op2/profiles"
sed 's/attention_backend: TRITON_ATTN/attention_backend: FLEX_ATTENTION/' \
	"$SRC/data/traits/sm110-pooling-triton.yaml" > "$TMP/op2/profiles/sm110-pooling-triton.yaml"
run "$LOBES" --dir "$TMP/op2" render --check "$SRC/tests/goldens/spark" --profile spark
is "$rc" 0 "an sm_110 trait change leaves the spark render byte-identical"
run "$LOBES" --dir "$TMP/op2" render --check "$SRC/tests/goldens/thor" --profile thor
is "$rc" 1 "the sm_110 trait change does change thor"
like "$out" "FLEX_ATTENTION" "and the diff shows the new backend"
mkdir -p "$TMP/op3/profiles"
sed 's/max_model_len: 131072/max_model_len: 65536/' "$SRC/data/profiles/spark.yaml" > "$TMP/op3/profiles/spark.yaml"
run "$LOBES" --dir "$TMP/op3" render --check "$SRC/tests/goldens/thor" --profile thor
is "$rc" 0 "a spark-only value leaves the thor render byte-identical"
run "$LOBES" --dir "$TMP/op3" render --check "$SRC/tests/goldens/spark" --profile spark
is "$rc" 1 "the same change does change spark"

# Bad input.
run "$LOBES" render --profile ../etc --out "$TMP/x"
is "$rc" 3 "a profile name with .. is a config error"
like "$errout" "not valid" "and says why"
ok "$([ ! -e "$TMP/x" ]; echo $?)" "and writes nothing"
run "$LOBES" render --profile nosuch
is "$rc" 3 "an unknown profile is a config error"
like "$errout" "expected one of: .*spark" "naming the profiles there are"
run "$LOBES" render --out a --check b
is "$rc" 2 "--out with --check is a usage error"
run "$LOBES" --json render --profile spark
like "$out" '"name": "docker-compose.yml"' "--json lists the files"

# The compose files parse with docker-compose v1 (and v2 when present).
if command -v docker-compose >/dev/null 2>&1; then
	for d in "$SRC"/tests/goldens/*/; do
		p=$(basename "$d")
		[ -f "$d/docker-compose.yml" ] || continue # k8s/: kubernetes.t
		run sh -c "cd '$d' && docker-compose config -q"
		is "$rc" 0 "docker-compose v1 config -q accepts the $p golden (with its GPU overlay)"
	done
else
	ok 1 "docker-compose is not installed (make deps installs it)"
fi
if docker compose version >/dev/null 2>&1; then
	for d in "$SRC"/tests/goldens/*/; do
		[ -f "$d/docker-compose.yml" ] || continue # k8s/: kubernetes.t
		run sh -c "cd '$d' && docker compose config -q"
		is "$rc" 0 "docker compose v2 config -q accepts the $(basename "$d") golden"
	done
fi
# Container settings every engine gets (FACTS.md "Flags each lane needs").
for p in spark thor orin base orin-nano-super; do
	f="$SRC/tests/goldens/$p/docker-compose.yml"
	n=$(grep -c '^  [a-z]*:$' "$f")
	is "$(grep -c '^    ipc: host$' "$f")" "$n" "$p: every service has ipc: host"
	is "$(grep -A2 '^    ulimits:$' "$f" | grep -cE "^      (memlock: '\\\$\{LOBES_MEMLOCK:--1\}'|stack: 67108864)$")" "$((2 * n))" "$p: … ulimits memlock -1 (LOBES_MEMLOCK lowers it) and stack 67108864"
	is "$(grep -c "^      HF_TOKEN: '\\\${HF_TOKEN:-}'$" "$f")" "$n" "$p: … HF_TOKEN passed explicitly from the environment or .env"
	is "$(grep -c "^      VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: '0'$" "$f")" "$n" "$p: … the CUDA-graph memory estimate off (registered by both recorded images)"
done
unlike "$(cat "$SRC"/tests/goldens/*/docker-compose.yml)" "env_file" "no service reads the whole .env (env_file)"
unlike "$(cat "$SRC"/tests/goldens/*/.env)" "^HF_TOKEN=" "HF_TOKEN is never written by lobes (the operator adds it)"
like "$(cat "$SRC/tests/goldens/spark/docker-compose.yml")" "- '--served-model-name'
      - 'cortex'
      - '\\\$\{CORTEX_MODEL:-unsloth/Qwen3.8-27B-NVFP4\}'" "served under the role name and the checkpoint id (from .env)"
like "$(cat "$SRC/tests/goldens/spark/docker-compose.yml")" "- '--reasoning-parser=qwen3'
      - '--enable-auto-tool-choice'
      - '--tool-call-parser=qwen3_coder'" "a tool parser comes with --enable-auto-tool-choice"
like "$(cat "$SRC/tests/goldens/spark/docker-compose.yml")" "- './adapters:/adapters:ro'" "the LoRA adapters dir is mounted read-only (hand)"
is "$(grep -c ':/adapters:ro' "$SRC/tests/goldens/spark/docker-compose.yml")" 1 "… only where LoRA is on"
like "$(cat "$SRC/tests/goldens/spark/.env")" '^CORTEX_TOOL_CALL_PARSER=qwen3_coder$' ".env: <ROLE>_TOOL_CALL_PARSER for a role with a tool parser"
unlike "$(cat "$SRC/tests/goldens/spark/.env")" '^(EMBEDDER|RERANKER)_(TOOL_CALL|REASONING)_PARSER=' ".env: no parser key for a role without one"
like "$(cat "$SRC/tests/goldens/thor/.env")" '^CORTEX_SPECULATIVE_CONFIG=none$' "thor: MTP off for the cortex (trait 8)"
like "$(cat "$SRC/tests/goldens/orin/.env")" '^SENSES_GPU_MEM_UTIL=0.45$' "orin: senses at the measured 0.45"
like "$(cat "$SRC/tests/goldens/orin/.env")" '^SENSES_MAX_MODEL_LEN=131072$' "… and 131072"
like "$(cat "$SRC/tests/goldens/orin/.env")" '^LOBES_ORDER=senses,' "… booted first"
like "$(cat "$SRC/tests/goldens/orin/.env")" '^HAND_FEASIBLE=false$' "orin: the hand is not offered"

# No lobes placeholder reaches vLLM: knobs with a "no flag" word are written
# by init, never interpolated; an empty interpolated value falls back.
unlike "$(cat "$SRC"/tests/goldens/*/docker-compose.yml)" '\$\{[A-Z]+_(QUANTIZATION|MAX_NUM_SEQS|ATTENTION_BACKEND|SPECULATIVE_CONFIG|HF_OVERRIDES|REASONING_PARSER|TOOL_CALL_PARSER|RUNNER|CONVERT|MAX_LORAS|MAX_LORA_RANK|ENFORCE_EAGER|TRUST_REMOTE_CODE|ENABLE_LORA|ENABLE_PREFIX_CACHING|SERVED_NAMES|LORA_DIR)' \
	"no knob with a placeholder word is interpolated into a command"
if command -v docker-compose >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
	cp -r "$SRC/tests/goldens/spark" "$TMP/pl" && chmod 600 "$TMP/pl/.env"
	sed -i 's/^CORTEX_QUANTIZATION=.*/CORTEX_QUANTIZATION=none/; s/^CORTEX_MAX_NUM_SEQS=.*/CORTEX_MAX_NUM_SEQS=auto/;
		s/^CORTEX_GPU_MEM_UTIL=.*/CORTEX_GPU_MEM_UTIL=/; s/^CORTEX_SPECULATIVE_CONFIG=.*/CORTEX_SPECULATIVE_CONFIG=none/' "$TMP/pl/.env"
	run sh -c "cd '$TMP/pl' && unset LOBES_MEMLOCK; HF_TOKEN=hf_probe_value docker-compose config"
	is "$rc" 0 "docker-compose config reads a deploy dir whose .env holds placeholders"
	printf '%s' "$out" > "$TMP/pl.yml"
	cmd=$(python3 -c 'import yaml,sys; print("\n".join(yaml.safe_load(open(sys.argv[1]))["services"]["cortex"]["command"]))' "$TMP/pl.yml")
	unlike "$cmd" "=none$|=auto$|=$" "… and no argv item of the cortex is a placeholder or empty"
	like "$cmd" "^--gpu-memory-utilization=0.30$" "… an empty interpolated value falls back to the rendered one"
	like "$cmd" '^--speculative-config=\{"method": "mtp", "num_speculative_tokens": 2\}$' "… a JSON flag survives compose interpolation intact"
	like "$cmd" '^--quantization=compressed-tensors$' "… a .env placeholder for a literal knob is not in effect until init"
	is "$(python3 -c 'import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))["services"]["cortex"]["ulimits"])' "$TMP/pl.yml")" "{'memlock': -1, 'stack': 67108864}" "compose resolves memlock to -1 (unlimited) by default"
	env=$(python3 -c 'import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))["services"]["cortex"]["environment"]["HF_TOKEN"])' "$TMP/pl.yml")
	is "$env" "hf_probe_value" "HF_TOKEN from the environment reaches the engine"
	rr=$(python3 -c 'import yaml,sys; print("\n".join(yaml.safe_load(open(sys.argv[1]))["services"]["reranker"]["command"]))' "$TMP/pl.yml")
	like "$rr" '^--hf-overrides=\{"architectures": \["Qwen3ForSequenceClassification"\], "classifier_from_token": \["no", "yes"\], "is_original_qwen3_reranker": true\}$' "the reranker's --hf-overrides survive compose interpolation intact"
else
	ok 0 "# SKIP docker-compose or python3-yaml is missing"
fi
done_testing
