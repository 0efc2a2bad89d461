#!/bin/bash
# bench-gateway-ab.sh BUILD_A BUILD_B [ROUNDS] [DUR] [CONCS] — two builds of
# `lobes gateway` (BUILD_A/lobes, BUILD_B/lobes: old and new) and nginx side
# by side in front of one vLLM stand-in (BUILD_A's), wrk POSTing the
# bench-gateway chat body, interleaved per round; prints each run (p50,
# req/s, non-2xx, CPU microseconds per request of the proxy's processes,
# from /proc/PID/stat) and the medians. PERF=FILE records `perf record -g`
# of B during the runs. Run from the repo root. Used for the old-vs-new
# figures in docs/benchmarks/gateway.md ("Profile of the relay path").
set -u
A=$1 B=$2 ROUNDS=${3:-3} DUR=${4:-4} CONCS=${5:-"1 64 256"}
STANDIN=$A/tests/standin/vllm-standin
W=$(mktemp -d /tmp/lobes-gw-ab.XXXXXX)
PIDS=""
cleanup() { for p in $PIDS; do kill $p 2>/dev/null; done; [ -f $W/nginx.pid ] && kill $(cat $W/nginx.pid); sleep 0.3; rm -rf $W; }
trap cleanup EXIT
ulimit -n $(ulimit -Hn)
fp() { while :; do p=$((20000 + RANDOM % 40000)); (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }; done; }
wp() { for i in $(seq 200); do curl -s -o /dev/null --max-time 1 http://127.0.0.1:$1${2:-/} && return 0; sleep 0.1; done; echo "no $1"; exit 4; }
PE=$(fp) PA=$(fp) PB=$(fp) PN=$(fp)
HF_HUB_CACHE=$PWD/tests/fixtures/hf/hub STANDIN_LOAD_MS=10 STANDIN_PROFILE_MS=10 STANDIN_WARMUP_MS=10 STANDIN_DEVICE_BYTES=4G STANDIN_MEM_SCALE=0.01 \
  $STANDIN serve LiquidAI/LFM2.5-1.2B-Instruct --served-model-name cortex --host 127.0.0.1 --port $PE --gpu-memory-utilization 0.1 >$W/engine.log 2>&1 &
PIDS="$PIDS $!"
wp $PE /health
gw() { mkdir -p $1; cat >$1/.env <<E2
LOBES_PROFILE=bench
LOBES_CARD=spark
CORTEX_FEASIBLE=true
CORTEX_PORT=$PE
CORTEX_MODEL=LiquidAI/LFM2.5-1.2B-Instruct
LOBES_GATEWAY_PORT=$3
LOBES_GATEWAY_MAX_INFLIGHT=4096
LOBES_GATEWAY_MAX_CONNECTIONS=8192
LOBES_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS=8192
E2
chmod 600 $1/.env; $2/lobes --dir $1 gateway >$1/out 2>/dev/null & PIDS="$PIDS $!"; echo $! > $1/pid; }
gw $W/a $A $PA; gw $W/b $B $PB
mkdir -p $W/ng
cat >$W/nginx.conf <<E3
worker_processes auto;
pid $W/nginx.pid;
error_log $W/nginx.err;
events { worker_connections 8192; }
http { access_log off; client_body_temp_path $W/ng/body; proxy_temp_path $W/ng/proxy; fastcgi_temp_path $W/ng/f; uwsgi_temp_path $W/ng/u; scgi_temp_path $W/ng/s;
 upstream engine { server 127.0.0.1:$PE; keepalive 512; }
 server { listen 127.0.0.1:$PN; location / { proxy_pass http://engine; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; proxy_request_buffering off; } } }
E3
nginx -p $W -c $W/nginx.conf -e $W/nginx.err
wp $PA /health; wp $PB /health; sleep 1
cat >$W/post.lua <<'E4'
wrk.method = "POST"
wrk.body = '{"model":"cortex","messages":[{"role":"user","content":"What is the capital city of France? Reply with only the city name."}],"max_tokens":16,"temperature":0}'
wrk.headers["Content-Type"] = "application/json"
E4
declare -A U=([A]=$PA [B]=$PB [nginx]=$PN)
[ -n "${PERF:-}" ] && { perf record -F 2000 -g -o "$PERF" -p $(cat $W/b/pid) >$W/perf.log 2>&1 & PP=$!; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq $ROUNDS); do for c in $CONCS; do t=2; [ $c = 1 ] && t=1
 for k in A B nginx; do
  case $k in A) cp="$(cat $W/a/pid)";; B) cp="$(cat $W/b/pid)";; nginx) cp="$(pgrep -P $(cat $W/nginx.pid) | tr '\n' ' ')";; esac
  t0=$(for p in $cp; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc)
  wrk -t$t -c$c -d${DUR}s --latency -s $W/post.lua http://127.0.0.1:${U[$k]}/v1/chat/completions > $W/wrk.txt 2>&1
  t1=$(for p in $cp; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc)
  nreq=$(awk '/requests in/{print $1}' $W/wrk.txt)
  echo "$r $c $k $(awk '/^ +50%/{print $2}' $W/wrk.txt) $(awk '/^Requests\/sec:/{print $2}' $W/wrk.txt) non2xx=$(awk '/Non-2xx/{print $NF}' $W/wrk.txt) cpu_us_per_req=$(echo "($t1-$t0)*10000/$nreq" | bc)"
 done; done; done | tee $W/res.txt
[ -n "${PERF:-}" ] && { kill -INT $PP; wait $PP; }
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians (c kind p50 rps):"
for c in $CONCS; do for k in A B nginx; do
 rps=$(awk -v c=$c -v k=$k '$2==c&&$3==k{print $5}' $W/res.txt | sort -g | awk '{a[NR]=$1}END{print a[int((NR+1)/2)]}')
 p50=$(awk -v c=$c -v k=$k '$2==c&&$3==k{print $4}' $W/res.txt | sort -g | awk '{a[NR]=$1}END{print a[int((NR+1)/2)]}')
 echo "$c $k $p50 $rps"; done; done
