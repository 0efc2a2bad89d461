# tests/crash.mk — `make crash-trials`: the long crash-consistency run of
# `init --apply` (CRASH_TRIALS random SIGKILLs, default 200, plus a kill at
# every fault point); tests/cases/crash.t runs a short version in the suite.
CRASH_TRIALS ?= 200
.PHONY: crash-trials
crash-trials: $(BUILD)/lobes
	$(TEST_ENV) CRASH_TRIALS=$(CRASH_TRIALS) prove -v --exec env tests/cases/crash.t
