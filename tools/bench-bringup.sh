#!/bin/bash
# bench-bringup.sh — bringing up a 5-role fleet on one memory pool, three ways:
#   together    `docker-compose up -d` of every role at once
#   sequential  one role at a time, each answering /health 200 before the next
#               (`docker-compose up -d --no-deps ROLE`)
#   lobes       `lobes serve --apply` (one memory-profiling window at a time)
# against a private dockerd (tests/integration/docker.sh) running the vLLM
# stand-in (a test double, tests/standin/) with real weight files in a
# temporary Hugging Face cache (so real page cache) and real allocations of
# STANDIN_MEM_SCALE of each budget (5% by default: first touch of anonymous
# memory is slow on small VMs, ~150 MiB/s where this was written).
#
# Per trial: failed boot (any role whose first boot failed: restart count > 0,
# exited, or not every role healthy within BOUND_S) and time to all-healthy
# (from just before the strategy's first command to the last role's
# "Application startup complete." as docker timestamped it; /health answers
# from that line on). Between trials: compose down, sync, drop the page cache,
# wait for MemFree to come back. Strategies rotate every round (a b c, b c a,
# c a b, ...). The chain the memory constraint forces (each role's process
# start → its window closing, summed, plus the last role's window → healthy)
# is computed from the stand-in's docker-timestamped log lines. The results
# go to OUT as markdown; raw trial data is deleted unless BENCH_KEEP=DIR.
#
# usage: tools/bench-bringup.sh LOBES_BIN STANDIN_BIN OUT.md
# env: TRIALS (10 per strategy), BOUND_S (90), POLL_MS (200, every poller),
#      STANDIN_LOAD_MS STANDIN_PROFILE_MS STANDIN_WARMUP_MS STANDIN_API_MS
#      (3000 2500 1500 3000), STANDIN_MEM_SCALE (0.05), TMPDIR, BENCH_KEEP
# Needs root (a private dockerd, drop_caches), docker.io, docker-compose,
# curl and python3 (docker-compose v1 needs it anyway).
set -u
LOBES=$(readlink -f "$1")
STANDIN_BIN=$(readlink -f "$2")
OUT=$3
SRC=$(cd "$(dirname "$0")/.." && pwd)
TRIALS=${TRIALS:-10}
BOUND_S=${BOUND_S:-90}
POLL_MS=${POLL_MS:-200}
LOAD_MS=${STANDIN_LOAD_MS:-3000}
PROFILE_MS=${STANDIN_PROFILE_MS:-2500}
WARMUP_MS=${STANDIN_WARMUP_MS:-1500}
API_MS=${STANDIN_API_MS:-3000}
MEM_SCALE=${STANDIN_MEM_SCALE:-0.05}
PROJECT=lobes-bench
# role util weight-MiB port (LOBES_ORDER of the spark profile)
ROLES="cortex:0.30:1536:18001 senses:0.16:1024:18002 hand:0.12:768:18003
embedder:0.10:512:18004 reranker:0.10:512:18005"

die() { echo "bench-bringup: $*" >&2; exit 3; }
[ "$(id -u)" = 0 ] || die "needs root (a private dockerd, drop_caches)"
for t in docker dockerd docker-compose curl python3; do
	command -v "$t" >/dev/null || die "'$t' is not installed (make deps)"
done
[ -x "$LOBES" ] && [ -x "$STANDIN_BIN" ] || die "build lobes and the stand-in first"

export LOBES_SRC=$SRC LOBES_BIN=$LOBES STANDIN=$STANDIN_BIN
. "$SRC/tests/lib.sh"
skip_all() { die "$*"; }
. "$SRC/tests/integration/docker.sh"
WORK=$TMP   # removed at exit with the dockerd (docker.sh's trap)
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
now() { date +%s.%N; }
memfree() { echo $(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) * 1024 )); }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
T_START=$(now)

log "starting a private dockerd and building the stand-in image"
docker_start
docker_build_standin || die "building the stand-in image failed: $(tail -n 3 "$DOCKER_ROOT/build.log")"

