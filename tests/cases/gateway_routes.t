#!/bin/bash
# gateway_routes.t — every route the engine serves: /tokenize, /detokenize,
# /v1/responses, /v1/messages, /pooling, /classify, /v1/score, /rerank routed
# by the body's `model` (or the cortex by default); the audio routes routed on
# the multipart form's `model` field with the body relayed byte for byte
# (the client's Content-Type and boundary kept); a route the role's engine
# does not serve (data/vllm/<registry>/routes.txt) is 404 route_not_served
# naming the roles that do; /health carries lobes' version and each role's
# vLLM (from its image). Engines: tests/gateway/engine.py --echo on loopback.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/gateway_lib.sh"
. "$SRC/tests/gateway/lib.sh"
gw_test_env
IMG_NEW=vllm/vllm-openai@sha256:8bd082c274fae025b7079498fe1da65182ba1d4c2188c0f5a68c1042c38c3695
IMG_OLD=vllm/vllm-openai@sha256:7c5a10e9a8b3c8642f4d0463a41215176c0dd834b4f0967287c7e3e517cf1be9
eng_start --echo cortex || skip_all "the scripted engine did not start"
P_CORTEX=$ENG_PORT
eng_start --echo hand && P_HAND=$ENG_PORT
eng_start --echo embedder && P_EMB=$ENG_PORT
eng_start --echo reranker && P_RR=$ENG_PORT
D=$TMP/deploy
gw_env "$D" "cortex:$P_CORTEX:x/cortex" "CORTEX_IMAGE=$IMG_NEW" "hand:$P_HAND:x/hand" "HAND_IMAGE=$IMG_OLD" \
	"embedder:$P_EMB:x/embedder" EMBEDDER_IMAGE=example/unknown:1 "reranker:$P_RR:x/reranker" \
	"RERANKER_IMAGE=$IMG_NEW" senses:off LOBES_GATEWAY_HEALTH_INTERVAL_MS=200

# --- the recorded route lists ---------------------------------------------------------
for v in 5a4c8d992 93d8f834d; do
	f=$SRC/data/vllm/$v/routes.txt
	like "$(head -1 "$f")" "^# vLLM [^ ]+ commit $v[0-9a-f]{31}$" "routes.txt of $v names its commit on the first line"
	for r in '/tokenize	POST	always' '/v1/responses	POST	generate' '/v1/messages	POST	generate' \
		'/v1/audio/transcriptions	POST	transcription' '/pooling	POST	pooling' \
		'/classify	POST	classify' '/v1/embeddings	POST	embed' '/rerank	POST	score'; do
		grep -q "^$r	" "$f"
		ok $? "$v: $(echo "$r" | tr '\t' ' ')"
	done
done

gw_start "$D"
ok $? "the gateway starts"
ready() { grep -q "\"event\":\"health\",\"role\":\"$1\",\"ready\":true" "$GW_ERR"; }
gw_wait_for ready cortex && gw_wait_for ready hand && gw_wait_for ready embedder && gw_wait_for ready reranker
ok $? "the four engines are ready"

# --- routed by model ------------------------------------------------------------------
route_is() { # PATH MODEL-JSON ENGINE
	gw POST "$1" "{$2\"prompt\":\"hi\"}"
	is "$code" 200 "$1 {$2}: 200"
	like "$body" "\"engine\": \"$3\", \"path\": \"$1\"" "$1 {$2} reaches the $3's engine at $1"
}
route_is /tokenize '"model":"hand",' hand
route_is /tokenize '' cortex
route_is /tokenize '"model":"x/embedder",' embedder
route_is /detokenize '"model":"reranker",' reranker
route_is /v1/responses '"model":"hand",' hand
route_is /v1/responses '' cortex
route_is /v1/messages '"model":"x/cortex",' cortex
route_is /pooling '"model":"embedder",' embedder
route_is /pooling '"model":"reranker",' reranker
route_is /classify '"model":"reranker",' reranker
route_is /v1/score '"model":"embedder",' embedder
route_is /rerank '"model":"reranker",' reranker

# --- route_not_served -----------------------------------------------------------------
gw POST /classify '{"model":"embedder","input":"x"}'
is "$code" 404 "/classify for the embedder (its engine registers no classify route): 404"
like "$body" '"code":"route_not_served"' "route_not_served"
like "$body" '"served_by":\["reranker"\]' "naming the role that serves it"
gw POST /v1/responses '{"model":"reranker","input":"x"}'
is "$code" 404 "/v1/responses for the reranker: 404"
like "$body" '"served_by":\["cortex","hand"\]' "naming the generate roles"
like "$body" "role 'reranker' does not serve /v1/responses: its engine \(vLLM 0.26.1rc1.dev942\+g5a4c8d992\)" \
	"saying which vLLM the role's engine runs"
