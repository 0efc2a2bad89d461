# tests/bench-bringup.mk — `make bench-bringup` (a benchmark, not a test):
# a 5-role fleet of vLLM stand-ins (a test double) brought up all at once,
# strictly one after another, and by `lobes serve --apply`, TRIALS times
# each (default 10), against a private dockerd. Needs root; took 22 minutes
# on a 2-CPU VM; writes docs/benchmarks/bringup.md. See tools/bench-bringup.sh
# for the knobs (TRIALS, BOUND_S, POLL_MS, STANDIN_*_MS, BENCH_KEEP).
bench-bringup: $(BUILD)/lobes $(BUILD)/tests/standin/vllm-standin
	tools/bench-bringup.sh $(BUILD)/lobes $(BUILD)/tests/standin/vllm-standin docs/benchmarks/bringup.md
