#!/bin/bash
# standin_docker.t — the vLLM stand-in (a test double) as a FROM scratch
# image under a private dockerd: two services from one compose file (host
# networking, 127.0.0.1 only, the fixture HF cache mounted read-only; one
# started the way renders start vLLM: entrypoint ["vllm", "serve"] and a
# curl healthcheck) boot, answer /health and a chat request, lint their
# environment, and go down.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/integration/docker.sh"
[ -x "$STANDIN" ] || skip_all "stand-in not built ($STANDIN; make test-helpers)"
command -v curl >/dev/null || skip_all "curl is not installed"
docker_start

docker_build_standin
built=$?
ok $built "the stand-in image builds FROM scratch"
[ "$built" = 0 ] || sed 's/^/# /' "$DOCKER_ROOT/build.log"
run docker image inspect -f '{{json .Config.Entrypoint}}' lobes-standin:test
is "$out" '["/usr/bin/vllm"]' "the image's entrypoint is /usr/bin/vllm"

PORT_A=$(standin_free_port)
PORT_B=$(standin_free_port)
while [ "$PORT_B" = "$PORT_A" ]; do PORT_B=$(standin_free_port); done
PROJECT=lobes-standin-$$
cat >"$TMP/docker-compose.yml" <<EOF
version: "2.4"
x-standin-env: &env
  HF_HUB_CACHE: /hf/hub
  STANDIN_DEVICE_BYTES: 2G
  STANDIN_MEM_SCALE: "0.01"
  STANDIN_LOAD_MS: "100"
  STANDIN_PROFILE_MS: "100"
  STANDIN_WARMUP_MS: "50"
services:
  cortex:
    image: lobes-standin:test
    network_mode: host
    entrypoint: ["vllm", "serve"]
    command: ["unsloth/Qwen3.8-27B-NVFP4", "--served-model-name=cortex",
              "--host=127.0.0.1", "--port=$PORT_A",
              "--gpu-memory-utilization=0.30", "--kv-cache-dtype=fp8"]
    healthcheck:
      test: ["CMD", "curl", "-fsS", "http://127.0.0.1:$PORT_A/health"]
      interval: 1s
      timeout: 30s
      retries: 30
    environment:
      <<: *env
      VLLM_ATTENTION_BACKEND: TRITON_ATTN
    volumes:
      - $SRC/tests/fixtures/hf/hub:/hf/hub:ro
  embedder:
    image: lobes-standin:test
    network_mode: host
    command: ["serve", "Qwen/Qwen3-Embedding-0.6B", "--served-model-name", "embedder",
              "--host", "127.0.0.1", "--port", "$PORT_B", "--runner", "pooling",
              "--convert", "embed", "--gpu-memory-utilization", "0.06",
              "--attention-config", '{"backend": "TRITON_ATTN"}']
    environment:
      <<: *env
    volumes:
      - $SRC/tests/fixtures/hf/hub:/hf/hub:ro
EOF
docker_compose_project "$PROJECT" "$TMP/docker-compose.yml"
run compose -p "$PROJECT" -f "$TMP/docker-compose.yml" up -d
is "$rc" 0 "docker-compose up starts both stand-ins"
[ "$rc" = 0 ] || printf '%s\n' "$errout" | sed 's/^/# /' 

health_200() {
	[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$1/health")" = 200 ]
}
wait_for "$WAIT" health_200 "$PORT_A"
ok $? "cortex answers /health on 127.0.0.1:$PORT_A"
wait_for "$WAIT" health_200 "$PORT_B"
ok $? "embedder answers /health on 127.0.0.1:$PORT_B"

health=
cortex_healthy() {
	health=$(docker inspect -f '{{.State.Health.Status}}' "$(compose -p "$PROJECT" -f "$TMP/docker-compose.yml" ps -q cortex)" 2>/dev/null)
	[ "$health" = healthy ]
}
wait_for "$WAIT" cortex_healthy
is "$health" healthy "the rendered-style curl healthcheck passes inside the scratch image"

STANDIN_PORT=$PORT_A
http POST /v1/chat/completions '{"model":"cortex","messages":[{"role":"user","content":"What is the capital city of France? Reply with only the city name."}],"max_tokens":16,"temperature":0,"chat_template_kwargs":{"enable_thinking":false}}'
is "$code" 200 "a chat request through the container"
like "$body" '"content":"Paris"' "the cortex probe answer comes back"

run compose -p "$PROJECT" -f "$TMP/docker-compose.yml" logs --no-color cortex
like "$out" "Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND" "the compose env's VLLM_ATTENTION_BACKEND is reported unknown"
like "$out" "Application startup complete\." "the container log shows the boot"
run compose -p "$PROJECT" -f "$TMP/docker-compose.yml" logs --no-color embedder
unlike "$out" "Unknown vLLM environment variable" "the embedder, without it, does not warn"
like "$out" "Using TRITON_ATTN attention backend" "the JSON --attention-config survives compose quoting"

run compose -p "$PROJECT" -f "$TMP/docker-compose.yml" down -t 30
is "$rc" 0 "docker-compose down"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$PORT_A/health")
is "$code" 000 "nothing listens after down"
done_testing
