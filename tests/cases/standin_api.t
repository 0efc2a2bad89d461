#!/bin/bash
# standin_api.t — the vLLM stand-in's (a test double's) API server: with
# STANDIN_API_MS the memory window closes ("init engine ... took") well
# before /health answers; real SSE streaming (frames flushed as produced,
# spaced by STANDIN_TOKEN_MS; a client that goes away mid-stream is logged
# as aborted at once); /v1/completions; tool calls and the reasoning split
# as the role's flags allow; several served names.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
standin_test_env
HTTP_MAX_TIME=2
EMBEDDER=Qwen/Qwen3-Embedding-0.6B

run "$STANDIN" serve --help
like "$out" "STANDIN_API_MS" "--help names STANDIN_API_MS"

# wait_window: poll (bounded by TEST_POLLS) for the window-closed line, then ask /health at once
wait_window() {
	local i
	for i in $(seq "$TEST_POLLS"); do
		grep -q 'init engine (profile, create kv cache, warmup model) took' "$STANDIN_LOG" 2>/dev/null && break
		sleep 0.1
	done
	http GET /health
}

STANDIN_API_MS=5000 standin_spawn slow "$EMBEDDER" --gpu-memory-utilization 0.2
wait_window
is "$code" 000 "with STANDIN_API_MS=5000, /health does not answer when the window has just closed"
unlike "$(cat "$STANDIN_LOG")" "Application startup complete" "and startup is not complete yet"
standin_wait_ready
ok $? "then startup completes"
http GET /health
is "$code" 200 "and /health answers 200"
standin_stop_all

standin_spawn quick "$EMBEDDER" --gpu-memory-utilization 0.2
standin_wait_ready
ok $? "without STANDIN_API_MS the stand-in starts as before"
like "$(sed -n '/init engine/,$p' "$STANDIN_LOG")" "Application startup complete" "startup completes after the window closes"
standin_stop_all

# ---- streaming ----------------------------------------------------------------
CORTEX=unsloth/Qwen3.8-27B-NVFP4
LONG_Q='Tell me about the long winding river that runs through the old quiet valley town'
chat() { jq -cn --arg q "$1" '{model:"cortex",messages:[{role:"user",content:$q}],chat_template_kwargs:{enable_thinking:false}}'; }
# sse FILE: the JSON events of a captured stream, one per line
sse() { sed -n 's/^data: \(.*\)$/\1/p' "$1" | grep -v '^\[DONE\]$'; }

STANDIN_TOKEN_MS=2000 standin_start slow-stream "$CORTEX" --served-model-name cortex
: >"$TMP/stream.out"
curl -sN --max-time 120 -H 'Content-Type: application/json' -d "$(chat "$LONG_Q" | jq -c '.stream=true')" \
	"http://127.0.0.1:$STANDIN_PORT/v1/chat/completions" >"$TMP/stream.out" 2>/dev/null &
client=$!
for i in $(seq "$TEST_POLLS"); do [ "$(grep -c '^data: ' "$TMP/stream.out")" -ge 2 ] && break; sleep 0.1; done
ok $([ "$(grep -c '^data: ' "$TMP/stream.out")" -ge 2 ] && echo 0 || echo 1) "the first frames arrive while the answer is still being generated"
unlike "$(cat "$TMP/stream.out")" '\[DONE\]' "no [DONE] yet: frames are sent as produced, not buffered"
is "$(sse "$TMP/stream.out" | head -n1 | jq -r '[.object, .choices[0].delta.role] | join(",")')" "chat.completion.chunk,assistant" "the first frame is the assistant role chunk"
id=$(sse "$TMP/stream.out" | head -n1 | jq -r .id)
kill "$client"
wait "$client" 2>/dev/null
for i in $(seq "$TEST_POLLS"); do grep -qF "Aborted request(s) $id." "$STANDIN_LOG" && break; sleep 0.1; done
like "$(cat "$STANDIN_LOG")" "^INFO [0-9-]+ [0-9:]+ \[async_llm\.py:[0-9]+\] Aborted request\(s\) $id\.$" "a client gone mid-stream is logged as an aborted request (vLLM's wording)"
like "$(cat "$STANDIN_LOG")" "Request $id aborted\." "and the request as aborted"
http GET /health
is "$code" 200 "the stand-in serves on after the abort"
standin_stop_all

standin_start stream "$CORTEX" --served-model-name cortex
curl -sN --max-time 20 -H 'Content-Type: application/json' \
	-d "$(chat 'What is the capital city of France?' | jq -c '.stream=true | .stream_options={include_usage:true}')" \
	"http://127.0.0.1:$STANDIN_PORT/v1/chat/completions" >"$TMP/full.out"
is "$(tail -c 14 "$TMP/full.out" | od -An -c | tr -s ' ')" " d a t a : [ D O N E ] \n \n" "the stream ends with data: [DONE] and a blank line"
is "$(sse "$TMP/full.out" | jq -rj '.choices[0].delta.content // empty')" Paris "the deltas assemble the answer"
is "$(sse "$TMP/full.out" | jq -r 'select(.choices[0].finish_reason != null) | .choices[0].finish_reason')" stop "one frame carries finish_reason stop"
is "$(sse "$TMP/full.out" | tail -n1 | jq -c '[.choices, (.usage.completion_tokens > 0)]')" '[[],true]' "include_usage adds a usage frame with no choices"
ok $(grep -v '^$' "$TMP/full.out" | grep -vc '^data: ' | grep -qx 0; echo $?) "every line is a data: event"

