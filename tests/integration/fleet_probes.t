#!/bin/bash
# fleet_probes.t — what clients use, end to end on a real dockerd with the
# vLLM stand-in (a test double) in place of each role's image:
#  - the thor profile (rendered by `lobes init` on a fixture Thor) brings
#    every feasible role up and EVERY probe passes: the known answers, the
#    reranker's ordering (served with its --hf-overrides), and the tool-call
#    and reasoning-split probes of the roles rendered with parsers; no known
#    failure is left in the profile;
#  - a request with `tools` to the cortex returns a tool call;
#  - each container's argv, read back through the Engine API, equals the
#    rendered one (docker-compose config's entrypoint and command), JSON
#    flag values included;
#  - a reranker rendered without the overrides fails its probe, on a Thor
#    and on a Spark alike.
# Each role's stand-in reports the vLLM version of the image the render
# pinned for it (data/images), so it accepts exactly that version's flags.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
. "$SRC/tests/integration/docker.sh"
python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml is needed to read docker-compose config"
. "$SRC/tests/integration/fleet_lib.sh"
PROJECT_PREFIX=lobes-fp
fast="--poll-ms 200 --window-wait $WAIT --ready-wait $WAIT --mem-wait $WAIT"

# --- the thor fleet ----------------------------------------------------------------
T=$TMP/thor
deploy "$T" thor thor || { ok 1 "deploy thor"; done_testing; }
run "$LOBES" --dir "$T" --json serve --apply --no-gateway $fast
is "$rc" 0 "serve brings the thor fleet up"
is "$(j '[r["outcome"] for r in d["roles"]]')" '["ready", "ready", "ready", "ready"]' \
	"every feasible role is ready (hand is not rendered)"
if [ "$rc" != 0 ]; then
	printf '%s\n' "$errout" | sed 's/^/# /'
	(cd "$T" && compose logs --no-color --tail 15 2>&1 | sed 's/^/# /')
	done_testing
fi

run "$LOBES" --dir "$T" --json probe --timeout 30
is "$rc" 0 "probe exits 0"
is "$(j '[p["role"] + ":" + p["probe"] + ":" + p["status"] for p in d["probes"] if p["status"] != "pass"]')" '[]' \
	"EVERY probe passes, none a known failure"
[ "$(j 'd["counts"]["pass"]')" = "$(j 'len(d["probes"])')" ] || printf '%s\n' "$out" | sed 's/^/# /' | head -n 40
is "$(j '[p["probe"] for p in d["probes"] if p["role"] == "reranker"]')" '["rerank-order"]' "the reranker's ordering is probed"
for r in $(grep -oE '^[A-Z]+_TOOL_CALL_PARSER=.' "$T/.env" | cut -d_ -f1 | tr A-Z a-z); do
	is "$(j "[p['status'] for p in d['probes'] if p['role'] == '$r' and p['probe'] == 'tool-call']")" '["pass"]' \
		"$r (rendered with a tool-call parser): the tool-call probe passes"
done
for r in $(grep -oE '^[A-Z]+_REASONING_PARSER=.' "$T/.env" | cut -d_ -f1 | tr A-Z a-z); do
	is "$(j "[p['status'] for p in d['probes'] if p['role'] == '$r' and p['probe'] == 'reasoning-split']")" '["pass"]' \
		"$r (rendered with a reasoning parser): the reasoning-split probe passes"
done
ok "$(grep -q '^CORTEX_TOOL_CALL_PARSER=.' "$T/.env"; echo $?)" "the thor cortex is rendered with a tool-call parser"
is "$(j 'd["counts"]["known_failure"] + d["counts"]["known_failure_passed"]')" 0 "no known failure is left"

# A request with tools, straight to the cortex engine.
PORT_C=$(sed -n 's/^CORTEX_PORT=//p' "$T/.env")
TOOLS_REQ='{"model":"cortex","messages":[{"role":"user","content":"What is the weather in Paris? Use the tool."}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}'
body=$(curl -s --max-time 30 -H 'Content-Type: application/json' -d "$TOOLS_REQ" "http://127.0.0.1:$PORT_C/v1/chat/completions")
is "$(jq -r '.choices[0].finish_reason' <<<"$body")" tool_calls "a tools request to the cortex returns a tool call"
is "$(jq -r '.choices[0].message.tool_calls[0].function | .name + " " + .arguments' <<<"$body")" 'get_weather {"city": "Paris"}' \
	"get_weather with {\"city\": \"Paris\"}"
