#!/bin/bash
# probe.t — lobes probe: semantic correctness probes against the vLLM
# stand-in (a test double, run directly on free loopback ports). A healthy
# fleet passes; a wrong ranking, a hung request, a refused connection and a
# malformed body each FAIL with their reason while /health stays green; the
# profile's known failure is reported and does not fail the run, and loudly
# when it starts passing; the probes run in parallel.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
standin_test_env
command -v jq >/dev/null || skip_all "jq is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
unset LOBES_SYSROOT LOBES_DIR
HTTP_MAX_TIME=5
TRITON='{"backend": "TRITON_ATTN"}'
HF_RERANK='{"architectures": ["Qwen3ForSequenceClassification"], "classifier_from_token": ["no", "yes"], "is_original_qwen3_reranker": true}'
FAKE="$SRC/tests/fixtures/probe/fake_server.py"

# boot ROLE [serve args...] — a stand-in serving as ROLE; its port in PORT_<ROLE>.
boot() {
	local role=$1 model
	shift
	case $role in
	cortex) model=unsloth/Qwen3.8-27B-NVFP4 ;;
	senses) model=coolthor/gemma-4-12B-it-NVFP4A16 ;;
	hand) model=LiquidAI/LFM2.5-1.2B-Instruct ;;
	embedder) model=Qwen/Qwen3-Embedding-0.6B; set -- --runner pooling --convert embed "$@" ;;
	# served as the shipped profiles serve it, with vLLM's Qwen3-Reranker
	# overrides, unless BARE=1
	reranker) model=Qwen/Qwen3-Reranker-0.6B; set -- --runner pooling --convert classify "$@"
		[ "${BARE:-0}" = 1 ] || set -- "$@" --hf-overrides "$HF_RERANK" ;;
	esac
	standin_start "$role-$RANDOM" "$model" --served-model-name "$role" --gpu-memory-utilization 0.06 "$@" ||
		{ echo "# $role did not boot:"; sed 's/^/#   /' "$STANDIN_LOG" | tail -n 5; }
	printf -v "PORT_$role" '%s' "$STANDIN_PORT"
}

# fake MODE — start fake_server.py MODE; its ports in FAKE_PORTS.
fake() {
	local pf="$TMP/fake-$1-$RANDOM" i
	python3 "$FAKE" "$1" "$pf" &
	STANDIN_PIDS="$STANDIN_PIDS $!"
	for i in $(seq "$TEST_POLLS"); do [ -s "$pf" ] && break; sleep 0.1; done
	FAKE_PORTS=$(cat "$pf")
}

# deploy DIR PROFILE ROLE=PORT... — a minimal deploy dir .env (other roles infeasible).
deploy() {
	local d=$1 profile=$2 r up
	shift 2
	mkdir -p "$d"
	{
		[ -n "$profile" ] && echo "LOBES_PROFILE=$profile"
		for r in cortex senses hand embedder reranker; do
			up=$(tr a-z A-Z <<<"$r")
			echo "${up}_FEASIBLE=false"
		done
		for r in "$@"; do
			up=$(tr a-z A-Z <<<"${r%%=*}")
			echo "${up}_FEASIBLE=true"
			echo "${up}_PORT=${r#*=}"
		done
	} >"$d/.env"
}

# kf_profile DIR — an operator profile 'kf' in DIR/profiles: the shipped thor
# profile with one known failure, the reranker's ordering (so the mechanism
# is tested whatever the shipped profiles list).
kf_profile() {
	mkdir -p "$1/profiles"
	awk '/^known_failures:/ { skip = 1; next } skip && /^[^ #-]/ { skip = 0 } !skip' \
		"$SRC/data/profiles/thor.yaml" | sed 's/^name: thor$/name: kf/' >"$1/profiles/kf.yaml"
	cat >>"$1/profiles/kf.yaml" <<-'EOF'
	known_failures:
	  - role: reranker
	    probe: rerank-order
	    reason: the test's recorded wrong ordering
	    ref: test#1
	EOF
}
probe() { local d=$1; shift; run "$LOBES" --dir "$d" probe "$@"; }
pj() { jq -r "$1" <<<"$out"; }
health() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$1/health"; }
nobody() { standin_free_port; }

