# tests/coverage.mk — make coverage and make mutate (docs/testing.md).
#
# make coverage: a gcc --coverage build in build-cov/, the tests of make
# test run over it one file at a time (tools/coverage.sh): unit, case and
# the Docker integration tests (these skip themselves where no private
# dockerd can start, as in make test; they take fixed loopback ports, so no
# other integration run may share the box with them), and
# gcovr's line and branch report of src/lib/ under build-cov/coverage/. It
# also writes build-cov/covmap.json, which test runs which line, that
# make mutate reads.
#
# make mutate: tools/mutate.sh plants one mutant at a time in a copy of the
# tree (build-mut/), rebuilds it and runs only the tests that reach the
# mutated line. MUTATE_FILES, MUTATE_SEED, MUTATE_PER_FILE choose the run;
# MUTATE_MINUTES (0: none) bounds it: no mutant starts after that long.
COV_BUILD := build-cov
COV_TESTS ?= $(COV_BUILD)/tests/*.t tests/cases/*.t tests/integration/*.t
MUTATE_FILES ?= src/lib/gateway/route.c src/lib/gateway/config.c src/lib/plan/resolve.c \
	src/lib/plan/predicate.c src/lib/render/compose.c src/lib/render/args.c \
	src/lib/deploy/commit.c src/lib/util/secret.c src/lib/triage/triage_result.c \
	src/lib/runtime/bringup.c src/lib/runtime/memory.c src/lib/probe/probe_judge.c \
	src/lib/util/fs.c
MUTATE_SEED ?= 24
MUTATE_PER_FILE ?= 8
MUTATE_MINUTES ?= 0

.PHONY: coverage mutate
coverage mutate: DEB_PKGS += gcovr bc
coverage: deps
	@$(MAKE) --no-print-directory BUILD=$(COV_BUILD) CFLAGS="-O0 -g --coverage" LDFLAGS=--coverage \
		all unit test-helpers
	tools/coverage.sh $(COV_BUILD) $(COV_TESTS)

mutate: deps
	@[ -f $(COV_BUILD)/covmap.json ] || { echo "make mutate: run make coverage first"; exit 2; }
	nice -n 10 tools/mutate.sh --seed $(MUTATE_SEED) --per-file $(MUTATE_PER_FILE) --minutes $(MUTATE_MINUTES) $(MUTATE_FILES)
