#!/bin/bash
# verify.t — `lobes verify` answers the seed's two questions against running
# stand-in fleets (a test double of vLLM) and writes evidence records:
#  - a simulated GB10: fp8 boots → keep the sm_110-conditional trait; the env
#    is unknown to the image → delete it;
#  - a simulated box where the fp8 assert trips and the image still honours
#    VLLM_ATTENTION_BACKEND: the other two routes.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/integration/docker.sh"
HOSTS=$SRC/tests/fixtures/hosts
HF=$SRC/tests/fixtures/hf
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"
docker_start
docker_build_standin || { ok 1 "build the stand-in image"; done_testing; }
unset LOBES_SYSROOT
export HF_HUB_CACHE=$HF/hub LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1
j() { printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); v=$1; print(v if isinstance(v,str) else json.dumps(v))"; }
# onbox BOX CMD...: lobes with the detection of a fixture box
onbox() { local b=$1; shift; run env LOBES_SYSROOT="$HOSTS/$b" LOBES_NVIDIA_SMI="$HOSTS/$b/bin/nvidia-smi" "$LOBES" "$@"; }

# deploy DIR BOX CARD EXTRA_SENSES_ENV: the spark profile (fp8 cortex) on the stand-in.
deploy() {
	local d=$1 box=$2 card=$3 extra=$4 r
	onbox "$box" --dir "$d" init --profile spark --apply
	[ "$rc" = 0 ] || return 1
	sed -i "s|^\([A-Z]*\)_IMAGE=.*|\1_IMAGE=lobes-standin:test|; s|^LOBES_HF_CACHE=.*|LOBES_HF_CACHE=$HF|;
		s|^COMPOSE_FILE=.*|COMPOSE_FILE=docker-compose.yml:docker-compose.test.yml|;
		s|^COMPOSE_PROJECT_NAME=.*|COMPOSE_PROJECT_NAME=lobes-verify-$card|" "$d/.env"
	{
		echo "services:"
		for r in cortex senses; do
			printf '  %s:\n    environment:\n' "$r"
			printf '      STANDIN_CARD: %s\n      STANDIN_MEM_SCALE: "0.01"\n' "$card"
			printf '      STANDIN_LOAD_MS: "200"\n      STANDIN_PROFILE_MS: "200"\n      STANDIN_WARMUP_MS: "100"\n'
			[ "$r" = senses ] && printf '      VLLM_ATTENTION_BACKEND: TRITON_ATTN\n%s' "$extra"
			printf '    ulimits:\n      memlock: %s\n' "$(docker_memlock)"
		done
	} > "$d/docker-compose.test.yml"
	docker_compose_project "lobes-verify-$card" "$d/docker-compose.yml"
	(cd "$d" && compose up -d cortex senses >/dev/null 2>&1)
}
# wait_log DIR SERVICE TEXT: until the service's log has TEXT (bounded)
_has_log() { (cd "$1" && compose logs --no-color "$2" 2>/dev/null) | grep -qF "$3"; }
wait_log() { wait_for "$WAIT" _has_log "$@"; }

