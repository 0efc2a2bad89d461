#!/bin/bash
# bench-gateway.sh BUILD OUT.md — `make bench-gateway`: lobes gateway against
# nginx configured as the same reverse proxy, both in front of the same
# engine, side by side in one run.
#
# 1. Request latency/throughput: wrk POSTs a chat completion (non-streamed)
#    to the vLLM stand-in directly, through `lobes gateway`, and through
#    nginx (proxy_pass, HTTP/1.1 keepalive upstream, buffering off), at
#    concurrency 1, 64 and 256; RUNS rounds, interleaved; medians.
# 2. 1,000 concurrent SSE streams: tools/bench-sse.c serves timestamped
#    frames (FRAMES per stream, INTERVAL_MS apart) and a libcurl client
#    measures each frame's source-to-client delay, directly, through the
#    gateway and through nginx; RUNS rounds; medians of p50/p99; the peak
#    RSS of the gateway (VmHWM) and of nginx (sum over its processes).
# Everything listens on 127.0.0.1. Env: RUNS (3), DUR (5 s per wrk run),
# STREAMS (1000), FRAMES (20), INTERVAL_MS (200).
set -u
BUILD=$1
OUT=$2
LOBES=$BUILD/lobes
STANDIN=$BUILD/tests/standin/vllm-standin
SSE=$BUILD/tools/bench-sse
RUNS=${RUNS:-3}
DUR=${DUR:-5}
STREAMS=${STREAMS:-1000}
FRAMES=${FRAMES:-20}
INTERVAL_MS=${INTERVAL_MS:-200}
for v in RUNS DUR STREAMS FRAMES INTERVAL_MS; do
	case ${!v} in '' | *[!0-9]* | 0) echo "bench-gateway: $v='${!v}' is not a positive integer" >&2; exit 2 ;; esac
done
# a measuring tool that fails stops the bench: no table is written
fail() { echo "bench-gateway: $1; no table written" >&2; [ -n "${2:-}" ] && sed 's/^/  /' "$2" >&2; exit 5; }
. "$(dirname "$0")/bench-lib.sh"
bl_init lobes-bench-gw wrk nginx curl

P_ENGINE=$(fp) P_SSE=$(fp)
P_GW=$(fp) P_GW2=$(fp) P_NG=$(fp) P_NG2=$(fp)

# the engines: the SSE source and the vLLM stand-in (a test double)
"$SSE" serve "$P_SSE" "$FRAMES" "$INTERVAL_MS" >"$W/sse.log" 2>&1 &
PIDS="$PIDS $!"
bl_standin "$STANDIN" "$P_ENGINE"

gateway() { # DIR ENGINE_PORT GW_PORT
	bl_gw_env "$1" "$2" "$3"
	"$LOBES" --dir "$1" gateway >"$1/out" 2>/dev/null &
	LAST=$!
	PIDS="$PIDS $LAST"
}
gateway "$W/gw" "$P_ENGINE" "$P_GW"
GW_PID=$LAST
gateway "$W/gw2" "$P_SSE" "$P_GW2"
GW2_PID=$LAST

mkdir -p "$W/ng"
cat >"$W/nginx.conf" <<EOF
worker_processes auto;
pid $W/nginx.pid;
error_log $W/nginx.err;
events { worker_connections 8192; }
http {
	access_log off;
	client_body_temp_path $W/ng/body;
	proxy_temp_path $W/ng/proxy;
	fastcgi_temp_path $W/ng/fastcgi;
	uwsgi_temp_path $W/ng/uwsgi;
	scgi_temp_path $W/ng/scgi;
	upstream engine { server 127.0.0.1:$P_ENGINE; keepalive 512; }
	upstream sse { server 127.0.0.1:$P_SSE; keepalive 512; }
	server {
		listen 127.0.0.1:$P_NG;
		location / {
			proxy_pass http://engine;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_buffering off;
			proxy_request_buffering off;
		}
	}
	server {
		listen 127.0.0.1:$P_NG2;
		location / {
			proxy_pass http://sse;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_buffering off;
			proxy_request_buffering off;
		}
	}
}
EOF
nginx -p "$W" -c "$W/nginx.conf" -e "$W/nginx.err" 2>>"$W/nginx.err" || { cat "$W/nginx.err" >&2; exit 4; }
wp "$P_GW" /health
wp "$P_GW2" /health
sleep 1 # the gateway's first /health poll

bl_post_lua "$W/post.lua"