# ---- usage and deploy-dir errors --------------------------------------------
probe "$TMP/none"
is "$rc" 3 "no .env in the deploy dir: exit 3"
like "$errout" "no deploy dir at '$TMP/none'.*run 'lobes init --apply' first" "and says what to do"
probe "$TMP/none" nosuchrole
is "$rc" 2 "an unknown role is a usage error"
like "$errout" "unknown role 'nosuchrole'" "naming the role"
probe "$TMP/none" --timeout 0
is "$rc" 2 "--timeout 0 is a usage error"
deploy "$TMP/bad" "" cortex=notaport
probe "$TMP/bad"
is "$rc" 3 "a port that is not a number is a config error"
like "$errout" "CORTEX_PORT='notaport' is not a port" "naming the key"
deploy "$TMP/nope" nosuchprofile cortex=1
probe "$TMP/nope"
is "$rc" 3 "an unknown LOBES_PROFILE is a config error"
like "$errout" "LOBES_PROFILE='nosuchprofile' is not a known profile" "naming the profile"

# ---- a healthy fleet (a real deploy dir from lobes init) --------------------
D="$TMP/healthy"
run "$LOBES" --dir "$D" init --profile spark --apply
is "$rc" 0 "lobes init writes a spark deploy dir"
for r in cortex senses hand embedder reranker; do boot "$r"; done
# the known-answer probes only here (tool-call and reasoning-split below)
sed -i '/_TOOL_CALL_PARSER=/d; /_REASONING_PARSER=/d' "$D/.env"
for r in cortex senses hand embedder reranker; do
	up=$(tr a-z A-Z <<<"$r")
	port_var="PORT_$r"
	sed -i "s/^${up}_PORT=.*/${up}_PORT=${!port_var}/" "$D/.env"
done
probe "$D" --timeout 10
is "$rc" 0 "a healthy fleet: every probe passes, exit 0"
for r in cortex senses hand embedder reranker; do
	like "$out" "^$r +pass " "text: $r passes"
done
like "$out" "chat-capital: answer 'Paris'" "text: the cortex's answer is shown"
like "$out" "5 passed, 0 failed" "text: a summary"
probe "$D" --timeout 10 --json
is "$rc" 0 "--json: exit 0"
ok "$(jq -e . >/dev/null <<<"$out"; echo $?)" "--json parses"
is "$(pj '[.probes[] | "\(.role):\(.probe):\(.status)"] | join(" ")')" \
	"cortex:chat-capital:pass senses:chat-sky:pass hand:chat-known-answer:pass embedder:embed-paraphrase:pass reranker:rerank-order:pass" \
	"--json: every role, its probe id and pass"
is "$(pj '.counts.pass') $(pj '.counts.fail') $(pj '.ok')" "5 0 true" "--json: counts and ok"
is "$(pj '.probes[0].evidence.answer')" "Paris" "evidence: the cortex's answer"
is "$(pj '.probes[1].evidence.answer')" "Blue" "evidence: the senses' answer"
is "$(pj '.probes[3].evidence | (.cos_paraphrase > .cos_unrelated)')" true "evidence: both cosines, paraphrase closer"
is "$(pj '[.probes[4].evidence.ranking[].index][0]')" 1 "evidence: the ranking, the Paris document first"
is "$(pj '[.probes[] | .http_status] | unique | join(",")')" 200 "every probe records its HTTP status"
is "$(pj '[.probes[] | (.latency_ms | type)] | unique | join(",")')" number "every probe records its latency"
is "$(pj '.probes[0].url')" "http://127.0.0.1:$PORT_cortex/v1/chat/completions" "probes go to 127.0.0.1:<ROLE>_PORT"
probe "$D" --timeout 10 --json reranker cortex
is "$(pj '[.probes[].role] | join(",")')" "cortex,reranker" "named roles: only those are probed"
sed -i 's/^HAND_FEASIBLE=.*/HAND_FEASIBLE=false/' "$D/.env"
probe "$D" hand
is "$rc" 2 "naming a role that is not feasible is a usage error"
like "$errout" "role 'hand' is not feasible in '$D' \(.env HAND_FEASIBLE=false\)" "with a clear message"
probe "$D" --timeout 10 --json
is "$(pj '[.probes[].role] | join(",")')" "cortex,senses,embedder,reranker" "an infeasible role is not probed"
standin_stop_all