# --- simulated GB10 ----------------------------------------------------------
G=$TMP/gb10
deploy "$G" gb10 spark "" || { ok 1 "deploy on the simulated GB10"; done_testing; }
wait_log "$G" cortex "Application startup complete."; ok $? "GB10 cortex boots with fp8 KV"
wait_log "$G" senses "Application startup complete."; ok $? "GB10 senses boots"
onbox gb10 --dir "$G" --json verify --timeout 60 fp8-kv-attribution
is "$rc" 0 "verify fp8-kv-attribution decides on the GB10"
is "$(j 'd["decision"]["route"]')" fp8-boots-here "fp8 boots → keep it an sm_110-conditional trait"
like "$(j 'd["decision"]["action"]')" "backend-conditional trait" "the action says what to do"
is "$(j 'd["box"]["card"]')" spark "the record names the box's card"
is "$(j 'd["observations"]["args.kv_cache_dtype"]')" fp8 "the effective args show fp8"
is "$(j 'd["observations"]["checkpoint.kv_scales"]')" absent "the checkpoint ships no KV scales"
like "$(j '[m["text"] for m in d["boot_log"]["matches"]]')" "Using KV cache scaling factor 1.0 for fp8_e4m3" "the boot log warning is quoted"
is "$(j 'd["probe"]["status"]')" pass "the cortex probe result is recorded"
txt=$(j 'd["evidence_files"][0]')
like "$txt" "/evidence/[0-9]{4}-[0-9]{2}-[0-9]{2}-fp8-kv-attribution-spark\.txt$" "evidence record named DATE-QUESTION-CARD"
like "$(cat "$txt" 2>/dev/null)" "decision: fp8-boots-here" "the .txt record holds the decision"
like "$(cat "$txt" 2>/dev/null)" "vLLM: 0\.23\.1rc1" "… the vLLM version"
like "$(cat "$txt" 2>/dev/null)" "image: lobes-standin:test \(id sha256:" "… the image"
ok "$(python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "${txt%.txt}.json" 2>/dev/null; echo $?)" "the .json record parses"
onbox gb10 --dir "$G" verify attention-backend-env
is "$rc" 0 "verify attention-backend-env decides on the GB10"
like "$out" "decision: env-dead" "env dead → delete it"
like "$out" "log.env-attention-backend-unknown = \"present\"" "because the log says the name is unknown"
ls "$G/evidence/"*attention-backend-env-spark.txt >/dev/null 2>&1; ok $? "its evidence record is written"
onbox gb10 --dir "$G" verify --timeout 60 fp8-kv-attribution
ls "$G/evidence/"*fp8-kv-attribution-spark-2.txt >/dev/null 2>&1; ok $? "a second record the same day does not overwrite the first"
(cd "$G" && compose down -t 1 >/dev/null 2>&1)

# --- simulated box where the assert trips and the env is honoured -----------
T=$TMP/thor
deploy "$T" thor thor '      STANDIN_ATTENTION_ENV: honoured
' || { ok 1 "deploy on the simulated Thor"; done_testing; }
wait_log "$T" cortex "assert layer.k_scale > 0.0"; ok $? "the cortex trips the fp8 assert"
wait_log "$T" senses "Application startup complete."; ok $? "senses boots"
onbox thor --dir "$T" --json verify --no-probe fp8-kv-attribution
is "$rc" 0 "verify decides on the simulated Thor"
is "$(j 'd["decision"]["route"]')" fp8-crashes-here "the assert trips → the crash route"
is "$(j 'd["box"]["card"]')" thor "the record names the thor card"
onbox thor --dir "$T" --json verify attention-backend-env
is "$(j 'd["decision"]["route"]')" env-live "the env is honoured → keep it until the image is repinned"
ls "$T/evidence/"*-fp8-kv-attribution-thor.txt >/dev/null 2>&1; ok $? "the Thor evidence record is written"

run "$LOBES" --dir "$T" triage --role cortex
is "$rc" 1 "triage --role reads the crash-looping cortex's log through the Engine API (fatal: exit 1)"
like "$out" "fp8-k-scale-assert" "and names the fp8 assert"
run "$LOBES" --dir "$T" --json triage --role senses
is "$rc" 0 "triage --role senses: no fatal signature"
like "$out" "attention-backend-env-deprecated" "and finds the deprecation warning"
run "$LOBES" --dir "$T" triage --role cortex some.log
is "$rc" 2 "--role with a FILE is a usage error"

# --- could not verify / undecided --------------------------------------------
(cd "$T" && compose down -t 1 >/dev/null 2>&1)
onbox thor --dir "$T" verify fp8-kv-attribution
is "$rc" 4 "no running container: could not verify (exit 4)"
like "$errout" "could not verify: role 'cortex' has no container" "and says why"
run "$LOBES" --dir "$T" verify no-such-question
is "$rc" 2 "an unknown question is a usage error"
done_testing
