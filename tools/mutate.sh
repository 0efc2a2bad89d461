#!/bin/sh
# tools/mutate.sh [--seed N] [--per-file N] [--only ID] [--list] FILE... —
# the mutation runner (make mutate; docs/testing.md). It plants one mutant
# at a time in a copy of the tree under build-mut/ (the working tree is never
# touched), rebuilds the copy and runs the tests that reach the mutated line
# according to build-cov/covmap.json (make coverage). tools/mutate.py holds
# the operators and the bookkeeping; results in build-mut/report.txt.
set -eu
cd "$(dirname "$0")/.."
[ -f build-cov/covmap.json ] || { echo "mutate: build-cov/covmap.json is missing: run make coverage first" >&2; exit 2; }
exec python3 tools/mutate.py "$@"