declare -A URL=([direct]=$P_ENGINE [gateway]=$P_GW [nginx]=$P_NG)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$RUNS"); do
	for c in 1 64 256; do
		t=2; [ "$c" = 1 ] && t=1
		for k in direct gateway nginx; do
			wrk -t$t -c$c -d"${DUR}s" --latency -s "$W/post.lua" "http://127.0.0.1:${URL[$k]}/v1/chat/completions" >"$W/wrk.txt" 2>&1 ||
				fail "wrk failed (exit $?) on $k c=$c" "$W/wrk.txt"
			p50=$(awk '/^ +50%/ { print $2 }' "$W/wrk.txt")
			p99=$(awk '/^ +99%/ { print $2 }' "$W/wrk.txt")
			rps=$(awk '/^Requests\/sec:/ { print $2 }' "$W/wrk.txt")
			bad=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$W/wrk.txt")
			[ -n "$p50" ] && [ -n "$p99" ] && awk -v r="${rps:-0}" 'BEGIN { exit !(r > 0) }' ||
				fail "wrk returned no latency or no requests on $k c=$c" "$W/wrk.txt"
			grep -q '^  Socket errors:' "$W/wrk.txt" && [ "$k" != direct ] &&
				echo "bench-gateway: $k c=$c: $(grep '^  Socket errors:' "$W/wrk.txt")" >&2
			echo "$k $c $(us "$p50") $(us "$p99") $rps ${bad:-0}" >>"$W/req.txt"
			echo "run $r c=$c $k: p50 $p50 p99 $p99 $rps req/s non-2xx ${bad:-0}" >&2
		done
	done
done

rss_watch() { # PIDS... : the largest summed VmRSS (kB) seen while $W/watch exists
	local max=0 s p
	while [ -e "$W/watch" ]; do
		s=0
		for p in "$@"; do s=$((s + $(awk '/^VmRSS:/ { print $2 }' /proc/$p/status 2>/dev/null || echo 0))); done
		[ "$s" -gt "$max" ] && max=$s
		sleep 0.2
	done
	echo "$max"
}
NG_PIDS=$(pgrep -P "$(cat "$W/nginx.pid")" | tr '\n' ' ')" $(cat "$W/nginx.pid")"
declare -A SURL=([direct]=$P_SSE [gateway]=$P_GW2 [nginx]=$P_NG2)
for r in $(seq "$RUNS"); do
	for k in direct gateway nginx; do
		touch "$W/watch"
		wp=
		case $k in
		gateway) rss_watch $GW2_PID >"$W/rss" & wp=$! ;;
		nginx) rss_watch $NG_PIDS >"$W/rss" & wp=$! ;;
		*) echo 0 >"$W/rss" ;;
		esac
		res=$("$SSE" client "http://127.0.0.1:${SURL[$k]}/v1/chat/completions" "$STREAMS") ||
			fail "the SSE client failed on $k: $res"
		printf '%s' "$res" | grep -Eq '"frames":[1-9]' || fail "the SSE client got no frames from $k: $res"
		rm -f "$W/watch"
		[ -n "$wp" ] && wait "$wp"
		echo "$k $res $(cat "$W/rss")" >>"$W/sse.txt"
		echo "sse run $r $k: $res rss_kB $(cat "$W/rss")" >&2
	done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
GW_HWM=$(awk '/^VmHWM:/ { print $2 }' /proc/$GW2_PID/status)

sse() { # KIND KEY -> median of a JSON field
	grep "^$1 " "$W/sse.txt" | sed -E "s/.*\"$2\":([-0-9.]+).*/\\1/" | median
}
sse_rss() { grep "^$1 " "$W/sse.txt" | awk '{ print $NF }' | sort -g | tail -1; }

