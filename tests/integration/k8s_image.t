#!/bin/bash
# k8s_image.t — the lobes image (`make image`: tools/image.sh, FROM scratch
# with the binary and what ldd names) on the private dockerd, running the
# gateway as the Kubernetes render runs it: the command line of the
# rendered base/daemonset.yaml, its config dir holding exactly the thor
# overlay's gateway.env (the ConfigMap) and the key as a 0400 file (the
# Secret), read-only, in front of the thor fleet of stand-in containers (a
# test double of vLLM). Host networking, 127.0.0.1 only.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
. "$SRC/tests/integration/docker.sh"
python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml is needed to read the rendered manifests"
. "$SRC/tests/integration/fleet_lib.sh"
PROJECT_PREFIX=lobes-k8s
GW_NAME=lobes-k8s-gw-$$
docker_test_cleanup() { docker rm -f "$GW_NAME" >/dev/null 2>&1; return 0; }
fast="--poll-ms 200 --window-wait $WAIT --ready-wait $WAIT --mem-wait $WAIT"

# --- make image ----------------------------------------------------------------------
run "$SRC/tools/image.sh" "$LOBES" "$TMP/image" lobes:k8s-test
is "$rc" 0 "tools/image.sh (make image) builds the lobes image on the private dockerd"
[ "$rc" = 0 ] || { printf '%s\n' "$errout" | tail -n 10 | sed 's/^/# /'; done_testing; }
expected=$( (echo usr/bin/lobes; ldd "$LOBES" | awk '$2 == "=>" && $3 ~ /^\// { print substr($3, 2) } $1 ~ /^\// { print substr($1, 2) }') | sort)
got=$(cd "$TMP/image/root" && find . -type f ! -path './etc/ssl/*' | sed 's|^\./||' | sort)
is "$got" "$expected" "its root holds the binary and exactly the libraries ldd names"
run docker run --rm lobes:k8s-test --version
is "$rc" 0 "the image runs lobes"
like "$out" "^lobes [0-9]" "and says its version"
run docker run --rm --entrypoint /bin/sh lobes:k8s-test -c true
ok "$([ "$rc" != 0 ]; echo $?)" "there is no shell in it"

# --- the thor fleet (stand-ins) and the rendered gateway in front of it ----------------
T=$TMP/thor
deploy "$T" thor thor || { ok 1 "deploy thor"; done_testing; }
run "$LOBES" --dir "$T" --json serve --apply --no-gateway $fast
is "$rc" 0 "the thor fleet of stand-ins is up"
[ "$rc" = 0 ] || { printf "%s\n%s\n" "$out" "$errout" | sed "s/^/# /"; docker ps -a >&2; for c in $(docker ps -aq); do docker logs --tail 15 $c 2>&1 | sed "s/^/# /"; done; done_testing; }
"$LOBES" render --target kubernetes --profile thor --out "$TMP/k8s" >/dev/null
mkdir -p "$TMP/cm" "$TMP/secret"
cp "$TMP/k8s/overlays/thor/gateway.env" "$TMP/cm/.env"
GW_KEY=k8s-$RANDOM$RANDOM$RANDOM
printf '%s\n' "$GW_KEY" >"$TMP/secret/gateway.key"
chmod 400 "$TMP/secret/gateway.key"
GW_PORT=$(standin_free_port)
# the gateway's command line as rendered, with the pod's 0.0.0.0 and port
# turned into 127.0.0.1 and a free port (host networking here)
args=$(python3 - "$TMP/k8s/base/daemonset.yaml" "$GW_PORT" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
c = d["spec"]["template"]["spec"]["containers"][0]
a = c["args"]
a[a.index("--bind") + 1] = "127.0.0.1"
a[a.index("--port") + 1] = sys.argv[2]
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
print(mounts["config"], mounts["gateway-key"], *a)
PY
)
set -- $args
cfg=$1 keydir=$2
shift 2
is "$*" "--dir $cfg gateway --bind 127.0.0.1 --port $GW_PORT --key-file $keydir/gateway.key" \
	"the rendered gateway reads its config and key from the pod's mounts"
