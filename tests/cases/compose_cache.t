#!/bin/bash
# compose_cache.t — compose v1 detection without a Python start per run:
# with no `docker compose` (v2), doctor finds docker-compose (v1) by running
# `docker-compose version` once, then answers from the cache
# ($XDG_CACHE_HOME/lobes/compose.json) keyed by the program's path, size and
# mtime; a changed program is probed again. The stub counts its runs. (The
# rest of the suite runs with LOBES_COMPOSE_CACHE=0: its stubs change
# behaviour through the environment, not their mtime.)
. "${LOBES_SRC:-.}/tests/lib.sh"
HOSTS=$SRC/tests/fixtures/hosts
FAKE=$SRC/tests/fixtures/doctor
mkdir -p "$TMP/bin"
cat >"$TMP/bin/docker-compose" <<STUB
#!/bin/sh
echo run >>"$TMP/v1-runs"
echo "docker-compose version 1.29.2, build unknown"
STUB
chmod +x "$TMP/bin/docker-compose"
export PATH="$TMP/bin:$FAKE/bin:$PATH" FAKE_COMPOSE_V2=none FAKE_DOCKER_NVIDIA=1
export FAKE_ENV_LIST=$FAKE/image-env.txt FAKE_DOCKER_LOG=$TMP/docker.log
export LOBES_COMPOSE_CACHE=1 XDG_CACHE_HOME=$TMP/cache LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1 HF_HUB_CACHE=$TMP/hub
unset LOBES_SYSROOT HF_HOME LOBES_DIR LOBES_DOCKER LOBES_COMPOSE FAKE_COMPOSE_V1 FAKE_DOCKER_DOWN
on() { run env LOBES_SYSROOT="$HOSTS/thor" LOBES_NVIDIA_SMI="$HOSTS/thor/bin/nvidia-smi" "$LOBES" "$@"; }
runs() { [ -f "$TMP/v1-runs" ] && wc -l <"$TMP/v1-runs" | tr -d ' ' || echo 0; }

on --dir "$TMP/dep" init --apply
is "$rc" 0 "init renders a deploy dir"
on --dir "$TMP/dep" doctor
like "$out" "compose .*docker-compose version 1.29.2" "doctor finds compose v1 without v2"
is "$(runs)" 1 "… by running docker-compose version once"
ok $([ -f "$TMP/cache/lobes/compose.json" ]; echo $?) "… and keeps the answer in \$XDG_CACHE_HOME/lobes/compose.json"
is "$(stat -c %a "$TMP/cache/lobes/compose.json")" 600 "… mode 0600"
on --dir "$TMP/dep" doctor
like "$out" "compose .*docker-compose version 1.29.2" "the second doctor finds it too"
is "$(runs)" 1 "… from the cache: docker-compose is not started again"
touch -d '2001-01-01' "$TMP/bin/docker-compose"
on --dir "$TMP/dep" doctor
is "$(runs)" 2 "a changed program (its mtime) is probed again"
on --dir "$TMP/dep" doctor
is "$(runs)" 2 "… and cached again"
echo garbage >"$TMP/cache/lobes/compose.json"
on --dir "$TMP/dep" doctor
like "$out" "compose .*docker-compose version 1.29.2" "a damaged cache file only means a probe"
is "$(runs)" 3 "… which runs the program"
done_testing
