#!/bin/bash
# bench-gateway-ab.sh BUILD_A BUILD_B [ROUNDS] [DUR] [CONCS] — two builds of
# `lobes gateway` (BUILD_A/lobes, BUILD_B/lobes: old and new) and nginx side
# by side in front of one vLLM stand-in (BUILD_A's), wrk POSTing the
# bench-gateway chat body, interleaved per round; prints each run (p50,
# req/s, non-2xx, CPU microseconds per request of the proxy's processes,
# from /proc/PID/stat) and the medians. PERF=FILE records `perf record -g`
# of B during the runs. Run from the repo root. Used for the old-vs-new
# figures in docs/benchmarks/gateway.md ("Profile of the relay path").
# The setup and the wrk loop: tools/bench-lib.sh.
set -u
A=$1 B=$2 ROUNDS=${3:-3} DUR=${4:-4} CONCS=${5:-"1 64 256"}
. "$(dirname "$0")/bench-lib.sh"
bl_init lobes-gw-ab
PE=$(fp) PA=$(fp) PB=$(fp) PN=$(fp)
bl_standin $A/tests/standin/vllm-standin $PE
gw() { bl_gw_env $1 $PE $3; $2/lobes --dir $1 gateway >$1/out 2>/dev/null & PIDS="$PIDS $!"; echo $! > $1/pid; }
gw $W/a $A $PA; gw $W/b $B $PB
bl_nginx $PE $PN
wp $PA /health; wp $PB /health; sleep 1
declare -A U=([A]=$PA [B]=$PB [nginx]=$PN)
bl_pids() { # KIND: the proxy's processes, whose CPU time is counted
	case $1 in A) cat $W/a/pid;; B) cat $W/b/pid;; nginx) pgrep -P $(cat $W/nginx.pid) | tr '\n' ' ';; esac
}
[ -n "${PERF:-}" ] && { perf record -F 2000 -g -o "$PERF" -p $(cat $W/b/pid) >$W/perf.log 2>&1 & PP=$!; }
bl_rounds $ROUNDS "$CONCS" $DUR A B nginx
[ -n "${PERF:-}" ] && { kill -INT $PP; wait $PP; }
bl_medians "$CONCS" A B nginx
