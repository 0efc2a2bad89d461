#!/bin/bash
# profile-gateway.sh BUILD N OUT — the gateway's instructions for N relayed
# chats: `lobes gateway` (one worker) under valgrind's callgrind in front of
# the vLLM stand-in; one keep-alive client sends 50 chats (warm-up, then
# the counts are zeroed) and N more, then the counts are dumped to OUT.1
# (callgrind_annotate --inclusive=yes OUT.1; divide by N). Run from the
# repo root. Used for docs/benchmarks/gateway.md ("Profile of the relay
# path").
set -u
B=$1 N=$2 OUT=$3
W=$(mktemp -d /tmp/lobes-gw-prof.XXXXXX)
PIDS=""
cleanup() { for p in $PIDS; do kill $p 2>/dev/null; done; sleep 0.3; rm -rf $W; }
trap cleanup EXIT
fp() { while :; do p=$((20000 + RANDOM % 40000)); (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }; done; }
wp() { for i in $(seq 600); do curl -s -o /dev/null --max-time 1 http://127.0.0.1:$1${2:-/} && return 0; sleep 0.1; done; echo "no $1"; exit 4; }
PE=$(fp) PG=$(fp)
HF_HUB_CACHE=$PWD/tests/fixtures/hf/hub STANDIN_LOAD_MS=10 STANDIN_PROFILE_MS=10 STANDIN_WARMUP_MS=10 STANDIN_DEVICE_BYTES=4G STANDIN_MEM_SCALE=0.01 \
  $B/tests/standin/vllm-standin serve LiquidAI/LFM2.5-1.2B-Instruct --served-model-name cortex --host 127.0.0.1 --port $PE --gpu-memory-utilization 0.1 >$W/engine.log 2>&1 &
PIDS="$PIDS $!"
wp $PE /health
mkdir -p $W/g; cat >$W/g/.env <<E2
LOBES_PROFILE=bench
LOBES_CARD=spark
CORTEX_FEASIBLE=true
CORTEX_PORT=$PE
CORTEX_MODEL=LiquidAI/LFM2.5-1.2B-Instruct
LOBES_GATEWAY_PORT=$PG
LOBES_GATEWAY_WORKERS=1
E2
chmod 600 $W/g/.env
valgrind --tool=callgrind --callgrind-out-file=$OUT --dump-instr=no $B/lobes --dir $W/g gateway >$W/g/out 2>$W/g/err &
VP=$!; PIDS="$PIDS $VP"
wp $PG /health
python3 - $PG 50 <<'PY'
import http.client,sys
c=http.client.HTTPConnection('127.0.0.1',int(sys.argv[1]))
b='{"model":"cortex","messages":[{"role":"user","content":"What is the capital city of France? Reply with only the city name."}],"max_tokens":16,"temperature":0}'
for i in range(int(sys.argv[2])):
    c.request('POST','/v1/chat/completions',b,{'Content-Type':'application/json'}); r=c.getresponse(); r.read(); assert r.status==200
PY
callgrind_control -z $VP >/dev/null
python3 - $PG $N <<'PY'
import http.client,sys
c=http.client.HTTPConnection('127.0.0.1',int(sys.argv[1]))
b='{"model":"cortex","messages":[{"role":"user","content":"What is the capital city of France? Reply with only the city name."}],"max_tokens":16,"temperature":0}'
for i in range(int(sys.argv[2])):
    c.request('POST','/v1/chat/completions',b,{'Content-Type':'application/json'}); r=c.getresponse(); r.read(); assert r.status==200
PY
callgrind_control -d $VP >/dev/null
sleep 1
ls "$OUT".*
