# bench.mk — benchmarks (not tests): each writes docs/benchmarks/<name>.md.
#   make bench-triage   lobes triage vs grep -E -f on a >= 1 GB synthetic log
#                       (BENCH_MB=1100 RUNS=5 by default)
bench-triage: $(BUILD)/lobes
	tools/bench-triage.sh $(BUILD)/lobes docs/benchmarks/triage.md
