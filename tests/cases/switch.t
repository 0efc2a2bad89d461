#!/bin/bash
# switch.t — `lobes switch ROLE [MODEL]` on a deploy dir rendered by
# `lobes init --apply` for a fixture Spark, with the fixture Hugging Face
# cache: the list of cached checkpoints with family and fit; a dry run that
# names what changes and why and writes nothing; --apply --no-restart
# writing the operator edits that init keeps; --apply undoing its write
# when the restart cannot begin (tests/integration/switch.t restarts); the refusals that change
# nothing (not cached, too big with the numbers, an infeasible role, bad
# options); an unknown family and the native-context clamp.
. "${LOBES_SRC:-.}/tests/lib.sh"
HOSTS=$SRC/tests/fixtures/hosts
HUB=$SRC/tests/fixtures/hf/hub
export LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1 HF_HUB_CACHE=$HUB
unset LOBES_SYSROOT HF_HOME LOBES_DIR
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"
on() { local b=$1; shift; run env LOBES_SYSROOT="$HOSTS/$b" LOBES_NVIDIA_SMI="$HOSTS/$b/bin/nvidia-smi" "$LOBES" "$@"; }
j() { printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); v=$1; print(v if isinstance(v,str) else json.dumps(v))"; }
snap() { (cd "$1" && cat .env docker-compose.yml docker-compose.gpu.yml | md5sum); }

D=$TMP/spark
on gb10 --dir "$D" init --apply >/dev/null
is "$rc" 0 "init renders the spark fleet"
before=$(snap "$D")

# --- the list ---------------------------------------------------------------
on gb10 --dir "$D" --json switch cortex
is "$rc" 0 "switch ROLE lists the cached checkpoints"
is "$(j '[m["family"] for m in d["checkpoints"] if m["model"] == "Qwen/Qwen3-8B"]')" '["qwen3-dense"]' "… each with its family"
is "$(j '[m["fit"] for m in d["checkpoints"] if m["model"] == "Qwen/Qwen3.5-4B"]')" '["fits"]' "… and whether it fits the budget"
is "$(j 'd["current"]')" unsloth/Qwen3.8-27B-NVFP4 "… and the role's checkpoint now"
on gb10 --dir "$D" switch cortex
like "$out" "Mistral-7B-Instruct-v0.3 +[0-9.]+ GiB +mistral" "the text list names model, size and family"

# --- a dry run ----------------------------------------------------------------
on gb10 --dir "$D" --json switch cortex Qwen/Qwen3-8B
is "$rc" 0 "switch cortex Qwen/Qwen3-8B: a dry run exits 0"
is "$(j 'd["change"]["family"]')" qwen3-dense "the plan names the new family"
is "$(j 'd["change"]["knobs"]["tool_call_parser"]["was"] + " -> " + d["change"]["knobs"]["tool_call_parser"]["now"] + " (" + d["change"]["knobs"]["tool_call_parser"]["from"] + ")"')" \
	"qwen3_coder -> hermes (family)" "… the tool parser follows the family"
is "$(j 'd["change"]["knobs"]["quantization"]["now"]')" none "… quantization follows the checkpoint (bf16: none)"
is "$(j 'd["change"]["knobs"]["speculative_config"]["now"]')" none "… the old family's MTP config is dropped"
is "$(j 'd["change"]["kv_scales"]')" absent "… KV scales read from the checkpoint"
like "$(j 'd["diff"]')" "\+CORTEX_MODEL=Qwen/Qwen3-8B" "… and the diff of .env"
like "$(j 'd["diff"]')" "\+ +- '--tool-call-parser=hermes'" "… and of the compose file"
is "$(snap "$D")" "$before" "a dry run writes nothing"
on gb10 --dir "$D" switch cortex Qwen/Qwen3-8B
like "$out" "family      qwen3-dense — config.json architectures Qwen3ForCausalLM" "text: the family and what matched it"
like "$out" "dry run: nothing written" "text: says it is a dry run"

