# tests/integration/docker.sh — a private Docker daemon for integration
# tests. Source it after tests/lib.sh (and tests/standin/lib.sh if used).
#
#   docker_start            start dockerd under /tmp/lobes-docker-*, host
#                           networking only (--bridge=none, no iptables), and
#                           export DOCKER_HOST. When that is impossible (not
#                           root, no dockerd) the test is skipped with the
#                           reason — unless LOBES_REQUIRE_DOCKER=1 (CI), where
#                           it is a test failure.
#   docker_build_standin    build the vLLM stand-in (a test double) into
#                           lobes-standin:test from a context holding only the
#                           static binary and its Dockerfile (FROM scratch:
#                           nothing is ever pulled).
#   compose ARGS...         docker-compose v1 (Debian's), else `docker compose`
#   docker_compose_project  NAME: remember a project to `down` at exit
#   docker_memlock          the memlock ulimit a test overlay gives each
#                           engine: the rendered -1 (unlimited) when this
#                           shell may have it, else its hard limit in bytes
#                           (an unprivileged sandbox's runc cannot raise
#                           RLIMIT_MEMLOCK: "error setting rlimit type 8")
#   wait_for SECONDS CMD... run CMD every 0.2 s until it succeeds (0) or
#                           SECONDS of wall time have passed (1). Every wait
#                           in these tests is one of these, on a condition,
#                           with a bound far above the time on an idle box:
#                           CI runs loaded (another core busy), and a wait
#                           that succeeds costs nothing extra.
#
# LOBES_TEST_WAIT (default 180) is the bound, in seconds, of waits for a
# container to boot or answer; raise it on a very slow machine.
#
# Installs nothing: `make deps` brings docker.io and docker-compose. At exit
# the registered projects go down and dockerd is stopped by its pid.
# The fleet asks for memlock unlimited (ulimits memlock: ${LOBES_MEMLOCK:--1});
# a daemon whose own hard limit is lower cannot grant it, so lower it to that.
if [ "$(ulimit -H -l)" != unlimited ] && [ -z "${LOBES_MEMLOCK:-}" ]; then
	export LOBES_MEMLOCK=$(($(ulimit -H -l) * 1024))
fi
DOCKER_ROOT=
DOCKERD_PID=
DOCKER_PROJECTS=""
DOCKER_COMPOSE_FILES=""
# A test that starts something docker cannot see defines docker_test_cleanup;
# it runs first.
trap 'declare -F docker_test_cleanup >/dev/null && docker_test_cleanup; _docker_cleanup;
	declare -F standin_stop_all >/dev/null && standin_stop_all; rm -rf "$TMP"' EXIT

# Skip the test, or fail it when Docker is required.
docker_unavailable() {
	if [ "${LOBES_REQUIRE_DOCKER:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - docker is required (LOBES_REQUIRE_DOCKER=1) but unavailable: $*"
		[ -n "$DOCKER_ROOT" ] && [ -f "$DOCKER_ROOT/dockerd.log" ] &&
			tail -n 20 "$DOCKER_ROOT/dockerd.log" | sed 's/^/# /'
		exit 1
	fi
	skip_all "$*"
}

WAIT=${LOBES_TEST_WAIT:-180}

wait_for() {
	local bound=$1 start=$SECONDS
	shift
	while :; do
		"$@" && return 0
		[ $((SECONDS - start)) -ge "$bound" ] && return 1
		sleep 0.2
	done
}

docker_start() {
	local i
	if [ "$(id -u)" != 0 ]; then
		docker_unavailable "a private dockerd needs root"
	fi
	command -v dockerd >/dev/null 2>&1 || docker_unavailable "dockerd is not installed (make deps installs docker.io)"
	command -v docker >/dev/null 2>&1 || docker_unavailable "the docker client is not installed"
	DOCKER_ROOT=$(mktemp -d /tmp/lobes-docker-XXXXXX)
	dockerd --bridge=none --iptables=false --ip6tables=false \
		--host "unix://$DOCKER_ROOT/docker.sock" --data-root "$DOCKER_ROOT/data" \
		--exec-root "$DOCKER_ROOT/exec" --pidfile "$DOCKER_ROOT/pid" \
		>"$DOCKER_ROOT/dockerd.log" 2>&1 &
	DOCKERD_PID=$!
	export DOCKER_HOST=unix://$DOCKER_ROOT/docker.sock
	# dockerd: its own exit ends the wait at once; a slow start gets $WAIT s
	_dockerd_up() {
		kill -0 "$DOCKERD_PID" 2>/dev/null ||
			docker_unavailable "dockerd exited at start: $(tail -n 1 "$DOCKER_ROOT/dockerd.log")"
		docker version >/dev/null 2>&1
	}
	wait_for "$WAIT" _dockerd_up && return 0
	docker_unavailable "dockerd did not answer within $WAIT s: $(tail -n 1 "$DOCKER_ROOT/dockerd.log")"
}

docker_build_standin() {
	local ctx=$DOCKER_ROOT/standin-context
	mkdir -p "$ctx"
	cp "$STANDIN" "$ctx/vllm-standin" && cp "$SRC/tests/standin/Dockerfile" "$ctx/Dockerfile" || return 1
	DOCKER_BUILDKIT=0 docker build -q -t lobes-standin:test "$ctx" >"$DOCKER_ROOT/build.log" 2>&1
}

docker_memlock() {
	local l
	l=$(ulimit -Hl)
	if [ "$l" = unlimited ]; then echo -1; else echo $((l * 1024)); fi
}

compose() {
	if command -v docker-compose >/dev/null 2>&1; then
		docker-compose "$@"
	else
		docker compose "$@"
	fi
}

# docker_compose_project NAME FILE — bring NAME (from FILE) down at exit.
docker_compose_project() {
	DOCKER_PROJECTS="$DOCKER_PROJECTS $1"
	DOCKER_COMPOSE_FILES="$DOCKER_COMPOSE_FILES $2"
}

_docker_cleanup() {
	local i p f m
	[ -n "$DOCKERD_PID" ] || return 0
	set -- $DOCKER_COMPOSE_FILES
	for p in $DOCKER_PROJECTS; do
		f=$1
		shift
		compose -p "$p" -f "$f" down -t 2 >/dev/null 2>&1
	done
	if [ -f "$DOCKER_ROOT/pid" ]; then
		kill -TERM "$(cat "$DOCKER_ROOT/pid")" 2>/dev/null
	else
		kill -TERM "$DOCKERD_PID" 2>/dev/null
	fi
	_dockerd_gone() { ! kill -0 "$DOCKERD_PID" 2>/dev/null; }
	wait_for 60 _dockerd_gone
	kill -KILL "$DOCKERD_PID" 2>/dev/null
	wait "$DOCKERD_PID" 2>/dev/null
	for m in $(awk -v r="$DOCKER_ROOT" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	rm -rf "$DOCKER_ROOT"
	DOCKERD_PID=
}
