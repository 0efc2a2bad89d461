#!/bin/bash
# bench.sh [ROUNDS] [DUR] — the relay side of docs/benchmarks/http-servers.md:
# wrk POSTs the bench-gateway chat body at c=1/64/256 to the vLLM stand-in
# directly, through `lobes gateway`, nginx, and the evhttp and h2o
# prototypes (two processes each, SO_REUSEPORT), interleaved per round;
# prints each run and the medians of req/s. Needs `make all test-helpers`,
# wrk, nginx, libevent-dev and libh2o-evloop-dev. Run from the repo root.
set -u
ROUNDS=${1:-3} DUR=${2:-3}
B=${BUILD:-build}
W=$(mktemp -d /tmp/lobes-http-proto.XXXXXX)
cc -O2 -o $W/evhttp_proto tools/http-proto/evhttp_proto.c -levent || exit 3
cc -O2 -DH2O_USE_LIBUV=0 -o $W/h2o_proto tools/http-proto/h2o_proto.c -lh2o-evloop -lssl -lcrypto -lz || exit 3
PIDS=""
cleanup() { for p in $PIDS; do kill $p 2>/dev/null; done; [ -f $W/nginx.pid ] && kill $(cat $W/nginx.pid); sleep 0.3; rm -rf $W; }
trap cleanup EXIT
ulimit -n $(ulimit -Hn)
fp() { while :; do p=$((20000 + RANDOM % 40000)); (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }; done; }
wp() { for i in $(seq 200); do curl -s -o /dev/null --max-time 1 http://127.0.0.1:$1${2:-/} && return 0; sleep 0.1; done; echo "no $1"; exit 4; }
PE=$(fp) PG=$(fp) PN=$(fp) PV=$(fp) PH=$(fp)
HF_HUB_CACHE=$PWD/tests/fixtures/hf/hub STANDIN_LOAD_MS=10 STANDIN_PROFILE_MS=10 STANDIN_WARMUP_MS=10 STANDIN_DEVICE_BYTES=4G STANDIN_MEM_SCALE=0.01 \
  $B/tests/standin/vllm-standin serve LiquidAI/LFM2.5-1.2B-Instruct --served-model-name cortex --host 127.0.0.1 --port $PE --gpu-memory-utilization 0.1 >$W/engine.log 2>&1 &
PIDS="$PIDS $!"
wp $PE /health
mkdir -p $W/g; printf 'LOBES_PROFILE=bench\nLOBES_CARD=spark\nCORTEX_FEASIBLE=true\nCORTEX_PORT=%s\nCORTEX_MODEL=LiquidAI/LFM2.5-1.2B-Instruct\nLOBES_GATEWAY_PORT=%s\nLOBES_GATEWAY_MAX_INFLIGHT=4096\nLOBES_GATEWAY_MAX_CONNECTIONS=8192\nLOBES_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS=8192\n' $PE $PG > $W/g/.env; chmod 600 $W/g/.env
$B/lobes --dir $W/g gateway >/dev/null 2>&1 & PIDS="$PIDS $!"
for i in 1 2; do $W/evhttp_proto $PV $PE & PIDS="$PIDS $!"; $W/h2o_proto $PH $PE 2>/dev/null & PIDS="$PIDS $!"; done
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
echo "ports: engine $PE gateway $PG nginx $PN evhttp $PV h2o $PH"; wp $PG /health; wp $PN /health; wp $PV /health; wp $PH /health; sleep 1
cat >$W/post.lua <<'E4'
wrk.method = "POST"
wrk.body = '{"model":"cortex","messages":[{"role":"user","content":"What is the capital city of France? Reply with only the city name."}],"max_tokens":16,"temperature":0}'
wrk.headers["Content-Type"] = "application/json"
E4
declare -A U=([direct]=$PE [gateway]=$PG [nginx]=$PN [evhttp]=$PV [h2o]=$PH)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq $ROUNDS); do for c in 1 64 256; do t=2; [ $c = 1 ] && t=1
 for k in direct gateway nginx evhttp h2o; do
  wrk -t$t -c$c -d${DUR}s --latency -s $W/post.lua http://127.0.0.1:${U[$k]}/v1/chat/completions > $W/wrk.txt 2>&1
  echo "$r $c $k $(awk '/^ +50%/{print $2}' $W/wrk.txt) $(awk '/^Requests\/sec:/{print $2}' $W/wrk.txt) non2xx=$(awk '/Non-2xx/{print $NF}' $W/wrk.txt)"
 done; done; done | tee $W/res.txt
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians (c kind p50 rps):"
for c in 1 64 256; do for k in direct gateway nginx evhttp h2o; do
 rps=$(awk -v c=$c -v k=$k '$2==c&&$3==k{print $5}' $W/res.txt | sort -g | awk '{a[NR]=$1}END{print a[int((NR+1)/2)]}')
 echo "$c $k $rps"; done; done
