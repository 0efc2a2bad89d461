#!/bin/bash
# explain.t — the plan on fixture boxes: which profile the facts select, every
# knob's provenance, the three-valued fp8 trait (FACTS.md trait 3) against
# checkpoint facts, conflicting traits, and a new card + profile + trait added
# as files only.
. "${LOBES_SRC:-.}/tests/lib.sh"
HOSTS=$SRC/tests/fixtures/hosts
CK=$SRC/tests/fixtures/checkpoints
export LOBES_DIR=$TMP/deploy LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1
export HF_HUB_CACHE=$TMP/empty-hub
unset LOBES_SYSROOT HF_HOME
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"
# on BOX CMD...: run lobes on a fixture box
on() { local b=$1; shift; run env LOBES_SYSROOT="$HOSTS/$b" LOBES_NVIDIA_SMI="$HOSTS/$b/bin/nvidia-smi" "$LOBES" "$@"; }
# jq-like: j EXPR  (python expression over d = the JSON on stdin)
j() { printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); v=$1; print(v if isinstance(v,str) else json.dumps(v))"; }
last_step='d["roles"][R]["knobs"][K]["chain"][-1]'
step() { j "$(echo "$last_step" | sed "s/R/'$1'/; s/K/'$2'/")$3"; }

# Thor: the thor profile; the sm_110 traits with cause and evidence.
on thor --json explain
is "$rc" 0 "explain on thor exits 0"
is "$(j 'd["profile"]["name"]')" thor "thor box selects the thor profile"
is "$(j 'd["card"]["id"]')" thor "card thor"
is "$(j 'd["facts"]["compute_cap"]["value"]')" "11.0" "the facts that selected it are included"
is "$(j 'd["roles"]["embedder"]["knobs"]["attention_backend"]["value"]')" TRITON_ATTN "embedder attention TRITON_ATTN"
is "$(step embedder attention_backend '["trait"]')" sm110-pooling-triton "… from trait sm110-pooling-triton"
is "$(step embedder attention_backend '["evidence"][0]["date"]')" 2026-07-13 "… with its evidence date"
is "$(step embedder attention_backend '["evidence"][0]["box"]')" jetson-agx-thor "… and box"
is "$(step reranker enforce_eager '["trait"]')" sm110-reranker-eager "reranker eager from trait 2"
is "$(j 'd["roles"]["hand"]["feasible"]')" false "hand infeasible on thor"
is "$(step hand feasible '["trait"]')" sm110-lfm-hand-infeasible "… from trait 6"
is "$(j 'd["roles"]["cortex"]["knobs"]["kv_cache_dtype"]["value"]')" auto "cortex kv auto when the checkpoint is not cached"
is "$(step cortex kv_cache_dtype '["predicate"]')" unknown "… the predicate was unknown"
like "$(step cortex kv_cache_dtype '["assumption"]')" "assumes no scales" "… and the plan says which assumption it made"
is "$(j 'd["roles"]["cortex"]["knobs"]["kv_cache_dtype"]["chain"][0]["value"]')" fp8 "… over the fp8 template default"
is "$(j 'd["roles"]["cortex"]["knobs"]["kv_cache_dtype"]["chain"][0]["kind"]')" default "… which is the first step of the chain"
is "$(j 'd["bringup"]["value"]')" one-at-a-time "unified memory brings roles up one window at a time"
is "$(j 'd["dead_env"][0]["name"]')" VLLM_ATTENTION_BACKEND "VLLM_ATTENTION_BACKEND is declared dead"
is "$(j 'd["known_failures"]')" "[]" "no known failure is left on thor (the reranker ordering passes with its overrides)"
is "$(step reranker enforce_eager '["evidence"][0]["observation"]' | grep -c 'ranking order was wrong')" 1 "the eager trait's evidence keeps the early wrong-order observation"
like "$(step reranker enforce_eager '["evidence"][2]["observation"]')" "passed again, ranking \[0, 2, 1\]" "… and the later pass"

