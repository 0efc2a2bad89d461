#!/bin/bash
# status.t — `lobes status` against a private dockerd. An orin deploy dir
# (three feasible roles, two infeasible) is rendered by `lobes init --apply`
# on the AGX Orin fixture box
# and pointed at the vLLM stand-in (a test double) by editing its .env:
# <ROLE>_IMAGE, LOBES_HF_CACHE (the fixture cache), free ports, its own
# project name, and COMPOSE_FILE naming a test overlay (small STANDIN_*
# knobs, a 1 s healthcheck interval) in place of the GPU overlay. The roles
# go up through the compose CLI wrapper (runtime-tool), then status must
# show them running and healthy on their ports; one stopped makes it exit 1
# naming that role; down leaves every feasible role "not running".
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/integration/docker.sh"
TOOL=${LOBES_BUILD:-$SRC/build}/tests/runtime-tool
[ -x "$STANDIN" ] || skip_all "stand-in not built ($STANDIN; make test-helpers)"
[ -x "$TOOL" ] || skip_all "runtime-tool not built ($TOOL; make test-helpers)"
command -v jq >/dev/null || skip_all "jq is not installed"
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 ||
	skip_all "no compose CLI (docker-compose or docker compose)"
docker_start

D=$TMP/deploy
# init on a (fixture) AGX Orin box: the Orin traits key on the detected card
# (the hand is not offered there for memory), so a box that is not an Orin
# would keep the profile's hand.
HOSTS=$SRC/tests/fixtures/hosts
run env LOBES_SYSROOT="$HOSTS/agx-orin" LOBES_NVIDIA_SMI="$HOSTS/agx-orin/bin/nvidia-smi" \
	LOBES_NVML_LIB="$TMP/absent/libnvidia-ml.so.1" "$LOBES" --dir "$D" init --profile orin --apply
is "$rc" 0 "init --profile orin --apply writes the deploy dir"
is "$(sed -n 's/^HAND_FEASIBLE=//p' "$D/.env")" false "on the Orin the hand is not offered (trait orin-hand-memory)"

docker_build_standin
ok $? "the stand-in image builds"

PROJECT=lobes-status-$$
PS=$(standin_free_port)
PE=$(standin_free_port)
PR=$(standin_free_port)
while [ "$PE" = "$PS" ]; do PE=$(standin_free_port); done
while [ "$PR" = "$PS" ] || [ "$PR" = "$PE" ]; do PR=$(standin_free_port); done
setenv() { sed -i "s|^$1=.*|$1=$2|" "$D/.env"; grep -q "^$1=$2\$" "$D/.env"; }
setenv COMPOSE_FILE docker-compose.yml:test-overlay.yml &&
	setenv COMPOSE_PROJECT_NAME "$PROJECT" &&
	setenv SENSES_IMAGE lobes-standin:test && setenv EMBEDDER_IMAGE lobes-standin:test &&
	setenv RERANKER_IMAGE lobes-standin:test &&
	setenv LOBES_HF_CACHE "$SRC/tests/fixtures/hf" &&
	setenv SENSES_PORT "$PS" && setenv EMBEDDER_PORT "$PE" && setenv RERANKER_PORT "$PR"
ok $? "the .env points at the stand-in, the fixture cache and free ports"
cat >"$D/test-overlay.yml" <<EOF
# The stand-in's knobs: tiny memory, short boot phases; a quick healthcheck;
# the rendered memlock where this box allows it (docker_memlock).
x-standin: &standin
  environment:
    STANDIN_DEVICE_BYTES: 2G
    STANDIN_MEM_SCALE: "0.001"
    STANDIN_LOAD_MS: "50"
    STANDIN_PROFILE_MS: "50"
    STANDIN_WARMUP_MS: "20"
  healthcheck:
    interval: 1s
    timeout: 30s
    start_period: 300s
    retries: 30
  ulimits:
    memlock: $(docker_memlock)
services:
  senses: *standin
  embedder: *standin
  reranker: *standin
EOF
docker_compose_project "$PROJECT" "$D/docker-compose.yml"

run "$TOOL" compose "$D" config -q
is "$rc" 0 "compose config -q (the CLI detected) accepts the deploy dir with the overlay"
[ "$rc" = 0 ] || printf '%s\n' "$errout" | sed 's/^/# /'
# Detection was exercised; name the CLI from here on (saves a probe per run).
if command -v docker-compose >/dev/null 2>&1; then export LOBES_COMPOSE=docker-compose
else export LOBES_COMPOSE="docker compose"; fi

