#!/bin/sh
# tools/coverage.sh BUILD TEST... — run the tests one file at a time over a
# gcc --coverage build (make coverage builds it in build-cov/), record after
# each which lines of src/lib it ran (tools/covmap.py: BUILD/covmap.json, read
# by tools/mutate.sh), then write gcovr's reports of src/lib/:
#   BUILD/coverage/index.html   line and branch coverage, per file, per line
#   BUILD/coverage.txt          the per-file table (lines)
#   BUILD/coverage-branches.txt the per-file table (branches)
#   BUILD/coverage-summary.txt  the totals, the command and the date
# One file at a time costs nothing over prove's own order and gives the map.
# A failing test is reported (and the script fails) but the map is still
# written: a mutant is never run against a test that failed here.
set -u
build=$1; shift
[ -x "$build/lobes" ] || { echo "coverage: $build/lobes not built" >&2; exit 2; }
command -v gcovr >/dev/null || { echo "coverage: gcovr is not installed (Debian package gcovr)" >&2; exit 3; }
abs=$(cd "$build" && pwd)
find "$build" -name '*.gcda' -delete
# The sources and data as they are now: a rebase or edit during the run
# would have tests rebuild objects (install.t runs make) without
# --coverage and mix two trees in one report; the end checks this.
tree_id() { { git rev-parse HEAD; git diff HEAD -- src data tests; } 2>/dev/null | sha1sum; }
tree0=$(tree_id)
python3 tools/covmap.py reset "$build"
mkdir -p "$build/coverage-logs"
failed=""
for t in "$@"; do
	[ -e "$t" ] || continue
	log="$build/coverage-logs/$(basename "$t").log"
	start=$(date +%s.%N)
	env LOBES_BIN="$abs/lobes" LOBES_SRC="$(pwd)" LOBES_BUILD="$abs" \
		CMOCKA_MESSAGE_OUTPUT=TAP NO_COLOR=1 LOBES_COMPOSE_CACHE=0 \
		prove --exec env "$t" >"$log" 2>&1
	rc=$?
	end=$(date +%s.%N)
	secs=$(echo "$end - $start" | bc)
	printf '%-45s rc=%s %6.1fs\n' "$t" "$rc" "$secs"
	[ "$rc" = 0 ] || failed="$failed $t"
	python3 tools/covmap.py snap "$build" "$t" "$rc" "$secs" || exit 1
done
if [ "$(tree_id)" != "$tree0" ]; then
	echo "coverage: the sources changed during the run (a rebase or an edit): run it again" >&2
	exit 1
fi
mkdir -p "$build/coverage"
# --exclude-unreachable-branches drops the branches gcc reports on lines
# with no code of their own (a closing brace); every other branch counts.
# --gcov-ignore-parse-errors: gcov's counters are not atomic, and threads
# updating one at once (the gateway's) can leave it at -1, which gcovr 5
# refuses as an unknown line and stops; with it such a record is dropped
# with a warning (docs/testing.md: the third round).
gc="gcovr -r . --object-directory $build --filter src/lib/ --exclude-unreachable-branches --gcov-ignore-parse-errors"
$gc --html-details "$build/coverage/index.html" --txt "$build/coverage.txt" -s \
	>"$build/coverage-summary.txt" || exit 1
$gc -b --txt "$build/coverage-branches.txt" || exit 1
{
	echo "command: make coverage"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "commit: $(git rev-parse --short HEAD 2>/dev/null)"
} >>"$build/coverage-summary.txt"
cat "$build/coverage-summary.txt"
echo "report: $build/coverage/index.html"
if [ -n "$failed" ]; then
	echo "coverage: tests failed:$failed (logs in $build/coverage-logs/)" >&2
	exit 1
fi