# Checkpoint facts decide trait 3 when they are readable.
HF_HUB_CACHE=$CK/noscales/hub on thor --json explain cortex
is "$(j 'd["roles"]["cortex"]["checkpoint"]["kv_scales"]')" absent "scale-less checkpoint read from the HF cache"
is "$(step cortex kv_cache_dtype '["predicate"]')" true "fp8 ∧ no scales ∧ TRITON: the trait holds"
is "$(j 'd["roles"]["cortex"]["knobs"]["kv_cache_dtype"]["value"]')" auto "… so the cortex runs kv auto"
is "$(j 'list(d["roles"].keys())')" '["cortex"]' "explain ROLE shows only that role"
HF_HUB_CACHE=$CK/scales/hub on thor --json explain cortex
is "$(j 'd["roles"]["cortex"]["checkpoint"]["kv_scales"]')" present "checkpoint with kv_cache_scheme ships scales"
is "$(j 'd["roles"]["cortex"]["knobs"]["kv_cache_dtype"]["value"]')" fp8 "… and fp8 stays on thor"
HF_HUB_CACHE=$CK/modelopt/hub on thor --json explain cortex
is "$(j 'd["roles"]["cortex"]["checkpoint"]["kv_scales"]')" absent "ModelOpt kv_cache_quant_algo null: no scales"
HF_HUB_CACHE=$CK/noscales/hub on thor --json explain senses
is "$(j 'd["roles"]["senses"]["checkpoint"]["hetero_head_dim"]')" true "Gemma 4 heterogeneous head dims are read"

# Spark: fp8 stays (FLASH_ATTN path), with or without the checkpoint.
for hub in "$TMP/empty-hub" "$CK/noscales/hub"; do
	HF_HUB_CACHE=$hub on gb10 --json explain
	is "$(j 'd["profile"]["name"]')" spark "gb10 selects spark"
	is "$(j 'd["roles"]["cortex"]["knobs"]["kv_cache_dtype"]["value"]')" fp8 "fp8 stays on the GB10 ($(basename "$(dirname "$hub")"))"
done
HF_HUB_CACHE=$CK/noscales/hub on gb10 --json explain --profile thor
is "$(j 'd["profile"]["unvalidated"]')" true "thor forced on a gb10 is flagged unvalidated"
like "$(j 'd["warnings"]')" "validated for card 'thor', not for the detected card 'spark'" "… with a warning"
is "$(j 'd["roles"]["cortex"]["knobs"]["kv_cache_dtype"]["value"]')" fp8 "… and the sm_110 fp8 trait is false on sm_121"
is "$(j 'd["roles"]["embedder"]["knobs"]["attention_backend"]["value"]')" auto "… as is the pooling trait"

# Unknown card: base, a warning, never spark.
on h100 explain
is "$rc" 0 "explain on an H100 exits 0"
like "$out" "^profile base" "an unknown card gets base"
like "$out" "warning: no known card matched this machine; using the conservative base profile" "with a warning"
unlike "$out" "model +unsloth/Qwen3.8-27B" "never the spark cortex"
on cpu-only explain
like "$out" "^profile base" "a CPU-only box gets base"

# Text output names the why for every divergence from spark.
on thor explain
for t in sm110-pooling-triton sm110-reranker-eager fp8-kv-needs-scales-on-triton sm110-lfm-hand-infeasible; do
	like "$out" "<- trait $t at data/traits/$t.yaml" "text explain names trait $t"
done
like "$out" "cause: on sm_110 the auto-selected FLASH_ATTN pooling path" "text explain prints the cause"
like "$out" "evidence \(measured\) 2026-07-13, jetson-agx-thor" "text explain prints the evidence"
on thor explain nosuchrole
is "$rc" 2 "an unknown role is a usage error"
on thor explain --profile nosuch
is "$rc" 3 "an unknown profile is a config error"

# Conflicting traits on one knob: an error naming both, unless one declares precedence.
OP=$TMP/op/profiles; mkdir -p "$OP"
cat > "$OP/force-fp8.yaml" <<'Y'
kind: trait
name: force-fp8
cause: synthetic test trait that wants fp8 on sm_110
when:
  - fact: card.compute_cap
    eq: "11.0"
on_unknown: skip
set:
  kv_cache_dtype: fp8
evidence:
  - kind: declared
    observation: test only