gw POST /pooling '{"input":"x"}'
is "$code" 404 "/pooling without a model goes to the cortex, which does not serve it: 404"
like "$body" "a request without 'model' goes to the cortex.*\"served_by\":\[\"embedder\",\"reranker\"\]" \
	"saying so and naming the pooling roles"
[ "$(grep -c '"path":"/pooling","role":"cortex"' "$GW_ERR")" -ge 1 ]
ok $? "the access line names the role asked for"

# --- multipart audio ------------------------------------------------------------------
head -c 300000 /dev/urandom >"$TMP/audio.wav"
printf 'model\r\nx\r\n--' >>"$TMP/audio.wav" # bytes that look like form syntax, inside the file
audio() { # PATH [curl -F args...]
	local p=$1
	shift
	rm -f "$TMP/.body" "$TMP/.req"
	code=$(curl -sS --max-time 10 -o "$TMP/.body" -w '%{http_code}' --trace-ascii /dev/null \
		-F "file=@$TMP/audio.wav;type=audio/wav" "$@" "http://127.0.0.1:$GW_PORT$p" 2>/dev/null)
	body=$(cat "$TMP/.body" 2>/dev/null)
}
audio /v1/audio/transcriptions -F model=hand -F language=en
is "$code" 200 "a transcription for the hand: 200"
like "$body" '"engine": "hand", "path": "/v1/audio/transcriptions"' "routed on the form's model field"
like "$body" '"content_type": "multipart/form-data; boundary=' "the client's multipart Content-Type reaches the engine"
# the same body sent straight to the engine must hash the same
B="--------------------------lobesroutes"
{
	printf -- '--%s\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n' "$B"
	cat "$TMP/audio.wav"
	printf '\r\n--%s\r\nContent-Disposition: form-data; name="model"\r\n\r\nx/hand\r\n--%s--\r\n' "$B" "$B"
} >"$TMP/form.bin"
want=$(sha256sum "$TMP/form.bin" | cut -d' ' -f1)
code=$(curl -sS --max-time 10 -o "$TMP/.body" -w '%{http_code}' -H "Content-Type: multipart/form-data; boundary=$B" \
	--data-binary "@$TMP/form.bin" "http://127.0.0.1:$GW_PORT/v1/audio/translations" 2>/dev/null)
body=$(cat "$TMP/.body")
is "$code" 200 "a translation whose model field comes after the file: 200"
like "$body" '"engine": "hand", "path": "/v1/audio/translations"' "routed on the model field after a 300 kB file"
like "$body" "\"sha256\": \"$want\"" "the body reaches the engine byte for byte"
like "$body" "\"len\": $(stat -c %s "$TMP/form.bin")," "with its length"
audio /v1/audio/transcriptions
is "$code" 200 "a form without a model field goes to the cortex"
like "$body" '"engine": "cortex"' "the cortex's engine"
audio /v1/audio/transcriptions -F model=embedder
is "$code" 404 "a transcription for the embedder: 404"
like "$body" '"code":"route_not_served".*"served_by":\["cortex","hand"\]' "route_not_served naming the generate roles"
audio /v1/audio/transcriptions -F model=nope
is "$code" 404 "an unknown model in the form: 404"
like "$body" '"code":"model_not_found"' "model_not_found"
gw POST /v1/audio/transcriptions '{"model":"hand"}'
is "$code" 400 "a JSON body on an audio route: 400"
like "$body" '"code":"invalid_form"' "invalid_form, saying multipart/form-data is expected"

# --- /health versions -----------------------------------------------------------------
gw GET /health
is "$code" 200 "/health"
like "$body" "\"version\":\"$("$LOBES" --version | awk '{print $NF}')\"" "carries lobes' version"
like "$body" '"cortex":\{"vllm":"0.26.1rc1.dev942\+g5a4c8d992","registry":"5a4c8d992"\}' "the cortex's vLLM from its image"
like "$body" '"hand":\{"vllm":"0.23.1rc1.dev672\+g93d8f834d","registry":"93d8f834d"\}' "the hand's (another image): skew is visible"
like "$body" '"embedder":\{"vllm":null,"registry":null\}' "an image lobes has not recorded: null"
unlike "$body" '"senses"' "an infeasible role is not listed"

# --- /metrics names the new routes ----------------------------------------------------
gw GET /metrics
like "$body" 'requests_total\{role="reranker",route="/classify",code="200"\} 1' "/metrics counts /classify under its own route"
like "$body" 'route="/v1/audio/transcriptions"' "and the audio routes"
done_testing
