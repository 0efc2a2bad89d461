#!/bin/bash
# bench.sh [ROUNDS] [DUR] — the relay side of docs/benchmarks/http-servers.md:
# wrk POSTs the bench-gateway chat body at c=1/64/256 to the vLLM stand-in
# directly, through `lobes gateway`, nginx, and the evhttp and h2o
# prototypes (two processes each, SO_REUSEPORT), interleaved per round;
# prints each run and the medians of p50 and req/s. Needs `make all
# test-helpers`, wrk, nginx, libevent-dev and libh2o-evloop-dev. Run from
# the repo root. The setup and the wrk loop: tools/bench-lib.sh.
set -u
ROUNDS=${1:-3} DUR=${2:-3}
B=${BUILD:-build}
. "$(dirname "$0")/../bench-lib.sh"
bl_init lobes-http-proto
cc -O2 -o $W/evhttp_proto tools/http-proto/evhttp_proto.c -levent || exit 3
cc -O2 -DH2O_USE_LIBUV=0 -o $W/h2o_proto tools/http-proto/h2o_proto.c -lh2o-evloop -lssl -lcrypto -lz || exit 3
PE=$(fp) PG=$(fp) PN=$(fp) PV=$(fp) PH=$(fp)
bl_standin $B/tests/standin/vllm-standin $PE
bl_gw_env $W/g $PE $PG
$B/lobes --dir $W/g gateway >/dev/null 2>&1 & PIDS="$PIDS $!"
for i in 1 2; do $W/evhttp_proto $PV $PE & PIDS="$PIDS $!"; $W/h2o_proto $PH $PE 2>/dev/null & PIDS="$PIDS $!"; done
bl_nginx $PE $PN
echo "ports: engine $PE gateway $PG nginx $PN evhttp $PV h2o $PH"; wp $PG /health; wp $PN /health; wp $PV /health; wp $PH /health; sleep 1
declare -A U=([direct]=$PE [gateway]=$PG [nginx]=$PN [evhttp]=$PV [h2o]=$PH)
bl_rounds $ROUNDS "1 64 256" $DUR direct gateway nginx evhttp h2o
bl_medians "1 64 256" direct gateway nginx evhttp h2o
