#!/usr/bin/env python3
"""vllm-metrics.py — list the Prometheus metric families a vLLM V1 engine
registers, read statically from vLLM's source at one commit, in the format of
data/vllm/<commit>/metrics.txt.

    tools/vllm-metrics.py GIT_DIR COMMIT 'VERSION LINE' > data/vllm/<short>/metrics.txt

Read: vllm/v1/metrics/loggers.py (PrometheusStatLogger), vllm/v1/spec_decode/
metrics.py (SpecDecodingProm) and vllm/v1/metrics/perf.py (PerfMetricsProm):
every metric constructor called with name="vllm:..." (its class says the type),
the (name, documentation) tuples SpecDecodingProm feeds to its counter class,
and the `name = "vllm:..."` of log_metrics_info (an info metric emulated by a
gauge). The condition column is the innermost `if` around the constructor in
the source, and the `if X: return` statements before it in its function, as
`not (X)` ("always" when none). The exposed column is what prometheus_client
writes: a counter family NAME (a trailing _total is stripped from the family)
is exposed as NAME_total, a histogram as NAME_bucket/_sum/_count.
KV-transfer connector metrics (vllm/distributed/kv_transfer/, registered only
with --kv-transfer-config) are not listed.
"""
import ast
import subprocess
import sys

FILES = ["vllm/v1/metrics/loggers.py", "vllm/v1/spec_decode/metrics.py", "vllm/v1/metrics/perf.py"]


def show(repo, commit, path):
    return subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"],
                          capture_output=True, text=True, check=True).stdout


def kind_of(func):
    f = ast.unparse(func).lower()
    for k in ("gauge", "counter", "histogram"):
        if k in f:
            return k
    return None


def early_return(stmt):
    """`if X: return` (nothing else): what follows it runs under not X."""
    return (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1
            and isinstance(stmt.body[0], ast.Return))


def walk(node, conds, out, path):
    for child in ast.iter_child_nodes(node):
        c = conds
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and child in node.body:
            for prev in node.body[:node.body.index(child)]:
                if early_return(prev):
                    t = prev.test
                    c = c + [ast.unparse(t.operand) if isinstance(t, ast.UnaryOp)
                             and isinstance(t.op, ast.Not) else "not (" + ast.unparse(t) + ")"]
        if isinstance(node, ast.If) and child in node.body:
            c = conds + [ast.unparse(node.test)]
        elif isinstance(node, ast.If) and child in node.orelse:
            c = conds + ["not (" + ast.unparse(node.test) + ")"]
        if isinstance(child, ast.Call):
            k = kind_of(child.func)
            for kw in child.keywords:
                if (k and kw.arg == "name" and isinstance(kw.value, ast.Constant)
                        and str(kw.value.value).startswith("vllm:")):
                    out.append((kw.value.value, k, c, f"{path}:{child.lineno}"))
        if (isinstance(child, ast.Assign) and isinstance(child.value, ast.Constant)
                and str(child.value.value).startswith("vllm:")
                and [ast.unparse(t) for t in child.targets] == ["name"]):
            # log_metrics_info: an info metric emulated by a gauge set to 1
            out.append((child.value.value, "gauge", c, f"{path}:{child.lineno}"))
        if (isinstance(child, ast.Tuple) and len(child.elts) == 2
                and isinstance(child.elts[0], ast.Constant)
                and str(child.elts[0].value).startswith("vllm:")):
            out.append((child.elts[0].value, "counter", c, f"{path}:{child.lineno}"))
        walk(child, c, out, path)


def exposed(name, kind):
    if kind == "counter":
        base = name[:-6] if name.endswith("_total") else name
        return base, base + "_total"
    if kind == "histogram":
        return name, f"{name}_bucket {name}_sum {name}_count"
    return name, name


def main():
    repo, commit, version = sys.argv[1:4]
    out = []
    for p in FILES:
        walk(ast.parse(show(repo, commit, p)), [], out, p)
    print(f"# vLLM {version} commit {commit}")
    print("# Prometheus metric families the V1 engine registers, read statically (tools/vllm-metrics.py) from")
    print("# " + ", ".join(FILES) + ".")
    print("# FAMILY <tab> TYPE <tab> EXPOSED SAMPLE NAMES <tab> CONDITION (the `if`s around it in the source, early returns included) <tab> SOURCE")
    print("# Labels: engine, model_name (+ per-metric ones). KV-transfer connector metrics are not listed.")
    seen = set()
    for name, kind, conds, src in out:
        fam, exp = exposed(name, kind)
        if fam in seen:
            continue
        seen.add(fam)
        cond = " and ".join(conds) if conds else "always"
        print(f"{fam}\t{kind}\t{exp}\t{cond}\t{src}")


main()