# ---- the reranker serves a wrong ordering; /health is green ------------------
# (served without its --hf-overrides: the fault on every card, here thor's
# passing TRITON_ATTN + eager settings)
BARE=1 STANDIN_CARD=thor boot reranker --attention-config "$TRITON" --enforce-eager
deploy "$TMP/wrong" spark reranker="$PORT_reranker"
probe "$TMP/wrong" --timeout 10
is "$rc" 1 "a wrong ranking fails the run (exit 1)"
like "$out" "^reranker +FAIL .*rerank-order: the Paris document ranked 4 of 4: ranking \[0,2,3,1\]" "text: the reason and the ranking"
is "$(health "$PORT_reranker")" 200 "while its /health is green"
probe "$TMP/wrong" --timeout 10 --json
is "$(pj '.probes[0].status') $(pj '.probes[0].failure')" "fail wrong-answer" "--json: fail, wrong-answer"
is "$(pj '.probes[0].evidence.paris_rank')" 4 "--json: the Paris document's rank"

# Same server, a profile that lists it: a known failure, exit 0.
deploy "$TMP/known" kf reranker="$PORT_reranker"
kf_profile "$TMP/known"
probe "$TMP/known" --timeout 10
is "$rc" 0 "a known failure does not fail the run (exit 0)"
like "$out" "^reranker +known-failure .*the Paris document ranked 4 of 4" "text: known-failure with the evidence"
like "$out" "known failure test#1: the test's recorded wrong ordering" "text: the reason and ref from the profile"
probe "$TMP/known" --timeout 10 --json
is "$(pj '.probes[0].status')" known-failure "--json: status known-failure"
is "$(pj '.probes[0].known_failure.ref')" "test#1" "--json: the ref"
is "$(pj '.ok') $(pj '.counts.known_failure')" "true 1" "--json: ok, counted as a known failure"
standin_stop_all

# ---- a known failure that passes now is impossible to miss ---------------------
boot reranker
deploy "$TMP/fixed" kf reranker="$PORT_reranker"
kf_profile "$TMP/fixed"
probe "$TMP/fixed" --timeout 10
is "$rc" 0 "a known failure that passes does not fail the run"
like "$out" "^reranker +KNOWN-FAILURE-PASSED " "text: the row says so in capitals"
like "$out" "!! NOTICE: known failure test#1 now passes: remove the entry" "text: a notice asks to remove the entry"
probe "$TMP/fixed" --timeout 10 --json
is "$(pj '.probes[0].status')" known-failure-passed "--json: status known-failure-passed"
like "$(pj '.notices[0]')" "known failure test#1 now passes: remove the entry" "--json: in the top-level notices"
is "$(pj '.counts.known_failure_passed')" 1 "--json: counted"
standin_stop_all

# ---- a hung embedder: /health green, the probe fails within the timeout -------
STANDIN_CARD=thor boot embedder
STANDIN_CARD=thor boot reranker --enforce-eager
deploy "$TMP/hang" kf embedder="$PORT_embedder" reranker="$PORT_reranker"
kf_profile "$TMP/hang"
probe "$TMP/hang" --timeout 2 embedder
is "$rc" 1 "a hung embedder fails the run"
like "$out" "^embedder +FAIL .*embed-paraphrase: timed out after 2 s: no answer" "text: timed out after 2 s: no answer"
is "$(health "$PORT_embedder")" 200 "while its /health is green"
# Two hung roles at once: each reports its own timeout and timing (the
# known failure does not mask a hang: it covers a wrong answer only).
probe "$TMP/hang" --timeout 2 --json
is "$rc" 1 "two hung roles: exit 1"
is "$(pj '[.probes[] | "\(.role):\(.status):\(.failure)"] | join(" ")')" \
	"embedder:fail:timeout reranker:fail:timeout" "both fail with a timeout (the reranker's known failure does not mask it)"
is "$(pj '[.probes[].reason] | unique | join("|")')" "timed out after 2 s: no answer" "each names the timeout"
is "$(pj '[.probes[] | (.latency_ms | type)] | join(",")')" "number,number" "each probe has its own timing"
is "$(pj '[.probes[].http_status] | join(",")')" "0,0" "and no HTTP status"
standin_stop_all