Y
sed 's/  - sm110-lfm-hand-infeasible/  - sm110-lfm-hand-infeasible\n  - force-fp8/' "$SRC/data/profiles/thor.yaml" > "$OP/thor.yaml"
LOBES_DIR=$TMP/op on thor explain
is "$rc" 3 "two traits setting one knob differently is a config error"
like "$errout" "traits 'fp8-kv-needs-scales-on-triton' \(data/traits/fp8-kv-needs-scales-on-triton.yaml:[0-9]+:[0-9]+\) and 'force-fp8' \(.*force-fp8.yaml:[0-9]+:[0-9]+\) set cortex kv_cache_dtype to 'auto' and 'fp8'" "naming both traits and the knob"
printf 'overrides: [fp8-kv-needs-scales-on-triton]\n' >> "$OP/force-fp8.yaml"
LOBES_DIR=$TMP/op on thor --json explain cortex
is "$rc" 0 "with overrides: the conflict resolves"
is "$(j 'd["roles"]["cortex"]["knobs"]["kv_cache_dtype"]["value"]')" fp8 "… to the trait that declared precedence"

# A new card + profile + trait, as files only: detection, plan, explain, render pick them up.
EXT=$TMP/ext/profiles; mkdir -p "$EXT"
cat > "$EXT/h100-lab.card.yaml" <<'Y'
kind: card
name: h100-lab
description: a lab workstation with one H100 (synthetic test card)
detect:
  name_markers: ["H100"]
  compute_cap: "9.0"
memory_model: discrete
gpu_attach: reservation
status: unvalidated
profile: h100-lab
evidence:
  - kind: declared
    observation: test only
Y
cat > "$EXT/h100-lab.trait.yaml" <<'Y'
kind: trait
name: sm90-cortex-eager
cause: synthetic cause keyed on compute capability 9.0
roles: [cortex]
when:
  - fact: card.compute_cap
    eq: "9.0"
on_unknown: skip
set:
  enforce_eager: true
evidence:
  - kind: declared
    date: 2026-12-01
    box: h100-lab
    observation: test only
Y
cat > "$EXT/h100-lab.profile.yaml" <<'Y'
kind: profile
name: h100-lab
card: h100-lab
status: unvalidated
description: cortex and embedder on the lab H100
traits: [sm90-cortex-eager, attention-backend-env-dead]
roles:
  cortex:
    model: Qwen/Qwen3.5-4B
    image: vllm/vllm-openai@sha256:8bd082c274fae025b7079498fe1da65182ba1d4c2188c0f5a68c1042c38c3695
    gpu_mem_util: 0.5
    max_model_len: 16384
  embedder:
    model: Qwen/Qwen3-Embedding-0.6B
    image: vllm/vllm-openai@sha256:8bd082c274fae025b7079498fe1da65182ba1d4c2188c0f5a68c1042c38c3695
    gpu_mem_util: 0.1
    max_model_len: 8192
Y
LOBES_DIR=$TMP/ext on h100 --json detect
is "$(j 'd["card"]["id"]')" h100-lab "detection picks up the new card from files"
LOBES_DIR=$TMP/ext on h100 --json explain
is "$(j 'd["profile"]["name"]')" h100-lab "resolution picks the new profile"
is "$(step cortex enforce_eager '["trait"]')" sm90-cortex-eager "the new trait sets its knob"
is "$(j 'd["roles"]["senses"]["feasible"]')" false "roles the profile does not name are not feasible"
LOBES_DIR=$TMP/ext on h100 explain
like "$out" "<- trait sm90-cortex-eager at .*h100-lab.trait.yaml" "text explain names the new trait"
run "$LOBES" --dir "$TMP/ext" render --profile h100-lab
like "$out" "- '--enforce-eager'" "render picks it up"
unlike "$out" "^  senses:" "and renders no service for roles it does not name"
# --- issue 8: the serving knobs' chains, Orin as measured, bad values ----------
on thor --json explain
is "$(j "d['roles']['cortex']['knobs']['image']['chain'][0]['kind']")" profile "cortex image: pinned by the profile (no template default)"
for k in served_names reasoning_parser tool_call_parser enable_prefix_caching speculative_config hf_overrides trust_remote_code enable_lora max_loras max_lora_rank runner convert; do
	is "$(j "d['roles']['cortex']['knobs']['$k']['chain'][0]['kind']")" default "cortex $k: the chain starts at the template default"
