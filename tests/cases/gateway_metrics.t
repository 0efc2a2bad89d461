#!/bin/bash
# gateway_metrics.t — the gateway's GET /metrics read by a real Prometheus
# server (Debian's prometheus, loopback only, a temp data dir, stopped by
# its pid): known traffic (ok, a stream with usage, 404s, 503s, a 429 of
# each kind the gateway gives, a cancelled stream) is sent, and every
# counter read back through Prometheus's HTTP API equals what was sent;
# tokens equal the sum of the usage objects the client received.
# `promtool check metrics` passes on a scrape. Cardinality: 1,000 requests
# with random model names and paths add no series. The setting
# LOBES_GATEWAY_METRICS_AUTH: keyless by default, the key when set to key.
# The Grafana dashboard docs/grafana/lobes.json: every metric its PromQL names
# is in a real scrape, promtool parses each expression, and this Prometheus
# evaluates each to at least one series.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
gw_test_env
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	skip_all "Debian's prometheus package is not installed (make deps installs it)"
command -v python3 >/dev/null || skip_all "python3 is not installed"
CORTEX_ID=LiquidAI/LFM2.5-1.2B-Instruct

STANDIN_TOKEN_MS=50 standin_start cortex "$CORTEX_ID" --served-model-name cortex \
	--gpu-memory-utilization 0.1 || skip_all "the stand-in did not start"
P_CORTEX=$STANDIN_PORT
P_DOWN=$(standin_free_port)
D=$TMP/deploy
mkdir -p "$D" "$TMP/root/proc"
# swap 90% used: alias requests are shed (the pressure 429)
printf 'MemTotal: 1000 kB\nMemFree: 500 kB\nMemAvailable: 600 kB\nSwapTotal: 1000 kB\nSwapFree: 100 kB\n' \
	>"$TMP/root/proc/meminfo"
printf 'cpu 100 0 100 800 0 0 0 0 0 0\n' >"$TMP/root/proc/stat"
write_env() { # [LINES]: the fleet's .env, then LINES
	gw_env "$D" "cortex:$P_CORTEX:$CORTEX_ID" senses:off "hand:$P_DOWN:org/Down-1B" embedder:off reranker:off \
		LOBES_GATEWAY_HEALTH_INTERVAL_MS=200 LOBES_GATEWAY_MAX_INFLIGHT_CORTEX=1 LOBES_GATEWAY_DRAIN_TIMEOUT=2 "$*"
}

# --- the setting -----------------------------------------------------------------
write_env "LOBES_GATEWAY_METRICS_AUTH=sometimes"
run "$LOBES" --dir "$D" gateway --check
is "$rc" 3 "LOBES_GATEWAY_METRICS_AUTH other than none or key is refused (exit 3)"
like "$errout" "\.env:[0-9]+: LOBES_GATEWAY_METRICS_AUTH 'sometimes' is not valid; expected none or key" \
	"and says where and what is expected"
KEY=k-$RANDOM$RANDOM
gw_keyfile "$D/gateway.key" "$KEY"
write_env
gw_start "$D"
ok $? "a gateway with a key starts"
gw GET /metrics
is "$code" 200 "/metrics is keyless by default, like /health"
like "$hdrs" 'Content-Type: text/plain; version=0.0.4' "in the Prometheus text format"
gw_stop_all
write_env "LOBES_GATEWAY_METRICS_AUTH=key"
gw_start "$D"
gw GET /metrics
is "$code" 401 "LOBES_GATEWAY_METRICS_AUTH=key: /metrics without the key is 401"
GW_KEY=$KEY gw GET /metrics
is "$code" 200 "and 200 with it"
gw_stop_all
rm -f "$D/gateway.key"

# --- Prometheus scraping the gateway ------------------------------------------------
write_env
LOBES_SYSROOT=$TMP/root gw_start "$D"
ok $? "the gateway starts (port $GW_PORT)"
gw_wait_for grep -q '"event":"health","role":"cortex","ready":true' "$GW_ERR"
ok $? "the cortex is ready"

PP=$(standin_free_port)
cat >"$TMP/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: lobes
    static_configs:
      - targets: ['127.0.0.1:$GW_PORT']
EOF
promtool check config "$TMP/prom.yml" >/dev/null 2>&1
ok $? "promtool accepts the scrape config"
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom-data" \
	--storage.tsdb.retention.time=15m --web.listen-address="127.0.0.1:$PP" \
	--log.level=warn >"$TMP/prom.log" 2>&1 &