# The Hugging Face cache: the fixture configs plus one real weight file each.
HF=$WORK/hf
mkdir -p "$HF" && cp -r "$SRC/tests/fixtures/hf/hub" "$HF/" || die "copying the HF fixture"
D=$WORK/deploy
H=$SRC/tests/fixtures/hosts/gb10
env -u LOBES_SYSROOT HF_HUB_CACHE="$HF/hub" LOBES_SYSROOT="$H" LOBES_NVIDIA_SMI="$H/bin/nvidia-smi" \
	"$LOBES" --dir "$D" init --profile spark --apply >/dev/null || die "lobes init failed"
ORDER=$(sed -n 's/^LOBES_ORDER=//p' "$D/.env" | tr ',' ' ')
sed -i "s|^\([A-Z]*\)_IMAGE=.*|\1_IMAGE=lobes-standin:test|; s|^LOBES_HF_CACHE=.*|LOBES_HF_CACHE=$HF|;
	s|^COMPOSE_FILE=.*|COMPOSE_FILE=docker-compose.yml:docker-compose.bench.yml|;
	s|^COMPOSE_PROJECT_NAME=.*|COMPOSE_PROJECT_NAME=$PROJECT|" "$D/.env"
echo "services:" > "$D/docker-compose.bench.yml"
PORTS=""
for spec in $ROLES; do
	IFS=: read -r r util mib port <<< "$spec"
	R=$(echo "$r" | tr a-z A-Z)
	sed -i "s|^${R}_GPU_MEM_UTIL=.*|${R}_GPU_MEM_UTIL=$util|; s|^${R}_PORT=.*|${R}_PORT=$port|" "$D/.env"
	model=$(sed -n "s|^${R}_MODEL=||p" "$D/.env")
	snap=$(echo "$HF/hub/models--${model//\//--}/snapshots/"*)
	[ -d "$snap" ] || die "no fixture checkpoint for '$model'"
	dd if=/dev/zero of="$snap/model-00001-of-00001.safetensors" bs=1M count="$mib" status=none ||
		die "writing the weights of '$model'"
	cat >> "$D/docker-compose.bench.yml" <<-EOF
	  $r:
	    environment:
	      STANDIN_CARD: spark
	      STANDIN_LOAD_MS: "$LOAD_MS"
	      STANDIN_PROFILE_MS: "$PROFILE_MS"
	      STANDIN_WARMUP_MS: "$WARMUP_MS"
	      STANDIN_API_MS: "$API_MS"
	      STANDIN_MEM_SCALE: "$MEM_SCALE"
	EOF
	PORTS="$PORTS $port"
done
[ "$(echo $ORDER)" = "cortex senses hand embedder reranker" ] || die "unexpected LOBES_ORDER '$ORDER'"
docker_compose_project "$PROJECT" "$D/docker-compose.yml"
port_of() { sed -n "s|^$(echo "$1" | tr a-z A-Z)_PORT=||p" "$D/.env"; }
URLS=""
for p in $PORTS; do URLS="$URLS http://127.0.0.1:$p/health"; done
POLL_S=$(awk -v m="$POLL_MS" 'BEGIN { printf "%.3f", m / 1000 }')
export LOBES_NVML_LIB=$WORK/absent/libnvidia-ml.so.1   # no GPU here: no NVML probing
export HF_HUB_CACHE=$HF/hub
unset LOBES_SYSROOT LOBES_COMPOSE COMPOSE_FILE COMPOSE_PROJECT_NAME

healthy_count() {
	# shellcheck disable=SC2086
	curl -s -o /dev/null -w '%{http_code}\n' --max-time 1 $URLS 2>/dev/null | grep -c '^200$'
}

# Teardown: compose down, drop the page cache, wait (bounded) for MemFree.
teardown() {
	(cd "$D" && compose down -t 2 >/dev/null 2>&1)
	local i
	for i in $(seq 60); do
		drop
		[ "$(memfree)" -ge "$((BASE_FREE - 512 * 1048576))" ] && return 0
		sleep 1
	done
	log "warning: MemFree $(($(memfree) >> 20)) MiB did not come back to $((BASE_FREE >> 20)) MiB - 512"
}

