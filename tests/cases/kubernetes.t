#!/bin/bash
# kubernetes.t — `lobes render --target kubernetes`: the golden tree
# (tests/goldens/k8s/), byte-stable, built offline by `kubectl kustomize`
# (each overlay, base/ and the whole tree), and the built manifests checked
# against the compose render of the same profiles (tests/k8s/check_manifests.py):
# sidecar order, startupProbes, arguments and images, secrets, the thor
# traits and node selection, base selecting no node.
. "${LOBES_SRC:-.}/tests/lib.sh"
export LOBES_DIR="$TMP/nodeploy"
G="$SRC/tests/goldens/k8s"

run "$LOBES" render --target kubernetes --check "$G"
is "$rc" 0 "the kubernetes render matches tests/goldens/k8s"
# a changed byte fails the check, with a diff
cp -r "$G" "$TMP/g"
sed -i 's/nvidia.com\/gpu.compute.major: .11./nvidia.com\/gpu.compute.major: '"'"'12'"'"'/' "$TMP/g/overlays/thor/daemonset.yaml"
run "$LOBES" render --target kubernetes --check "$TMP/g"
is "$rc" 1 "a changed file of the tree fails the check"
like "$out" "overlays/thor/daemonset.yaml: differs" "the changed file is named"

# byte-stable: no clock, host or environment
(cd / && env -i PATH="$PATH" HOME=/nonexistent LOBES_DIR=/x TZ=Asia/Tokyo HF_HOME=/elsewhere \
	LOBES_SYSROOT="$SRC/tests/fixtures/hosts/gb10" "$LOBES" render --target kubernetes --out "$TMP/b" >/dev/null)
is "$(diff -r "$G" "$TMP/b" && echo same)" same "the same bytes under another environment and card"

# options
run "$LOBES" render --target kubernetes --profile thor --profile thor --out "$TMP/x"
is "$rc" 2 "a profile named twice is a usage error"
run "$LOBES" render --target swarm
is "$rc" 2 "an unknown target is a usage error"
like "$errout" "expected compose or kubernetes" "the error names the targets"
run "$LOBES" render --profile thor --lobes-image x
is "$rc" 2 "--lobes-image without --target kubernetes is a usage error"
run "$LOBES" render --target kubernetes --profile thor --profile spark --lobes-image reg.example/lobes:1 \
	--hf-cache-claim hf --out "$TMP/opt"
is "$rc" 0 "a two-profile render with options"
like "$(cat "$TMP/opt/base/daemonset.yaml")" "image: 'reg.example/lobes:1'" "--lobes-image names the gateway's image"
like "$(cat "$TMP/opt/base/daemonset.yaml")" "claimName: 'hf'" "--hf-cache-claim renders a PVC"
unlike "$(cat "$TMP/opt/base/daemonset.yaml")" "hostPath" "and no hostPath for the cache"
is "$(ls "$TMP/opt/overlays" | tr '\n' ' ')" "spark thor " "only the profiles named"
like "$(cat "$TMP/opt/overlays/thor/peers.yaml")" "hand: \{proxy: spark\}" "thor's hand is proxied to spark's Service"
unlike "$(cat "$TMP/opt/overlays/thor/daemonset.yaml")" "'base'" "the NotIn list holds only rendered profiles"
run "$LOBES" render --target kubernetes --profile thor --out "$TMP/one"
is "$([ -e "$TMP/one/overlays/thor/peers.yaml" ] && echo yes || echo no)" no "alone, thor has no peer to proxy hand to"
unlike "$(cat "$TMP/one/overlays/thor/daemonset.yaml")" "NotIn" "alone, no affinity against other profiles"

