#!/bin/bash
# bench-triage.sh — `lobes triage` against ripgrep and `grep -E` with the
# same patterns, and `wc -l` (the floor: reading the bytes and finding the
# newlines), on a >= 1 GB synthetic vLLM log (realistic INFO lines, rare
# signature hits taken from tests/fixtures/logs/signatures.log). The
# patterns are derived from the same signature files (literals escaped;
# PCRE-only syntax turned into its ERE equivalent, lookaheads dropped, so
# their set is a superset). One hyperfine run times every command (RUNS
# runs each after a warm-up, on a warm page cache); the medians and ratios
# in OUT all come from that run. The temporary log is deleted afterwards.
#
# usage: tools/bench-triage.sh LOBES_BIN OUT.md
# env: BENCH_MB (size, default 1100), RUNS (default 5), TMPDIR,
#      BENCH_KEEP=PATH (copy the log and patterns there instead, for profiling)
set -eu
LOBES=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
OUT=$2
MB=${BENCH_MB:-1100}
RUNS=${RUNS:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lobes-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# 1. grep patterns from the signature files (one per line)
perl -ne '
	if (/^\s+literal:\s*"(.*)"\s*$/) { ($p = $1) =~ s/([.\[\](){}*+?|^\$\\])/\\$1/g; print "$p\n"; }
	elsif (/^\s+regex:\s*\x27(.*)\x27\s*$/) {
		$p = $1; $p =~ s/\x27\x27/\x27/g;
		$p =~ s/\(\?!(?:[^()]++|(\((?:[^()]++|(?1))*\)))*\)//g;   # lookahead: dropped
		$p =~ s/\(\?<\w+>/(/g; $p =~ s/\(\?:/(/g; $p =~ s/\\d/[0-9]/g;
		print "$p\n";
	}' "$SRC"/data/signatures/*.yaml > "$WORK/patterns"
n_sigs=$(wc -l < "$WORK/patterns")

# 2. the log: a 16 MiB block of realistic lines with rare hits, repeated
perl -e '
	srand(42);
	open(my $f, "<", $ARGV[0]) or die; my @hits;
	my $keep = 0;
	while (<$f>) {
		if (/^# expect: (\S+)/) { $keep = $1 ne "none"; next; }
		next if /^#/ || /^\s*$/;
		push @hits, $_ if $keep;
	}
	my @t = (
	 sub { sprintf("(APIServer pid=1) INFO %s [loggers.py:123] Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%\n", ts(), rand 900, rand 90, int rand 8, int rand 3, rand 40, rand 80) },
	 sub { sprintf("(APIServer pid=1) INFO:     127.0.0.1:%d - \"POST /v1/%s HTTP/1.1\" 200 OK\n", 30000 + int rand 30000, (qw(chat/completions embeddings rerank completions))[int rand 4]) },
	 sub { sprintf("(APIServer pid=1) INFO:     127.0.0.1:%d - \"GET /health HTTP/1.1\" 200 OK\n", 30000 + int rand 30000) },
	 sub { sprintf("(EngineCore_DP0 pid=%d) INFO %s [gpu_model_runner.py:2602] Starting to load model unsloth/Qwen3.8-27B-NVFP4...\n", 100 + int rand 900, ts()) },
	 sub { sprintf("(EngineCore_DP0 pid=%d) INFO %s [default_loader.py:267] Loading weights took %.2f seconds\n", 100 + int rand 900, ts(), rand 60) },
	 sub { sprintf("(APIServer pid=1) INFO %s [chat_utils.py:560] Detected the chat template content format to be \x27openai\x27. You can set `--chat-template-content-format` to override this.\n", ts()) },
	 sub { sprintf("(EngineCore_DP0 pid=%d) INFO %s [backends.py:548] Using cache directory: /root/.cache/vllm/torch_compile_cache/%08x/rank_0_0/backbone for vLLM\x27s torch.compile\n", 100 + int rand 900, ts(), int rand 2**31) },
	 sub { sprintf("(EngineCore_DP0 pid=%d) INFO %s [backends.py:559] Dynamo bytecode transform time: %.2f s\n", 100 + int rand 900, ts(), rand 30) },
	 sub { sprintf("(APIServer pid=1) INFO %s [model.py:1510] Using max model len %d\n", ts(), (8192, 32768, 131072)[int rand 3]) },
	 sub { sprintf("(APIServer pid=1) INFO %s [scheduler.py:226] Chunked prefill is enabled with max_num_batched_tokens=%d.\n", ts(), (2048, 8192)[int rand 2]) },
	 sub { sprintf("(EngineCore_DP0 pid=%d) INFO %s [monitor.py:34] torch.compile takes %.2f s in total\n", 100 + int rand 900, ts(), rand 90) },
	 sub { sprintf("Loading safetensors checkpoint shards: %3d%% Completed | %d/%d [00:%02d<00:%02d, %.2fit/s]\n", int rand 100, 1 + int rand 4, 4, int rand 60, int rand 60, rand 3) },
	 sub { sprintf("(APIServer pid=1) INFO %s [api_server.py:1880] Starting vLLM API server 0 on http://127.0.0.1:%d\n", ts(), 8000 + int rand 5) },
	 sub { sprintf("(APIServer pid=1) INFO %s [launcher.py:46] Route: /v1/%s, Methods: POST\n", ts(), (qw(chat/completions embeddings rerank score tokenize))[int rand 5]) },
	 sub { sprintf("(EngineCore_DP0 pid=%d) WARNING %s [topk_topp_sampler.py:66] FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling.\n", 100 + int rand 900, ts()) },
	);
	sub ts { sprintf("%02d-%02d %02d:%02d:%02d", 1 + int rand 12, 1 + int rand 28, int rand 24, int rand 60, int rand 60) }
	my $size = 0;
	while ($size < 16 << 20) {
		my $l = int(rand 20000) == 0 ? $hits[int rand @hits] : $t[int rand @t]->();
		print $l; $size += length $l;
	}' "$SRC/tests/fixtures/logs/signatures.log" > "$WORK/block.log"
reps=$(( (MB * 1024 * 1024 + $(stat -c %s "$WORK/block.log") - 1) / $(stat -c %s "$WORK/block.log") ))
for _ in $(seq "$reps"); do cat "$WORK/block.log"; done > "$WORK/bench.log"
rm "$WORK/block.log"
bytes=$(stat -c %s "$WORK/bench.log")
if [ -n "${BENCH_KEEP:-}" ]; then
	mv "$WORK/bench.log" "$BENCH_KEEP" && mv "$WORK/patterns" "$BENCH_KEEP.patterns"
	echo "kept $BENCH_KEEP and $BENCH_KEEP.patterns"
	exit 0
fi
cat "$WORK/bench.log" > /dev/null   # warm the page cache

# 3. sanity: both see the same matching lines
lobes_lines=$("$LOBES" --json triage "$WORK/bench.log" | jq '[.files[0].summary[].count] | add')
grep_lines=$(LC_ALL=C grep -E -c -f "$WORK/patterns" "$WORK/bench.log")

# 4. one hyperfine run over every command (-i: lobes exits 1 on a fatal
# line; --output=pipe: GNU grep would stop early writing to /dev/null)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
( cd "$WORK" && hyperfine --runs "$RUNS" --warmup 1 -i --output=pipe --style basic \
	--export-json "$WORK/h.json" \
	-n lobes "$LOBES triage bench.log" \
	-n rg "rg -c -f patterns bench.log" \
	-n grep "grep -E -c -f patterns bench.log" \
	-n grep-C "LC_ALL=C grep -E -c -f patterns bench.log" \
	-n wc "wc -l bench.log" ) >&2
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
med() { jq -r --arg n "$1" '.results[] | select(.command == $n) | .median' "$WORK/h.json"; }
runs() { jq -r --arg n "$1" '[.results[] | select(.command == $n) | .times[] | . * 1000 | round / 1000] | map(tostring) | join(" ")' "$WORK/h.json"; }
ml=$(med lobes)
mbs() { awk -v b="$bytes" -v t="$1" 'BEGIN { printf "%.0f", b / 1e6 / t }'; }
ratio() { awk -v a="$1" -v l="$ml" 'BEGIN { printf "%.2f", a / l }'; }
row() { local m; m=$(med "$1"); printf '| `%s` | %.3f | %s | %s |\n' "$2" "$m" "$(mbs "$m")" "$(ratio "$m")"; }
n_ids=$(grep -c '^  - id:' "$SRC"/data/signatures/*.yaml | awk -F: '{ s += $2 } END { print s }')
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
{
	echo "# lobes triage vs ripgrep, grep and wc -l"
	echo
	echo "Made by \`make bench-triage\` (tools/bench-triage.sh; BENCH_MB=$MB RUNS=$RUNS) on $(date -u +%Y-%m-%d)."
	echo "Input: a synthetic vLLM log of $((bytes / 1000000)) MB ($(wc -l < "$WORK/bench.log") lines):"
	echo "realistic INFO/WARNING lines with about one signature hit in 20000 lines"
	echo "($lobes_lines matching lines by lobes, $grep_lines by grep). Signatures: the $n_ids shipped;"
	echo "ripgrep and grep get their $n_sigs patterns as ERE (literals escaped, lookaheads dropped)."
	echo "lobes normalises and joins the records it looks at; the others match raw lines."
	echo "One hyperfine run (warm page cache, 1 warm-up, $RUNS runs each); the median is shown."
	echo
	echo "| command | median s | MB/s | time / lobes time |"
	echo "|---|---|---|---|"
	row lobes "lobes triage bench.log"
	row rg "rg -c -f patterns bench.log"
	row grep "grep -E -c -f patterns bench.log ($(locale | sed -n 's/^LC_CTYPE=//p' | tr -d '"'))"
	row grep-C "LC_ALL=C grep -E -c -f patterns bench.log"
	row wc "wc -l bench.log"
	echo
	echo "All runs (s): lobes $(runs lobes); rg $(runs rg); grep $(runs grep); LC_ALL=C grep $(runs grep-C); wc -l $(runs wc)."
	echo
	echo "Machine: $(nproc) CPUs, $cpu, Linux $(uname -r), $(rg --version | head -1), $(grep --version | head -1), $(hyperfine --version)."
	echo "Load average (1, 5, 15 min) before the run: $load_before; after: $load_after. The machine is"
	echo "shared (2 cores); the ratios, measured in the same run, are the figures to read."
} > "$OUT"
cat "$OUT"
