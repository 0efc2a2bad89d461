#!/usr/bin/env python3
"""mutate.py — a small mutation runner for lobes' C sources (make mutate).

No C mutation tool is packaged in Debian, so this is one: it plants one
single-line bug (a mutant) at a time in a COPY of the tree (build-mut/tree,
never the working tree), rebuilds the copy, and runs the tests that reach the
mutated line (build-cov/covmap.json, written by make coverage), cheapest
first, stopping at the first failure. Each mutant ends as

  killed        a test failed (or ran past its time bound)
  survived      every test that reaches the line passed
  uncovered     no test reaches the line (a survivor: counted as one)
  not-compiled  the copy does not build with it (left out of the score)
  equivalent    listed in tools/mutants/equivalent.txt with its reason
                (not run, left out of the score)

score = killed / (killed + survived + uncovered), per file and overall.

Operators, applied on one line at a time (comments, strings and
preprocessor lines are left alone; a condition split over lines is not
split by drop-cond):
  cmp-flip     == <-> !=, < -> >=, > -> <=, <= -> >, >= -> <
  boundary     < <-> <=, > <-> >=
  drop-cond    one operand of a && / || chain dropped (inside one pair of
               parentheses on the line)
  early-return the condition of an `if` whose body is return/goto/break/
               continue replaced by 0 (the early exit never taken)
  const        0 -> 1, 1 -> 0, n -> n+1 (decimal literals, not in [N] or
               case labels), true <-> false

The mutants of each file are enumerated in a fixed order, shuffled with
random.Random(f"{seed}:{file}") and the first --per-file are run, together
with every mutant of tools/mutants/regress.txt (planted bugs that a test
must keep killing). The list run is written to build-mut/mutants.txt, the
outcome to build-mut/results.tsv and build-mut/report.txt; the same seed,
files and sources give the same mutants.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = os.path.join(ROOT, "build-mut")
TREE = os.path.join(OUT, "tree")
COVMAP = os.environ.get("MUTATE_COVMAP", os.path.join(ROOT, "build-cov", "covmap.json"))
EQUIV = os.path.join(ROOT, "tools", "mutants", "equivalent.txt")
REGRESS = os.path.join(ROOT, "tools", "mutants", "regress.txt")
# The copy is built as make builds it, plus UBSan's array-bounds check: a
# loop bound moved one past a fixed array (i <= ROLE__COUNT) then fails
# the test that reaches it instead of reading a neighbour silently.
MAKEVARS = ["CFLAGS=-O2 -g -fsanitize=bounds -fno-sanitize-recover=bounds", "LDFLAGS=-fsanitize=bounds"]


# ---------------------------------------------------------------- sources

def masked_lines(text):
    """Each line with comments, string and char literals blanked (same
    length), and whether it is code a mutant may touch."""
    out, in_block = [], False
    for line in text.split("\n"):
        m, i, n = [], 0, len(line)
        while i < n:
            if in_block:
                j = line.find("*/", i)
                if j < 0:
                    m.append(" " * (n - i))
                    i = n
                else:
                    m.append(" " * (j + 2 - i))
                    i, in_block = j + 2, False
                continue
            c = line[i]
            if line.startswith("/*", i):
                in_block = True
                m.append("  ")
                i += 2
            elif line.startswith("//", i):
                m.append(" " * (n - i))
                i = n
            elif c in "\"'":
                j = i + 1
                while j < n and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                m.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
                i = j + 1
            else:
                m.append(c)
                i += 1
        s = "".join(m)[:n]
        code = s.strip() and not s.lstrip().startswith("#") and "static_assert" not in s
        out.append((s, bool(code)))
    return out


def paren_groups(s):
    """(open, close) index pairs of parentheses balanced on the line."""
    stack, pairs = [], []
    for i, c in enumerate(s):
        if c == "(":
            stack.append(i)
        elif c == ")" and stack:
            pairs.append((stack.pop(), i))
    return pairs


def drop_cond(line, s, g0, g1):
    """Mutants dropping one operand of the top-level && / || chain in
    s[g0:g1] (the operand and the operator beside it)."""
    depth, cuts = 0, []
    for i in range(g0, g1):
        ch = s[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and s.startswith(("&&", "||"), i) and s[i - 1] not in "&|":
            cuts.append(i)
    if not cuts:
        return []
    # skip the blanks after g0 so a dropped first operand leaves no gap
    while g0 < g1 and s[g0] == " ":
        g0 += 1
    res = []
    for k in range(len(cuts) + 1):
        if k == 0:
            a, b = g0, cuts[0] + 2
            while b < g1 and s[b] == " ":
                b += 1
        else:
            a = cuts[k - 1]
            while a > g0 and s[a - 1] == " ":
                a -= 1
            b = cuts[k] if k < len(cuts) else g1
            while b < g1 and k < len(cuts) and s[b - 1] == " ":
                b -= 1
            if k == len(cuts):
                b = g1
                while b > a and s[b - 1] == " ":
                    b -= 1
        res.append(("drop-cond", a, line[:a] + line[b:]))
    return res


def gen_line(line, s):
    """(op, col, new_line) mutants of one line; s is the masked line."""
    res = []
    # comparisons (not ->, <<, >>, <<=, >>=)
    for m in re.finditer(r"(?<![<>=!\-])(==|!=|<=|>=|<|>)(?![<>=])", s):
        op, a, b = m.group(1), m.start(), m.end()
        if op in ("<", ">"):
            # skip template-ish / include / arrow contexts
            if s[max(0, a - 1)] == "-" or (op == ">" and s[a - 1:a] == "-"):
                continue
        flip = {"==": "!=", "!=": "==", "<": ">=", ">": "<=", "<=": ">", ">=": "<"}[op]
        res.append(("cmp-flip", a, line[:a] + flip + line[b:]))
        if op in ("<", "<=", ">", ">="):
            bnd = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}[op]
            res.append(("boundary", a, line[:a] + bnd + line[b:]))
    # dropped conditions
    for o, c in paren_groups(s):
        # segments split at top-level ; and , (a for header, arguments)
        depth, seg, segs = 0, o + 1, []
        for i in range(o + 1, c):
            ch = s[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif depth == 0 and ch in ";,":
                segs.append((seg, i))
                seg = i + 1
        segs.append((seg, c))
        for g0, g1 in segs:
            res += drop_cond(line, s, g0, g1)
    # early exits never taken
    m = re.match(r"^(\s*(?:\}\s*else\s+)?if\s*)\(", s)
    if m:
        o = m.end() - 1
        close = [c for (op_, c) in paren_groups(s) if op_ == o]
        if close:
            rest = s[close[0] + 1:].strip()
            nxt = getattr(gen_line, "next_code", "")
            body = rest if rest else nxt
            if re.match(r"^(return\b|goto\b|break\b|continue\b)", body):
                res.append(("early-return", o, line[:o + 1] + "0" + line[close[0]:]))
    # constants
    for m in re.finditer(r"(?<![\w.])(\d+)([uUlL]*)(?![\w.])", s):
        a, b = m.start(1), m.end(1)
        if s[max(0, a - 1)] == "[" and s[b + len(m.group(2)):b + len(m.group(2)) + 1] == "]":
            continue
        if re.match(r"^\s*case\b", s):
            continue
        lit = m.group(1)
        if len(lit) > 1 and lit.startswith("0"):  # octal: a mode, a mask
            nv = "0" + format(int(lit, 8) + 1, "o")
        else:
            v = int(lit)
            nv = str(1 if v == 0 else 0 if v == 1 else v + 1)
        res.append(("const", a, line[:a] + nv + line[b:]))
    for m in re.finditer(r"\b(true|false)\b", s):
        nv = "false" if m.group(1) == "true" else "true"
        res.append(("const", m.start(), line[:m.start()] + nv + line[m.end():]))
    return res


def enumerate_mutants(path):
    with open(os.path.join(ROOT, path)) as fh:
        text = fh.read()
    lines = text.split("\n")
    ml = masked_lines(text)
    muts = []
    for i, (s, code) in enumerate(ml):
        if not code:
            continue
        nxt = ""
        for j in range(i + 1, min(i + 4, len(ml))):
            if ml[j][1]:
                nxt = ml[j][0].strip()
                break
        gen_line.next_code = nxt
        seen = set()
        for op, col, new in gen_line(lines[i], s):
            if new == lines[i] or new in seen:
                continue
            seen.add(new)
            muts.append({"file": path, "line": i + 1, "col": col + 1, "op": op,
                         "from": lines[i].strip(), "to": new.strip(), "new": new})
    return muts


# ---------------------------------------------------------- hand-made lists

def read_blocks(path):
    """Blocks of `key: value` lines separated by blank lines; # comments."""
    blocks, cur = [], {}
    if not os.path.exists(path):
        return blocks
    with open(path) as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    blocks.append(cur)
                cur = {}
                continue
            k, sep, v = line.partition(":")
            if not sep:
                sys.exit(f"{path}:{n}: expected 'key: value'")
            if not cur:
                cur["_line"] = n
            cur[k.strip()] = v.strip()
    if cur:
        blocks.append(cur)
    for b in blocks:
        for k in ("file", "from", "to"):
            if k not in b:
                sys.exit(f"{path}:{b['_line']}: missing '{k}:'")
    return blocks


