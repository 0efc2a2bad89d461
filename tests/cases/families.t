#!/bin/bash
# families.t — model families (data/families/): a fixture checkpoint per
# family (tests/fixtures/hf/, config.json) resolves to its parsers, the
# config decides over the name and the name only without a config, an
# unknown architecture gets no parser and a warning (explain and doctor),
# the native context clamps max_model_len, the chain is default → family →
# profile → trait → operator, and a bad family file is a positioned load
# error (unknown key, a card knob, a parser no image or the role's image
# registers, two families matching alike).
. "${LOBES_SRC:-.}/tests/lib.sh"
HOSTS=$SRC/tests/fixtures/hosts
HUB=$SRC/tests/fixtures/hf/hub
export LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1 HF_HUB_CACHE=$HUB
unset LOBES_SYSROOT HF_HOME LOBES_DIR
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"
on() { local b=$1; shift; run env LOBES_SYSROOT="$HOSTS/$b" LOBES_NVIDIA_SMI="$HOSTS/$b/bin/nvidia-smi" "$LOBES" "$@"; }
j() { printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); v=$1; print(v if isinstance(v,str) else json.dumps(v))"; }
# prof DIR ROLE MODEL: an operator profile "t" (base with ROLE's model replaced)
prof() {
	mkdir -p "$1/profiles"
	python3 - "$SRC/data/profiles/base.yaml" "$1/profiles/t.yaml" "$2" "$3" <<'P'
import sys, re
src, dst, role, model = sys.argv[1:]
t = open(src).read().replace("name: base\n", "name: t\n", 1)
t = re.sub(r"(\n  %s:\n    model: )\S+" % role, r"\g<1>" + model, t)
open(dst, "w").write(t)
P
}
R='d["roles"]'

