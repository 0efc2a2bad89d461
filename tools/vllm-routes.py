#!/usr/bin/env python3
"""vllm-routes.py — list the HTTP routes vLLM's OpenAI-compatible server
registers, read statically from vLLM's source at one commit, in the format
of data/vllm/<commit>/routes.txt.

    tools/vllm-routes.py GIT_DIR COMMIT 'VERSION LINE' > data/vllm/<short>/routes.txt

Read: every module under vllm/entrypoints/ (tests excluded). A route is a
decorator `@X.get/post/put/delete/websocket/api_route(PATH, ...)` on a
function. When it is registered is found by following the imports that
attach routers: a module M's condition is the `if`s (and the `if X: return`
before them in their function) around each `from M import router|attach_router|
register_*` in another entrypoints module, joined with the condition of that
module in turn; several such imports are joined with `or`. A module nothing
imports that way is registered always (the server's own files:
vllm/entrypoints/openai/api_server.py and the launcher's routers.py).
The task column sums the condition up for the gateway:
  generate      "generate" in supported_tasks
  transcription "transcription" in supported_tasks
  embed/classify/score/pooling  the pooling tasks (score: enable_scoring_api,
                pooling: any pooling task / get_pooling_task)
  dev           VLLM_SERVER_DEV_MODE or another opt-in flag
  always        no condition
Several tasks are joined with `|` (served when any of them is).
"""
import ast
import subprocess
import sys

ROOT = "vllm/entrypoints/"
METHODS = {"get", "post", "put", "delete", "patch", "websocket", "api_route"}


def git(repo, *a):
    return subprocess.run(["git", "-C", repo, *a], capture_output=True, text=True,
                          check=True).stdout


def module_of(path):
    m = path[:-3].replace("/", ".")
    return m[:-9] if m.endswith(".__init__") else m


def resolve(importer, node):
    """The absolute module of an ImportFrom in module importer (a path)."""
    if not node.level:
        return node.module or ""
    base = module_of(importer).split(".")
    if not importer.endswith("__init__.py"):
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def early_return(stmt):
    return (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1
            and isinstance(stmt.body[0], ast.Return))


def neg(t):
    if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
        return ast.unparse(t.operand)
    return "not (" + ast.unparse(t) + ")"


def walk(node, conds, fn):
    """Yield (child, conds) for every node, with the ifs around it."""
    for child in ast.iter_child_nodes(node):
        c = conds
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and child in node.body:
            for prev in node.body[:node.body.index(child)]:
                if early_return(prev):
                    c = c + [neg(prev.test)]
        if isinstance(node, ast.If) and child in node.body:
            c = conds + [ast.unparse(node.test)]
        elif isinstance(node, ast.If) and child in node.orelse:
            c = conds + ["not (" + ast.unparse(node.test) + ")"]
        yield child, c
        yield from walk(child, c, fn)


def attaches(names):
    return any(n.name in ("router", "attach_router") or n.name.startswith("register_")
               for n in names)


def task_of(cond):
    if cond == "always":
        return "always"
    found = []
    for key, task in (("'generate'", "generate"), ("'transcription'", "transcription"),
                      ("'embed'", "embed"), ("'classify'", "classify"),
                      ("enable_scoring_api", "score"), ("pooling_task", "pooling"),
                      ("POOLING_TASKS", "pooling")):
        if key in cond and task not in found:
            found.append(task)
    if "VLLM_SERVER_DEV_MODE" in cond or not found:
        return "dev" if "VLLM_SERVER_DEV_MODE" in cond else "other"
    # the innermost task wins over the outer "any pooling task"
    if len(found) > 1 and "pooling" in found:
        found.remove("pooling")
    return "|".join(found)


def main():
    repo, commit, version = sys.argv[1:4]
    files = [p for p in git(repo, "ls-tree", "-r", "--name-only", commit, ROOT).split()
             if p.endswith(".py") and "/tests/" not in p]
    trees = {p: ast.parse(git(repo, "show", f"{commit}:{p}")) for p in files}
    by_mod = {module_of(p): p for p in files}
    funcs = {p: {n.name for n in t.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
             for p, t in trees.items()}

    def top_func(t, target):
        for n in t.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for x in ast.walk(n):
                    if x is target:
                        return n.name
        return None

    # import sites: (file, function or None for the module's router) -> [(file, function, conds)]
    sites = {}
    for p, t in trees.items():
        for node, conds in walk(t, [], None):
            if not (isinstance(node, ast.ImportFrom) and attaches(node.names)):
                continue
            m = resolve(p, node)
            for cand in (m, m + ".api_router"):
                if cand in by_mod and by_mod[cand] != p:
                    tp = by_mod[cand]
                    g = top_func(t, node)
                    for n in node.names:
                        key = (tp, n.name if n.name in funcs[tp] else None)
                        sites.setdefault(key, []).append((p, g, conds))
                    break

    memo = {}

    def cond_of(key, seen=()):
        if key in memo:
            return memo[key]
        # a module-level route: whatever attaches its module's router
        ks = [key] if key[1] else [k for k in sites if k[0] == key[0]]
        ks = [k for k in ks if k in sites]
        if not ks or key in seen:
            return []  # always
        alts = []
        for k in ks:
            for imp, g, conds in sites[k]:
                alts.append(cond_of((imp, g), seen + (key,)) + conds)
        if len(alts) == 1 or all(a == alts[0] for a in alts):
            memo[key] = alts[0]
        else:
            memo[key] = ["(" + " or ".join(" and ".join(a) or "True" for a in alts) + ")"]
        return memo[key]

    routes = []
    for p, t in trees.items():
        for node, _ in walk(t, [], None):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for d in node.decorator_list:
                if not (isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
                        and d.func.attr in METHODS):
                    continue
                path = d.args[0] if d.args else next(
                    (k.value for k in d.keywords if k.arg == "path"), None)
                if not (isinstance(path, ast.Constant) and isinstance(path.value, str)
                        and path.value.startswith("/")):
                    continue
                meth = d.func.attr.upper()
                if meth == "API_ROUTE":
                    ms = next((k.value for k in d.keywords if k.arg == "methods"), None)
                    meth = ",".join(e.value for e in ms.elts) if isinstance(ms, ast.List) else "GET"
                f = None if node in t.body else top_func(t, node)
                key = (p, f if f and f != "attach_router" else None)
                cond = " and ".join(cond_of(key)) or "always"
                routes.append((path.value, meth, task_of(cond), cond, f"{p}:{d.lineno}"))

    print(f"# vLLM {version} commit {commit}")
    print("# HTTP routes the OpenAI-compatible server registers, read statically (tools/vllm-routes.py)")
    print("# from every module under vllm/entrypoints/ (tests excluded).")
    print("# PATH <tab> METHOD <tab> TASK (generate, embed, classify, score, pooling, transcription,")
    print("# always, dev; a|b: any of them) <tab> CONDITION (the ifs around the router's attachment,")
    print("# followed through the modules that attach it) <tab> SOURCE")
    seen = set()
    for r in sorted(routes, key=lambda r: (r[0], r[1], r[4])):
        if (r[0], r[1], r[2]) in seen:
            continue
        seen.add((r[0], r[1], r[2]))
        print("\t".join(r))


main()