# Nothing is up yet: every feasible role is "not running".
run "$LOBES" --dir "$D" status
is "$rc" 1 "status before up exits 1"
like "$out" "senses +not running" "a feasible role without a container is not running"
like "$out" "cortex +not deployed \(infeasible\)" "an infeasible role is not deployed"
like "$out" "profile orin" "the header names the profile"
like "$out" "docker engine reachable" "the header says the engine answers"

run "$TOOL" compose "$D" up -d --no-deps senses embedder reranker
is "$rc" 0 "the compose wrapper brings the three roles up"
[ "$rc" = 0 ] || printf '%s\n' "$errout" | sed 's/^/# /'

# Bounded wait until docker's own health check has passed for every role
# (it runs every second here; the stand-ins boot in well under that).
all_healthy() {
	run "$LOBES" --dir "$D" --json status
	[ "$(jq -r '[.roles[] | select(.feasible) | .health] | all(. == "healthy")' <<<"$out")" = true ]
}
wait_for "$WAIT" all_healthy
run "$LOBES" --dir "$D" status
is "$rc" 0 "status exits 0 once every feasible role is running and healthy"
[ "$rc" = 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
like "$out" "senses +running +healthy +$PS " "senses: running, healthy, on its port"
like "$out" "embedder +running +healthy +$PE " "embedder: running, healthy, on its port"
like "$out" "reranker +running +healthy +$PR " "reranker: running, healthy, on its port"
like "$out" "hand +not deployed \(infeasible\)" "hand stays not deployed"
like "$out" "ok: 3 of 3 feasible roles running and healthy" "the summary"

run "$LOBES" --dir "$D" --json status
is "$rc" 0 "status --json exits 0 too"
is "$(jq -r '.project' <<<"$out")" "$PROJECT" "the project comes from the .env"
is "$(jq -r '.roles[] | select(.role=="embedder") | "\(.state) \(.health) \(.port) \(.model) \(.restart_count)"' <<<"$out")" \
	"running healthy $PE Qwen/Qwen3-Embedding-0.6B 0" "--json: embedder state, health, port, model, restarts"
is "$(jq -r '.roles[] | select(.role=="senses") | (.uptime_s | type)' <<<"$out")" number "--json: an uptime"
is "$(jq -r '[.roles[] | select(.feasible | not) | .state] | join(",")' <<<"$out")" \
	"not deployed,not deployed" "--json: the infeasible roles"
EMB=$(jq -r '.roles[] | select(.role=="embedder") | .container' <<<"$out")

# The Engine API client on a real daemon: the demultiplexed boot log and
# the effective arguments.
run "$TOOL" logs "$EMB"
like "$out" "Application startup complete\." "engine logs: the boot log, demultiplexed"
unlike "$out" $'[\x01\x02]' "engine logs: no frame headers left in the text"
run "$TOOL" logs "$EMB" 1
is "$(printf '%s\n' "$out" | wc -l)" 1 "engine logs: tail=1 gives one line"
run "$TOOL" args "$EMB"
like "$out" "--port=$PE" "engine inspect: the effective --port"
run "$TOOL" image lobes-standin:test
like "$out" "^sha256:" "engine image inspect: the image id"

# One role stopped: status exits 1 and names it.
docker stop -t 30 "$EMB" >/dev/null 2>&1
run "$LOBES" --dir "$D" status
is "$rc" 1 "with embedder stopped, status exits 1"
like "$out" "embedder +exited" "the stopped role shows exited"
like "$out" "  embedder: exited \(exit code [0-9]+\)" "the summary names embedder"
unlike "$out" "  senses:" "the running roles are not named"

run "$TOOL" compose "$D" down
is "$rc" 0 "the compose wrapper takes the fleet down"
run "$LOBES" --dir "$D" status
is "$rc" 1 "after down, status exits 1"
like "$out" "reranker +not running" "after down every feasible role is not running"

# No engine: exit 4 with the socket named; no deploy dir: exit 3.
run env DOCKER_HOST="unix://$TMP/nothing.sock" "$LOBES" --dir "$D" status
is "$rc" 4 "an unreachable engine exits 4"
like "$errout" "docker engine at '$TMP/nothing.sock': connect:" "the error names the socket"
like "$out" "docker engine unreachable" "the header says so"
run "$LOBES" --dir "$TMP/empty" status
is "$rc" 3 "no .env exits 3"
like "$errout" "run 'lobes init --apply'" "and says how to make one"
done_testing
