#!/bin/bash
# doctor.t — `lobes doctor` on deploy dirs rendered by `lobes init --apply`
# for fixture boxes (tests/fixtures/hosts/) and checkpoint fixtures
# (tests/fixtures/checkpoints/): the predicted fp8 KV crash of the spark
# fleet on a Thor and its absence where it does not apply, the traits a
# foreign profile misses, dead and unregistered VLLM_* names, drift, kept
# overrides, the memory sum, docker/compose/GPU runtime through a fake docker
# CLI (tests/fixtures/doctor/bin), --image-probe and its cache, --json, exit
# codes.
. "${LOBES_SRC:-.}/tests/lib.sh"
HOSTS=$SRC/tests/fixtures/hosts
CK=$SRC/tests/fixtures/checkpoints
FAKE=$SRC/tests/fixtures/doctor
export LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1
export HF_HUB_CACHE=$CK/noscales/hub
export PATH="$FAKE/bin:$PATH" FAKE_DOCKER_NVIDIA=1 FAKE_ENV_LIST=$FAKE/image-env.txt
export FAKE_DOCKER_LOG=$TMP/docker.log
unset LOBES_SYSROOT HF_HOME LOBES_DIR LOBES_DOCKER LOBES_COMPOSE
unset FAKE_DOCKER_DOWN FAKE_COMPOSE_V2 FAKE_COMPOSE_V1 FAKE_IMAGE_ABSENT FAKE_RUN_FAIL
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"

