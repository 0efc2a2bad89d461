# bench-hop.mk — `make bench-gateway-hop`: the latency one proxy hop between
# two boxes' gateways adds over loopback (peers.yaml proxy), written to
# docs/benchmarks/gateway-hop.md (RUNS=5 DUR=5 by default). A benchmark, not
# a test. Needs wrk (in DEB_PKGS through bench.mk).
bench-gateway-hop: $(BUILD)/lobes $(BUILD)/tests/standin/vllm-standin
	tools/bench-gateway-hop.sh $(BUILD) docs/benchmarks/gateway-hop.md
.PHONY: bench-gateway-hop
