#!/bin/bash
# bench-gateway-hop.sh BUILD OUT.md — `make bench-gateway-hop`: what one
# proxy hop between two boxes' gateways adds, over loopback.
#
# Two `lobes gateway` processes stand for two boxes: the "spark" gateway
# serves hand from a vLLM stand-in (a test double); the "thor" gateway has
# hand infeasible and proxies it to the spark's (peers.yaml, per-pair key).
# wrk POSTs a non-streamed chat completion for hand to the engine directly,
# to the spark's gateway (no hop) and to the thor's (one hop), at
# concurrency 1 and 64; RUNS rounds, the three targets interleaved in each;
# medians. Added by the hop = thor's percentile minus spark's. Everything
# listens on 127.0.0.1. Env: RUNS (5), DUR (5 s per wrk run).
set -u
BUILD=$1
OUT=$2
LOBES=$BUILD/lobes
STANDIN=$BUILD/tests/standin/vllm-standin
RUNS=${RUNS:-5}
DUR=${DUR:-5}
. "$(dirname "$0")/bench-lib.sh"
bl_init lobes-bench-hop wrk curl
P_ENGINE=$(fp) P_SPARK=$(fp) P_THOR=$(fp)
bl_standin "$STANDIN" "$P_ENGINE" hand

KEY_SPARK=bench-spark-$RANDOM$RANDOM
box() { # DIR PROFILE GW_PORT HAND_LINES...
	local d=$1 p=$2 port=$3
	shift 3
	mkdir -p "$d"
	{
		echo "LOBES_PROFILE=$p"
		echo "LOBES_CARD=$p"
		printf '%s\n' "$@"
		echo "LOBES_GATEWAY_PORT=$port"
		echo "LOBES_GATEWAY_MAX_INFLIGHT=4096"
		echo "LOBES_GATEWAY_MAX_CONNECTIONS=8192"
	} >"$d/.env"
	chmod 600 "$d/.env"
}
box "$W/spark" spark "$P_SPARK" HAND_FEASIBLE=true "HAND_PORT=$P_ENGINE" HAND_MODEL=LiquidAI/LFM2.5-1.2B-Instruct
printf '%s\n' "$KEY_SPARK" >"$W/spark/gateway.key"
chmod 600 "$W/spark/gateway.key"
box "$W/thor" thor "$P_THOR" HAND_FEASIBLE=false
printf '%s\n' "$KEY_SPARK" >"$W/thor/spark.key"
chmod 600 "$W/thor/spark.key"
cat >"$W/thor/peers.yaml" <<EOF
box: thor
peers:
  spark:
    origin: http://127.0.0.1:$P_SPARK
    key_file: spark.key
roles:
  hand: {proxy: spark}
EOF
"$LOBES" --dir "$W/spark" gateway >"$W/spark.out" 2>/dev/null &
SPARK_PID=$!
PIDS="$PIDS $SPARK_PID"
"$LOBES" --dir "$W/thor" gateway >"$W/thor.out" 2>/dev/null &
PIDS="$PIDS $!"
bl_wait "http://127.0.0.1:$P_SPARK/health"
bl_wait "http://127.0.0.1:$P_THOR/health"
# the thor's background poll has seen hand ready at the spark
for i in $(seq 300); do
	curl -s "http://127.0.0.1:$P_THOR/capabilities" | grep -q '"role":"hand"[^}]*"ready":true' && break
	sleep 0.1
done

# one lua file per target: the key each gateway accepts (the engine needs none)
bl_post_lua "$W/direct.lua" hand
bl_post_lua "$W/spark.lua" hand "$KEY_SPARK"
bl_post_lua "$W/thor.lua" hand