# on BOX CMD...: run lobes on a fixture box
on() { local b=$1; shift; run env LOBES_SYSROOT="$HOSTS/$b" LOBES_NVIDIA_SMI="$HOSTS/$b/bin/nvidia-smi" "$LOBES" "$@"; }
# sev ID [KEY VALUE]: the severities (comma-joined) of the findings with
# that id (and that role/name/trait) in the --json in $out
sev() { printf '%s' "$out" | python3 -c 'import json,sys
d = json.load(sys.stdin); a = sys.argv[1:]
print(",".join(c["severity"] for c in d["checks"] if c["id"] == a[0] and (len(a) < 3 or c.get(a[1]) == a[2])))' "$@"; }
# get ID KEY VALUE FIELD: FIELD of the first such finding
get() { printf '%s' "$out" | python3 -c 'import json,sys
d = json.load(sys.stdin); a = sys.argv[1:]
m = [c for c in d["checks"] if c["id"] == a[0] and (a[1] == "" or c.get(a[1]) == a[2])]
print(m[0].get(a[3], "") if m else "")' "$@"; }

SPARK_ON_THOR=$TMP/spark-on-thor
THOR_ON_THOR=$TMP/thor-on-thor
SPARK_ON_GB10=$TMP/spark-on-gb10
on thor --dir "$SPARK_ON_THOR" init --profile spark --apply
is "$rc" 0 "init renders the spark profile for a thor box"
on thor --dir "$THOR_ON_THOR" init --apply
is "$rc" 0 "init renders the thor profile on a thor box"
on gb10 --dir "$SPARK_ON_GB10" init --apply
is "$rc" 0 "init renders the spark profile on a gb10 box"

# --- the spark fleet on a Thor: the 1-of-4 baseline, predicted ------------
on thor --dir "$SPARK_ON_THOR" doctor
is "$rc" 1 "spark deploy on thor: exit 1 (a check found problems)"
like "$out" "^error +fp8-kv: cortex: predicted crash \`assert layer.k_scale > 0.0\`" "predicts the fp8 KV assert for the cortex"
like "$out" "ships NO KV scales \(config.json quantization_config.kv_cache_scheme: null\)" "… naming the checkpoint fact"
like "$out" "attention path TRITON_ATTN \(card thor auto-selects it for the generate lane\)" "… and why the path is TRITON_ATTN"
like "$out" "fix: kv_cache_dtype=auto \(trait fp8-kv-needs-scales-on-triton\): set CORTEX_KV_CACHE_DTYPE=auto" "… with the remedy and its trait"
like "$out" "^warning profile: profile 'spark' .* on card thor .*UNVALIDATED for this card" "the profile is flagged unvalidated for the card"
like "$out" "fix: use the profile made for this card: \`lobes init --profile thor --apply\`" "… and the card's own profile is named"
like "$out" "^problems found: 1 error," "the summary counts the errors"
on thor --json --dir "$SPARK_ON_THOR" doctor
is "$rc" 1 "--json keeps the exit code"
is "$(sev fp8-kv role cortex)" error "--json: fp8-kv for cortex is an error"
is "$(get fp8-kv role cortex trait)" fp8-kv-needs-scales-on-triton "… backed by its trait"
is "$(sev traits role embedder)" warning "the sm_110 pooling hang is caught for the embedder"
is "$(get traits role embedder trait)" sm110-pooling-triton "… by trait sm110-pooling-triton"
like "$(get traits role embedder detail)" "evidence \(measured, 2026-07-13, jetson-agx-thor\)" "… with its evidence"
like "$(get traits role embedder remedy)" "EMBEDDER_ATTENTION_BACKEND=TRITON_ATTN" "… and the knob to set"
is "$(sev traits trait sm110-reranker-eager)" warning "the reranker CUDA-graph fault is caught"
is "$(sev traits trait sm110-lfm-hand-infeasible)" warning "the hand on sm_110 is caught"
is "$(sev memory)" ok "the memory sum fits"
like "$(get memory '' '' message)" "sum to 0.62 .* = 76.1 GiB of the card's 122.8 GiB" "memory is said in GiB"
is "$(sev docker),$(sev compose),$(sev gpu-runtime)" "ok,ok,ok" "docker, compose v2 and the nvidia runtime through the fake CLI"
like "$(get compose '' '' message)" "compose v2" "compose v2 is named"

on thor --dir "$SPARK_ON_THOR" doctor --profile thor
like "$out" "^ok +profile: profile 'thor' \(validated, from --profile\).*; the deploy dir was rendered for 'spark'" "--profile P compares with P and names the deployed profile"
like "$out" "^warning deploy-dir: .*differs from what \`lobes init\` would write now" "… whose render differs from the deploy dir"

# The profile cannot be relied on: a checkpoint with scales, or a path off
# Triton, makes the prediction go away; an unknown checkpoint is said so.
HF_HUB_CACHE=$CK/scales/hub on thor --json --dir "$SPARK_ON_THOR" doctor
is "$(sev fp8-kv role cortex)" ok "a checkpoint that ships KV scales: no crash predicted"
like "$(get fp8-kv role cortex message)" "ships KV scales" "… and says why"
HF_HUB_CACHE=$TMP/empty-hub on thor --json --dir "$SPARK_ON_THOR" doctor
is "$(sev fp8-kv role cortex)" warning "checkpoint not cached on the Triton path: cannot be ruled out (warning)"
like "$(get fp8-kv role cortex message)" "KV scales UNKNOWN \('unsloth/Qwen3.8-27B-NVFP4' is not in the Hugging Face cache\)" "… the unknown checkpoint is stated"

# --- the right profile on its own card ------------------------------------
on thor --dir "$THOR_ON_THOR" doctor
is "$rc" 0 "thor deploy on thor: exit 0"
unlike "$out" "^error" "… no error"
like "$out" "^ok +fp8-kv: no feasible role keeps its KV cache in fp8" "… the thor plan already keeps the cortex KV at auto"
like "$out" "^ok +traits: every shipped trait that holds on this box is followed" "… and follows every trait"
like "$out" "^ok +profile: profile 'thor' \(validated, from the deploy dir's .env LOBES_PROFILE\) on card thor \(NVIDIA Thor, compute capability 11.0, 122.8 GiB\)" "… profile, card, compute capability and memory named"

on gb10 --dir "$SPARK_ON_GB10" doctor
is "$rc" 0 "spark deploy on gb10: exit 0"
like "$out" "^ok +fp8-kv: cortex: no fp8 KV crash predicted: .*attention path FLASH_ATTN" "fp8 without scales on the GB10's FLASH_ATTN path: no crash"
unlike "$out" "^warning +traits" "no sm_110 trait holds on the GB10"
HF_HUB_CACHE=$TMP/empty-hub on gb10 --dir "$SPARK_ON_GB10" doctor
like "$out" "^ok +fp8-kv: cortex: .*KV scales UNKNOWN \('unsloth/Qwen3.8-27B-NVFP4' is not in the Hugging Face cache\)" "gb10: the unknown checkpoint is stated"

# --- env registry ---------------------------------------------------------
E=$TMP/env-dir
cp -a "$SPARK_ON_GB10" "$E"
cat >> "$E/.env" <<'EOF'
VLLM_ATTENTION_BACKEND=TRITON_ATTN
VLLM_FOO=1
VLLM_BUILD_COMMIT=93d8f834d
VLLM_LOGGING_LEVEL=DEBUG
VLLM_USE_V1=1
EOF
on gb10 --json --dir "$E" doctor
is "$rc" 1 "a dead VLLM_* name is an error (exit 1)"
is "$(sev env-registry name VLLM_ATTENTION_BACKEND)" error "VLLM_ATTENTION_BACKEND in .env: error"
like "$(get env-registry name VLLM_ATTENTION_BACKEND message)" "VLLM_ATTENTION_BACKEND is DEAD on vLLM 0.26.1rc1.dev942\+g5a4c8d992, 0.23.1rc1.dev672\+g93d8f834d \(.env:[0-9]+\)" "… DEAD on the vLLM of every role's image, with where it is set"
is "$(get env-registry name VLLM_ATTENTION_BACKEND trait)" attention-backend-env-dead "… from trait attention-backend-env-dead"
like "$(get env-registry name VLLM_ATTENTION_BACKEND remedy)" "use --attention-config='\{\"backend\": \"TRITON_ATTN\"\}' instead" "… with its replacement, value filled in"
is "$(sev env-registry name VLLM_FOO)" warning "an unregistered VLLM_FOO: warning"
like "$(get env-registry name VLLM_FOO message)" "not in the registry of vLLM 0.26.1rc1.dev942\+g5a4c8d992 \(recorded list, data/vllm/5a4c8d992/envs.txt\); vLLM 0.23.1rc1.dev672\+g93d8f834d \(recorded list, data/vllm/93d8f834d/envs.txt\): may be ignored" "… not in the recorded lists of the roles' images: may be ignored"
is "$(sev env-registry name VLLM_BUILD_COMMIT)" info "VLLM_BUILD_COMMIT: info (image noise)"
is "$(sev env-registry name VLLM_LOGGING_LEVEL)" "" "a registered name (VLLM_LOGGING_LEVEL) is no finding"
is "$(sev env-registry name VLLM_USE_V1)" error "VLLM_USE_V1 (removed earlier) is dead too"
like "$(get env-registry name VLLM_USE_V1 remedy)" "V1 engine is the only engine" "… with what to do"

C=$TMP/compose-env
cp -a "$SPARK_ON_GB10" "$C"
python3 - "$C/docker-compose.yml" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("      HF_HOME: '/root/.cache/huggingface'\n",
              "      HF_HOME: '/root/.cache/huggingface'\n      VLLM_ATTENTION_BACKEND: 'FLASHINFER'\n", 1)
open(p, "w").write(s)
EOF
on gb10 --json --dir "$C" doctor
is "$(sev env-registry name VLLM_ATTENTION_BACKEND)" error "VLLM_ATTENTION_BACKEND in a compose service's environment: error"
like "$(get env-registry name VLLM_ATTENTION_BACKEND message)" "docker-compose.yml: services.cortex.environment" "… naming the service"
like "$(get env-registry name VLLM_ATTENTION_BACKEND remedy)" "\"backend\": \"FLASHINFER\"" "… replacement with its value"

# --- drift and kept overrides ----------------------------------------------
Dr=$TMP/drift
cp -a "$SPARK_ON_GB10" "$Dr"
sed -i '0,/restart: unless-stopped/s//restart: always/' "$Dr/docker-compose.yml"
on gb10 --dir "$Dr" doctor
is "$rc" 0 "drift alone is not an error"
like "$out" "^warning deploy-dir: '$Dr' differs from what \`lobes init\` would write now: docker-compose.yml" "a hand edit of docker-compose.yml is drift"
like "$out" "^ +-    restart: always" "… shown as a diff (yours)"
like "$out" "^ +\+    restart: unless-stopped" "… against what init would write"
on gb10 --dir "$SPARK_ON_GB10" doctor
like "$out" "^ok +deploy-dir: '$SPARK_ON_GB10' parses and matches" "an untouched deploy dir has no drift"

O=$TMP/override
cp -a "$SPARK_ON_GB10" "$O"
sed -i 's/^CORTEX_GPU_MEM_UTIL=.*/CORTEX_GPU_MEM_UTIL=0.25/' "$O/.env"
echo "HF_TOKEN=hf_SECRETvalue123" >> "$O/.env"
on gb10 --dir "$O" doctor
like "$out" "^info +deploy-dir: operator override kept: CORTEX_GPU_MEM_UTIL=0.25 \(lobes would write 0.30\)" "a kept operator override is named"
like "$out" "operator key kept: HF_TOKEN=<hidden> \(yours only\)" "an operator secret is named, masked"
unlike "$out" "hf_SECRETvalue123" "the secret never prints"
like "$out" "memory: .*sum to 0.57 \(cortex 0.25 " "the memory check reads the deployed (overridden) value"

# --- memory ------------------------------------------------------------------
M=$TMP/memory
cp -a "$SPARK_ON_GB10" "$M"
sed -i 's/^CORTEX_GPU_MEM_UTIL=.*/CORTEX_GPU_MEM_UTIL=0.70/' "$M/.env"
on gb10 --json --dir "$M" doctor
is "$rc" 1 "utils summing over 1.0: exit 1"
is "$(sev memory)" error "… a memory error"
like "$(get memory '' '' message)" "sum to 1.02 .* = 124.1 GiB of the card's 121.7 GiB" "… said in GiB"
sed -i 's/^CORTEX_GPU_MEM_UTIL=.*/CORTEX_GPU_MEM_UTIL=0.60/' "$M/.env"
on gb10 --json --dir "$M" doctor
is "$(sev memory)" warning "utils summing to 0.92: a warning"
on cpu-only --json --dir "$SPARK_ON_GB10" doctor
is "$(sev memory)" info "no known card (its MemTotal is host RAM): memory unknown is info"
like "$(get memory '' '' message)" "sum to 0.62 .*the card's memory is unknown" "… with the sum it has"

# --- --json shape ------------------------------------------------------------
on thor --json --dir "$SPARK_ON_THOR" doctor
ids=$(printf '%s' "$out" | python3 -c 'import json,sys
d = json.load(sys.stdin)
assert all(c["id"] and c["severity"] in ("ok","info","warning","error") and c["message"] for c in d["checks"])
print(" ".join(sorted(set(c["id"] for c in d["checks"]))))')
is "$ids" "compose deploy-dir docker env-registry family fp8-kv gateway gpu-runtime image memory placeholder profile traits vllm-args" "--json parses; every finding has an id, a severity and a message"
is "$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["healthy"], d["summary"]["error"])')" "False 1" "--json summary and healthy"

# --- docker, compose, GPU runtime ---------------------------------------------
FAKE_DOCKER_DOWN=1 on thor --json --dir "$THOR_ON_THOR" doctor
is "$rc" 1 "docker unreachable: exit 1"
is "$(sev docker)" error "… a docker error"
like "$(get docker '' '' message)" "Cannot connect to the Docker daemon" "… with docker's own words"
is "$(sev gpu-runtime)" info "… and the runtime not checked"
FAKE_DOCKER_NVIDIA=0 on thor --json --dir "$THOR_ON_THOR" doctor
is "$(sev gpu-runtime)" error "no nvidia runtime on a known card: error"
FAKE_DOCKER_NVIDIA=0 on cpu-only --json --dir "$THOR_ON_THOR" doctor
is "$(sev gpu-runtime)" warning "no nvidia runtime on an unknown card (this CI box): warning"
like "$(get gpu-runtime '' '' message)" "runtimes: io.containerd.runc.v2, runc" "… naming the runtimes there are"
FAKE_COMPOSE_V2=none on thor --json --dir "$THOR_ON_THOR" doctor
is "$(sev compose)" ok "compose v1 when v2 is absent"
like "$(get compose '' '' message)" "compose v1 \('docker-compose'\) 1.29.2" "… named v1"
LOBES_COMPOSE="docker-compose --verbose" on thor --json --dir "$THOR_ON_THOR" doctor
like "$(get compose '' '' message)" "compose from LOBES_COMPOSE \('docker-compose --verbose'\)" "LOBES_COMPOSE names the compose command, as for serve"
FAKE_COMPOSE_V2=none FAKE_COMPOSE_V1=none on thor --json --dir "$THOR_ON_THOR" doctor
is "$(sev compose)" error "no compose at all: error"

# --- --image-probe -------------------------------------------------------------
P=$TMP/probe
cp -a "$E" "$P"
echo "CORTEX_IMAGE=vllm/vllm-openai:nightly" >> "$P/.env"
rm -f "$FAKE_DOCKER_LOG"
on gb10 --json --dir "$P" doctor --image-probe
cache="$P/cache/vllm-env/sha256:5e1f0c3b2a4d6e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b.txt"
ok "$([ -s "$cache" ]; echo $?)" "--image-probe caches the image's list by digest"
like "$(cat "$cache")" "^VLLM_FOO$" "… the list the image printed"
like "$(cat "$FAKE_DOCKER_LOG")" "^run --rm --pull never --entrypoint python3 vllm/vllm-openai:nightly -c import vllm.envs" "the image's own python runs, never pulling"
ok "$([ -s "$P/cache/vllm-env/sha256:8bd082c274fae025b7079498fe1da65182ba1d4c2188c0f5a68c1042c38c3695.txt" ]; echo $?)" "a pinned image is cached by its own digest"
is "$(sev env-registry name VLLM_FOO)" "" "VLLM_FOO, registered in the probed image, is no finding"
is "$(sev env-registry name VLLM_ATTENTION_BACKEND)" error "VLLM_ATTENTION_BACKEND, absent from the image, is still dead"
rm -f "$FAKE_DOCKER_LOG"
FAKE_RUN_FAIL=1 on gb10 --json --dir "$P" doctor --image-probe
unlike "$(cat "$FAKE_DOCKER_LOG")" "^run " "a second probe reads the cache instead of running the image"
is "$(sev env-registry name VLLM_FOO)" "" "… and still knows VLLM_FOO"
rm -rf "$P/cache"
FAKE_RUN_FAIL=1 on gb10 --json --dir "$P" doctor --image-probe
like "$(printf '%s' "$out" | python3 -c 'import json,sys; print([c["message"] for c in json.load(sys.stdin)["checks"] if "did not list" in c["message"]])')" "the image did not list its env registry" "a failing probe is a warning"
is "$(sev env-registry name VLLM_FOO)" warning "… falling back to the recorded list"
FAKE_IMAGE_ABSENT=1 on gb10 --json --dir "$P" doctor --image-probe
like "$out" "is not available here .*never pulled; using the recorded list" "an absent image is said so, never pulled"
ok "$([ ! -e "$P/cache" ]; echo $?)" "… and nothing is cached"

# --- issue 8: images, vLLM arguments, placeholders, MTP, the Orin budget ------
I=$TMP/images
cp -a "$THOR_ON_THOR" "$I"
echo "CORTEX_IMAGE=vllm/vllm-openai@sha256:8bd082c2" >> "$I/.env"
echo "SENSES_IMAGE=vllm/vllm-openai:nightly" >> "$I/.env"
echo "EMBEDDER_IMAGE=vllm/vllm-openai@sha256:$(printf 'ab%.0s' $(seq 32))" >> "$I/.env"
on thor --json --dir "$I" doctor
is "$(sev image role cortex)" error "a truncated digest in <ROLE>_IMAGE: error"
like "$(get image role cortex message)" "a digest prefix \(8 of the 64 hex digits\), which Docker rejects" "… saying it is a prefix Docker rejects"
like "$(get image role cortex remedy)" "set CORTEX_IMAGE in .env to the full reference" "… with the fix"
is "$(sev image role senses)" warning "an unpinned tag: warning"
is "$(sev image role embedder)" warning "a pinned image lobes has no record of: warning"
like "$(get image role embedder message)" "its vLLM version is not recorded" "… saying its vLLM version is not recorded"
is "$(sev image role reranker)" ok "the profile's image: ok"
like "$(get image role reranker message)" "carries vLLM 0.23.1rc1.dev672\+g93d8f834d" "… naming the vLLM it carries"

A=$TMP/args
cp -a "$SPARK_ON_GB10" "$A"
sed -i "s/--tool-call-parser=qwen3_coder/--tool-call-parser=qwen9_coder/; s/'--reasoning-parser=gemma4'/'--reasoning-parser=gemma9'/; s/'--trust-remote-code'/'--trust-remote-kode'/" "$A/docker-compose.yml"
on gb10 --json --dir "$A" doctor
is "$rc" 1 "a rendered argument vLLM refuses: exit 1"
like "$(get vllm-args name --tool-call-parser message)" "cortex: tool parser 'qwen9_coder' is not registered in vLLM 5a4c8d992" "an unknown tool parser for the role's version"
like "$(get vllm-args name --reasoning-parser message)" "senses: reasoning parser 'gemma9' is not registered in vLLM 93d8f834d" "an unknown reasoning parser, against the senses image's own version"
like "$(get vllm-args name --trust-remote-kode message)" "vLLM 5a4c8d992 has no flag --trust-remote-kode" "an unknown flag"
on gb10 --json --dir "$SPARK_ON_GB10" doctor
is "$(sev vllm-args)" ok "every argument of an untouched render is accepted"
like "$(get vllm-args '' '' message)" "arguments of 5 roles accepted" "… for all five roles"

V=$TMP/vllm-env
cp -a "$THOR_ON_THOR" "$V"
python3 - "$V/docker-compose.yml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("      VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: '0'\n",
              "      VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: '0'\n      VLLM_NOT_A_KNOB: '1'\n", 1)
open(p, "w").write(s)
PY
on thor --json --dir "$V" doctor
is "$(sev env-registry name VLLM_NOT_A_KNOB)" warning "an unknown VLLM_* name in a service: warning"
like "$(get env-registry name VLLM_NOT_A_KNOB message)" "services.cortex.environment\) is not in the registry of vLLM 0.26.1rc1.dev942\+g5a4c8d992" "… checked against the registry of that role's image"

H=$TMP/placeholder
cp -a "$SPARK_ON_GB10" "$H"
sed -i 's/^CORTEX_MAX_MODEL_LEN=.*/CORTEX_MAX_MODEL_LEN=none/; s/^CORTEX_QUANTIZATION=.*/CORTEX_QUANTIZATION=none/;
	s/^SENSES_GPU_MEM_UTIL=.*/SENSES_GPU_MEM_UTIL=/' "$H/.env"
on gb10 --json --dir "$H" doctor
is "$(sev placeholder name CORTEX_MAX_MODEL_LEN)" error "a placeholder where vLLM wants a number: error"
like "$(get placeholder name CORTEX_MAX_MODEL_LEN message)" "CORTEX_MAX_MODEL_LEN=none \(.env:[0-9]+\) reaches vLLM as it is, and is not a positive integer \(a lobes placeholder\)" "… naming the line and what is expected"
like "$(get placeholder name CORTEX_MAX_MODEL_LEN remedy)" "set CORTEX_MAX_MODEL_LEN to a positive integer" "… with the fix"
is "$(sev placeholder name CORTEX_QUANTIZATION)" warning "a placeholder for a knob init writes: warning, not in effect"
like "$(get placeholder name CORTEX_QUANTIZATION message)" "is not in effect: the compose command has compressed-tensors" "… the command keeps the rendered flag"
like "$(get placeholder name CORTEX_QUANTIZATION remedy)" "lobes init --apply" "… init drops the flag"
is "$(sev placeholder name SENSES_GPU_MEM_UTIL)" warning "an empty value: warning"
like "$(get placeholder name SENSES_GPU_MEM_UTIL message)" "compose uses the rendered value instead: an empty value never reaches vLLM" "… it never reaches vLLM"
on gb10 --json --dir "$SPARK_ON_GB10" doctor
is "$(sev placeholder)" ok "an untouched deploy dir: no placeholder finding"

on thor --json --dir "$SPARK_ON_THOR" doctor
is "$(sev traits trait sm110-mtp-off-gdn-qwen)" warning "MTP on a Thor cortex (the spark profile does not list trait 8): flagged"
like "$(get traits trait sm110-mtp-off-gdn-qwen message)" "launch_gdn_decode_post_conv_mtp" "… with the cause"
like "$(get traits trait sm110-mtp-off-gdn-qwen remedy)" "CORTEX_SPECULATIVE_CONFIG=none" "… and the fix"
on thor --json --dir "$THOR_ON_THOR" doctor
is "$(sev traits trait sm110-mtp-off-gdn-qwen)" "" "the thor render has MTP off: no finding"

SPARK_ON_ORIN=$TMP/spark-on-orin
on agx-orin --dir "$SPARK_ON_ORIN" init --profile spark --apply
on agx-orin --json --dir "$SPARK_ON_ORIN" doctor
is "$(sev traits trait sm87-senses-budget)" warning "the spark senses budget on an Orin: flagged"
like "$(get traits trait sm87-senses-budget message)" "gpu_mem_util=0.14 \(the trait sets 0.45\), max_model_len=32768 \(the trait sets 131072\)" "… below the measured 0.45 / 131072"
ORIN=$TMP/orin-on-orin
on agx-orin --dir "$ORIN" init --apply
on agx-orin --json --dir "$ORIN" doctor
is "$(sev traits trait sm87-senses-budget)" "" "the orin render has the measured budget: no finding"

# --- exit codes and unreadable deploy dirs -------------------------------------
on thor --dir "$TMP/nowhere" doctor
is "$rc" 3 "no deploy dir: exit 3 (a configuration error, as README's exit codes say)"
like "$out" "^error +deploy-dir: no deploy dir at '$TMP/nowhere'" "… an error finding"
like "$out" "^(ok|error) +docker: " "… and the checks that need no deploy dir still run"
like "$out" "fix: run \`lobes init --apply\`" "… telling to run init --apply"
on thor --json --dir "$TMP/nowhere" doctor
is "$rc" 3 "--json: no deploy dir, exit 3 too"
is "$(sev deploy-dir)" error "… with the deploy-dir finding in the report"
touch "$TMP/a-file"
on thor --dir "$TMP/a-file" doctor
is "$rc" 3 "a deploy dir that is a file cannot be read at all: exit 3"
like "$errout" "deploy dir '$TMP/a-file' is not a directory" "… with a message on stderr"
Y=$TMP/bad-yaml
cp -a "$THOR_ON_THOR" "$Y"
printf 'services:\n  cortex: [unclosed\n' > "$Y/docker-compose.gpu.yml"
on thor --dir "$Y" doctor
is "$rc" 1 "a compose file that is not YAML: exit 1"
like "$out" "^error +deploy-dir: $Y/docker-compose.gpu.yml:[0-9]+:[0-9]+: .*expected a compose file" "… naming file:line:col"
B=$TMP/bad-env
cp -a "$THOR_ON_THOR" "$B"
echo "this is not an assignment" >> "$B/.env"
on thor --dir "$B" doctor
is "$rc" 1 "a malformed .env: exit 1"
like "$out" "^error +deploy-dir: .*\.env:[0-9]+:1: 'this is not an assignment' is not an assignment" "… naming the line"
on thor doctor --bogus
is "$rc" 2 "an unknown option: exit 2"
done_testing