# Record what docker says about every role after a trial into $1.
collect() {
	local dir=$1 r
	for r in $ORDER; do
		docker inspect "${PROJECT}_${r}_1" > "$dir/$r.inspect.json" 2>/dev/null || echo '[]' > "$dir/$r.inspect.json"
		docker logs -t "${PROJECT}_${r}_1" > "$dir/$r.log" 2>&1 || : > "$dir/$r.log"
	done
}

# Poll /health of every role until all answer 200, the bound passes, or
# (with a pid) that process exits non-zero. Writes the poll time to $1/polled.
wait_all() {
	local dir=$1 deadline=$2 pid=${3:-}
	while :; do
		if [ "$(healthy_count)" = 5 ]; then now > "$dir/polled"; return 0; fi
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"; [ $? = 0 ] || return 1
			pid=
		fi
		[ "$(awk -v d="$deadline" -v n="$(now)" 'BEGIN { print (n >= d) }')" = 1 ] && return 1
		sleep "$POLL_S"
	done
}

run_together() {
	local dir=$1 t0 deadline
	t0=$(now); echo "$t0" > "$dir/t0"
	deadline=$(awk -v t="$t0" -v b="$BOUND_S" 'BEGIN { printf "%.3f", t + b }')
	(cd "$D" && compose up -d >"$dir/cmd.out" 2>&1)
	wait_all "$dir" "$deadline"
}

run_sequential() {
	local dir=$1 t0 deadline r port a b
	t0=$(now); echo "$t0" > "$dir/t0"
	deadline=$(awk -v t="$t0" -v b="$BOUND_S" 'BEGIN { printf "%.3f", t + b }')
	for r in $ORDER; do
		port=$(port_of "$r")
		a=$(now)
		(cd "$D" && compose up -d --no-deps "$r" >>"$dir/cmd.out" 2>&1)
		b=$(now)
		echo "$r $a $b" >> "$dir/starts"
		until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port/health")" = 200 ]; do
			[ "$(awk -v d="$deadline" -v n="$(now)" 'BEGIN { print (n >= d) }')" = 1 ] && return 1
			sleep "$POLL_S"
		done
	done
	wait_all "$dir" "$deadline"
}

run_lobes() {
	local dir=$1 t0 deadline pid rc
	t0=$(now); echo "$t0" > "$dir/t0"
	deadline=$(awk -v t="$t0" -v b="$BOUND_S" 'BEGIN { printf "%.3f", t + b }')
	"$LOBES" --dir "$D" --json serve --apply --poll-ms "$POLL_MS" --mem-wait "$BOUND_S" \
		--window-wait "$BOUND_S" --ready-wait "$BOUND_S" > "$dir/events.jsonl" 2>"$dir/cmd.out" &
	pid=$!
	wait_all "$dir" "$deadline" "$pid"
	rc=$?
	# lobes exits once it has seen every role ready; bounded like the trial
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill "$pid" 2>/dev/null
	wait "$pid"
	echo "$? $(now)" > "$dir/lobes_exit"
	return $rc
}

mkdir -p "$WORK/trials"
drop
sleep 1
BASE_FREE=$(memfree)
log "MemFree after drop_caches: $((BASE_FREE >> 20)) MiB; $TRIALS trials of each strategy, bound ${BOUND_S}s"
# make sure nothing of the project is left
(cd "$D" && compose down -t 1 >/dev/null 2>&1)
order=(together sequential lobes)
n=0
for round in $(seq "$TRIALS"); do
	for k in 0 1 2; do
		s=${order[$(( (k + round - 1) % 3 ))]}
		n=$((n + 1))
		dir=$WORK/trials/$(printf '%02d' "$n")-$s
		mkdir -p "$dir"
		echo "$s $round" > "$dir/what"
		cut -d' ' -f1 /proc/loadavg > "$dir/load"
		"run_$s" "$dir"
		echo $? > "$dir/rc"
		collect "$dir"
		log "round $round $s: $( [ "$(cat "$dir/rc")" = 0 ] && echo "all healthy" || echo "NOT all healthy" ) \
after $(awk -v a="$(cat "$dir/t0")" -v b="$(cat "$dir/polled" 2>/dev/null || now)" 'BEGIN { printf "%.1f", b - a }') s (poll)"
		teardown
	done