done
is "$(j 'd["roles"]["cortex"]["knobs"]["reasoning_parser"]["value"]')" qwen3 "cortex reasoning_parser qwen3 …"
is "$(j 'd["roles"]["cortex"]["knobs"]["reasoning_parser"]["chain"][-1]["kind"]')" family "… from the model's family (no longer repeated in the profile)"
is "$(j 'd["roles"]["cortex"]["knobs"]["tool_call_parser"]["value"]')" qwen3_coder "cortex tool_call_parser qwen3_coder"
is "$(j 'd["roles"]["cortex"]["knobs"]["speculative_config"]["chain"][1]["value"]')" '{"method": "mtp", "num_speculative_tokens": 2}' "cortex speculative_config: MTP from the profile …"
is "$(step cortex speculative_config '["trait"]')" sm110-mtp-off-gdn-qwen "… turned off by trait 8 on the Thor"
is "$(step cortex speculative_config '["value"]')" none "… to none"
like "$(step cortex speculative_config '["evidence"][0]["observation"]')" "launch_gdn_decode_post_conv_mtp" "… with its evidence"
like "$(j 'd["roles"]["reranker"]["knobs"]["hf_overrides"]["value"]')" '"is_original_qwen3_reranker": true' "reranker hf_overrides from its family"
is "$(j 'd["roles"]["senses"]["knobs"]["tool_call_parser"]["value"]')" gemma4 "senses tool parser gemma4"
is "$(j 'd["roles"]["embedder"]["knobs"]["runner"]["value"]') $(j 'd["roles"]["embedder"]["knobs"]["convert"]["value"]')" "pooling embed" "embedder runner pooling, convert embed"
is "$(j 'd["roles"]["embedder"]["knobs"]["image"]["value"]')" "vllm/vllm-openai@sha256:7c5a10e9a8b3c8642f4d0463a41215176c0dd834b4f0967287c7e3e517cf1be9" "thor pooling on the image it was validated with"
is "$(j 'd["roles"]["embedder"]["image"]["vllm"]') $(j 'd["roles"]["cortex"]["image"]["vllm"]')" "0.23.1rc1.dev672+g93d8f834d 0.26.1rc1.dev942+g5a4c8d992" "each role's image maps to the vLLM it carries"
on thor explain cortex
like "$out" "vllm +0.26.1rc1.dev942\+g5a4c8d992 \(lists: data/vllm/5a4c8d992/\)" "text explain names the role's vLLM and its lists"
on gb10 --json explain
is "$(j 'd["roles"]["hand"]["knobs"]["enable_lora"]["value"]') $(j 'd["roles"]["hand"]["knobs"]["max_loras"]["value"]') $(j 'd["roles"]["hand"]["knobs"]["max_lora_rank"]["value"]')" "true 4 32" "spark hand: LoRA armed, 4 adapters of rank 32"
is "$(j 'd["roles"]["hand"]["knobs"]["quantization"]["value"]')" none "spark hand: bf16, no quantization"
is "$(j 'd["roles"]["cortex"]["knobs"]["speculative_config"]["value"]')" '{"method": "mtp", "num_speculative_tokens": 2}' "spark cortex keeps MTP"
on agx-orin --json explain
is "$(j 'd["profile"]["name"]')" orin "the Orin box selects the orin profile"
is "$(j 'd["roles"]["senses"]["knobs"]["gpu_mem_util"]["value"]') $(j 'd["roles"]["senses"]["knobs"]["max_model_len"]["value"]')" "0.45 131072" "orin senses 0.45 / 131072"
is "$(j '",".join(d["order"])')" "senses,embedder,reranker" "… booted first"
is "$(step embedder attention_backend '["trait"]')" sm87-pooling-triton-carry-over "orin pooling TRITON_ATTN from its own carry-over trait"
is "$(step embedder attention_backend '["evidence"][0]["kind"]') $(step embedder attention_backend '["evidence"][1]["kind"]')" "declared measured" "… declared as a cause, measured booted and passing"
is "$(step reranker enforce_eager '["trait"]')" sm87-reranker-eager-carry-over "orin reranker eager from its own carry-over trait"
is "$(step hand feasible '["trait"]')" orin-hand-memory "orin hand not offered by trait orin-hand-memory"
like "$(step hand feasible '["cause"]')" "does not reliably get memory" "… for memory"
unlike "$(step hand feasible '["cause"]')" "NVFP4" "… not NVFP4"

