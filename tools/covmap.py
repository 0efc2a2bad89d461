#!/usr/bin/env python3
"""covmap.py — which test runs which line of src/lib, from gcov's counts.

`make coverage` runs the tests one file at a time over a --coverage build.
gcov's counts add up across runs, so after each test file this script reads
the counts of every src/lib/*.c (gcov --json-format --stdout) and records
the lines whose count grew as lines that test ran. The map, BUILD/covmap.json,
is what tools/mutate.sh reads to run each mutant against only the tests that
reach its line:

  {"tests": {"tests/cases/init.t": {"rc": 0, "secs": 3.2}, ...},
   "lines": {"src/lib/plan/predicate.c": {"93": ["tests/cases/init.t", ...]}}}

Unit tests are named by their file (test_gateway.t), not their build path,
so a mutation build in another directory finds them.

  covmap.py reset BUILD
  covmap.py snap BUILD TEST RC SECONDS
"""
import glob
import json
import os
import subprocess
import sys


def counts(build):
    """{source: {line: count}} for every src/lib/*.c with a .gcda."""
    gcda = sorted(glob.glob(os.path.join(build, "src/lib/**/*.gcda"), recursive=True))
    out = {}
    # gcov prints one JSON document per input on its own line; a few dozen
    # inputs per call keeps the command line short.
    for i in range(0, len(gcda), 40):
        res = subprocess.run(["gcov", "--json-format", "--stdout"] + gcda[i:i + 40],
                             capture_output=True, text=True, check=False)
        for doc in res.stdout.splitlines():
            doc = doc.strip()
            if not doc.startswith("{"):
                continue
            for f in json.loads(doc).get("files", []):
                name = os.path.normpath(f["file"])
                if not (name.startswith("src/lib/") and name.endswith(".c")):
                    continue
                lines = out.setdefault(name, {})
                for ln in f["lines"]:
                    k = str(ln["line_number"])
                    lines[k] = lines.get(k, 0) + ln["count"]
    return out


def load(path, empty):
    try:
        with open(path) as fh:
            return json.load(fh)
    except FileNotFoundError:
        return empty


def save(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(obj, fh, sort_keys=True)
    os.replace(tmp, path)


def main(argv):
    if len(argv) >= 2 and argv[0] == "reset":
        build = argv[1]
        for p in ("covmap.json", "covmap-counts.json"):
            if os.path.exists(os.path.join(build, p)):
                os.unlink(os.path.join(build, p))
        return 0
    if len(argv) != 5 or argv[0] != "snap":
        sys.stderr.write(__doc__)
        return 2
    build, test, rc, secs = argv[1], argv[2], int(argv[3]), float(argv[4])
    if test.startswith(build.rstrip("/") + "/tests/"):
        test = os.path.basename(test)
    mpath = os.path.join(build, "covmap.json")
    cpath = os.path.join(build, "covmap-counts.json")
    cmap = load(mpath, {"tests": {}, "lines": {}})
    prev = load(cpath, {})
    now = counts(build)
    for src, lines in now.items():
        before = prev.get(src, {})
        for ln, c in lines.items():
            if c > before.get(ln, 0):
                cmap["lines"].setdefault(src, {}).setdefault(ln, []).append(test)
    cmap["tests"][test] = {"rc": rc, "secs": round(secs, 2)}
    save(mpath, cmap)
    save(cpath, now)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
