#!/bin/bash
# run.sh BUILD TARGET... — run each libFuzzer target of BUILD/fuzz/ for
# $FUZZ_SECONDS (or $FUZZ_RUNS inputs, whichever comes first) on a scratch corpus seeded from tests/fuzz/corpus/TARGET/
# (and tests/fuzz/crashes/TARGET/), a hang over 1 s and a leak counting as
# findings; print one summary line per target and write them all to
# BUILD/fuzz-summary.txt. Exit 1 when any target found something.
set -u
B=$1
shift
SECS=${FUZZ_SECONDS:-60}
# an input running longer than this (seconds) is a finding; on a box loaded
# far past its cores a starved process can pass 1 s on an input that replays
# in 1 ms, so such a box's long runs raise it
TIMEOUT=${FUZZ_TIMEOUT:-1}
RUNS=${FUZZ_RUNS:--1} # -1: until FUZZ_SECONDS
SUM=$B/fuzz-summary.txt
: >"$SUM"
status=0
printf '%-12s %12s %9s %6s %6s  %s\n' target execs exec/s cov corpus result | tee -a "$SUM"
for t in "$@"; do
	work=$B/corpus/$t art=$B/artifacts/$t
	rm -rf "$art"
	mkdir -p "$work" "$art"
	seeds=(tests/fuzz/corpus/$t)
	[ -d tests/fuzz/crashes/$t ] && seeds+=(tests/fuzz/crashes/$t)
	log=$B/fuzz-$t.log
	"$B/fuzz/fuzz_$t" -max_total_time="$SECS" -runs="$RUNS" -timeout="$TIMEOUT" -rss_limit_mb=2048 -max_len=65536 \
		-detect_leaks=1 -print_final_stats=1 -artifact_prefix="$art/" \
		"$work" "${seeds[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	corp=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	found=$(ls "$art" | wc -l)
	result=ok
	if [ "$rc" != 0 ] || [ "$found" != 0 ]; then
		result="FOUND $found input(s) in $art (exit $rc, see $log)"
		status=1
	fi
	printf '%-12s %12s %9s %6s %6s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${corp:-?}" \
		"$result" | tee -a "$SUM"
done
exit $status