done
T_END=$(now)

export ORDER BOUND_S POLL_MS TRIALS LOAD_MS PROFILE_MS WARMUP_MS API_MS MEM_SCALE ROLES BASE_FREE T_START T_END
DOCKER_VERSION=$(docker version --format '{{.Server.Version}}' 2>/dev/null)
COMPOSE_VERSION=$(docker-compose version --short 2>/dev/null)
export DOCKER_VERSION COMPOSE_VERSION
python3 - "$WORK/trials" "$OUT" <<'EOF'
import json, os, re, statistics, sys, datetime
tdir, out = sys.argv[1], sys.argv[2]
E = os.environ
ORDER = E["ORDER"].split()
BOUND = float(E["BOUND_S"])
cfg = dict(load=int(E["LOAD_MS"]), profile=int(E["PROFILE_MS"]), warmup=int(E["WARMUP_MS"]),
           api=int(E["API_MS"]), scale=E["MEM_SCALE"], poll=int(E["POLL_MS"]), trials=int(E["TRIALS"]),
           roles=E["ROLES"].split(), base_free=int(E["BASE_FREE"]),
           wall=float(E["T_END"]) - float(E["T_START"]))

def ts(s):
    # docker's RFC 3339 with nanoseconds → epoch seconds
    m = re.match(r"(\d+-\d+-\d+T\d+:\d+:\d+)(?:\.(\d+))?Z", s)
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() + float("0." + (m.group(2) or "0"))

def boots(path):
    """The boots in a docker -t log: [{first, window, ready}] (epoch s)."""
    out = []
    for line in open(path, errors="replace"):
        parts = line.split(" ", 1)
        if len(parts) < 2 or not parts[0][:1].isdigit():
            continue
        t, text = ts(parts[0]), parts[1]
        if "vLLM API server version" in text:
            out.append({"first": t})
        elif out and "init engine (profile, create kv cache, warmup model) took" in text:
            out[-1]["window"] = t
        elif out and "Application startup complete." in text:
            out[-1]["ready"] = t
    return out