# --- a fixture checkpoint per family, matched by its config.json ----------
while read -r model family tool reasoning; do
	D=$TMP/f-${model//\//_}; prof "$D" cortex "$model"
	on h100 --json --dir "$D" explain --profile t cortex
	is "$rc" 0 "explain with cortex $model"
	is "$(j "$R['cortex']['family']['name']")" "$family" "$model: family $family"
	like "$(j "$R['cortex']['family']['why']")" "^config.json (architectures|model_type) " "… matched by its config.json"
	is "$(j "$R['cortex']['knobs']['tool_call_parser']['value']") $(j "$R['cortex']['knobs']['reasoning_parser']['value']")" \
		"$tool $reasoning" "… tool parser $tool, reasoning parser $reasoning"
	[ "$tool" = none ] || is "$(j "$R['cortex']['knobs']['tool_call_parser']['chain'][-1]['kind']") $(j "$R['cortex']['knobs']['tool_call_parser']['chain'][-1]['family']")" \
		"family $family" "… the last step of its chain is the family"
done <<'L'
Qwen/Qwen3.5-4B qwen3-xml-tools qwen3_coder qwen3
unsloth/Qwen3.8-27B-NVFP4 qwen3-xml-tools qwen3_coder qwen3
Qwen/Qwen3-8B qwen3-dense hermes qwen3
Qwen/Qwen3-Coder-30B-A3B-Instruct qwen3-coder qwen3_coder qwen3
mistralai/Mistral-7B-Instruct-v0.3 mistral mistral none
LiquidAI/LFM2.5-1.2B-Instruct lfm2 lfm2 none
coolthor/gemma-4-12B-it-NVFP4A16 gemma4 gemma4 gemma4
L
# the pooling families: the embedder and the reranker (config.json alike to a dense Qwen3)
on h100 --json explain embedder
is "$(j "$R['embedder']['family']['name']") $(j "$R['embedder']['knobs']['convert']['value']")" "qwen3-embedding embed" "Qwen3-Embedding: family qwen3-embedding, convert embed"
on h100 --json explain reranker
is "$(j "$R['reranker']['family']['name']")" qwen3-reranker "Qwen3-Reranker (a Qwen3ForCausalLM config) is family qwen3-reranker, not the dense Qwen3"
like "$(j "$R['reranker']['family']['why']")" "Qwen3ForCausalLM and model id 'Qwen/Qwen3-Reranker-0.6B' matches" "… by its config and its id together"
like "$(j "$R['reranker']['knobs']['hf_overrides']['value']")" '"is_original_qwen3_reranker": true' "… which sets the reranker overrides"
is "$(j "$R['reranker']['knobs']['hf_overrides']['chain'][-1]['kind']")" family "… from the family step"
is "$(j "$R['reranker']['knobs']['tool_call_parser']['value']")" none "a pooling role gets no tool parser"
D=$TMP/qdense-embed; prof "$D" embedder Qwen/Qwen3-8B
on h100 --json --dir "$D" explain --profile t embedder
is "$(j "$R['embedder']['family']['name']")" null "a dense Qwen3 in a pooling role matches no family (the dense family is for generate lanes)"
unlike "$(j 'd["warnings"]')" "embedder: unknown family" "… and a pooling role is not warned about parsers"

# --- the config decides; the name only without a config -------------------
MIS=$TMP/mislabeled/hub/models--acme--Qwen3.8-Mislabeled
mkdir -p "$MIS/snapshots/r1" && printf r1 > "$MIS/refs_main" && mkdir -p "$MIS/refs" && mv "$MIS/refs_main" "$MIS/refs/main"
cp "$HUB"/models--Qwen--Qwen3-8B/snapshots/*/config.json "$MIS/snapshots/r1/"
D=$TMP/mislabeled; prof "$D" cortex acme/Qwen3.8-Mislabeled
HF_HUB_CACHE=$TMP/mislabeled/hub on h100 --json --dir "$D" explain --profile t cortex
is "$(j "$R['cortex']['family']['name']") $(j "$R['cortex']['knobs']['tool_call_parser']['value']")" "qwen3-dense hermes" "an id that reads Qwen3.8 with a dense Qwen3 config.json is a dense Qwen3"
HF_HUB_CACHE=$TMP/empty-hub on h100 --json --dir "$D" explain --profile t cortex
is "$(j "$R['cortex']['family']['name']")" qwen3-xml-tools "without a config.json the same id matches by name"
like "$(j "$R['cortex']['family']['why']")" "matches '\*Qwen3.8-\*' \(no config.json read\)" "… and explain says it was the name"
D=$TMP/q8; prof "$D" cortex Qwen/Qwen3-8B
HF_HUB_CACHE=$TMP/empty-hub on h100 --json --dir "$D" explain --profile t cortex
is "$(j "$R['cortex']['family']['name']") $(j "$R['cortex']['knobs']['tool_call_parser']['value']")" "qwen3-dense hermes" "by name, Qwen3-8B is a dense Qwen3, not a Qwen3.8"

# --- base: the cortex gains its family's parsers; explain shows the step --
HF_HUB_CACHE=$TMP/empty-hub on h100 --json explain cortex
is "$(j 'd["profile"]["name"]')" base "an unknown card renders base"
is "$(j "$R['cortex']['knobs']['tool_call_parser']['value']") $(j "$R['cortex']['knobs']['reasoning_parser']['value']")" "qwen3_coder qwen3" "base cortex Qwen3.5-4B: qwen3_coder + qwen3"
is "$(j "[s['kind'] for s in $R['cortex']['knobs']['tool_call_parser']['chain']]")" '["default", "family"]' "… chain default → family"
like "$(j "$R['cortex']['knobs']['tool_call_parser']['chain'][-1]['where']")" "^data/families/qwen3-xml-tools.yaml:[0-9]+:[0-9]+$" "… at the family file's position"
is "$(j "$R['cortex']['knobs']['tool_call_parser']['chain'][-1]['evidence'][0]['date']")" 2026-08-19 "… with its evidence"
run "$LOBES" render --profile base
like "$out" "'--tool-call-parser=qwen3_coder'" "the base render carries --tool-call-parser=qwen3_coder"
like "$out" "'--enable-auto-tool-choice'" "… with auto tool choice"
like "$out" "'--reasoning-parser=qwen3'" "… and --reasoning-parser=qwen3"
HF_HUB_CACHE=$TMP/empty-hub on h100 explain cortex
like "$out" "<- family qwen3-xml-tools at data/families/qwen3-xml-tools.yaml:[0-9]+:[0-9]+" "text explain names the family step"
like "$out" "evidence \(measured\) 2026-08-19, spark-f8a9" "… and its evidence"
like "$out" "family +qwen3-xml-tools — model id 'Qwen/Qwen3.5-4B' matches" "… and what matched it"

# --- the chain order: a profile value beats the family, a trait and the operator come after
D=$TMP/pchain; prof "$D" cortex Qwen/Qwen3.5-4B
sed -i 's/^    max_model_len: 32768$/    max_model_len: 32768\n    tool_call_parser: hermes/' "$D/profiles/t.yaml"
on h100 --json --dir "$D" explain --profile t cortex
is "$(j "[s['kind'] + '=' + s['value'] for s in $R['cortex']['knobs']['tool_call_parser']['chain']]")" \
	'["default=none", "family=qwen3_coder", "profile=hermes"]' "default → family → profile: the profile's parser wins"
on thor --json explain
is "$(j "[s['kind'] for s in $R['cortex']['knobs']['reasoning_parser']['chain']]")" '["default", "family"]' "thor cortex: reasoning parser from the family, no longer repeated in the profile"
O=$TMP/opchain
on gb10 --dir "$O" init --apply >/dev/null
sed -i 's/^CORTEX_TOOL_CALL_PARSER=.*/CORTEX_TOOL_CALL_PARSER=hermes/' "$O/.env"
on gb10 --json --dir "$O" explain cortex
is "$(j "[s['kind'] for s in $R['cortex']['knobs']['tool_call_parser']['chain']]")" '["default", "family", "override"]' "the operator's .env value comes after the family"

# --- unknown architecture: no parser, a warning, in explain and doctor ----
D=$TMP/unknown; prof "$D" cortex lobes-fixtures/Unknown-Arch-1B
on h100 --json --dir "$D" explain --profile t cortex
is "$rc" 0 "an unknown family is not an error"
is "$(j "$R['cortex']['family']['name']")" null "FooBarForCausalLM matches no family"
is "$(j "$R['cortex']['knobs']['tool_call_parser']['value']") $(j "$R['cortex']['knobs']['reasoning_parser']['value']")" "none none" "… and gets no parser"
like "$(j 'd["warnings"]')" "cortex: unknown family: pass --tool-call-parser \(CORTEX_TOOL_CALL_PARSER in .env\)" "explain warns: unknown family: pass --tool-call-parser"
like "$(j 'd["warnings"]')" "architectures \[FooBarForCausalLM\], model_type foobar match no family" "… naming what the config said"
on h100 --dir "$D" explain --profile t cortex
like "$out" "warning: cortex: unknown family: pass --tool-call-parser" "text explain prints the warning"
like "$out" "family +unknown — config.json architectures \[FooBarForCausalLM\]" "… and the role's family line"
on h100 --dir "$D" init --profile t --apply
is "$rc" 0 "init renders the unknown family"
unlike "$(sed -n '/^  cortex:/,/^  hand:/p' "$D/docker-compose.yml")" "'--tool-call-parser=" "… with no tool parser flag for the cortex"
unlike "$(cat "$D/.env")" "CORTEX_TOOL_CALL_PARSER=" "… and no parser key in .env"
on h100 --json --dir "$D" doctor
like "$(printf '%s' "$out" | python3 -c 'import json,sys; print("\n".join(c["message"] for c in json.load(sys.stdin)["checks"] if c["id"] == "family"))')" \
	"cortex: unknown family: pass --tool-call-parser; 'lobes-fixtures/Unknown-Arch-1B' is served with no tool-call parser" "doctor says it too"
G=$TMP/known; on h100 --dir "$G" init --apply >/dev/null
sed -i "/--tool-call-parser=qwen3_coder'/d; /--enable-auto-tool-choice'/d" "$G/docker-compose.yml"
on h100 --json --dir "$G" doctor
like "$(printf '%s' "$out" | python3 -c 'import json,sys; print("\n".join(c["severity"] + " " + c["message"] + " | " + (c.get("remedy") or "") for c in json.load(sys.stdin)["checks"] if c["id"] == "family"))')" \
	"warning cortex: 'Qwen/Qwen3.5-4B' is family qwen3-xml-tools .* sets tool_call_parser qwen3_coder; the deployed command has none \| set CORTEX_TOOL_CALL_PARSER=qwen3_coder" \
	"doctor: a known family whose parser is missing from the deployed command is a warning with the fix"

# --- the native context clamps max_model_len ------------------------------
on h100 --json --dir "$TMP/unknown" explain --profile t cortex
is "$(j "$R['cortex']['knobs']['max_model_len']['value']")" 16384 "profile 32768 over a 16384-token checkpoint: clamped to 16384"
is "$(j "$R['cortex']['knobs']['max_model_len']['chain'][-1]['kind']")" family "… as a family step"
like "$(j "$R['cortex']['knobs']['max_model_len']['chain'][-1]['where']")" "config.json: the checkpoint's native context \(config.json max_position_embeddings\)" "… naming the config key"
is "$(j "$R['cortex']['checkpoint']['native_context']")" 16384 "the checkpoint facts carry the native context"
on h100 --json explain cortex
is "$(j "$R['cortex']['knobs']['max_model_len']['value']") $(j "$R['cortex']['knobs']['max_model_len']['chain'][-1]['kind']")" "32768 profile" "a length under the native one stays as the profile set it"
Y=$TMP/yarn/hub/models--acme--Yarn-Model; mkdir -p "$Y/snapshots/r1" "$Y/refs"; printf r1 > "$Y/refs/main"
printf '{"architectures": ["MistralForCausalLM"], "model_type": "mistral", "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}}' > "$Y/snapshots/r1/config.json"
D=$TMP/yarn; prof "$D" cortex acme/Yarn-Model
sed -i 's/^    max_model_len: 32768$/    max_model_len: 65536/' "$D/profiles/t.yaml"
HF_HUB_CACHE=$TMP/yarn/hub on h100 --json --dir "$D" explain --profile t cortex
is "$(j "$R['cortex']['knobs']['max_model_len']['value']")" 16384 "a yarn rope: original 4096 × factor 4 = 16384, as vLLM derives it"
O=$TMP/opctx; prof "$O" cortex lobes-fixtures/Unknown-Arch-1B
on h100 --dir "$O" init --profile t --apply >/dev/null
sed -i 's/^CORTEX_MAX_MODEL_LEN=.*/CORTEX_MAX_MODEL_LEN=65536/' "$O/.env"
on h100 --json --dir "$O" explain --profile t cortex
is "$(j "$R['cortex']['knobs']['max_model_len']['value']")" 65536 "the operator's length beyond the native one stays (the operator decides)"
like "$(j 'd["warnings"]')" "cortex: max_model_len 65536 \(.env:[0-9]+ CORTEX_MAX_MODEL_LEN \(operator edit\)\) exceeds the checkpoint's native context 16384" "… with a warning naming both"

# --- bad family files: positioned load errors ------------------------------
B=$TMP/bad/profiles; mkdir -p "$B"
fam() { cat > "$B/f.yaml"; LOBES_DIR=$TMP/bad on gb10 explain; }
fam <<'Y'
kind: family
name: f
description: test
match: {model_id: ["*x*"], colour: red}
set: {tool_call_parser: hermes}
evidence: [{kind: declared, observation: test}]
Y
is "$rc" 3 "an unknown key in match: a config error"
like "$errout" "f.yaml:4:28: unknown key 'colour' in 'match'" "… at file:line:column"
fam <<'Y'
kind: family
name: f
description: test
match: {model_id: ["*x*"]}
set: {tool_call_parser: hermes, gpu_mem_util: 0.5}
evidence: [{kind: declared, observation: test}]
Y
like "$errout" "f.yaml:5:33: knob 'gpu_mem_util' does not follow from the model; expected tool_call_parser" "a card knob in a family: refused at its position"
fam <<'Y'
kind: family
name: f
description: test
match: {model_id: ["*x*"]}
set:
  tool_call_parser: no_such_parser
evidence: [{kind: declared, observation: test}]
Y
is "$rc" 3 "a parser no recorded vLLM registers: a config error"
like "$errout" "f.yaml:6:21: family 'f': tool parser 'no_such_parser' is not registered in vLLM" "… at the parser's position"
fam <<'Y'
kind: family
name: gemma4
description: test
match: {model_id: ["*gemma-4-*"], lane: generate}
set:
  tool_call_parser: kimi_k3
evidence: [{kind: declared, observation: test}]
Y
like "$errout" "f.yaml:6:21: family 'gemma4' for profile '[a-z]+' role 'senses' \(coolthor/gemma-4-12B-it-NVFP4A16\): tool parser 'kimi_k3' is not registered in vLLM 93d8f834d" \
	"a parser only the newer vLLM has, for a role on the older image: a load error at the family's position"
fam <<'Y'
kind: family
name: f
description: test
match: {model_id: ["*x*"], model_id_when: always}
set: {tool_call_parser: hermes}
evidence: [{kind: declared, observation: test}]
Y
like "$errout" "f.yaml:4:43: model_id_when: always needs both a model_id and architectures or model_type" "model_id_when: always without a config key: refused"
fam <<'Y'
kind: family
name: f
description: test
match: {model_id: ["*x*"]}
set: {tool_call_parser: hermes}
Y
like "$errout" "f.yaml:1:1: missing 'evidence' in a family" "a family without evidence: refused"
cat > "$B/f.yaml" <<'Y'
kind: family
name: lfm2-twin
description: test
match: {architectures: [Lfm2ForCausalLM], lane: generate}
set: {tool_call_parser: hermes}
evidence: [{kind: declared, observation: test}]
Y
LOBES_DIR=$TMP/bad on gb10 explain hand
is "$rc" 3 "two families matching one checkpoint alike: a config error"
like "$errout" "matches families '(lfm2|lfm2-twin)' \(.*\) and '(lfm2|lfm2-twin)' \(.*\) alike" "… naming both"
cat > "$B/f.yaml" <<'Y'
kind: family
name: lfm2
description: an operator's LFM2 family replacing the shipped one
match: {architectures: [Lfm2ForCausalLM], model_id: ["*LFM2*"], lane: generate}
set: {tool_call_parser: hermes}
evidence: [{kind: declared, observation: test}]
Y
LOBES_DIR=$TMP/bad on gb10 --json explain hand
is "$(j "$R['hand']['knobs']['tool_call_parser']['value']")" hermes "an operator family with a shipped name replaces it whole"
like "$(j "$R['hand']['family']['where']")" "$TMP/bad/profiles/f.yaml" "… and explain names the operator's file"
done_testing
