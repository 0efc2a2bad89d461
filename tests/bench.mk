# bench.mk — benchmarks (not tests): each writes docs/benchmarks/<name>.md.
#   make bench-triage   lobes triage vs ripgrep, grep -E -f and wc -l on a
#                       >= 1 GB synthetic log, one hyperfine run
#                       (BENCH_MB=1100 RUNS=5 by default)
# ripgrep and hyperfine: bench-triage compares against ripgrep, timed by hyperfine
DEB_PKGS += ripgrep hyperfine
bench-triage: $(BUILD)/lobes
	tools/bench-triage.sh $(BUILD)/lobes docs/benchmarks/triage.md

# make bench-gateway   lobes gateway vs nginx as the same reverse proxy, and
#                      1,000 concurrent SSE streams (RUNS=3 DUR=5 STREAMS=1000)
DEB_PKGS += wrk nginx-light
$(BUILD)/tools/bench-sse: tools/bench-sse.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lmicrohttpd -lcurl

bench-gateway: $(BUILD)/lobes $(BUILD)/tools/bench-sse $(BUILD)/tests/standin/vllm-standin
	tools/bench-gateway.sh $(BUILD) docs/benchmarks/gateway.md
.PHONY: bench-gateway