trials = []
for name in sorted(os.listdir(tdir)):
    d = os.path.join(tdir, name)
    strat, rnd = open(os.path.join(d, "what")).read().split()
    t0 = float(open(os.path.join(d, "t0")).read())
    rc = int(open(os.path.join(d, "rc")).read())
    tr = {"strategy": strat, "round": int(rnd), "t0": t0, "all_healthy": rc == 0, "roles": {},
          "load": float(open(os.path.join(d, "load")).read())}
    failed = []
    for r in ORDER:
        insp = json.load(open(os.path.join(d, r + ".inspect.json")))
        st = insp[0]["State"] if insp else {}
        restarts = insp[0].get("RestartCount", 0) if insp else 0
        b = boots(os.path.join(d, r + ".log"))
        tr["roles"][r] = {"restarts": restarts, "status": st.get("Status", "absent"), "boots": b}
        if restarts > 0 or st.get("Status") in ("exited", "dead") or len(b) > 1:
            failed.append(r)
    tr["failed_roles"] = failed
    tr["failed"] = bool(failed) or not tr["all_healthy"]
    last = [tr["roles"][r]["boots"][-1] if tr["roles"][r]["boots"] else {} for r in ORDER]
    if tr["all_healthy"] and all("ready" in b for b in last):
        tr["time"] = max(b["ready"] for b in last) - t0
    else:
        tr["time"] = None
    p = os.path.join(d, "polled")
    tr["polled"] = float(open(p).read()) - t0 if os.path.exists(p) else None
    if not tr["failed"]:
        chain = sum(b["window"] - b["first"] for b in last) + (last[-1]["ready"] - last[-1]["window"])
        tr["chain"] = chain
        tr["phases"] = {r: (b["window"] - b["first"], b["ready"] - b["window"]) for r, b in zip(ORDER, last)}
        tr["first_start"] = last[0]["first"] - t0
        # hand-off: a role's window closing (or, sequentially, its readiness) → the next role's process start
        tr["handoffs"] = [last[i + 1]["first"] - last[i]["window"] for i in range(len(ORDER) - 1)]
    else:
        tr["chain"] = None
    if strat == "sequential" and os.path.exists(os.path.join(d, "starts")):
        tr["compose_up_s"] = [float(b) - float(a) for _, a, b in (l.split() for l in open(os.path.join(d, "starts")))]
        if not tr["failed"]:
            st = {l.split()[0]: float(l.split()[1]) for l in open(os.path.join(d, "starts"))}
            tr["start_to_process"] = [tr["roles"][r]["boots"][-1]["first"] - st[r] for r in ORDER]
    if strat == "lobes":
        ev = [json.loads(l) for l in open(os.path.join(d, "events.jsonl")) if l.strip().startswith("{")]
        res = [e for e in ev if e.get("event") == "result"]
        tr["lobes_total_ms"] = res[0]["total_ms"] if res else None
        ex = open(os.path.join(d, "lobes_exit")).read().split()
        tr["lobes_rc"], tr["lobes_exit"] = int(ex[0]), float(ex[1]) - t0
    trials.append(tr)

def med(xs):
    return statistics.median(xs) if xs else None
def f1(x):
    return "—" if x is None else "%.1f" % x
def time_med(ts_):
    # trials that never became healthy count as longer than any that did
    vals = sorted((t if t is not None else float("inf")) for t in ts_)
    if not vals:
        return None
    m = statistics.median(vals)
    return m
def fmt_t(x):
    return "> %d (not all healthy)" % BOUND if x == float("inf") else f1(x)

strats = ["together", "sequential", "lobes"]
label = {"together": "(a) all at once: `docker-compose up -d`",
         "sequential": "(b) strictly sequential: `up -d --no-deps ROLE`, /health 200, next",
         "lobes": "(c) `lobes serve --apply`"}
S = {s: [t for t in trials if t["strategy"] == s] for s in strats}
seq_chains = [t["chain"] for t in S["sequential"] if t["chain"] is not None]
lobes_chains = [t["chain"] for t in S["lobes"] if t["chain"] is not None]
bound = med(seq_chains)
configured = len(ORDER) * (cfg["load"] + cfg["profile"] + cfg["warmup"]) / 1000 + cfg["api"] / 1000

L = []
w = L.append
w("# Bring-up: all at once vs strictly sequential vs `lobes serve`")
w("")
w("Made by `make bench-bringup` (tools/bench-bringup.sh; TRIALS=%d BOUND_S=%d POLL_MS=%d) on %s; "
  "the whole run took %.1f min." % (cfg["trials"], BOUND, cfg["poll"], datetime.date.today().isoformat(), cfg["wall"] / 60))
w("")
w("| strategy | failed boots | median s to all-healthy | max s | median / lower bound |")
w("|---|---|---|---|---|")
for s in strats:
    ts_ = [t["time"] for t in S[s]]
    nfail = sum(t["failed"] for t in S[s])
    m = time_med(ts_)
    mx = max((x if x is not None else float("inf")) for x in ts_) if ts_ else None
    ratio = "—" if (m is None or m == float("inf") or not bound) else "%.2f" % (m / bound)
    w("| %s | %d of %d | %s | %s | %s |" % (label[s], nfail, len(S[s]), fmt_t(m), fmt_t(mx), ratio))