# ---- completions ----------------------------------------------------------------
http POST /v1/completions '{"model":"cortex","prompt":"The capital of France is","max_tokens":8}'
is "$(jq -r '[.object, .choices[0].finish_reason] | join(",")' <<<"$body")" "text_completion,stop" "/v1/completions answers a text_completion"
like "$(jq -r '.choices[0].text' <<<"$body")" Paris "with the toy model's text"
curl -sN --max-time 20 -H 'Content-Type: application/json' -d '{"model":"cortex","prompt":"The capital of France is","stream":true}' \
	"http://127.0.0.1:$STANDIN_PORT/v1/completions" >"$TMP/cmpl.out"
is "$(sse "$TMP/cmpl.out" | jq -rj '.choices[0].text')" Paris "/v1/completions streams text deltas"
like "$(tail -n2 "$TMP/cmpl.out")" '^data: \[DONE\]' "and ends with [DONE]"
http POST /v1/completions '{"model":"cortex"}'
is "$code" 400 "a completion without a prompt is 400"

# ---- tools and reasoning ----------------------------------------------------------
WEATHER='{"model":"cortex","messages":[{"role":"user","content":"What is the weather in Paris? Use the tool."}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],"chat_template_kwargs":{"enable_thinking":false}}'
http POST /v1/chat/completions "$WEATHER"
is "$code" 400 "tools without --enable-auto-tool-choice/--tool-call-parser: 400, as vLLM"
is "$(jq -r .error.message <<<"$body")" '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set' "with vLLM's message"
http POST /v1/chat/completions "$(jq -c '.tool_choice="none"' <<<"$WEATHER")"
is "$code" 200 "tool_choice none needs no tool flags"
http POST /v1/chat/completions "$(jq -c '.chat_template_kwargs={}' <<<"$(chat 'What is the capital city of France?')")"
like "$(jq -r '.choices[0].message.content' <<<"$body")" '^<think>' "without --reasoning-parser the thinking leaks into content"
is "$(jq -r '.choices[0].message.reasoning' <<<"$body")" null "and the reasoning field is empty"
standin_stop_all

standin_start tools "$CORTEX" --served-model-name cortex "$CORTEX" --enable-auto-tool-choice --tool-call-parser qwen3_coder --reasoning-parser qwen3
http POST /v1/chat/completions "$WEATHER"
is "$code" 200 "with the tool flags a tools request is served"
is "$(jq -r '.choices[0].finish_reason' <<<"$body")" tool_calls "finish_reason tool_calls"
is "$(jq -r '.choices[0].message.tool_calls[0].function.name' <<<"$body")" get_weather "the call names get_weather"
is "$(jq -r '.choices[0].message.tool_calls[0].function.arguments' <<<"$body")" '{"city": "Paris"}' "arguments are the JSON string {\"city\": \"Paris\"}"
is "$(jq -r '.choices[0].message.content' <<<"$body")" null "nothing in content"
curl -sN --max-time 20 -H 'Content-Type: application/json' -d "$(jq -c '.stream=true' <<<"$WEATHER")" \
	"http://127.0.0.1:$STANDIN_PORT/v1/chat/completions" >"$TMP/tool.out"
is "$(sse "$TMP/tool.out" | jq -r '.choices[0].delta.tool_calls[0].function.arguments // empty')" '{"city": "Paris"}' "a streamed tool call carries the arguments"
is "$(sse "$TMP/tool.out" | jq -r '.choices[0].finish_reason // empty')" tool_calls "and finishes with tool_calls"
http POST /v1/chat/completions "$(jq -c '.chat_template_kwargs={}' <<<"$(chat 'What is the capital city of France?')")"
is "$(jq -r '.choices[0].message.content' <<<"$body")" Paris "with --reasoning-parser the content is the answer alone"
like "$(jq -r '.choices[0].message.reasoning' <<<"$body")" 'The user asks' "and the thinking is in the reasoning field"
unlike "$(jq -r '.choices[0].message.reasoning' <<<"$body")" 'think>' "without its markers"
curl -sN --max-time 20 -H 'Content-Type: application/json' -d "$(chat 'What is the capital city of France?' | jq -c '.chat_template_kwargs={} | .stream=true')" \
	"http://127.0.0.1:$STANDIN_PORT/v1/chat/completions" >"$TMP/think.out"
like "$(sse "$TMP/think.out" | jq -rj '.choices[0].delta.reasoning // empty')" '^The user asks' "streamed thinking arrives in reasoning deltas"
is "$(sse "$TMP/think.out" | jq -rj '.choices[0].delta.content // empty')" Paris "and the content deltas hold only the answer"
http GET /v1/models
is "$(jq -c '[.data[].id]' <<<"$body")" "[\"cortex\",\"$CORTEX\"]" "/v1/models lists every served name"
http POST /v1/chat/completions "$(chat 'What is the capital city of France?' | jq -c --arg m "$CORTEX" '.model=$m')"
is "$(jq -r '[.model, .choices[0].message.content] | join(",")' <<<"$body")" "cortex,Paris" "a request by the second name is answered as the first"
standin_stop_all
run "$STANDIN" serve "$CORTEX" --enable-auto-tool-choice --tool-call-parser no_such_parser
is "$rc" 1 "an unregistered tool parser stops the boot"
like "$errout" "KeyError: 'invalid tool call parser: no_such_parser \(chose from \{ .*qwen3_coder.* \}\)'" "with vLLM's KeyError"
run "$STANDIN" serve "$CORTEX" --reasoning-parser no_such_parser
like "$errout" "invalid reasoning parser: no_such_parser" "an unregistered reasoning parser too"
done_testing
