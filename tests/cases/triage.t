#!/bin/bash
# triage.t — `lobes triage`: text and --json output, --all, stdin, exit codes
# (0 clean, 1 fatal, 2 usage, 3 unreadable input or bad signature file),
# operator signatures, and --follow on a file another process appends to.
. "${LOBES_SRC:-.}/tests/lib.sh"
LOGS="$SRC/tests/fixtures/logs"
export LOBES_DIR="$TMP/deploy"

cat > "$TMP/boot.log" <<'LOG'
INFO 07-13 10:00:00 [api_server.py:1] vLLM API server version 0.23.1rc1
WARNING 07-13 10:00:00 [envs.py:2041] Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND
WARNING 07-13 10:00:00 [envs.py:2041] Unknown vLLM environment variable detected: VLLM_BUILD_URL
WARNING 07-13 10:00:00 [envs.py:2041] Unknown vLLM environment variable detected: VLLM_USE_V1
WARNING 07-13 10:00:00 [envs.py:2041] Unknown vLLM environment variable detected: VLLM_FLASH_ATTN_VERSION
ERROR 07-13 10:00:09 [core.py:700] EngineCore failed to start.
ERROR 07-13 10:00:09 [core.py:700]     assert layer.k_scale > 0.0
RuntimeError: Engine core initialization failed. See root cause above.
LOG
cat > "$TMP/ok.log" <<'LOG'
INFO 07-13 10:00:00 Using fp8 data type to store kv cache.
WARNING 07-13 10:00:01 Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify that k/v_scale scaling factors are properly set in the checkpoint.
INFO 07-13 10:00:02 Available KV cache memory: 20.5 GiB
INFO:     Application startup complete.
LOG

# text output, default mode: first occurrence of each signature with a count
run "$LOBES" triage "$TMP/boot.log"
is "$rc" 1 "a fatal signature exits 1"
like "$out" "boot.log:7: FATAL fp8-k-scale-assert — " "FILE:LINE: SEVERITY id — cause"
like "$out" "fix: set kv_cache_dtype=auto" "the fix is printed"
like "$out" "trait: fp8-kv-needs-scales-on-triton" "the implicated trait is printed"
like "$out" "boot.log:2: WARNING env-attention-backend-unknown" "VLLM_ATTENTION_BACKEND names trait 4's signature"
like "$out" "trait: attention-backend-env-dead" "and trait 4"
like "$out" "boot.log:3: INFO env-image-build-var" "image build variables are info"
like "$out" "boot.log:4: WARNING env-unknown \(2 lines\)" "other names: warning, first shown with a count"
unlike "$out" "boot.log:5:" "default mode shows a signature once"
like "$out" "captured: name=VLLM_USE_V1" "captures are shown"
like "$out" "cause: fp8-k-scale-assert \(line 7\)" "summary names the specific fatal, not the generic one"
like "$out" "3 fatal, 3 warning, 2 info in 8 lines" "summary counts"

run "$LOBES" triage --all "$TMP/boot.log"
like "$out" "boot.log:5: WARNING env-unknown" "--all shows every occurrence"

run "$LOBES" triage "$TMP/ok.log"
is "$rc" 0 "no fatal signature exits 0"
like "$out" "startup complete" "startup completion is reported"
like "$out" "ok.log:2: WARNING fp8-kv-scale-default" "fp8 scale 1.0 is a warning"

