# tests/integration/experiment_lib.sh — what the tests of verify's
# experiments (verify_accuracy.t, verify_mtp.t) share: a simulated GB10
# (spark profile) whose cortex and senses are the vLLM stand-in (a test
# double) under a real dockerd. Source it after tests/lib.sh,
# tests/standin/lib.sh and tests/integration/docker.sh, with D set to the
# deploy dir.
#
#   xp_init PROJECT        init --profile spark --apply into $D, then the
#                          operator's edits: the stand-in image, the
#                          fixtures' HF cache, the test overlay in
#                          COMPOSE_FILE, compose project PROJECT, and the
#                          operator's own bytes (a comment, a last line
#                          without a final newline)
#   xp_overlay LINE...     $D/docker-compose.test.yml: the stand-in's card,
#                          memory scale and phase lengths for cortex and
#                          senses, plus each LINE ("STANDIN_X: \"v\"")
#   xp_up WHAT             bring cortex and senses up; two oks ("the cortex
#                          boots WHAT", "the senses boots")
#   j EXPR                 EXPR over the JSON in $out (python3; d is it)
#   onbox ARGS...          run lobes as on the GB10 fixture
#   cid SERVICE            the service's container id
HOSTS=$SRC/tests/fixtures/hosts
HF=$SRC/tests/fixtures/hf
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"
unset LOBES_SYSROOT
export HF_HUB_CACHE=$HF/hub LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1
j() { printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); v=$1; print(v if isinstance(v,str) else json.dumps(v))"; }
onbox() { run env LOBES_SYSROOT="$HOSTS/gb10" LOBES_NVIDIA_SMI="$HOSTS/gb10/bin/nvidia-smi" "$LOBES" "$@"; }
cid() { (cd "$D" && compose ps -q "$1" 2>/dev/null); }

xp_init() {
	onbox --dir "$D" init --profile spark --apply
	is "$rc" 0 "init the spark profile"
	sed -i "s|^\([A-Z]*\)_IMAGE=.*|\1_IMAGE=lobes-standin:test|; s|^LOBES_HF_CACHE=.*|LOBES_HF_CACHE=$HF|;
		s|^COMPOSE_FILE=.*|COMPOSE_FILE=docker-compose.yml:docker-compose.test.yml|;
		s|^COMPOSE_PROJECT_NAME=.*|COMPOSE_PROJECT_NAME=$1|" "$D/.env"
	printf '# the operator was here\nMY_NOTE="keep me"' >>"$D/.env"
	docker_compose_project "$1" "$D/docker-compose.yml"
}

xp_overlay() {
	local r l
	{
		echo "services:"
		for r in cortex senses; do
			printf '  %s:\n    environment:\n' "$r"
			printf '      STANDIN_CARD: spark\n      STANDIN_MEM_SCALE: "0.01"\n'
			printf '      STANDIN_LOAD_MS: "200"\n      STANDIN_PROFILE_MS: "200"\n      STANDIN_WARMUP_MS: "100"\n'
			for l in "$@"; do printf '      %s\n' "$l"; done
			printf '    ulimits:\n      memlock: %s\n' "$(docker_memlock)"
		done
	} >"$D/docker-compose.test.yml"
}

_xp_has_log() { (cd "$D" && compose logs --no-color "$1" 2>/dev/null) | grep -qF "$2"; }
xp_up() {
	(cd "$D" && compose up -d cortex senses >/dev/null 2>&1)
	wait_for "$WAIT" _xp_has_log cortex "Application startup complete."; ok $? "the cortex boots $1"
	wait_for "$WAIT" _xp_has_log senses "Application startup complete."; ok $? "the senses boots"
}