# --- refusals change nothing ----------------------------------------------------
on gb10 --dir "$D" switch cortex acme/Not-Cached-7B
is "$rc" 3 "a model missing from the cache is refused (exit 3)"
like "$errout" "'acme/Not-Cached-7B' is not in the Hugging Face cache; nothing changed; fetch it first \(huggingface-cli download acme/Not-Cached-7B" "… with the command that fetches it"
like "$errout" "or pass --allow-download" "… or --allow-download"
on gb10 --dir "$D" --json switch cortex acme/Qwen3.6-Not-Cached --allow-download
is "$rc" 0 "--allow-download: a model not cached is planned anyway"
is "$(j 'd["change"]["family"]')" qwen3-xml-tools "… its family by its id (no config.json to read)"
BIG=$TMP/bighub; cp -r "$HUB" "$BIG"
S8=$(echo "$BIG"/models--Qwen--Qwen3-8B/snapshots/*)
truncate -s 40G "$S8/model-00001-of-00002.safetensors"
truncate -s 8G "$S8/model-00002-of-00002.safetensors"
HF_HUB_CACHE=$BIG on gb10 --dir "$D" switch cortex Qwen/Qwen3-8B
is "$rc" 3 "weights larger than the role's budget are refused (exit 3)"
like "$errout" "'Qwen/Qwen3-8B': 48.0 GiB of weights \(2 safetensors files\) do not fit the cortex budget of [0-9.]+ GiB \(gpu_memory_utilization 0.30 of [0-9.]+ GiB\); nothing changed" "… with the numbers"
HF_HUB_CACHE=$BIG on gb10 --dir "$D" --json switch cortex Qwen/Qwen3-8B --gpu-memory-utilization 0.5
is "$rc" 0 "… and fits with a larger --gpu-memory-utilization"
is "$(j 'd["change"]["knobs"]["gpu_mem_util"]["now"]')" 0.50 "… which the plan carries"
is "$(snap "$D")" "$before" "the refusals wrote nothing"
T=$TMP/thor; on thor --dir "$T" init --apply >/dev/null
on thor --dir "$T" switch hand Qwen/Qwen3.5-4B
is "$rc" 3 "a role that is not feasible on this box is refused"
like "$errout" "role 'hand' is not feasible on this box \(trait sm110-lfm-hand-infeasible" "… naming the trait"
on gb10 --dir "$D" switch cortex Qwen/Qwen3-8B --no-restart
is "$rc" 2 "--no-restart without --apply is a usage error"
on gb10 --dir "$D" switch cortex Qwen/Qwen3-8B --apply --boot-wait 0
is "$rc" 2 "a bad --boot-wait is a usage error"
# --apply restarts the role: with no docker engine to reach, the write is undone
(cd "$D" && cat .lobes-state.json | md5sum) >"$TMP/state.before"
DOCKER_HOST=unix://$TMP/no-docker.sock on gb10 --dir "$D" switch cortex Qwen/Qwen3-8B --apply
is "$rc" 4 "--apply with no docker engine: a runtime error (exit 4)"
like "$errout" "could not restart cortex; .env and the compose files are put back as they were" "… saying the files are put back"
is "$(snap "$D")" "$before" "… and .env and the compose files are byte for byte as before"
is "$(cd "$D" && cat .lobes-state.json | md5sum)" "$(cat "$TMP/state.before")" "… the state file too"
on gb10 --dir "$D" switch cortex Qwen/Qwen3-8B --max-model-len lots
is "$rc" 2 "a bad --max-model-len is a usage error"
on gb10 --dir "$D" switch nosuchrole Qwen/Qwen3-8B
is "$rc" 2 "an unknown role is a usage error"
on gb10 --dir "$TMP/empty" switch cortex Qwen/Qwen3-8B
is "$rc" 3 "a deploy dir without .env is refused"
is "$(snap "$D")" "$before" "still nothing written"

# --- --apply --no-restart writes the operator's edits, which init keeps --------
on gb10 --dir "$D" switch cortex Qwen/Qwen3-8B --served-name chat --apply --no-restart
is "$rc" 0 "switch --apply --no-restart exits 0"
like "$out" "written; restart the role with \`lobes serve --apply\`" "… and says how to restart the role"
like "$(cat "$D/.env")" "CORTEX_MODEL=Qwen/Qwen3-8B" ".env has the new model"
like "$(cat "$D/.env")" "CORTEX_SERVED_NAMES=role,chat" "… served as the role and as the name given"
like "$(cat "$D/.env")" "CORTEX_TOOL_CALL_PARSER=hermes" "… with the family's parser"
like "$(cat "$D/docker-compose.yml")" "'--tool-call-parser=hermes'" "the compose file is rendered around it"
unlike "$(cat "$D/docker-compose.yml")" "num_speculative_tokens" "… without the old MTP config"
like "$(sed -n '/^  senses:/,/^  [a-z]*:$/p' "$D/docker-compose.yml")" "'--tool-call-parser=gemma4'" "the other roles keep their flags"
on gb10 --dir "$D" init
is "$rc" 0 "a later init …"
unlike "$out" "^[-+]CORTEX_MODEL" "… keeps the switched model (an operator edit)"
on gb10 --dir "$D" --json explain cortex
is "$(j 'd["roles"]["cortex"]["knobs"]["model"]["chain"][-1]["kind"]')" override "explain names the model as the operator's"
is "$(j 'd["roles"]["cortex"]["family"]["name"]')" qwen3-dense "… and the family follows the switched model"

# --- an unknown family; the native context ---------------------------------------
on gb10 --dir "$D" --json switch cortex lobes-fixtures/Unknown-Arch-1B
is "$(j 'd["change"]["family"]')" null "an unknown architecture has no family"
like "$(j 'd["warnings"]')" "cortex: unknown family: pass --tool-call-parser" "… and the plan says to pass --tool-call-parser"
is "$(j 'd["change"]["knobs"]["max_model_len"]["now"]') $(j 'd["change"]["knobs"]["max_model_len"]["from"]')" "16384 family" "max_model_len clamped to the checkpoint's native 16384"
on gb10 --dir "$D" --json switch cortex lobes-fixtures/Unknown-Arch-1B --tool-call-parser hermes
is "$(j 'd["change"]["knobs"]["tool_call_parser"]["now"]') $(j 'd["change"]["knobs"]["tool_call_parser"]["from"]')" "hermes override" "--tool-call-parser gives it one"
unlike "$(j 'd["warnings"]')" "unknown family" "… and the warning goes"
done_testing