w("")
w("**Lower bound: %s s** — the chain the memory constraint forces: Σ over the 5 roles of (process "
  "start → memory window closed) + the last role's (window closed → healthy), measured from the "
  "stand-in's own log lines as docker timestamped them (first line, `init engine (profile, create kv "
  "cache, warmup model) took`, `Application startup complete.`), median over the %d clean "
  "strictly-sequential trials (engines booting alone; range %s–%s s). The same chain in the clean lobes "
  "trials: median %s s. The configured phase durations alone give %.1f s (5 × (load %.1f + profile %.1f "
  "+ warm-up %.1f) + API %.1f); the rest is reading the weight files and touching the allocations." %
  (f1(bound), len(seq_chains), f1(min(seq_chains) if seq_chains else None), f1(max(seq_chains) if seq_chains else None),
   f1(med(lobes_chains)), configured, cfg["load"] / 1000, cfg["profile"] / 1000, cfg["warmup"] / 1000, cfg["api"] / 1000))
w("")
# container start cost
cu = [x for t in S["sequential"] for x in t.get("compose_up_s", [])]
sp = [x for t in S["sequential"] for x in t.get("start_to_process", [])]
lh = [x for t in S["lobes"] if t["chain"] is not None for x in t["handoffs"]]
lf = [t["first_start"] for t in S["lobes"] if t["chain"] is not None]
sh = [x for t in S["sequential"] if t["chain"] is not None for x in t["handoffs"]]
lo = [t["time"] - t["chain"] for t in S["lobes"] if t["chain"] is not None and t["time"] is not None]
w("Container start cost, not in the bound:")
w("")
w("- `docker-compose up -d --no-deps ROLE` (v1) for one role: median %s s (max %s) of wall time; "
  "request → the stand-in's first log line: median %s s." % (
      "%.2f" % med(cu) if cu else "—", "%.2f" % max(cu) if cu else "—", "%.2f" % med(sp) if sp else "—"))
w("- lobes, from its start to the first role's first log line (its own start-up, finding the compose "
  "CLI, `up -d --no-deps cortex`): median %s s; then from one role's window closing to the next "
  "role's first log line (poll, memory gate, `POST /containers/ID/start`): median %s s (max %s)." % (
      "%.2f" % med(lf) if lf else "—", "%.2f" % med(lh) if lh else "—", "%.2f" % max(lh) if lh else "—"))
w("- lobes' time to all-healthy minus its own trial's chain: median %s s." % ("%.2f" % med(lo) if lo else "—"))
w("- strictly sequential, from one role's window closing to the next role's first log line (the "
  "previous role's API start, /health, compose): median %s s." % ("%.2f" % med(sh) if sh else "—"))
w("")
def ok(c):
    return "met" if c else "NOT met"
lf_n = sum(t["failed"] for t in S["lobes"]); tf_n = sum(t["failed"] for t in S["together"])
lm = time_med([t["time"] for t in S["lobes"]]); sm = time_med([t["time"] for t in S["sequential"]])
w("Goals of the issue, checked by the script on this run:")
w("")
w("- lobes: 0 failed boots in ≥ 10 trials where all-at-once fails in some — %d of %d failed for lobes, "
  "%d of %d for all-at-once: %s." % (lf_n, len(S["lobes"]), tf_n, len(S["together"]),
                                      ok(lf_n == 0 and len(S["lobes"]) >= 10 and tf_n > 0)))
if lm is not None and bound and lm != float("inf"):
    w("- lobes' median time to all-healthy within 15%% of the lower bound — %.1f s / %.1f s = %.3f: %s." % (
        lm, bound, lm / bound, ok(lm <= 1.15 * bound)))
else:
    w("- lobes' median time to all-healthy within 15% of the lower bound — not measurable on this run.")
if lm is not None and sm is not None:
    w("- lobes' median below strictly sequential — %s s vs %s s: %s." % (fmt_t(lm), fmt_t(sm), ok(lm < sm)))