def regress_mutants(blocks, files):
    muts = []
    for b in blocks:
        if files and b["file"] not in files:
            continue
        with open(os.path.join(ROOT, b["file"])) as fh:
            lines = fh.read().split("\n")
        lo = 0
        if "after" in b:  # the first match after the one line holding `after`
            anchor = [i for i, l in enumerate(lines) if l.strip() == b["after"] or b["after"] in l]
            if len(anchor) != 1:
                sys.exit(f"{REGRESS}:{b['_line']}: 'after: {b['after']}' found {len(anchor)} times")
            lo = anchor[0] + 1
        hits = [i for i, l in enumerate(lines) if i >= lo and l.strip() == b["from"]]
        if not hits:
            hits = [i for i, l in enumerate(lines) if i >= lo and b["from"] in l]
        if "after" in b:
            hits = hits[:1]
        if len(hits) != 1:
            sys.exit(f"{REGRESS}:{b['_line']}: '{b['from']}' found {len(hits)} times in {b['file']} (want once)")
        i = hits[0]
        new = lines[i].replace(b["from"], b["to"], 1)
        muts.append({"file": b["file"], "line": i + 1, "col": lines[i].find(b["from"]) + 1,
                     "op": "regress", "from": lines[i].strip(), "to": new.strip(), "new": new,
                     "why": b.get("kills", b.get("why", ""))})
    return muts