# The operator's <ROLE>_IMAGE and parser edits in .env: the last step of the chain.
O8=$TMP/op8
on gb10 --dir "$O8" init --apply >/dev/null
sed -i 's/^CORTEX_TOOL_CALL_PARSER=.*/CORTEX_TOOL_CALL_PARSER=hermes/; s|^CORTEX_IMAGE=.*|CORTEX_IMAGE=registry.local/vllm@sha256:'"$(printf 'cd%.0s' $(seq 32))"'|' "$O8/.env"
on gb10 --json --dir "$O8" explain
is "$(step cortex tool_call_parser '["kind"]') $(step cortex tool_call_parser '["value"]')" "override hermes" "an operator's parser is the last step of the chain"
is "$(step cortex image '["kind"]')" override "an operator's <ROLE>_IMAGE is the last step of the chain"
on gb10 --dir "$O8" init --apply
like "$out" "CORTEX_IMAGE='registry.local/vllm@sha256:(cd)+': its vLLM version is not recorded" "init says the operator's image has no recorded vLLM version"
like "$(cat "$O8/docker-compose.yml")" "image: '\\\$\{CORTEX_IMAGE:-registry.local/vllm@sha256:(cd)+\}'" "… and honours it"
like "$(cat "$O8/docker-compose.yml")" "'--tool-call-parser=hermes'" "the operator's parser is rendered"

B=$TMP/bad8/profiles; mkdir -p "$B"
sed 's/^name: spark$/name: bad-json/; s/"num_speculative_tokens": 2}/"num_speculative_tokens": 2/' "$SRC/data/profiles/spark.yaml" > "$B/bad-json.yaml"
LOBES_DIR=$TMP/bad8 on gb10 explain
is "$rc" 3 "invalid JSON in speculative_config: a config error"
like "$errout" "bad-json.yaml:[0-9]+:[0-9]+: speculative_config '.*' is invalid; expected none or a JSON object \(invalid JSON: .* at column [0-9]+\)" "… at file:line:column, saying why"
rm "$B/bad-json.yaml"
sed 's/^name: spark$/name: bad-parser/; s/^    attention_backend: TRITON_ATTN$/&\n    tool_call_parser: qwen3_coder_v9/' "$SRC/data/profiles/spark.yaml" > "$B/bad-parser.yaml"
LOBES_DIR=$TMP/bad8 on gb10 explain
is "$rc" 3 "a tool parser the role's vLLM does not register: a config error"
like "$errout" "bad-parser.yaml:[0-9]+:[0-9]+: profile 'bad-parser' role 'senses': tool parser 'qwen3_coder_v9' is not registered in vLLM 93d8f834d" "… at file:line:column, against the senses image's version"
rm "$B/bad-parser.yaml"
sed 's/^name: spark$/name: bad-mtp-on-old/; s/^    attention_backend: TRITON_ATTN$/&\n    reasoning_parser: inkling/' "$SRC/data/profiles/spark.yaml" > "$B/bad-r.yaml"
LOBES_DIR=$TMP/bad8 on gb10 explain
like "$errout" "reasoning parser 'inkling' is not registered in vLLM 93d8f834d" "a reasoning parser only the newer vLLM has is refused for the older image"
rm "$B/bad-r.yaml"
sed 's/^name: spark$/name: bad-digest/; s/sha256:8bd082c274fae025b7079498fe1da65182ba1d4c2188c0f5a68c1042c38c3695  # M spark 2026-08-19, MTP/sha256:8bd082c2  # MTP/' "$SRC/data/profiles/spark.yaml" > "$B/bad-digest.yaml"
LOBES_DIR=$TMP/bad8 on gb10 explain
is "$rc" 3 "a digest prefix in a profile: a config error"
like "$errout" "bad-digest.yaml:[0-9]+:[0-9]+: image 'vllm/vllm-openai@sha256:8bd082c2' is invalid; expected an image reference" "… at file:line:column"
unlike "$errout" "name:tag" "… offering no tag, which a profile refuses"
like "$errout" "expected an image reference pinned by digest: name@sha256:<64 hex digits>" "… but the full digest"
rm "$B/bad-digest.yaml"
sed 's/^name: spark$/name: bad-tag/; s/vllm\/vllm-openai@sha256:8bd082c274fae025b7079498fe1da65182ba1d4c2188c0f5a68c1042c38c3695  # M spark 2026-08-19, MTP/vllm\/vllm-openai:latest  # MTP/' "$SRC/data/profiles/spark.yaml" > "$B/bad-tag.yaml"
LOBES_DIR=$TMP/bad8 on gb10 explain
is "$rc" 3 "an unpinned image in a profile: a config error"
like "$errout" "bad-tag.yaml:[0-9]+:[0-9]+: profile 'bad-tag' role 'cortex': image 'vllm/vllm-openai:latest' is not pinned" "… at file:line:column"
done_testing