# init --target kubernetes: the same tree, into DIR/kubernetes/ through the store
run "$LOBES" --dir "$TMP/dep1" init --target kubernetes
is "$rc" 0 "init --target kubernetes: a dry run"
like "$out" "^\+\+\+ b/kubernetes/overlays/thor/daemonset.yaml" "shows the diff of each file"
is "$([ -e "$TMP/dep1" ] && echo written || echo nothing)" nothing "and writes nothing"
run "$LOBES" --dir "$TMP/dep1" init --target kubernetes --apply
is "$rc" 0 "--apply writes the tree"
is "$(diff -r "$G" "$TMP/dep1/kubernetes" && echo same)" same "the tree in DIR/kubernetes equals the golden"
is "$(ls -A "$TMP/dep1" | tr '\n' ' ')" ".lobes.lock kubernetes " "beside the deploy dir's lock, nothing else"
run "$LOBES" --dir "$TMP/dep1" init --target kubernetes --apply
like "$out" "is up to date: nothing to write" "a second --apply writes nothing"
sed -i 's/periodSeconds: 15/periodSeconds: 99/' "$TMP/dep1/kubernetes/overlays/spark/daemonset.yaml"
run "$LOBES" --dir "$TMP/dep1" --json init --target kubernetes
is "$(printf '%s' "$out" | python3 -c 'import json,sys; print(" ".join(f["name"] + ":" + f["status"] for f in json.load(sys.stdin)["files"] if f["status"] != "same"))')" \
	"overlays/spark/daemonset.yaml:changed" "an edited file shows as changed, and only it"
run "$LOBES" --dir "$TMP/dep1" init --target kubernetes --apply
is "$(diff -r "$G" "$TMP/dep1/kubernetes" && echo same)" same "and --apply restores it"
is "$(ls -A "$TMP/dep1/kubernetes/overlays/spark" | grep -c 'tmp\|journal')" 0 "no temp or journal left"
run "$LOBES" --dir "$TMP/dep1" init --target kubernetes --reset X
is "$rc" 2 "--reset is for the compose files"
run "$LOBES" --dir "$TMP/dep1" init --profile thor --profile spark
is "$rc" 2 "two --profile need --target kubernetes"

# two profiles whose cards carry the same GFD labels would both land on a node
mkdir -p "$TMP/dup/profiles"
sed 's/^name: thor/name: thor2/; s/^profile: thor/profile: thor2/' "$SRC/data/cards/thor.yaml" >"$TMP/dup/profiles/card-thor2.yaml"
sed 's/^name: thor/name: thor2/; s/^card: thor/card: thor2/' "$SRC/data/profiles/thor.yaml" >"$TMP/dup/profiles/thor2.yaml"
run "$LOBES" --dir "$TMP/dup" render --target kubernetes --profile thor --profile thor2 --out "$TMP/dupo"
is "$rc" 3 "two profiles selecting the same nodes are refused"
like "$errout" "profiles 'thor' and 'thor2' would select the same nodes" "the error names both"
is "$([ -e "$TMP/dupo" ] && echo written || echo nothing)" nothing "and nothing is written"
# an operator card without GFD labels runs only where a node is labelled for it
sed -i '/^kubernetes:/,/^evidence:/{/^evidence:/!d}' "$TMP/dup/profiles/card-thor2.yaml"
run "$LOBES" --dir "$TMP/dup" render --target kubernetes --profile thor --profile thor2 --out "$TMP/dupo"
is "$rc" 0 "a card without GFD labels renders"
like "$(cat "$TMP/dupo/overlays/thor2/daemonset.yaml")" "^        lobes/profile: 'thor2'$" "and selects only nodes labelled for its profile"
like "$(cat "$TMP/dupo/overlays/thor/daemonset.yaml")" "^                      - 'thor2'$" "which the thor overlay then leaves alone"

if ! command -v kubectl >/dev/null; then
	ok 0 "# SKIP kubectl is not installed: the kustomize build and the manifest checks did not run"
	done_testing
