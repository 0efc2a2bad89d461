# tools/bench-lib.sh — sourced by the gateway benchmarks (bench-gateway.sh,
# bench-gateway-hop.sh, bench-fleet.sh, bench-gateway-ab.sh,
# http-proto/bench.sh) so that what they share is one piece of code: the
# scratch dir and the processes stopped on exit, free and ready ports, the
# stand-in engine, a gateway's .env, nginx as the reference proxy, the wrk
# request body, the wrk round loop with its medians, and the arithmetic of
# the tables. Everything listens on 127.0.0.1; run from the repo root,
# under `set -u`.
#
#   bl_init NAME [TOOL...]  exit 3 when a TOOL is not installed; W (a
#       scratch dir /tmp/NAME.XXXXXX) and PIDS: the processes in PIDS and
#       nginx ($W/nginx.pid) are stopped and W removed on exit. Messages
#       name the script ($BENCH)
#   fp [SPAN]               a port in 20000..20000+SPAN-1 (SPAN 40000) that
#       nothing on 127.0.0.1 listens on
#   bl_wait URL [POLLS]     poll every 0.1 s, POLLS times (300), until URL
#       answers 2xx; else exit 4 saying so
#   wp PORT [PATH]          bl_wait of http://127.0.0.1:PORT/PATH (/)
#   bl_standin BIN PORT [NAME [MODEL]]   the vLLM stand-in (a test double)
#       serving MODEL (LiquidAI/LFM2.5-1.2B-Instruct) as NAME (cortex) on
#       PORT, waited for; STANDIN_* set by the caller pass through
#   bl_gw_env DIR PE PG     DIR/.env (0600): a gateway on PG in front of the
#       engine on PE, its limits out of the way
#   bl_nginx PE PN          nginx on PN proxying to PE (keep-alive upstream,
#       no buffering)
#   bl_post_lua FILE [MODEL [KEY]]   a wrk script POSTing the bench chat
#       body for MODEL (cortex), with KEY as bearer key when given
#   bl_rounds ROUNDS "CONCS" DUR KIND...   wrk POSTs the chat body to port
#       U[KIND] (an associative array of the caller's) for DUR seconds at
#       each concurrency, the kinds interleaved in each round; prints
#       "ROUND C KIND P50 REQ/S non2xx=N" a run (with " cpu_us_per_req=N"
#       where the caller defines bl_pids KIND: the pids whose CPU time
#       counts), kept in $W/res.txt, and the load average before and after
#   bl_medians "CONCS" KIND...   the medians of p50 and req/s per c and kind
#   us V (wrk's "250.00us", "1.20ms", "1.01s" in µs), median (of stdin),
#   col FILE KIND C FIELD (the median of FIELD over rows "KIND C ..."),
#   f1 V, sub A B (A - B), ratio A B (A / B, or n/a): the tables' figures

BENCH=$(basename "$0" .sh)

bl_init() {
	local t
	for t in "${@:2}"; do
		command -v $t >/dev/null || { echo "$BENCH: $t is not installed" >&2; exit 3; }
	done
	W=$(mktemp -d "/tmp/$1.XXXXXX")
	PIDS=""
	trap bl_cleanup EXIT
	ulimit -n "$(ulimit -Hn)" 2>/dev/null
}

bl_cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	[ -f "$W/nginx.pid" ] && kill "$(cat "$W/nginx.pid")" 2>/dev/null
	sleep 0.5
	rm -rf "$W"
}