is "$(jq -r '.model' <<<"$body")" cortex "answered under the role's name"

# The argv each container runs, through the Engine API, against the render.
(cd "$T" && compose config) >"$TMP/config.yml" 2>"$TMP/config.err"
ok $? "docker-compose config reads the deploy dir"
SOCK=${DOCKER_HOST#unix://}
for r in $(roles_of "$T"); do
	id=$(cd "$T" && compose ps -q "$r")
	curl -s --unix-socket "$SOCK" "http://localhost/containers/$id/json" >"$TMP/inspect-$r.json"
	verdict=$(python3 - "$TMP/config.yml" "$TMP/inspect-$r.json" "$r" <<-'EOF'
	import json, sys, yaml
	cfg = yaml.safe_load(open(sys.argv[1]))["services"][sys.argv[3]]
	c = json.load(open(sys.argv[2]))
	want = list(cfg.get("entrypoint") or []) + list(cfg["command"])
	got = list(c["Config"]["Entrypoint"] or []) + list(c["Config"]["Cmd"] or [])
	ran = [c["Path"]] + list(c["Args"])
	print("same" if want == got == ran else "rendered %s\nEngine API %s\nprocess %s" % (want, got, ran))
	EOF
	)
	is "$verdict" same "$r: the container's argv (Engine API) equals docker-compose config's"
done
hf=$(sed -n 's/^RERANKER_HF_OVERRIDES=//p' "$T/.env")
like "$hf" '"is_original_qwen3_reranker": true' "the thor reranker is rendered with the Qwen3-Reranker overrides"
is "$(python3 -c 'import json,sys; print([a for a in json.load(open(sys.argv[1]))["Args"] if a.startswith("--hf-overrides")])' "$TMP/inspect-reranker.json")" \
	"['--hf-overrides=$hf']" "the JSON value arrives in the reranker's argv intact"
for r in cortex senses; do
	up=$(upper "$r")
	want=$(version_of "$(sed -n "s/^${up}_IMAGE=//p" "$TMP/thor-images.env")")
	(cd "$T" && compose logs --no-color "$r" 2>&1) | grep -qF "vLLM API server version $want+standin"
	ok $? "$r's stand-in serves as the vLLM of its pinned image ($want)"
done
(cd "$T" && compose down -t 2 >/dev/null 2>&1)

# --- a reranker rendered without its overrides, on any card ---------------------------
for card in thor spark; do
	B=$TMP/bare-$card
	init "$B" "$card" --profile "$card" || { ok 1 "init $card"; continue; }
	sed -i 's/^RERANKER_HF_OVERRIDES=.*/RERANKER_HF_OVERRIDES=none/' "$B/.env"
	init "$B" "$card"
	ok $? "$card: init re-renders with the operator's edit"
	point "$B" "$card" "bare-$card"
	unlike "$(sed -n '/^  reranker:/,/^  [a-z]*:$/p' "$B/docker-compose.yml")" "hf-overrides" \
		"$card: the reranker is rendered without --hf-overrides (operator edit)"
	(cd "$B" && compose up -d reranker >/dev/null 2>&1)
	PORT_R=$(sed -n 's/^RERANKER_PORT=//p' "$B/.env")
	wait_for "$WAIT" curl -fs -o /dev/null "http://127.0.0.1:$PORT_R/health"
	run "$LOBES" --dir "$B" --json probe --timeout 30 reranker
	is "$rc" 1 "$card: the reranker without overrides fails its probe"
	is "$(j '[p["status"] + ":" + str(p["failure"]) for p in d["probes"] if p["probe"] == "rerank-order"]')" \
		'["fail:wrong-answer"]' "$card: a wrong ordering, while /health is green"
	(cd "$B" && compose down -t 2 >/dev/null 2>&1)
done
done_testing