# --json carries the same data
run "$LOBES" --json triage "$TMP/boot.log" "$TMP/ok.log"
is "$rc" 1 "--json: exit 1 when any input has a fatal signature"
is "$(printf '%s' "$out" | jq -r '.fatal')" true "--json: fatal"
is "$(printf '%s' "$out" | jq -r '.files | length')" 2 "--json: one entry per input"
is "$(printf '%s' "$out" | jq -r '.files[0].cause.id')" fp8-k-scale-assert "--json: the cause"
is "$(printf '%s' "$out" | jq -r '.files[0].cause.line')" 7 "--json: the cause's line"
is "$(printf '%s' "$out" | jq -r '.files[0].matches[] | select(.id=="env-unknown") | .count')" 2 "--json: count"
is "$(printf '%s' "$out" | jq -r '.files[0].matches[] | select(.id=="env-unknown") | .captures.name')" VLLM_USE_V1 "--json: captures"
is "$(printf '%s' "$out" | jq -r '.files[0].summary | map(.id) | join(",")')" \
	"fp8-k-scale-assert,env-attention-backend-unknown,env-image-build-var,env-unknown,engine-core-init-failed,engine-core-failed-to-start,vllm-version-banner" \
	"--json: summary per signature"
is "$(printf '%s' "$out" | jq -r '.files[1].startup_complete')" true "--json: startup_complete"
is "$(printf '%s' "$out" | jq -r '.files[1].fatal')" false "--json: per-input fatal"
run "$LOBES" --json triage --all "$TMP/boot.log"
is "$(printf '%s' "$out" | jq -r '[.files[0].matches[] | select(.id=="env-unknown") | .line] | join(",")')" "4,5" "--json --all: every line"

# stdin
run sh -c "\"$LOBES\" triage < \"$TMP/boot.log\""
is "$rc" 1 "stdin without FILE"
like "$out" "^\(stdin\):2: WARNING" "stdin is labelled (stdin)"
run sh -c "cat \"$TMP/ok.log\" | \"$LOBES\" triage -"
is "$rc" 0 "'-' reads stdin"

# errors
run "$LOBES" triage "$TMP/missing.log"
is "$rc" 3 "an unreadable input exits 3"
like "$errout" "open '.*missing.log': No such file or directory" "and names it"
is "$out" "" "nothing is printed before the error"
run "$LOBES" triage "$TMP"
is "$rc" 3 "a directory is not a log"
run "$LOBES" triage --timeout 5 "$TMP/ok.log"
is "$rc" 2 "--timeout without --follow is a usage error"
run "$LOBES" triage --follow "$TMP/ok.log" "$TMP/boot.log"
is "$rc" 2 "--follow takes one input"
run "$LOBES" triage --bogus
is "$rc" 2 "unknown option"

# operator signatures: a bad file exits 3 with its position; a good one
# replaces the shipped signature of the same id
mkdir -p "$LOBES_DIR/signatures"
printf 'kind: signatures\nsignatures:\n  - id: x\n    regex: "a(b"\n    severity: fatal\n    cause: c\n    remedy: r\n' \
	> "$LOBES_DIR/signatures/bad.yaml"
run "$LOBES" triage "$TMP/ok.log"
is "$rc" 3 "a bad operator signature file exits 3"
like "$errout" "signatures/bad.yaml:4:13: regex of 'x' does not compile" "the error names file:line:col"
rm "$LOBES_DIR/signatures/bad.yaml"
printf 'kind: signatures\nsignatures:\n  - id: fp8-kv-scale-default\n    literal: "scaling factor 1.0"\n    severity: fatal\n    cause: treated as fatal here\n    remedy: use kv_cache_dtype=auto\n' \
	> "$LOBES_DIR/signatures/strict.yaml"
run "$LOBES" triage "$TMP/ok.log"
is "$rc" 1 "an operator signature replaces the shipped one"
like "$out" "ok.log:2: FATAL fp8-kv-scale-default — treated as fatal here" "with its own severity and cause"
rm "$LOBES_DIR/signatures/strict.yaml"

# --follow: a writer appends to the file while triage reads it; triage stops
# at `Application startup complete.` (no timing is asserted: --timeout only
# bounds a broken run)
: > "$TMP/grow.log"
( "$LOBES" triage --follow --timeout 60 "$TMP/grow.log" > "$TMP/follow.out" 2>&1; echo $? > "$TMP/follow.rc" ) &
reader=$!
for i in 1 2 3; do
	echo "INFO 07-13 10:00:0$i loading" >> "$TMP/grow.log"
	sleep 0.3
