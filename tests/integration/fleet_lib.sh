# tests/integration/fleet_lib.sh — a rendered fleet on the private dockerd
# with the vLLM stand-in (a test double) in place of each role's image.
# Source after tests/lib.sh, tests/standin/lib.sh and
# tests/integration/docker.sh: it skips without python3/jq, starts dockerd,
# builds the stand-in image and points the fixture paths; set
# PROJECT_PREFIX (compose project names) after sourcing.
#
#   deploy DIR PROFILE CARD   init on the fixture box CARD, then point
#   roles_of DIR / upper S / version_of IMAGE_REF / j EXPR (see below)
HOSTS=$SRC/tests/fixtures/hosts
HF=$SRC/tests/fixtures/hf
IMAGES=${LOBES_IMAGES_DIR:-$SRC/data/images}
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"
command -v jq >/dev/null || skip_all "jq is not installed"
[ -d "$IMAGES" ] || skip_all "no image knowledge at $IMAGES"
docker_start
docker_build_standin || { ok 1 "build the stand-in image"; done_testing; }
unset LOBES_SYSROOT
export HF_HUB_CACHE=$HF/hub LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1

roles_of() { grep -oE '^  [a-z]+:$' "$1/docker-compose.yml" | tr -d ' :'; }
upper() { tr a-z A-Z <<<"$1"; }
# version_of IMAGE_REF: the vLLM version data/images records for it
version_of() { grep -l -F "ref: $1" "$IMAGES"/*.yaml 2>/dev/null | head -n1 | xargs -r sed -n 's/^vllm: //p'; }

# init DIR CARD [ARGS...]: `lobes init --apply` on the fixture box of CARD
init() {
	local d=$1 card=$2
	shift 2
	env LOBES_SYSROOT="$HOSTS/$card" LOBES_NVIDIA_SMI="$HOSTS/$card/bin/nvidia-smi" \
		"$LOBES" --dir "$d" init "$@" --apply >/dev/null
}
# point DIR CARD PROJECT: the rendered fleet pointed at the stand-in image
# (each role told its image's vLLM version and the card it runs on), the
# fixture HF cache, its own compose project ($PROJECT_PREFIX-PROJECT).
# STANDIN_EXTRA_ENV: more environment for every role, "KEY=VALUE ..." (no
# spaces inside a pair).
point() {
	local d=$1 card=$2 p=$3 r up img ver kv
	# the rendered memlock -1 where this box allows it (docker_memlock)
	local memlock
	memlock=$(docker_memlock)
	{
		echo "services:"
		for r in $(roles_of "$d"); do
			up=$(upper "$r")
			img=$(sed -n "s/^${up}_IMAGE=//p" "$d/.env")
			ver=$(version_of "$img")
			[ -n "$ver" ] || { echo "# no vLLM version recorded for $r's image '$img'" >&2; return 1; }
			printf '  %s:\n    environment:\n' "$r"
			printf '      STANDIN_CARD: %s\n      STANDIN_VERSION: "%s+standin"\n' "$card" "$ver"
			printf '      STANDIN_LOAD_MS: "200"\n      STANDIN_PROFILE_MS: "200"\n'
			printf '      STANDIN_WARMUP_MS: "100"\n      STANDIN_MEM_SCALE: "0.01"\n'
			for kv in ${STANDIN_EXTRA_ENV:-}; do printf '      %s: "%s"\n' "${kv%%=*}" "${kv#*=}"; done
			printf '    ulimits:\n      memlock: %s\n' "$memlock"
		done
	} >"$d/docker-compose.test.yml" || return 1
	sed -i -E "s|^([A-Z]+_IMAGE)=.*|\1=lobes-standin:test|; s|^LOBES_HF_CACHE=.*|LOBES_HF_CACHE=$HF|;
		s|^COMPOSE_FILE=.*|COMPOSE_FILE=docker-compose.yml:docker-compose.test.yml|;
		s|^COMPOSE_PROJECT_NAME=.*|COMPOSE_PROJECT_NAME=$PROJECT_PREFIX-$p|" "$d/.env"
	sed -i -E "s|^([A-Z]+)_GPU_MEM_UTIL=.*|\1_GPU_MEM_UTIL=0.03|" "$d/.env"
	docker_compose_project "$PROJECT_PREFIX-$p" "$d/docker-compose.yml"
}
deploy() { init "$1" "$3" --profile "$2" && cp "$1/.env" "$TMP/$2-images.env" && point "$1" "$3" "$2"; }
# j EXPR: a python expression over d, the JSON in $out (whole, or its last
# line when the output is event lines followed by a result line)
j() { printf '%s' "$out" | python3 -c "
import json,sys
t=sys.stdin.read()
try: d=json.loads(t)
except ValueError: d=json.loads(t.strip().splitlines()[-1])
v=$1; print(v if isinstance(v,str) else json.dumps(v))"; }