w("")
w("## Configuration")
w("")
w("- Machine: %d CPUs (%s), %.1f GiB MemTotal, no swap, Linux %s; MemFree after drop_caches at the "
  "start %.1f GiB. Docker %s with a private dockerd (host networking only), %s." % (
      os.cpu_count(), re.sub(r".*: ", "", [l for l in open("/proc/cpuinfo") if l.startswith("model name")][0]).strip(),
      int([l for l in open("/proc/meminfo") if l.startswith("MemTotal")][0].split()[1]) / 1048576,
      os.uname().release, cfg["base_free"] / 2**30, E["DOCKER_VERSION"], "docker-compose " + E["COMPOSE_VERSION"]))
w("- Fleet: `lobes init --profile spark` (all 5 roles, LOBES_ORDER cortex, senses, hand, embedder, "
  "reranker), then operator edits of .env: image = the stand-in, ports 18001-18005, and")
w("")
w("  | role | gpu_memory_utilization | budget GiB | weight file GiB |")
w("  |---|---|---|---|")
total_util = 0
memtotal = int([l for l in open("/proc/meminfo") if l.startswith("MemTotal")][0].split()[1]) * 1024
for spec in cfg["roles"]:
    r, util, mib, port = spec.split(":")
    total_util += float(util)
    w("  | %s | %s | %.2f | %.2f |" % (r, util, float(util) * memtotal / 2**30, int(mib) / 1024))
w("  | total | %.2f | %.2f | %.2f |" % (total_util, total_util * memtotal / 2**30,
                                        sum(int(s.split(":")[2]) for s in cfg["roles"]) / 1024))
w("")
w("- Stand-in (a test double of `vllm serve`, tests/standin/): STANDIN_CARD=spark (no faults), "
  "STANDIN_LOAD_MS=%d (the load lasts at least this; reading the weight file and holding it can take "
  "longer), STANDIN_PROFILE_MS=%d, STANDIN_WARMUP_MS=%d, STANDIN_API_MS=%d (window closed → listening), "
  "STANDIN_MEM_SCALE=%s. It judges memory as vLLM does on unified memory: the device is MemTotal, free "
  "is MemFree (page cache counts as used), and KV cache = budget − weights − activations − whatever "
  "free memory shrank by during its load and profiling beyond its own weights — so a neighbour's "
  "weight reads and allocations in that window are charged to it (FACTS.md trait 5)." % (
      cfg["load"], cfg["profile"], cfg["warmup"], cfg["api"], cfg["scale"]))
w("- Every poller (the sequential script, the harness's all-healthy check, `lobes serve --poll-ms`) "
  "polls every %d ms. A trial that is not all healthy %d s after its first command is a failed boot. "
  "The rendered compose file restarts a dead engine (`restart: unless-stopped`)." % (cfg["poll"], BOUND))
loads = [t["load"] for t in trials]
w("- The machine was shared with other work: the 1-minute load average at the start of a trial was "
  "median %.1f, max %.1f (2 CPUs)." % (med(loads), max(loads)))
w("")
w("## Every trial")
w("")
w("| # | round | strategy | all healthy s | failed roles (restarts) | chain s | lobes exit s | load |")
w("|---|---|---|---|---|---|---|---|")
for i, t in enumerate(trials, 1):
    fr = ", ".join("%s (%d)" % (r, t["roles"][r]["restarts"]) for r in t["failed_roles"]) or ("not all healthy" if t["failed"] else "—")
    w("| %d | %d | %s | %s | %s | %s | %s | %.1f |" % (i, t["round"], t["strategy"], f1(t["time"]), fr,
      f1(t["chain"]), f1(t.get("lobes_exit")) if t["strategy"] == "lobes" else "", t["load"]))
open(out, "w").write("\n".join(L) + "\n")
json.dump(trials, open(os.path.join(tdir, "..", "trials.json"), "w"), indent=1)
EOF
[ -n "${BENCH_KEEP:-}" ] && mkdir -p "$BENCH_KEEP" && cp -r "$WORK/trials" "$WORK/trials.json" "$BENCH_KEEP/" \
	&& log "raw trial data kept in $BENCH_KEEP"
cat "$OUT"
