#!/usr/bin/env python3
# tests/k8s/check_manifests.py — reads what `kubectl kustomize` built from a
# rendered tree and checks it against the compose render of the same
# profiles (tests/goldens/<profile>/). Prints TAP lines (no plan); exit 0.
#
#   check_manifests.py GOLDENS BUILT_DIR SECRET...
#
# BUILT_DIR holds overlay-<profile>.yaml (one per overlay), all.yaml (the
# whole tree), base.yaml (base/ alone) and profiles (the overlays' names). SECRET: values that must appear nowhere.
import re
import sys

import yaml

goldens, built, secrets = sys.argv[1], sys.argv[2], sys.argv[3:]
n = 0


def ok(cond, name, diag=""):
    global n
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {name}")
    if not cond and diag:
        for line in str(diag).splitlines():
            print("# " + line)


def load(name):
    with open(f"{built}/{name}.yaml") as f:
        return [d for d in yaml.safe_load_all(f) if d]


def env_file(profile):
    out = {}
    with open(f"{goldens}/{profile}/.env") as f:
        for line in f:
            if "=" in line and not line.startswith("#"):
                k, v = line.rstrip("\n").split("=", 1)
                out[k] = v
    return out


def compose_args(profile):
    """Each service's command as vLLM gets it: ${KEY:-v} -> v, $$ -> $."""
    with open(f"{goldens}/{profile}/docker-compose.yml") as f:
        c = yaml.safe_load(f)
    res = {}
    for name, svc in c["services"].items():
        args = [re.sub(r"\$\{[A-Z0-9_]+:-([^}]*)\}", r"\1", a).replace("$$", "$") for a in svc["command"]]
        res[name] = (args, svc["image"])
    return res


def kube_unescape(s):
    return s.replace("$$", "$")


profiles = open(f"{built}/profiles").read().split()
everything = load("all")
for p in profiles:
    docs = load(f"overlay-{p}")
    ds = [d for d in docs if d["kind"] == "DaemonSet"]
    ok(len(ds) == 1 and ds[0]["metadata"]["name"] == f"lobes-{p}", f"{p}: one DaemonSet lobes-{p}")
    pod = ds[0]["spec"]["template"]["spec"]
    sidecars = pod.get("initContainers", [])
    order = env_file(p)["LOBES_ORDER"].split(",")
    ok([s["name"] for s in sidecars] == order, f"{p}: sidecars in the compose bring-up order {order}",
       [s["name"] for s in sidecars])
    ok(all(s.get("restartPolicy") == "Always" for s in sidecars), f"{p}: every engine is a native sidecar")
    ok(all("startupProbe" in s for s in sidecars), f"{p}: every sidecar has a startupProbe")
    ok([c["name"] for c in pod["containers"]] == ["gateway"], f"{p}: the gateway is the main container")
    comp = compose_args(p)
    ok(sorted(comp) == sorted(s["name"] for s in sidecars), f"{p}: the same roles as the compose render")
    same = all(s["name"] in comp and [kube_unescape(a) for a in s["args"]] == comp[s["name"]][0]
               for s in sidecars)
    ok(same, f"{p}: each sidecar's vLLM arguments equal the compose service's",
       [(s["name"], s["args"], comp.get(s["name"])) for s in sidecars])
    ok(all(re.fullmatch(r"[^@\s]+@sha256:[0-9a-f]{64}", s["image"]) for s in sidecars),
       f"{p}: every engine image is pinned by full digest")
    ok(all(re.sub(r"^\$\{[A-Z_]+:-(.*)\}$", r"\1", comp[s["name"]][1]) == s["image"] for s in sidecars),
       f"{p}: the same images as the compose render")
    ok(pod.get("runtimeClassName") == "nvidia" and not pod.get("hostIPC"),
       f"{p}: runtimeClassName nvidia, no hostIPC")
    svc = [d for d in docs if d["kind"] == "Service"]
    ok(len(svc) == 1 and svc[0]["spec"]["selector"].get("app.kubernetes.io/instance") == p,
       f"{p}: a Service for the gateway selecting this profile's pods only")

# Secrets: none inline, none in a ConfigMap, HF_TOKEN and keys by reference.
text = yaml.safe_dump_all(everything)
ok(not any(s in text for s in secrets), "no secret value anywhere in the built manifests")
ok(not any(d["kind"] == "Secret" for d in everything), "no Secret object is rendered (the operator creates them)")
bad = []
for d in everything:
    if d["kind"] == "ConfigMap":
        for k, v in (d.get("data") or {}).items():
            for line in v.splitlines():
                m = re.match(r"([A-Z0-9_]+)=(.*)", line)
                if m and re.search(r"TOKEN|_KEY$|SECRET|PASSWORD", m.group(1)) and m.group(2):
                    bad.append(line)
    if d["kind"] == "DaemonSet":
        spec = d["spec"]["template"]["spec"]
        for c in spec.get("initContainers", []) + spec["containers"]:
            for e in c.get("env", []):
                if re.search(r"TOKEN|KEY|SECRET|PASSWORD", e["name"]) and ("value" in e or "secretKeyRef" not in e.get("valueFrom", {})):
                    bad.append(e)
ok(not bad, "no secret in a ConfigMap or an env literal; secret env from secretKeyRef", bad)

# thor: the sm_110 traits, Thor nodes only.
thor = [d for d in load("overlay-thor") if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]
by = {s["name"]: s["args"] for s in thor["initContainers"]}
tri = '--attention-config={"backend": "TRITON_ATTN"}'
ok(tri in by["embedder"] and tri in by["reranker"], "thor: pooling roles on TRITON_ATTN")
ok("--enforce-eager" in by["reranker"], "thor: reranker eager")
ok(not any(a.startswith("--speculative-config") for a in by["cortex"]), "thor: MTP off on the cortex")
ok("--kv-cache-dtype=auto" in by["cortex"], "thor: fp8 KV cache off (auto) on the cortex")
ok("hand" not in by, "thor: infeasible hand not rendered")
ok(thor["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-Thor", "nvidia.com/gpu.compute.major": "11",
                            "nvidia.com/gpu.compute.minor": "0"}, "thor: selects Thor nodes only", thor["nodeSelector"])
spark = [d for d in load("overlay-spark") if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]
sby = {s["name"]: s["args"] for s in spark["initContainers"]}
ok(any(a.startswith("--speculative-config") for a in sby["cortex"]) and "--kv-cache-dtype=fp8" in sby["cortex"],
   "spark: MTP on and fp8 KV (the traits are thor's, not a blanket change)")

# base: the kustomize base selects no node; the base profile only where asked.
b = [d for d in load("base") if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]
ok("nodeSelector" not in b and "affinity" not in b and not b.get("initContainers"),
   "base/: no node selection and no engine")
bp = [d for d in load("overlay-base") if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]
ok(bp.get("nodeSelector") == {"lobes/profile": "base"} and "affinity" not in bp,
   "the base profile runs only on nodes labelled lobes/profile=base", bp.get("nodeSelector"))