declare -A PORT=([direct]=$P_ENGINE [spark]=$P_SPARK [thor]=$P_THOR)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$RUNS"); do
	for c in 1 64; do
		t=2; [ "$c" = 1 ] && t=1
		for k in direct spark thor; do
			wrk -t$t -c$c -d"${DUR}s" --latency -s "$W/$k.lua" "http://127.0.0.1:${PORT[$k]}/v1/chat/completions" >"$W/wrk.txt" 2>&1
			p50=$(awk '/^ +50%/ { print $2 }' "$W/wrk.txt")
			p99=$(awk '/^ +99%/ { print $2 }' "$W/wrk.txt")
			rps=$(awk '/^Requests\/sec:/ { print $2 }' "$W/wrk.txt")
			bad=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$W/wrk.txt")
			echo "$k $c $(us "$p50") $(us "$p99") $rps ${bad:-0}" >>"$W/req.txt"
			echo "run $r c=$c $k: p50 $p50 p99 $p99 $rps req/s non-2xx ${bad:-0}" >&2
		done
	done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

{
	echo "# One proxy hop between two boxes' gateways"
	echo
	echo "Command: \`make bench-gateway-hop\` (RUNS=$RUNS DUR=${DUR}s). A separate file from"
	echo "gateway.md (\`make bench-gateway\`): this is the row the multi-box setup adds."
	echo "Written by tools/bench-gateway-hop.sh on $(date -u +%Y-%m-%d) — $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
	echo "$(uname -sr), wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}'). Load average before / after: $LOAD_BEFORE / $LOAD_AFTER."
	echo "The machine is shared: the targets are measured interleaved in each round and the"
	echo "table holds medians of $RUNS rounds."
	echo
	echo "Setup: the engine is the vLLM stand-in (a test double) serving hand. \"spark\" is a"
	echo "\`lobes gateway\` serving hand from it (bearer key); \"thor\" is a second \`lobes gateway\`"
	echo "with hand infeasible, proxying it to the spark's gateway (peers.yaml: the spark's key,"
	echo "the X-Lobes-Hop header). wrk POSTs a non-streamed chat completion for hand. All on"
	echo "127.0.0.1, all on the same cores. Added by the hop = thor's percentile minus spark's."
	echo
	echo "| concurrency | target | p50 µs | p99 µs | added by the hop p50 µs | added by the hop p99 µs | req/s | req/s vs spark |"
	echo "|---|---|---|---|---|---|---|---|"
	for c in 1 64; do
		s50=$(col "$W/req.txt" spark $c 3) s99=$(col "$W/req.txt" spark $c 4) srps=$(col "$W/req.txt" spark $c 5)
		for k in direct spark thor; do
			p50=$(col "$W/req.txt" $k $c 3) p99=$(col "$W/req.txt" $k $c 4) rps=$(col "$W/req.txt" $k $c 5)
			a50="—" a99="—"
			[ $k = thor ] && a50=$(sub "$p50" "$s50") a99=$(sub "$p99" "$s99")
			name=$k; [ $k = direct ] && name="engine (direct)"; [ $k = spark ] && name="spark gateway (no hop)"; [ $k = thor ] && name="thor gateway (one hop)"
			echo "| $c | $name | $(f1 "$p50") | $(f1 "$p99") | $a50 | $a99 | $(f1 "$rps") | $(ratio "$rps" "$srps") |"
		done
	done
	echo
	bad=$(awk '$6 > 0' "$W/req.txt" | wc -l)
	echo "wrk runs with non-2xx answers: $bad of $(wc -l <"$W/req.txt")."
	echo
	echo "Reading it: at concurrency 1 the hop's cost is one more gateway's turn (accept,"
	echo "route, a libcurl request to the peer, relay). At 64 the two gateways, the engine"
	echo "and wrk share the same cores, so p99 differences of a few ms are scheduling noise"
	echo "(a negative added p99 means the hop's cost is below it); compare the p50s and req/s."
	echo
	echo "Raw rows (target concurrency p50_us p99_us req/s non2xx):"
	echo
	echo '```'
	cat "$W/req.txt"
	echo '```'
} >"$OUT"
echo "bench-gateway-hop: wrote $OUT" >&2
