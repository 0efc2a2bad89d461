#!/bin/bash
# bench-fleet.sh BUILD OUT.md — `make bench-fleet`: `lobes bench` against a
# role directly and through `lobes gateway`, at three concurrencies, side by
# side in one run (lobes bench --via both), written to OUT.md with the
# command and the load average.
#
# The engine is the vLLM stand-in (a test double) with known token timing:
# a first token after FIRST_MS (100), then one every TOKEN_MS (20); so the
# table shows what the gateway adds to TTFT, E2EL and throughput, not a
# model's speed. Everything listens on 127.0.0.1. When bench fails (a
# request failed, nothing completed) this fails and OUT.md is not written.
# Env: CONC (1,8,32), REQUESTS (per point, 64), FIRST_MS, TOKEN_MS.
set -u
BUILD=$1
OUT=$2
LOBES=$BUILD/lobes
STANDIN=$BUILD/tests/standin/vllm-standin
CONC=${CONC:-1,8,32}
REQUESTS=${REQUESTS:-64}
FIRST_MS=${FIRST_MS:-100}
TOKEN_MS=${TOKEN_MS:-20}
. "$(dirname "$0")/bench-lib.sh"
bl_init lobes-bench-fleet curl
# ports below Linux's ephemeral range (32768-60999)
P_ENGINE=$(fp 12000) P_GW=$(fp 12000)
STANDIN_FIRST_TOKEN_MS=$FIRST_MS STANDIN_TOKEN_MS=$TOKEN_MS bl_standin "$STANDIN" "$P_ENGINE" cortex unsloth/Qwen3.8-27B-NVFP4
D=$W/dir
mkdir -p "$D"
cat >"$D/.env" <<E
LOBES_PROFILE=spark
LOBES_CARD=spark
CORTEX_FEASIBLE=true
CORTEX_PORT=$P_ENGINE
CORTEX_MODEL=unsloth/Qwen3.8-27B-NVFP4
LOBES_GATEWAY_PORT=$P_GW
E
chmod 600 "$D/.env"
printf 'bench-fleet-%s\n' "$RANDOM$RANDOM" >"$D/gateway.key"
chmod 600 "$D/gateway.key"
"$LOBES" --dir "$D" gateway >"$W/gateway.out" 2>/dev/null &
PIDS="$PIDS $!"
bl_wait "http://127.0.0.1:$P_GW/health" 600
for i in $(seq 300); do
	curl -s "http://127.0.0.1:$P_GW/capabilities" | grep -q '"role":"cortex"[^}]*"ready":true' && break
	sleep 0.1
done

CMD=(bench --via both --concurrency "$CONC" --requests "$REQUESTS" --input-len 128 --output-len 64 cortex)
if ! "$LOBES" --dir "$D" "${CMD[@]}" --out "$W/report.md" >"$W/bench.txt" 2>&1; then
	cat "$W/bench.txt" >&2
	echo "bench-fleet: lobes bench failed; $OUT not written" >&2
	exit 1
fi
{
	echo "# lobes bench: the fleet directly and through the gateway"
	echo
	echo "Command: \`make bench-fleet\` (CONC=$CONC REQUESTS=$REQUESTS FIRST_MS=$FIRST_MS TOKEN_MS=$TOKEN_MS),"
	echo "which runs \`lobes ${CMD[*]}\` once (tools/bench-fleet.sh)."
	echo "Written on $(date -u +%Y-%m-%d) — $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(uname -sr)."
	echo
	echo "Setup: the cortex is the vLLM stand-in (a test double) answering a first token"
	echo "after $FIRST_MS ms and one more every $TOKEN_MS ms, so the engine's part is known and the"
	echo "rows differ by what the path adds: \"cortex\" is the engine's port, \"cortex via gateway\""
	echo "is \`lobes gateway\` (bearer key) in front of it. Both on 127.0.0.1, on the same cores as"
	echo "the load generator. The machine is shared (see the load average below)."
	echo
	sed '1,2d; /^Command: `lobes bench/,+1d' "$W/report.md"
} >"$OUT"
echo "bench-fleet: wrote $OUT" >&2