done
printf 'WARNING Unknown vLLM environment variable detected: VLLM_USE_V1\nINFO Available KV cache ' >> "$TMP/grow.log"
sleep 0.3
printf 'memory: 12.0 GiB\n' >> "$TMP/grow.log"
echo "INFO:     Application startup complete." >> "$TMP/grow.log"
wait "$reader"
is "$(cat "$TMP/follow.rc")" 0 "--follow ends at startup complete, exit 0"
out=$(cat "$TMP/follow.out")
like "$out" "grow.log:4: WARNING env-unknown" "--follow prints matches from appended lines"
like "$out" "grow.log:5: INFO kv-cache-memory-available" "a line written in two appends is matched once, whole"
like "$out" "stopped: startup-complete" "--follow says why it stopped"

# --follow on a pipe stops at the first fatal line
# (the writer keeps the pipe open and ends on the first write after triage exits)
run sh -c "( echo 'INFO start'; echo 'no kernel image is available for execution on the device'; while sleep 0.2; do echo 'INFO tick' || exit 0; done ) | \"$LOBES\" triage --follow --timeout 60"
is "$rc" 1 "--follow on a pipe stops at a fatal signature, exit 1"
like "$out" "stopped: fatal" "and says so"

# --follow --json prints one object at the end
: > "$TMP/grow2.log"
( "$LOBES" --json triage --follow --timeout 60 "$TMP/grow2.log" > "$TMP/follow2.out"; echo $? > "$TMP/follow2.rc" ) &
reader=$!
sleep 0.3
echo "ValueError: No available memory for the cache blocks. Try increasing" >> "$TMP/grow2.log"
wait "$reader"
is "$(cat "$TMP/follow2.rc")" 1 "--follow --json: exit 1 on fatal"
is "$(jq -r '.files[0].stopped' < "$TMP/follow2.out")" fatal "--follow --json: stopped"
is "$(jq -r '.files[0].cause.id' < "$TMP/follow2.out")" no-cache-blocks "--follow --json: cause"
# --follow on a FIFO nobody writes to ends at --timeout (it must not block
# in open or read); the bound below is generous: only "it returned" matters
mkfifo "$TMP/fifo"
run timeout 60 "$LOBES" triage --follow --timeout 1 "$TMP/fifo"
is "$rc" 0 "--follow on a FIFO without a writer returns at --timeout"
like "$out" "stopped: timeout" "and says it timed out"
# a writer that comes, writes a fatal line and goes: read to its end
( printf 'INFO start\nValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n' > "$TMP/fifo" ) &
run timeout 60 "$LOBES" triage --follow --timeout 50 "$TMP/fifo"
wait
is "$rc" 1 "--follow on a FIFO matches what the writer wrote"
like "$out" "cause: no-cache-blocks \(line 2\)" "with the line number"

# the log's banner gives the version; --vllm-version overrides it
cat > "$TMP/fp8old.log" <<'LOG'
INFO 10-10 10:23:00 api_server.py:526] vLLM API server version 0.6.1
WARNING 10-10 10:23:01 [kv_cache.py:82] Using KV cache scaling factor 1.0 for fp8_e4m3. This may cause accuracy issues. Please make sure k/v_scale scaling factors are available in the fp8 checkpoint.
LOG
run "$LOBES" --json triage "$TMP/fp8old.log"
is "$(printf '%s' "$out" | jq -r '.files[0].vllm_version')" "0.6.1" "--json: the version read from the banner"
is "$(printf '%s' "$out" | jq -r '.files[0].version_from')" "banner" "--json: and where it came from"
run "$LOBES" --json triage --vllm-version 0.12.0 "$TMP/fp8old.log"
is "$(printf '%s' "$out" | jq -r '.files[0].vllm_version')" "0.12.0" "--vllm-version wins over the banner"
run "$LOBES" triage --vllm-version banana "$TMP/fp8old.log"
is "$rc" 2 "a bad --vllm-version is a usage error"
like "$errout" "bad --vllm-version 'banana'" "and says so"

