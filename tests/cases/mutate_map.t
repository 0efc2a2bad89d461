#!/bin/bash
# mutate_map.t — which tests make mutate runs against a mutant
# (tools/mutate.py tests_for): the ones that reach its line and passed in
# the coverage map, cheapest first, never an integration test (the
# mutation tree cannot start a fleet, so such a test fails there unmutated
# and its "kill" would be void), a regress entry's named test first.
. "${LOBES_SRC:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to run tools/mutate.py"
out=$(cd "$SRC/tools" && PYTHONDONTWRITEBYTECODE=1 python3 - <<'P' 2>&1
import json, mutate
cmap = {
    "lines": {"src/lib/a.c": {"10": ["test_b.t", "tests/cases/c.t", "tests/integration/fleet_probes.t", "test_fail.t"],
                              "20": ["test_b.t"]}},
    "instrumented": {"src/lib/a.c": ["10", "20"]},
    "tests": {"test_b.t": {"rc": 0, "secs": 5}, "tests/cases/c.t": {"rc": 0, "secs": 2},
              "tests/integration/fleet_probes.t": {"rc": 0, "secs": 1},
              "test_fail.t": {"rc": 1, "secs": 1}},
}
print(json.dumps(mutate.tests_for({"file": "src/lib/a.c", "line": 10}, cmap)))
# a line gcov does not instrument: every test of the file
print(json.dumps(mutate.tests_for({"file": "src/lib/a.c", "line": 15}, cmap)))
print(json.dumps(mutate.tests_for({"file": "src/lib/a.c", "line": 20, "why": "test_new.t kills it"}, cmap)))
P
)
line() { printf '%s\n' "$out" | sed -n "${1}p"; }
is "$(line 1)" '["tests/cases/c.t", "test_b.t"]' \
	"a covered line: passing tests cheapest first, no integration test, no failing one"
is "$(line 2)" '["tests/cases/c.t", "test_b.t"]' "an uninstrumented line: every passing test of the file, still no integration test"
is "$(line 3)" '["test_new.t", "test_b.t"]' "a regress entry's named test runs first"
done_testing
