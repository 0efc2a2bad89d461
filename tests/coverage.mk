# tests/coverage.mk — make coverage and make mutate (docs/testing.md).
#
# make coverage: a gcc --coverage build in build-cov/, the unit and case
# tests run over it one file at a time (tools/coverage.sh: the Docker
# integration tests are left out, they need a dockerd and fixed ports), and
# gcovr's line and branch report of src/lib/ under build-cov/coverage/. It
# also writes build-cov/covmap.json, which test runs which line, that
# make mutate reads.
#
# make mutate: tools/mutate.sh plants one mutant at a time in a copy of the
# tree (build-mut/), rebuilds it and runs only the tests that reach the
# mutated line. MUTATE_FILES, MUTATE_SEED, MUTATE_PER_FILE choose the run.
COV_BUILD := build-cov
COV_TESTS ?= $(COV_BUILD)/tests/*.t tests/cases/*.t
MUTATE_FILES ?= src/lib/gateway/route.c src/lib/gateway/config.c src/lib/plan/resolve.c \
	src/lib/plan/predicate.c src/lib/render/compose.c src/lib/render/args.c \
	src/lib/deploy/commit.c src/lib/util/secret.c src/lib/triage/triage_result.c \
	src/lib/runtime/bringup.c src/lib/runtime/memory.c src/lib/probe/probe_judge.c \
	src/lib/util/fs.c
MUTATE_SEED ?= 24
MUTATE_PER_FILE ?= 8

.PHONY: coverage mutate
coverage mutate: DEB_PKGS += gcovr bc
coverage: deps
	@$(MAKE) --no-print-directory BUILD=$(COV_BUILD) CFLAGS="-O0 -g --coverage" LDFLAGS=--coverage \
		all unit test-helpers
	tools/coverage.sh $(COV_BUILD) $(COV_TESTS)

mutate: deps
	@[ -f $(COV_BUILD)/covmap.json ] || { echo "make mutate: run make coverage first"; exit 2; }
	nice -n 10 tools/mutate.sh --seed $(MUTATE_SEED) --per-file $(MUTATE_PER_FILE) $(MUTATE_FILES)
