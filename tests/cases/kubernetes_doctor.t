#!/bin/bash
# kubernetes_doctor.t — `lobes doctor --kubernetes DIR`: the golden tree is
# healthy; each planted fault is found by the check that owns it (the
# compose families image, fp8-kv and traits run on each overlay; the
# kubernetes ones on what only Kubernetes has), with exit 1 on an error.
. "${LOBES_SRC:-.}/tests/lib.sh"
export LOBES_DIR="$TMP/nodeploy"
G="$SRC/tests/goldens/k8s"
ids() { printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(sorted({c["id"]+":"+c["severity"] for c in d["checks"] if c["severity"] in ("warning","error")})))'; }
fresh() { rm -rf "$TMP/t" && cp -r "$G" "$TMP/t"; }
D="$TMP/t/overlays/thor/daemonset.yaml"

run "$LOBES" doctor --kubernetes "$G"
is "$rc" 0 "the golden tree is healthy"
like "$out" "kubernetes-nodes: overlays/thor: selects nvidia.com/gpu.product=NVIDIA-Thor" "thor's node selection is checked"
like "$out" "label values: .*not observed on a live cluster" "with the labels' uncertainty"
like "$out" "kubernetes-sidecars: overlays/spark: .*bring-up order cortex, senses, hand, embedder, reranker" "spark's sidecar order is checked"
like "$out" "traits: overlays/thor: " "the compose trait check runs on each overlay"
like "$out" "vllm-args: overlays/thor: .* accepted by the recorded vLLM" "and the vLLM argument check"
like "$out" "info +kubernetes-restart: .*does not wait for the others.*503 backend_unavailable" "the restart gap is explained"
run "$LOBES" --json doctor --kubernetes "$G"
is "$(ids)" "" "--json: no warning or error"

# sidecar order, kind and startupProbe
fresh
python3 - "$D" <<'PY'
import sys, re
p = sys.argv[1]; s = open(p).read()
blocks = re.split(r"(?m)^(?=        - name: )", s)
head, rest = blocks[0], blocks[1:]
tail_i = next(i for i, b in enumerate(rest) if "\n      volumes:" in b or "\n      containers:" in b)
names = [re.match(r"        - name: (\w+)", b).group(1) for b in rest]
i, j = names.index("senses"), names.index("embedder")
rest[i], rest[j] = rest[j], rest[i]
open(p, "w").write(head + "".join(rest))
PY
run "$LOBES" --json doctor --kubernetes "$TMP/t"
is "$rc" 1 "a wrong sidecar order is an error (exit 1)"
like "$(ids)" "kubernetes-sidecars:error" "found by kubernetes-sidecars"
fresh
python3 - "$D" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
i = s.rindex("          startupProbe:")
j = s.index("          livenessProbe:", i)
s = s[:i] + s[j:]
s = s.replace("          restartPolicy: Always\n", "", 1)
open(p, "w").write(s)
PY
run "$LOBES" doctor --kubernetes "$TMP/t"
is "$rc" 1 "a sidecar without startupProbe is an error"
like "$out" "overlays/thor: reranker has no startupProbe" "naming the engine"
like "$out" "overlays/thor: cortex is not a native sidecar" "a plain init container is named too"
like "$out" "warning +kubernetes-render: overlays/thor: daemonset.yaml differ" "and the edit differs from the render"

# the sm_110 traits, through the compose checks
fresh
sed -i "0,/'--kv-cache-dtype=auto'/s//'--kv-cache-dtype=fp8'/" "$D"
sed -i "0,/            - '--enable-prefix-caching'/s//            - '--enable-prefix-caching'\n            - '--speculative-config={\"method\": \"mtp\", \"num_speculative_tokens\": 2}'/" "$D"
run "$LOBES" --json doctor --kubernetes "$TMP/t"
like "$(ids)" "traits:warning" "MTP back on the Thor cortex is a traits finding"
like "$(ids)" "fp8-kv:(warning|error)" "fp8 KV on the Thor cortex is an fp8-kv finding"
like "$out" "sm110-mtp-off" "naming the trait"

# images, nodes, secrets
fresh
sed -i "0,/image: 'vllm\/vllm-openai@sha256:[0-9a-f]*'/s//image: 'vllm\/vllm-openai:latest'/" "$D"
sed -i "s/nvidia.com\/gpu.product: 'NVIDIA-Thor'/nvidia.com\/gpu.product: 'NVIDIA-GB10'/" "$D"
sed -i "0,/              value: '\/root\/.cache\/huggingface'/s//              value: '\/root\/.cache\/huggingface'\n            - name: HF_TOKEN\n              value: 'hf_inline'/" "$D"
echo "LOBES_GATEWAY_API_KEY=inline-key" >>"$TMP/t/overlays/thor/gateway.env"
run "$LOBES" --json doctor --kubernetes "$TMP/t"
is "$rc" 1 "planted faults: exit 1"
like "$(ids)" "image:warning" "an image by tag is an image finding"
like "$(ids)" "kubernetes-nodes:error" "a node selector for another card is a kubernetes-nodes error"
like "$(ids)" "kubernetes-secrets:error" "secrets inline are kubernetes-secrets errors"
unlike "$out" "hf_inline|inline-key" "and the secret values are not printed"
run "$LOBES" doctor --kubernetes "$TMP/t"
like "$out" "an env literal under a secret's name, cortex: HF_TOKEN$" "the env literal is named"
like "$out" "gateway.env \(the gateway's ConfigMap\) holds a value for LOBES_GATEWAY_API_KEY" "the ConfigMap's key is named"

# bad input
run "$LOBES" doctor --kubernetes "$TMP/absent"
is "$rc" 3 "a tree that is not a directory is exit 3"
like "$errout" "expected the tree \`lobes render --target kubernetes --out DIR\` wrote" "saying what was expected"
mkdir -p "$TMP/empty"
run "$LOBES" doctor --kubernetes "$TMP/empty"
is "$rc" 1 "a tree without overlays is an error finding"
run "$LOBES" doctor --kubernetes "$G" --profile thor
is "$rc" 2 "--profile with --kubernetes is a usage error"
fresh
cp -r "$TMP/t/overlays/thor" "$TMP/t/overlays/nosuch"
run "$LOBES" doctor --kubernetes "$TMP/t"
like "$out" "overlays/nosuch: no profile 'nosuch'" "an overlay without a profile is named"
done_testing