PROM_PID=$!
trap 'kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null; gw_stop_all; standin_stop_all; rm -rf "$TMP"' EXIT
prom_ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$PP/-/ready")" = 200 ]; }
gw_wait_for prom_ready
ok $? "Prometheus is ready on 127.0.0.1:$PP" || { sed 's/^/# /' "$TMP/prom.log"; }

# prom QUERY: the value of an instant query (the first series; "none" when empty)
prom() {
	curl -s --max-time 5 --data-urlencode "query=$1" "http://127.0.0.1:$PP/api/v1/query" |
		python3 -c 'import json,sys
d=json.load(sys.stdin)["data"]["result"]
print(d[0]["value"][1] if d else "none")' 2>/dev/null
}
# Wait until Prometheus holds a scrape taken after now.
scraped_after() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" \
	"$(prom 'timestamp(up{job="lobes"})' | sed 's/none/0/')" "$1"; }
scrape_now() { local t; t=$(date +%s.%N); gw_wait_for scraped_after "$t"; }
scrape_now
ok $? "Prometheus scrapes the gateway"
is "$(prom 'up{job="lobes"}')" 1 "the target is up"

# --- known traffic ---------------------------------------------------------------------
Q='"messages":[{"role":"user","content":"What is the capital city of France?"}],"max_tokens":4'
p_sum=0 c_sum=0
usage_of() { python3 -c 'import json,sys,re
p=c=0
for l in sys.stdin.read().splitlines():
    l=l[6:] if l.startswith("data: ") else l
    try: o=json.loads(l)
    except Exception: continue
    u=o.get("usage") if isinstance(o,dict) else None
    if u: p,c=u["prompt_tokens"],u.get("completion_tokens",0)
print(p,c)'; }
for i in 1 2 3; do
	gw POST /v1/chat/completions "{\"model\":\"cortex\",$Q}"
	is "$code" 200 "ok request $i answers 200"
	read -r p c < <(printf '%s' "$body" | usage_of)
	p_sum=$((p_sum + p)) c_sum=$((c_sum + c))
done
gw POST /v1/chat/completions "{\"model\":\"cortex\",\"stream\":true,\"stream_options\":{\"include_usage\":true},$Q}"
is "$code" 200 "a stream with usage answers 200"
read -r p c < <(printf '%s' "$body" | usage_of)
ok $([ "$p" -gt 0 ] && [ "$c" -gt 0 ]; echo $?) "and its last frame carries usage ($p, $c)"
p_sum=$((p_sum + p)) c_sum=$((c_sum + c))
for i in 1 2; do
	gw POST /v1/chat/completions '{"model":"no-such-model","messages":[]}'
	is "$code" 404 "unknown model $i: 404"
done
gw POST /v1/chat/completions '{"model":"senses","messages":[]}'
is "$code" 404 "infeasible role: 404"
gw GET /no/such/route
is "$code" 404 "unknown route: 404"
for i in 1 2 3; do
	gw POST /v1/chat/completions "{\"model\":\"hand\",$Q}"
	is "$code" 503 "down engine $i: 503"
done
gw POST /v1/chat/completions "{\"model\":\"chat\",$Q}"
is "$code" 429 "an alias under swap pressure: 429"
like "$body" '"code":"server_busy"' "server_busy"
# a long stream holds the cortex's one slot; then it is cancelled. It is a
# completion of 20,000 tokens (ignore_eos; 1,000 s at 50 ms a token) under an
# hour's bound, so only the kill ends it: a short answer could end on its own
# before a loaded box reaches the kill, and no cancel would ever show
curl -sN --max-time 3600 -d '{"model":"cortex","stream":true,"max_tokens":20000,"ignore_eos":true,"prompt":"x"}' \
	"http://127.0.0.1:$GW_PORT/v1/completions" >"$TMP/held" 2>/dev/null &
held=$!
frames() { [ "$(grep -c '^data: {' "$TMP/held")" -ge 2 ]; }
gw_wait_for frames
ok $? "a long stream is flowing"
gw POST /v1/chat/completions "{\"model\":\"cortex\",$Q}"
is "$code" 429 "past the cortex's cap of 1: 429"
like "$body" '"code":"concurrency_limit"' "concurrency_limit"
kill "$held"
wait "$held" 2>/dev/null
aborted() { grep -q 'Aborted request' "$STANDIN_LOG"; }
gw_wait_for aborted
ok $? "the cancelled stream was aborted in the engine"
# the gateway counts a request when MHD reports it completed
ended() { grep -c '"outcome":"client_closed"' "$GW_ERR" | grep -q '^1$'; }
gw_wait_for ended
ok $? "the gateway logged the cancelled stream"

# --- the counters, through Prometheus ------------------------------------------------------
scrape_now
ok $? "Prometheus scraped after the traffic"
C='route="/v1/chat/completions"'
chk() { is "$(prom "$1")" "$2" "$1 = $2"; }
chk "lobes_gateway_requests_total{role=\"cortex\",$C,code=\"200\"}" 4
CC='route="/v1/completions"'
chk "lobes_gateway_requests_total{role=\"cortex\",$CC,code=\"200\"}" 1
chk "lobes_gateway_requests_total{role=\"cortex\",$C,code=\"429\"}" 2
chk "lobes_gateway_requests_total{role=\"none\",$C,code=\"404\"}" 2
chk "lobes_gateway_requests_total{role=\"senses\",$C,code=\"404\"}" 1
chk "lobes_gateway_requests_total{role=\"none\",route=\"other\",code=\"404\"}" 1
chk "lobes_gateway_requests_total{role=\"hand\",$C,code=\"503\"}" 3
chk "lobes_gateway_error_answers_total{role=\"none\",$C,code=\"model_not_found\"}" 2
chk "lobes_gateway_error_answers_total{role=\"senses\",$C,code=\"role_infeasible\"}" 1
chk "lobes_gateway_error_answers_total{role=\"none\",route=\"other\",code=\"not_found\"}" 1
chk "lobes_gateway_error_answers_total{role=\"hand\",$C,code=\"backend_unavailable\"}" 3
chk "lobes_gateway_throttled_total{role=\"cortex\",$C,reason=\"concurrency\"}" 1
chk "lobes_gateway_throttled_total{role=\"cortex\",$C,reason=\"pressure\"}" 1
chk "lobes_gateway_throttled_total{role=\"cortex\",$C,reason=\"rate\"}" 0
# hand's engine is known down by its /health poll: its 503s are answered at
# once, without a connect (tests/cases/gateway_timeouts.t)
chk "lobes_gateway_upstream_errors_total{role=\"hand\",$C,kind=\"connect\"}" 0
chk "sum(lobes_gateway_upstream_errors_total{role=\"cortex\"})" 0
chk "lobes_gateway_stream_cancels_total{role=\"cortex\",$C}" 0
chk "lobes_gateway_stream_cancels_total{role=\"cortex\",$CC}" 1
chk "lobes_gateway_prompt_tokens_total{role=\"cortex\",$C}" "$p_sum"
chk "lobes_gateway_completion_tokens_total{role=\"cortex\",$C}" "$c_sum"
chk "lobes_gateway_request_duration_seconds_count{role=\"cortex\",$C}" 6
chk "lobes_gateway_request_duration_seconds_bucket{role=\"cortex\",$C,le=\"+Inf\"}" 6
chk "lobes_gateway_request_duration_seconds_count{role=\"cortex\",$CC}" 1
chk "lobes_gateway_time_to_first_byte_seconds_count{role=\"hand\",$C}" 3
chk "lobes_gateway_requests_in_flight{role=\"cortex\",$C}" 0
chk 'lobes_gateway_role_ready{role="cortex"}' 1
chk 'lobes_gateway_role_ready{role="hand"}' 0
chk 'lobes_gateway_config_reloads_total' 0
like "$(prom 'lobes_gateway_start_time_seconds')" '^1[0-9]{9}' "the start time is a Unix time"
chk 'count(lobes_gateway_build_info)' 1
ok $([ "$(prom "lobes_gateway_response_bytes_total{role=\"cortex\",$C}")" -gt 0 ]; echo $?) "response bytes are counted"

# a reload is counted
kill -HUP "$GW_PID"
gw_wait_for grep -q '"event":"reloaded"' "$GW_ERR"
scrape_now
chk 'lobes_gateway_config_reloads_total' 1

# promtool on a scrape with every family in it
curl -s --max-time 10 "http://127.0.0.1:$GW_PORT/metrics" >"$TMP/scrape.txt"
run promtool check metrics <"$TMP/scrape.txt"
is "$rc" 0 "promtool check metrics passes on a scrape"
[ "$rc" = 0 ] || printf '%s\n' "$out$errout" | head -20 | sed 's/^/# /'
like "$(cat "$TMP/scrape.txt")" 'le="0.005"\}.*' "the histograms start at 5 ms"
like "$(grep -c 'le="600"' "$TMP/scrape.txt")" '^[1-9]' "and reach 10 min"

# --- the Grafana dashboard (docs/grafana/lobes.json) against this scrape --------------------
run python3 "$SRC/tests/grafana_exprs.py" "$SRC/docs/grafana/lobes.json" "$TMP/scrape.txt" "$TMP/dash-rules.json"
is "$rc" 0 "the dashboard parses and every metric its PromQL names is in the gateway's scrape"
[ "$rc" = 0 ] || printf '%s\n' "$errout" | head -20 | sed 's/^/# /'
printf '%s\n' "$out" >"$TMP/dash-exprs.txt"
n_expr=$(grep -c . "$TMP/dash-exprs.txt")
ok $([ "$n_expr" -ge 15 ]; echo $?) "it has the expected queries ($n_expr)"
for m in requests_total time_to_first_byte_seconds_bucket request_duration_seconds_bucket \
	requests_in_flight throttled_total prompt_tokens_total completion_tokens_total role_ready; do
	grep -q "lobes_gateway_$m" "$TMP/dash-exprs.txt"
	ok $? "a panel reads lobes_gateway_$m"
done
run promtool check rules "$TMP/dash-rules.json"
is "$rc" 0 "promtool parses every expression (as recording rules)"
[ "$rc" = 0 ] || printf '%s\n' "$out$errout" | head -20 | sed 's/^/# /'
# and Prometheus answers each over the traffic above with at least one series
prom_n() {
	curl -s --max-time 5 --data-urlencode "query=$1" "http://127.0.0.1:$PP/api/v1/query" |
		python3 -c 'import json,sys
d=json.load(sys.stdin)
print(len(d["data"]["result"]) if d.get("status") == "success" else "error")' 2>/dev/null
}
empty=""
while IFS= read -r ex; do
	nres=$(prom_n "$ex")
	case $nres in '' | error | 0) empty="$empty
# $nres: $ex" ;; esac
done <"$TMP/dash-exprs.txt"
is "$empty" "" "Prometheus evaluates every dashboard query to at least one series"

# --- cardinality: random model names and paths add no series ---------------------------------
series() { grep -vc '^#' "$TMP/scrape.txt"; }
n_before=$(series)
p_before=$(prom 'count({__name__=~"lobes_gateway_.*"})')
{
	for i in $(seq 500); do
		printf 'url = "http://127.0.0.1:%s/v1/chat/completions"\n' "$GW_PORT"
		printf 'header = "Content-Type: application/json"\n'
		printf 'data = "{\\"model\\":\\"m-%s-%s\\",\\"messages\\":[]}"\n' "$RANDOM" "$i"
		printf 'output = "/dev/null"\nwrite-out = "%%{http_code}\\n"\nnext\n'
		printf 'url = "http://127.0.0.1:%s/r%s/%s?model=x%s"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\nnext\n' \
			"$GW_PORT" "$RANDOM" "$i" "$RANDOM"
	done
} | sed '$d' >"$TMP/random.cfg" # no "next" after the last
n_sent=$(curl -s --max-time 300 -K "$TMP/random.cfg" | grep -c '^404$')
is "$n_sent" 1000 "1,000 requests with random model names and paths were answered 404"
curl -s --max-time 10 "http://127.0.0.1:$GW_PORT/metrics" >"$TMP/scrape.txt"
is "$(series)" "$n_before" "they add no series to the gateway's scrape ($n_before samples)"
scrape_now
is "$(prom 'count({__name__=~"lobes_gateway_.*"})')" "$p_before" "nor to Prometheus's ($p_before series)"
chk "lobes_gateway_requests_total{role=\"none\",$C,code=\"404\"}" 502
chk "lobes_gateway_requests_total{role=\"none\",route=\"other\",code=\"404\"}" 501
unlike "$(cat "$TMP/scrape.txt")" 'm-[0-9]|/r[0-9]' "no client model name or path is a label"

kill "$PROM_PID"
wait "$PROM_PID" 2>/dev/null
gw_stop_all
done_testing