# ---- what clients use: tool calls and the reasoning split -----------------------
# deploy_parsers DIR PROFILE PORT: a cortex (on PORT) rendered with both parsers
deploy_parsers() {
	deploy "$1" "$2" cortex="$3"
	printf 'CORTEX_TOOL_CALL_PARSER=qwen3_coder\nCORTEX_REASONING_PARSER=qwen3\n' >>"$1/.env"
}
boot cortex --enable-auto-tool-choice --tool-call-parser qwen3_coder --reasoning-parser qwen3
deploy_parsers "$TMP/tools" spark "$PORT_cortex"
probe "$TMP/tools" --timeout 10
is "$rc" 0 "a cortex served with its parsers passes all three probes"
like "$out" "^cortex +pass .*tool-call: get_weather\(\{\"city\": \"Paris\"\}\), finish_reason tool_calls" "text: the tool call"
like "$out" "^cortex +pass .*reasoning-split: reasoning [0-9]+ bytes, answer 'Paris'" "text: the reasoning split"
probe "$TMP/tools" --timeout 10 --json
is "$(pj '[.probes[] | "\(.probe):\(.status)"] | join(" ")')" "chat-capital:pass tool-call:pass reasoning-split:pass" \
	"--json: the known-answer, tool-call and reasoning-split probes"
is "$(pj '.probes[1].evidence.tool_calls[0].function.arguments')" '{"city": "Paris"}' "evidence: the call's arguments"
like "$(pj '.probes[2].evidence.reasoning')" "The user asks" "evidence: the thinking"
deploy "$TMP/notools" spark cortex="$PORT_cortex"
probe "$TMP/notools" --timeout 10 --json
is "$(pj '[.probes[].probe] | join(",")')" chat-capital "a role rendered without parsers gets the known-answer probe only"
standin_stop_all

boot cortex
deploy_parsers "$TMP/noflags" spark "$PORT_cortex"
probe "$TMP/noflags" --timeout 10
is "$rc" 1 "rendered with parsers but served without the flags: the run fails"
like "$out" "^cortex +FAIL .*tool-call: HTTP 400: \"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set" \
	"text: the tool call is refused with vLLM's reason"
like "$out" "^cortex +FAIL .*reasoning-split: the thinking leaked into content" "text: the thinking leaked into content"
like "$out" "^cortex +pass .*chat-capital" "while the known answer still passes"
probe "$TMP/noflags" --timeout 10 --json
is "$(pj '[.probes[] | "\(.probe):\(.failure)"] | join(" ")')" "chat-capital:null tool-call:http reasoning-split:wrong-answer" "--json: http, wrong-answer"
standin_stop_all

# ---- parallel: two servers that answer only when both requests are in flight --
fake barrier
read -r p1 p2 <<<"$FAKE_PORTS"
deploy "$TMP/par" "" cortex="$p1" senses="$p2"
probe "$TMP/par" --timeout 5 --json
is "$rc" 0 "probes run in parallel: both requests are in flight at once"
is "$(pj '[.probes[].status] | join(",")')" "pass,pass" "so both pass"
is "$(pj '.warnings[0]')" "no LOBES_PROFILE in .env: no known failures apply" "a .env without LOBES_PROFILE: a warning"
standin_stop_all

# ---- a refused connection and a malformed body fail ---------------------------
fake junk
deploy "$TMP/junk" spark embedder="$FAKE_PORTS" cortex="$(nobody)"
probe "$TMP/junk" --timeout 5
is "$rc" 1 "a refused connection or a malformed body fails the run"
like "$out" "^cortex +FAIL .*connection refused: nothing listening on 127.0.0.1:" "text: connection refused"
like "$out" "^embedder +FAIL .*malformed body: " "text: malformed body"
probe "$TMP/junk" --timeout 5 --json
is "$(pj '[.probes[] | "\(.role):\(.failure)"] | join(" ")')" "cortex:refused embedder:malformed" "--json: refused, malformed"
is "$(pj '.probes[1].http_status')" 200 "the malformed body came with HTTP 200"
standin_stop_all

# ---- an engine error is a FAIL with the server's message ----------------------
STANDIN_CARD=thor boot reranker --attention-config "$TRITON"
deploy "$TMP/dies" spark reranker="$PORT_reranker"
probe "$TMP/dies" --timeout 10 --json
is "$(pj '.probes[0].failure') $(pj '.probes[0].http_status')" "http 500" "a dying engine: an HTTP failure"
like "$(pj '.probes[0].reason')" "^HTTP 500: EngineCore encountered an issue" "with vLLM's error message"
standin_stop_all

# ---- the hand is judged strictly: a corrupted answer that contains the word fails
STANDIN_CARD=thor boot hand
deploy "$TMP/hand" thor hand="$PORT_hand"
probe "$TMP/hand" --timeout 10 --json
is "$(pj '.probes[0].status') $(pj '.probes[0].failure')" "fail wrong-answer" "a corrupted hand answer fails"
like "$(pj '.probes[0].evidence.answer')" "^Paris Paris" "though it contains the word"
standin_stop_all

done_testing
