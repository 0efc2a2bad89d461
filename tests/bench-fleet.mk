# bench-fleet.mk — `make bench-fleet`: lobes bench against a role directly
# and through the gateway at three concurrencies, side by side in one run,
# written to docs/benchmarks/fleet.md (tools/bench-fleet.sh). A benchmark,
# not a test; it fails, writing nothing, when lobes bench fails.
bench-fleet: $(BUILD)/lobes $(BUILD)/tests/standin/vllm-standin
	tools/bench-fleet.sh $(BUILD) docs/benchmarks/fleet.md
.PHONY: bench-fleet