fi
kver=$(kubectl version --client 2>/dev/null | tr '\n' ' ')
echo "# $kver"
B="$TMP/built"
mkdir -p "$B"
for d in "$G"/overlays/*/; do
	p=$(basename "$d")
	kubectl kustomize "$d" >"$B/overlay-$p.yaml" 2>"$B/err"
	is "$?" 0 "kubectl kustomize overlays/$p builds offline" 
	echo "$p" >>"$B/profiles"
done
kubectl kustomize "$G/base" >"$B/base.yaml" 2>"$B/err"
is "$?" 0 "kubectl kustomize base builds offline"
kubectl kustomize "$G" >"$B/all.yaml" 2>"$B/err"
is "$?" 0 "kubectl kustomize builds the whole tree offline"
is "$(cat "$B/err")" "" "without a warning"
is "$(grep -c '^kind: DaemonSet' "$B/all.yaml")" "$(ls "$G/overlays" | wc -l)" "one DaemonSet per overlay in the whole tree"

# a secret planted in the deploy dir's .env reaches no manifest
mkdir -p "$TMP/dep"
printf 'HF_TOKEN=hf_PLANTEDsecret123\nLOBES_GATEWAY_API_KEY=PLANTEDkey456\n' >"$TMP/dep/.env"
chmod 600 "$TMP/dep/.env"
LOBES_DIR="$TMP/dep" "$LOBES" render --target kubernetes --out "$TMP/s" >/dev/null
kubectl kustomize "$TMP/s" >"$TMP/s.yaml"
is "$(grep -c 'PLANTED' "$TMP/s.yaml")" 0 "a secret in the deploy dir's .env is in no manifest"
if ! python3 -c 'import yaml' 2>/dev/null; then
	ok 0 "# SKIP python3-yaml is not installed: the manifest checks did not run"
	done_testing
fi
python3 "$SRC/tests/k8s/check_manifests.py" "$SRC/tests/goldens" "$B" hf_PLANTEDsecret123 PLANTEDkey456 >"$TMP/tap"
while read -r line; do
	case "$line" in
	"ok "*) ok 0 "${line#ok * - }" ;;
	"not ok "*) ok 1 "${line#not ok * - }" ;;
	"#"*) echo "$line" ;;
	esac
done <"$TMP/tap"
[ -s "$TMP/tap" ] || ok 1 "check_manifests.py printed nothing"

# Every object against the Kubernetes OpenAPI schema (npm's kubernetes-models
# 4.5.1 = Kubernetes v1.33.0), installed once into a cache outside the tree.
KM_VERSION=4.5.1
KM=${LOBES_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lobes-test}/kubernetes-models-$KM_VERSION
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	ok 0 "# SKIP node/npm are not installed: the schema validation did not run"
	done_testing
fi
if [ ! -f "$KM/node_modules/kubernetes-models/package.json" ]; then
	mkdir -p "$KM"
	timeout 300 npm install --loglevel=error --no-audit --no-fund --prefix "$KM" "kubernetes-models@$KM_VERSION" \
		>"$TMP/npm.log" 2>&1
fi
if [ ! -f "$KM/node_modules/kubernetes-models/package.json" ]; then
	echo "# npm install kubernetes-models@$KM_VERSION failed:"; sed 's/^/#   /' "$TMP/npm.log" | tail -5
	ok 0 "# SKIP npm is unreachable: the schema validation (Kubernetes v1.33.0) did not run"
	done_testing
fi
python3 -c 'import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], open(sys.argv[2], "w"))' \
	"$B/all.yaml" "$TMP/all.json"
node "$SRC/tests/k8s/validate.mjs" "$KM/node_modules" "$TMP/all.json" >"$TMP/schema.tap"
grep -A3 '^not ok' "$TMP/schema.tap" | sed 's/^/# /'
is "$(grep -c '^ok ' "$TMP/schema.tap")" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$TMP/all.json")" \
	"every object of the whole tree validates against the Kubernetes v1.33.0 schema"
# the validator is not a pass-through: a wrong type is refused
sed -i '0,/containerPort: 8000/s//containerPort: "http"/' "$B/all.yaml"
python3 -c 'import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], open(sys.argv[2], "w"))' \
	"$B/all.yaml" "$TMP/bad.json"
node "$SRC/tests/k8s/validate.mjs" "$KM/node_modules" "$TMP/bad.json" >"$TMP/bad.tap"
like "$(cat "$TMP/bad.tap")" "containerPort must be integer" "a string containerPort is refused"
is "$(grep -c "^not ok" "$TMP/bad.tap")" 1 "and only that object"
done_testing