# the root cause is named first, before the matches
printf 'ERROR EngineCore failed to start.\nRuntimeError: CUDA error: an illegal memory access was encountered\nRuntimeError: Engine core initialization failed. See root cause above.\n' > "$TMP/iam.log"
run "$LOBES" triage "$TMP/iam.log"
is "$(printf '%s\n' "$out" | head -1 | sed 's/ —.*//')" "$TMP/iam.log: FATAL in load: cause illegal-memory-access" "the first line of the report is the verdict and the cause"
like "$out" "root exception \(line 2\): RuntimeError: CUDA error: an illegal memory access was encountered" "then the root exception"
like "$out" "$TMP/iam.log:2: cause illegal-memory-access" "and the cause's line"
# a fatal log no signature knows: the verdict names the root exception
printf 'INFO 07-13 10:00:00 [loader.py:1] Starting to load model x\nTraceback (most recent call last):\n  File "/x/vllm/model_executor/model_loader/loader.py", line 9, in load_model\nFrobError: the frobnicator broke\n' > "$TMP/unknown.log"
run "$LOBES" triage "$TMP/unknown.log"
is "$rc" 1 "a traceback no signature knows is fatal"
is "$(printf '%s\n' "$out" | head -1)" "$TMP/unknown.log: FATAL in load: no known cause: FrobError: the frobnicator broke" "the report leads with no known cause and the root exception"
like "$out" "raised at vllm/model_executor/model_loader/loader.py:9 in load_model" "where it was raised"
# a death with no traceback: its exit code's signal is named
printf 'INFO 07-13 10:00:00 [loader.py:1] Starting to load model x\nvllm-1 exited with code 139\n' > "$TMP/exit.log"
run "$LOBES" triage "$TMP/exit.log"
like "$out" "exit \(line 2\): vllm-1 exited with code 139 — SIGSEGV \(a segmentation fault\)" "an exit code's signal is named"
run "$LOBES" --json triage "$TMP/exit.log"
is "$(printf '%s' "$out" | jq -r '.files[0].death | [.kind, .code, .signal] | join(",")')" \
	"exit,139,SIGSEGV (a segmentation fault)" "--json: the death's code and signal"
# a paste that stops inside a traceback: the report says so instead of an empty root
printf 'INFO 07-13 10:00:00 [loader.py:1] Starting to load model x\nTraceback (most recent call last):\n  File "/x/vllm/model_executor/model_loader/loader.py", line 9, in load_model\n    model = f()\n' > "$TMP/cut.log"
run "$LOBES" triage "$TMP/cut.log"
is "$(printf '%s\n' "$out" | head -1)" "$TMP/cut.log: FATAL in load: no known cause: a traceback the log cuts before its exception line" "a cut traceback is named as such"
like "$out" "root exception \(line 2\): a traceback the log cuts before its exception line" "in the root line too"
like "$out" "innermost vLLM frame: vllm/model_executor/model_loader/loader.py:9 in load_model" "its frame raised nothing: named as the innermost vLLM frame"
run "$LOBES" --json triage "$TMP/unknown.log"
is "$(printf '%s' "$out" | jq -r '.files[0] | [.verdict, .phase, .root_exception.type, .root_exception.frame, (.causes | length)] | join(",")')" \
	"fatal,load,FrobError,vllm/model_executor/model_loader/loader.py:9 in load_model,0" "--json: verdict, phase, root_exception, no causes"
run "$LOBES" --json triage "$TMP/iam.log"
is "$(printf '%s' "$out" | jq -r '.files[0] | [.verdict, .root_exception.type, .causes[0].cause_id] | join(",")')" \
	"fatal,RuntimeError,illegal-memory-access" "--json: the ranked causes follow the root exception"