fp() {
	local p
	while :; do
		p=$((20000 + RANDOM % ${1:-40000}))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

bl_wait() {
	local i
	for i in $(seq "${2:-300}"); do
		curl -sf -o /dev/null --max-time 1 "$1" && return 0
		sleep 0.1
	done
	echo "$BENCH: no answer from $1" >&2
	exit 4
}
wp() { bl_wait "http://127.0.0.1:$1${2:-/}"; }

bl_standin() {
	HF_HUB_CACHE=$PWD/tests/fixtures/hf/hub STANDIN_LOAD_MS=10 STANDIN_PROFILE_MS=10 STANDIN_WARMUP_MS=10 \
		STANDIN_DEVICE_BYTES=4G STANDIN_MEM_SCALE=0.01 \
		"$1" serve "${4:-LiquidAI/LFM2.5-1.2B-Instruct}" --served-model-name "${3:-cortex}" --host 127.0.0.1 \
		--port "$2" --gpu-memory-utilization 0.1 >"$W/engine.log" 2>&1 &
	PIDS="$PIDS $!"
	bl_wait "http://127.0.0.1:$2/health" 600
}

bl_gw_env() {
	mkdir -p "$1"
	printf '%s\n' LOBES_PROFILE=bench LOBES_CARD=spark CORTEX_FEASIBLE=true "CORTEX_PORT=$2" \
		CORTEX_MODEL=LiquidAI/LFM2.5-1.2B-Instruct "LOBES_GATEWAY_PORT=$3" LOBES_GATEWAY_MAX_INFLIGHT=4096 \
		LOBES_GATEWAY_MAX_CONNECTIONS=8192 LOBES_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS=8192 >"$1/.env"
	chmod 600 "$1/.env"
}

bl_nginx() {
	mkdir -p $W/ng
	cat >$W/nginx.conf <<E3
worker_processes auto;
pid $W/nginx.pid;
error_log $W/nginx.err;
events { worker_connections 8192; }
http { access_log off; client_body_temp_path $W/ng/body; proxy_temp_path $W/ng/proxy; fastcgi_temp_path $W/ng/f; uwsgi_temp_path $W/ng/u; scgi_temp_path $W/ng/s;
 upstream engine { server 127.0.0.1:$1; keepalive 512; }
 server { listen 127.0.0.1:$2; location / { proxy_pass http://engine; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; proxy_request_buffering off; } } }
E3
	nginx -p $W -c $W/nginx.conf -e $W/nginx.err
}

bl_post_lua() {
	{
		echo 'wrk.method = "POST"'
		echo "wrk.body = '{\"model\":\"${2:-cortex}\",\"messages\":[{\"role\":\"user\",\"content\":\"What is the capital city of France? Reply with only the city name.\"}],\"max_tokens\":16,\"temperature\":0}'"
		echo 'wrk.headers["Content-Type"] = "application/json"'
		[ -n "${3:-}" ] && echo "wrk.headers[\"Authorization\"] = \"Bearer $3\""
	} >"$1"
}

# the CPU time (clock ticks, user + system) of the pids in $1
bl_ticks() { for p in $1; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc; }

bl_rounds() {
	local rounds=$1 concs=$2 dur=$3 r c t k cp t0 t1 nreq cpu
	shift 3
	bl_post_lua $W/post.lua
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	for r in $(seq $rounds); do for c in $concs; do t=2; [ $c = 1 ] && t=1
		for k in "$@"; do
			cp=
			declare -F bl_pids >/dev/null && cp=$(bl_pids $k) && t0=$(bl_ticks "$cp")
			wrk -t$t -c$c -d${dur}s --latency -s $W/post.lua http://127.0.0.1:${U[$k]}/v1/chat/completions >$W/wrk.txt 2>&1
			cpu=
			if [ -n "$cp" ]; then
				t1=$(bl_ticks "$cp")
				nreq=$(awk '/requests in/{print $1}' $W/wrk.txt)
				cpu=" cpu_us_per_req=$(echo "($t1-$t0)*10000/$nreq" | bc)"
			fi
			echo "$r $c $k $(awk '/^ +50%/{print $2}' $W/wrk.txt) $(awk '/^Requests\/sec:/{print $2}' $W/wrk.txt) non2xx=$(awk '/Non-2xx/{print $NF}' $W/wrk.txt)$cpu"
		done
	done; done | tee $W/res.txt
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
}

bl_medians() {
	local concs=$1 c k rps p50
	shift
	echo "medians (c kind p50 rps):"
	for c in $concs; do for k in "$@"; do
		rps=$(awk -v c=$c -v k=$k '$2==c&&$3==k{print $5}' $W/res.txt | sort -g | awk '{a[NR]=$1}END{print a[int((NR+1)/2)]}')
		p50=$(awk -v c=$c -v k=$k '$2==c&&$3==k{print $4}' $W/res.txt | sort -g | awk '{a[NR]=$1}END{print a[int((NR+1)/2)]}')
		echo "$c $k $p50 $rps"
	done; done
}

us() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1000000; else print n }'; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2); else print "nan" }'; }
col() { awk -v k="$2" -v c="$3" -v f="$4" '$1 == k && $2 == c { print $f }' "$1" | median; }
f1() { awk -v v="$1" 'BEGIN { printf "%.1f", v }'; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