# the written sections below the marker (the relay path's profile, old-vs-new
# measurements) are kept across runs: they are not this run's output
MARK='<!-- kept by bench-gateway: the sections below are written by hand -->'
KEPT=
[ -f "$OUT" ] && KEPT=$(sed -n "/^$MARK\$/,\$p" "$OUT")
{
	echo "# lobes gateway vs nginx (reverse proxy in front of one engine)"
	echo
	echo "Command: \`make bench-gateway\` (RUNS=$RUNS DUR=${DUR}s STREAMS=$STREAMS FRAMES=$FRAMES INTERVAL_MS=$INTERVAL_MS)."
	echo "Written by tools/bench-gateway.sh on $(date -u +%Y-%m-%d) — $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
	echo "$(uname -sr); nginx $(nginx -v 2>&1 | sed 's|.*/||'), wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}')."
	echo "Load average before / after: $LOAD_BEFORE / $LOAD_AFTER. The machine is shared: other"
	echo "work runs on the same cores, so absolute figures move between runs; the three"
	echo "targets are measured interleaved in each round, and the tables are medians of $RUNS rounds."
	echo
	echo "Setup: the engine is the vLLM stand-in (a test double: thread per connection, one"
	echo "lock around its handler), answering a non-streamed chat completion. \`lobes gateway\`"
	echo "($(( $(nproc) < 8 ? $(nproc) : 8 )) worker loops by default: each one thread running its own MHD daemon and libcurl"
	echo "multi handle, sharing the port with SO_REUSEPORT) and nginx (worker_processes auto,"
	echo "HTTP/1.1 keepalive upstream, proxy_buffering off) both proxy to it. wrk runs on the"
	echo "same cores as all of them. Added latency = the proxy's percentile minus direct's."
	echo
	echo "## Requests (wrk, POST /v1/chat/completions)"
	echo
	echo "| concurrency | target | p50 µs | p99 µs | added p50 µs | added p99 µs | req/s | req/s vs direct | req/s vs nginx |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for c in 1 64 256; do
		d50=$(col "$W/req.txt" direct $c 3) d99=$(col "$W/req.txt" direct $c 4) drps=$(col "$W/req.txt" direct $c 5)
		nrps=$(col "$W/req.txt" nginx $c 5)
		for k in direct gateway nginx; do
			p50=$(col "$W/req.txt" $k $c 3) p99=$(col "$W/req.txt" $k $c 4) rps=$(col "$W/req.txt" $k $c 5)
			a50="—" a99="—" vn="—"
			[ $k != direct ] && a50=$(sub "$p50" "$d50") a99=$(sub "$p99" "$d99")
			[ $k = gateway ] && vn=$(ratio "$rps" "$nrps")
			echo "| $c | $k | $(f1 "$p50") | $(f1 "$p99") | $a50 | $a99 | $(f1 "$rps") | $(ratio "$rps" "$drps") | $vn |"
		done
	done
	echo
	bad=$(awk '$6 > 0' "$W/req.txt" | wc -l)
	echo "wrk runs with non-2xx answers: $bad of $(wc -l <"$W/req.txt")."
	echo
	echo "## $STREAMS concurrent SSE streams ($FRAMES frames each, ${INTERVAL_MS} ms apart)"
	echo
	echo "Frame delay = time from the source handing a frame to its socket to the client"
	echo "reading it (one host, CLOCK_MONOTONIC). Added = the proxy's minus direct's."
	echo
	echo "| target | frames (median run) | errors | p50 µs | p99 µs | added p50 µs | added p99 µs | peak RSS |"
	echo "|---|---|---|---|---|---|---|---|"
	d50=$(sse direct p50_us) d99=$(sse direct p99_us)
	for k in direct gateway nginx; do
		p50=$(sse $k p50_us) p99=$(sse $k p99_us)
		a50="—" a99="—" rss="—"
		[ $k != direct ] && a50=$(sub "$p50" "$d50") a99=$(sub "$p99" "$d99") rss="$(awk -v v="$(sse_rss $k)" 'BEGIN { printf "%.1f MB", v / 1024 }')"
		echo "| $k | $(sse $k frames) | $(sse $k errors) | $(f1 "$p50") | $(f1 "$p99") | $a50 | $a99 | $rss |"
	done
	echo
	echo "Peak RSS is the largest VmRSS sampled every 0.2 s during the run (nginx: master and"
	echo "workers summed). The gateway's VmHWM over the whole benchmark: $(awk -v v="$GW_HWM" 'BEGIN { printf "%.1f MB", v / 1024 }')."
	echo
	echo "Raw rows (kind concurrency p50_us p99_us req/s non2xx):"
	echo
	echo '```'
	cat "$W/req.txt"
	cat "$W/sse.txt"
	echo '```'
	if [ -n "$KEPT" ]; then printf '\n%s\n' "$KEPT"; fi
} >"$OUT.tmp" || { echo "bench-gateway: cannot write $OUT.tmp" >&2; exit 1; }
mv "$OUT.tmp" "$OUT" || exit 1
echo "bench-gateway: wrote $OUT" >&2