run "$LOBES" --json triage "$TMP/ok.log"
is "$(printf '%s' "$out" | jq -r '.files[0] | [.verdict, (.phase|tostring), (.root_exception|tostring)] | join(",")')" \
	"clean,null,null" "--json: a clean log"
is "$(printf '%s' "$out" | jq -r '.files[0].stops_in | tostring')" "null" "--json: a log past startup complete stops in no start-up step"
# a log cut while loading, with no error: clean, and said to stop there
printf 'INFO 05-16 14:53:28 api_server.py:149] vLLM API server version 0.4.0\nLoading safetensors checkpoint shards:  40%% Completed | 19/48\n' > "$TMP/cut.log"
run "$LOBES" triage "$TMP/cut.log"
is "$rc" 0 "a log cut while loading, no error shown: clean (exit 0)"
like "$out" "no error shown, but the log stops in load, before startup complete" "the text says where it stops"
run "$LOBES" --json triage "$TMP/cut.log"
is "$(printf '%s' "$out" | jq -r '.files[0] | [.verdict, .stops_in] | join(",")')" "clean,load" "--json: stops_in"

# bad input: binary garbage, NUL bytes, invalid UTF-8, a 100 MB line:
# no crash, bounded memory, a note on stderr, the matches still found
head -c 3000000 /dev/urandom > "$TMP/garbage.log"
run "$LOBES" triage "$TMP/garbage.log"
[ "$rc" -le 1 ]; ok $? "binary garbage: no crash (exit $rc)"
like "$errout" "note: .*NUL bytes" "binary garbage: a note about NUL bytes"
printf 'INFO a\000b\nno kernel image is available for execution on the device\n\377\376 bad utf-8\n' > "$TMP/nul.log"
run "$LOBES" triage "$TMP/nul.log"
is "$rc" 1 "NUL bytes and invalid UTF-8: the fatal line is still found"
like "$errout" "note: 1 line holds NUL bytes \(first: line 1\)" "a note names the first NUL line"
like "$errout" "note: 1 line is not valid UTF-8 \(first: line 3\)" "a note names the first invalid UTF-8 line"
{ printf 'INFO start\n'; head -c 104857600 /dev/zero | tr '\0' 'x'; printf '\nno kernel image is available for execution on the device\n'; } > "$TMP/long.log"
# bounded memory: the whole run fits in 64 MiB of address space (not under
# AddressSanitizer, which reserves terabytes of it)
limit="ulimit -v 65536;"
ldd "$LOBES" 2>/dev/null | grep -q libasan && limit=""
run sh -c "$limit exec \"$LOBES\" triage \"$TMP/long.log\""
is "$rc" 1 "a 100 MB line: the line after it is still matched, in 64 MiB of address space"
like "$out" "long.log:3: FATAL no-kernel-image" "with its line number"
like "$errout" "note: 1 line is longer than 1 MiB \(first: line 2\); matched on its first 1 MiB" "a note about the long line"
# a regular file between 1 and 16 MiB is mapped and fed whole: its long
# lines are noted too
{ printf 'INFO start\n'; head -c 2097152 /dev/zero | tr '\0' 'x'; printf '\nINFO end\n'; } > "$TMP/long2.log"
run "$LOBES" triage "$TMP/long2.log"
is "$rc" 0 "a 2 MiB line in a 2 MiB file: no fatal"
like "$errout" "note: 1 line is longer than 1 MiB \(first: line 2\); matched on its first 1 MiB" "a note about the long line of a small file"
# options after FILE are options, not files
run "$LOBES" triage "$TMP/boot.log" --all
is "$rc" 1 "FILE --all: the file is read"
like "$out" "boot.log:5: WARNING env-unknown" "FILE --all: --all applies"
unlike "$errout" "open '--all'" "FILE --all: --all is not opened as a file"
run sh -c "head -c 104857600 /dev/zero | tr '\\0' 'y' | \"$LOBES\" triage -"
is "$rc" 0 "a 100 MB line on a pipe without a newline: no crash"
done_testing