def equivalent_reason(m, blocks):
    for b in blocks:
        if b["file"] != m["file"] or b["from"] != m["from"] or b["to"] != m["to"]:
            continue
        if "after" in b:
            # a `from` that recurs in the file: only its first match below
            # the one line holding `after` is this entry's mutant
            with open(os.path.join(ROOT, b["file"])) as fh:
                lines = fh.read().split("\n")
            anchor = [i for i, l in enumerate(lines) if b["after"] in l]
            below = [i for i, l in enumerate(lines)
                     if len(anchor) == 1 and i > anchor[0] and l.strip() == b["from"]]
            if not below or below[0] + 1 != m["line"]:
                continue
        return b.get("why", "")
    return None


# ---------------------------------------------------------------- running

def sh(cmd, cwd, timeout=None, env=None):
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, start_new_session=True)
        return r.returncode, r.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode(errors="replace")


def sync_tree():
    """Copy the working tree's files (tracked and not ignored) into TREE,
    writing only what differs so the copy's build stays incremental."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           stdout=subprocess.PIPE, check=True).stdout.decode().split("\0")
    for f in files:
        src = os.path.join(ROOT, f)
        if not f or not os.path.isfile(src) or os.path.islink(src):
            continue
        dst = os.path.join(TREE, f)
        with open(src, "rb") as fh:
            data = fh.read()
        try:
            with open(dst, "rb") as fh:
                if fh.read() == data:
                    continue
        except FileNotFoundError:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as fh:
            fh.write(data)
        os.chmod(dst, os.stat(src).st_mode & 0o7777)


def write_file(path, text):
    with open(path, "w") as fh:
        fh.write(text)
    t = time.time_ns() + 1_000_000
    os.utime(path, ns=(t, t))


def tests_for(m, cmap):
    lines = cmap["lines"].get(m["file"], {})
    if str(m["line"]) in cmap["instrumented"].get(m["file"], ()):
        names = lines.get(str(m["line"]), [])
    else:
        # a line with no code of its own in gcov's eyes (a table entry, an
        # initializer): every test that runs any line of the file
        names = [t for ts in lines.values() for t in ts]
    # a test under tests/integration/ is left out: it builds the stand-in
    # image and starts a fleet, which the mutation tree cannot do (it fails
    # there with no mutant planted, so every kill it claimed was void)
    ok = [t for t in sorted(set(names))
          if cmap["tests"].get(t, {}).get("rc") == 0 and not t.startswith("tests/integration/")]
    ok = sorted(ok, key=lambda t: (cmap["tests"][t]["secs"], t))
    # a regress entry names the test that kills it: that one first, even
    # where the map predates it
    named = m.get("why", "").split(" ")[0]
    if named.endswith(".t"):
        named = named if named.startswith("test_") else "tests/cases/" + named
        cmap["tests"].setdefault(named, {"rc": 0, "secs": 30})
        ok = [named] + [t for t in ok if t != named]
    return ok


def run_mutant(m, cmap, env, log):
    tests = tests_for(m, cmap)
    if not tests:
        return "uncovered", ""
    path = os.path.join(TREE, m["file"])
    with open(path) as fh:
        orig = fh.read()
    lines = orig.split("\n")
    lines[m["line"] - 1] = m["new"]
    write_file(path, "\n".join(lines))
    try:
        # lobes, the unit tests to run, and the helpers that link the
        # library only when a test uses them (fuzz.t: the replay programs)
        units = ["build/tests/" + t for t in tests if not t.startswith("tests/")]
        helpers = ["test-helpers"] if "tests/cases/fuzz.t" in tests else []
        rc, out = sh(["make", "-j2", "--no-print-directory"] + MAKEVARS + ["build/lobes"] + units + helpers,
                     TREE)
        if rc != 0:
            log.write(out[-3000:])
            return "not-compiled", ""
        for t in tests:
            path_t = t if t.startswith("tests/") else "build/tests/" + t
            # generous: the map's times come from a -O0 --coverage build,
            # the box may be busier now; a hang still ends
            bound = int(6 * cmap["tests"][t]["secs"] + 60)
            rc, out = sh(["prove", "--exec", "env", path_t], TREE, timeout=bound, env=env)
            if rc == 124:
                return "killed", t + " (time bound)"
            if rc != 0:
                return "killed", t
        return "survived", ",".join(tests)
    finally:
        write_file(path, orig)


def mid(m):
    return f"{m['file']}:{m['line']}:{m['col']}:{m['op']}"


def main():
    ap = argparse.ArgumentParser(description="lobes mutation runner (docs/testing.md)")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--per-file", type=int, default=12, help="mutants drawn per file (0: all)")
    ap.add_argument("--list", action="store_true", help="write the mutant list only")
    ap.add_argument("--only", action="append", default=[], help="run only mutants whose id starts so")
    ap.add_argument("--regress-only", action="store_true", help="run only tools/mutants/regress.txt")
    ap.add_argument("--minutes", type=float, default=0,
                    help="start no mutant after this many minutes (the rest: not run)")
    a = ap.parse_args()

    equiv = read_blocks(EQUIV)
    chosen = []
    if not a.regress_only:
        per = []
        for f in a.files:
            allm = enumerate_mutants(f)
            random.Random(f"{a.seed}:{f}").shuffle(allm)
            per.append(allm if a.per_file == 0 else allm[:a.per_file])
        # round robin over the files: a run cut short by --minutes has
        # drawn from every file alike
        for k in range(max((len(x) for x in per), default=0)):
            chosen += [x[k] for x in per if k < len(x)]
    chosen += regress_mutants(read_blocks(REGRESS), set(a.files) if a.files and not a.regress_only else None)
    if a.only:
        chosen = [m for m in chosen if any(mid(m).startswith(o) for o in a.only)]
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "mutants.txt"), "w") as fh:
        fh.write(f"# seed {a.seed}, per-file {a.per_file}, files: {' '.join(a.files)}\n")
        for m in chosen:
            fh.write(f"{mid(m)}\n  from: {m['from']}\n  to:   {m['to']}\n")
    print(f"mutate: {len(chosen)} mutants (seed {a.seed}), list in build-mut/mutants.txt", flush=True)
    if a.list:
        return 0

    with open(COVMAP) as fh:
        cmap = json.load(fh)
    with open(COVMAP.replace("covmap.json", "covmap-counts.json")) as fh:
        cmap["instrumented"] = {f: set(ls) for f, ls in json.load(fh).items()}
    os.makedirs(TREE, exist_ok=True)
    sync_tree()
    rc, out = sh(["make", "-j2", "--no-print-directory"] + MAKEVARS + ["all", "unit", "test-helpers"], TREE)
    if rc != 0:
        sys.stderr.write(out[-3000:])
        sys.exit("mutate: the unmutated copy does not build")
    env = dict(os.environ, LOBES_BIN=os.path.join(TREE, "build/lobes"), LOBES_SRC=TREE,
               LOBES_BUILD=os.path.join(TREE, "build"), CMOCKA_MESSAGE_OUTPUT="TAP",
               NO_COLOR="1", LOBES_COMPOSE_CACHE="0")
    results = []
    start = time.time()
    with open(os.path.join(OUT, "build.log"), "w") as log, \
         open(os.path.join(OUT, "results.tsv"), "w") as tsv:
        tsv.write("id\top\tstatus\tby\tfrom\tto\n")
        for n, m in enumerate(chosen, 1):
            why = equivalent_reason(m, equiv)
            if a.minutes and time.time() - start > a.minutes * 60:
                st, by = "not-run", "the --minutes bound was reached"
            elif why is not None:
                st, by = "equivalent", why
            else:
                st, by = run_mutant(m, cmap, env, log)
            results.append((m, st, by))
            tsv.write(f"{mid(m)}\t{m['op']}\t{st}\t{by}\t{m['from']}\t{m['to']}\n")
            tsv.flush()
            print(f"[{n}/{len(chosen)}] {st:12} {mid(m)}  {by[:60]}", flush=True)
            report(results, a, time.time() - start, quiet=n < len(chosen))
    return 0


def report(results, a, secs, quiet=False):
    per = {}
    for m, st, _ in results:
        d = per.setdefault(m["file"], {})
        d[st] = d.get(st, 0) + 1
    lines = [f"mutate: seed {a.seed}, {a.per_file or 'all'} per file, {len(results)} mutants, "
             f"{secs / 60:.1f} min, {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}",
             f"{'file':40} {'killed':>6} {'surv':>5} {'uncov':>5} {'n/c':>4} {'equiv':>5} {'score':>6}"]
    tot = {}
    for f in sorted(per):
        d = per[f]
        for k, v in d.items():
            tot[k] = tot.get(k, 0) + v
        lines.append(row(f, d))
    lines.append(row("overall", tot))
    lines.append("")
    lines.append("survivors:")
    for m, st, by in results:
        if st in ("survived", "uncovered"):
            lines.append(f"  {mid(m)} [{st}]\n    from: {m['from']}\n    to:   {m['to']}")
    notrun = sum(1 for _, st, _ in results if st == "not-run")
    if notrun:
        lines.append(f"not run (--minutes {a.minutes:g} reached): {notrun}")
    regress = [(m, st) for m, st, _ in results if m["op"] == "regress"]
    if regress:
        lines.append("regression mutants (tools/mutants/regress.txt):")
        for m, st in regress:
            lines.append(f"  {st:10} {mid(m)}  {m.get('why', '')}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(OUT, "report.txt"), "w") as fh:
        fh.write(text)
    if not quiet:
        print(text)


def row(name, d):
    k, s, u = d.get("killed", 0), d.get("survived", 0), d.get("uncovered", 0)
    score = f"{100 * k / (k + s + u):.0f}%" if k + s + u else "-"
    return f"{name:40} {k:6} {s:5} {u:5} {d.get('not-compiled', 0):4} {d.get('equivalent', 0):5} {score:>6}"


if __name__ == "__main__":
    sys.exit(main())