run docker run -d --name "$GW_NAME" --network host --read-only \
	-v "$TMP/cm:$cfg:ro" -v "$TMP/secret:$keydir:ro" lobes:k8s-test "$@"
is "$rc" 0 "the gateway container starts, read-only, from the rendered command line"
up() { gw GET /health; [ "$code" = 200 ]; }
wait_for "$WAIT" up
is "$code" 200 "its /health answers"
[ "$code" = 200 ] || { docker logs "$GW_NAME" 2>&1 | tail -n 10 | sed 's/^/# /'; done_testing; }
ready() { gw GET /v1/models; [ "$(printf '%s' "$body" | jq -r '[.data[].id] | map(select(. == "cortex" or . == "senses" or . == "embedder" or . == "reranker")) | length')" = 4 ]; }
wait_for "$WAIT" ready
is "$(printf '%s' "$body" | jq -c '[.data[].id | select(. == "cortex" or . == "senses" or . == "embedder" or . == "reranker")] | sort')" \
	'["cortex","embedder","reranker","senses"]' "/v1/models lists the four feasible thor roles, ready"
gw POST /v1/chat/completions '{"model":"cortex","messages":[{"role":"user","content":"hi"}],"max_tokens":4}'
is "$code" 200 "a chat request to the cortex goes through it to the cortex container"
like "$body" '"choices"' "and the engine's answer comes back"
gw POST /v1/embeddings '{"model":"embedder","input":"hi"}'
is "$code" 200 "an embeddings request reaches the embedder container"
gw POST /v1/chat/completions '{"model":"hand","messages":[{"role":"user","content":"hi"}]}'
is "$code" 404 "the infeasible hand is a 404"
like "$body" "role_infeasible" "role_infeasible, as the render's gateway.env says"
GW_KEY= gw POST /v1/chat/completions '{"model":"cortex","messages":[{"role":"user","content":"hi"}]}'
is "$code" 401 "without the key (from the Secret's file) it is a 401"
is "$(docker logs "$GW_NAME" 2>&1 | grep -c -F "$GW_KEY")" 0 "the key appears nowhere in its log"

# thor rendered beside spark: hand is proxied to spark's Service with spark's
# key (a second Secret); the rendered peers.yaml and mounts load as they are
"$LOBES" render --target kubernetes --profile thor --profile spark --out "$TMP/k8s2" >/dev/null
mkdir -p "$TMP/cm2" "$TMP/peer"
cp "$TMP/k8s2/overlays/thor/gateway.env" "$TMP/cm2/.env"
cp "$TMP/k8s2/overlays/thor/peers.yaml" "$TMP/cm2/peers.yaml"
printf 'spark-%s\n' "$RANDOM$RANDOM" >"$TMP/peer/gateway.key"
chmod 400 "$TMP/peer/gateway.key"
pdir=$(sed -n 's|^    key_file: \(.*\)/gateway.key$|\1|p' "$TMP/cm2/peers.yaml")
like "$(grep -A2 'name: peer-key-spark' "$TMP/k8s2/overlays/thor/daemonset.yaml")" "mountPath: '$pdir'" \
	"the peer key's mount is where peers.yaml looks for it"
run docker run --rm --network host -v "$TMP/cm2:$cfg:ro" -v "$TMP/secret:$keydir:ro" -v "$TMP/peer:$pdir:ro" \
	lobes:k8s-test --dir "$cfg" gateway --check --key-file "$keydir/gateway.key"
is "$rc" 0 "the gateway accepts the rendered peers.yaml and key mounts"
chmod 644 "$TMP/peer/gateway.key"
run docker run --rm --network host -v "$TMP/cm2:$cfg:ro" -v "$TMP/secret:$keydir:ro" -v "$TMP/peer:$pdir:ro" \
	lobes:k8s-test --dir "$cfg" gateway --check --key-file "$keydir/gateway.key"
is "$rc" 3 "it read them: a peer key others may read is refused (hence the Secret's 0400)"
like "$errout" "spark" "naming the peer"

run docker stop -t 30 "$GW_NAME"
is "$rc" 0 "it stops on SIGTERM (the pod's termination)"
is "$(docker inspect -f '{{.State.ExitCode}}' "$GW_NAME")" 0 "and exits 0 after draining"
done_testing
