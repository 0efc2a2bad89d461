# tests/fuzz.mk — fuzzing in the tree (see docs/fuzzing.md).
#
#   make fuzz                          every target for FUZZ_SECONDS (default 60) each
#   make fuzz FUZZ_TARGETS="env triage" FUZZ_SECONDS=600
#   make fuzz FUZZ_RUNS=1000000        stop a target after 1M inputs (or FUZZ_SECONDS)
#
# Every tests/fuzz/fuzz_<target>.c is one libFuzzer target. `make fuzz` builds
# the library and the targets with clang (-fsanitize=fuzzer,address,undefined)
# in build-fuzz/ and runs each on a scratch copy of tests/fuzz/corpus/<target>/
# (new inputs stay in build-fuzz/, crash inputs land in
# build-fuzz/artifacts/<target>/: commit a fixed one under
# tests/fuzz/crashes/<target>/). Execs, coverage and findings per target are
# printed and written to build-fuzz/fuzz-summary.txt.
#
# `make test` needs no clang: the same target files are linked with
# tests/fuzz/replay.c (a main() that feeds files) by the normal compiler,
# and tests/cases/fuzz.t replays every committed seed and crash input.

FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= -1
FUZZ_TIMEOUT ?= 1
FUZZ_BUILD := build-fuzz
FUZZ_ALL := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_SAN := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
FUZZ_REPLAY := $(FUZZ_ALL:%=$(BUILD)/fuzz/replay_%)

DEB_PKGS += clang-14 libclang-rt-14-dev

test-helpers: $(FUZZ_REPLAY)

$(BUILD)/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(BUILD)/liblobes.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(BUILD)/liblobes.a $(LDLIBS)

# The libFuzzer binaries (only built with BUILD=build-fuzz CC=clang).
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(BUILD)/liblobes.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/liblobes.a $(LDLIBS)

.PHONY: fuzz fuzz-build
fuzz-build:
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs $(FUZZ_CC) and libclang-rt-14-dev"; exit 3; }
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) \
		CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" LDFLAGS="-fsanitize=address,undefined" \
		$(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz/fuzz_%)

fuzz: deps fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_TIMEOUT=$(FUZZ_TIMEOUT) tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_TARGETS)
