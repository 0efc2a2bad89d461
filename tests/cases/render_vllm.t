#!/bin/bash
# render_vllm.t — every shipped profile, rendered, is checked argument by
# argument against the vLLM lists of each role's image: every image is a
# full digest recorded in data/images/, and every `vllm serve` flag, value,
# tool parser and reasoning parser is in the recorded lists of that image's
# vLLM (data/vllm/<registry>/), and in the reference lists they were copied
# from (../shared/vllm/ beside the checkout, or $VLLM_LISTS_DIR) when those are present. The
# checker is a separate reading of the lists (Python), not lobes' own, and
# is shown to catch a bad parser, flag and JSON value.
. "${LOBES_SRC:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed"
REF=${VLLM_LISTS_DIR:-}
for d in "$SRC/../shared/vllm" "$SRC/../../shared/vllm"; do
	[ -z "$REF" ] && [ -d "$d" ] && REF=$d
done
[ -n "$REF" ] || REF=$TMP/no-reference-lists

cat >"$TMP/check.py" <<'PY'
import json, os, re, sys
src, lists, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
def read(folder, name):
    p = os.path.join(folder, name)
    return [l.rstrip("\n") for l in open(p) if l.strip() and not l.startswith("#")]
images = {}
for f in os.listdir(os.path.join(src, "data/images")):
    t = open(os.path.join(src, "data/images", f)).read()
    ref = re.search(r"^ref: (\S+)$", t, re.M).group(1)
    images[ref] = re.search(r"^registry: (\S+)$", t, re.M).group(1)
env = {}
for l in open(os.path.join(outdir, ".env")):
    if "=" in l and not l.startswith("#"):
        k, v = l.rstrip("\n").split("=", 1)
        env[k] = v
def interp(s):
    return re.sub(r"\$\{([A-Z0-9_]+):-([^}]*)\}", lambda m: env.get(m.group(1)) or m.group(2), s).replace("$$", "$")
problems, nargs, nparsers = [], 0, 0
svc, cmd, inside = None, {}, False
images_of = {}
for l in open(os.path.join(outdir, "docker-compose.yml")):
    m = re.match(r"^  ([a-z]+):$", l)
    if m: svc, inside = m.group(1), False; cmd[svc] = []; continue
    m = re.match(r"^    image: '(.*)'$", l)
    if m: images_of[svc] = interp(m.group(1)); continue
    if re.match(r"^    command:$", l): inside = True; continue
    if re.match(r"^    [a-z]", l): inside = False
    m = re.match(r"^      - '(.*)'$", l)
    if inside and m: cmd[svc].append(interp(m.group(1).replace("''", "'")))
for role, args in cmd.items():
    img = images_of.get(role, "")
    if not re.fullmatch(r"[^@\s]+@sha256:[0-9a-f]{64}", img):
        problems.append("%s: image %r is not a full digest" % (role, img)); continue
    if img not in images:
        problems.append("%s: image %r is not recorded in data/images/" % (role, img)); continue
    folder = os.path.join(lists, images[img])
    if not os.path.isdir(folder):
        problems.append("%s: no lists for %s in %s" % (role, images[img], lists)); continue
    kinds = dict(l.split("\t")[:2] for l in read(folder, "flags.txt"))
    choices = {l.split("\t")[0]: l.split("\t")[1].split() for l in read(folder, "choices.txt")}
    tools, reasons = set(read(folder, "tool-parsers.txt")), set(read(folder, "reasoning-parsers.txt"))
    backends = set(read(folder, "values-attention-backend.txt"))
    akeys = set(read(folder, "values-attention-config-keys.txt"))
    quants = set(read(folder, "values-quantization.txt"))
    i = 1  # args[0] is the positional model
    while i < len(args):
        a = args[i]; i += 1; nargs += 1
        flag, _, val = a.partition("=")
        kind = kinds.get(flag)
        if kind is None: problems.append("%s: %s is not a flag of %s" % (role, flag, images[img])); continue
        if not _ and kind not in ("bool", "bool-neg", "store_true"):
            vals = []
            while i < len(args) and not args[i].startswith("-"): vals.append(args[i]); i += 1
            if not vals: problems.append("%s: %s has no value" % (role, flag))
            val = vals[0] if vals else ""
        if kind in ("bool", "bool-neg", "store_true"):
            if _: problems.append("%s: %s takes no value" % (role, flag))
            continue
        if val == "" or val in ("none", "None", "auto") and kind in ("int", "float"):
            problems.append("%s: %s has a placeholder value %r" % (role, flag, val))
        if kind == "int" and not re.fullmatch(r"-?\d+", val): problems.append("%s: %s=%r not int" % (role, flag, val))
        if kind == "float": float(val)
        if kind.startswith("choice") and flag in choices and val not in choices[flag]:
            problems.append("%s: %s=%r not in choices" % (role, flag, val))
        if kind.startswith("json"):
            try: j = json.loads(val)
            except ValueError: problems.append("%s: %s=%r is not JSON" % (role, flag, val)); continue
            if not isinstance(j, dict): problems.append("%s: %s is not an object" % (role, flag))
            if flag == "--attention-config":
                for k, v in j.items():
                    if k not in akeys: problems.append("%s: attention-config key %s" % (role, k))
                    if k == "backend" and v not in backends: problems.append("%s: backend %s" % (role, v))
        if flag == "--tool-call-parser":
            nparsers += 1
            if val not in tools: problems.append("%s: tool parser %r not registered" % (role, val))
        if flag == "--reasoning-parser":
            nparsers += 1
            if val not in reasons: problems.append("%s: reasoning parser %r not registered" % (role, val))
        if flag == "--quantization" and val not in quants: problems.append("%s: quantization %r" % (role, val))
print(json.dumps({"problems": problems, "args": nargs, "parsers": nparsers, "roles": len(cmd)}))
PY

res() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }
for f in "$SRC"/data/profiles/*.yaml; do
	p=$(basename "$f" .yaml)
	run env LOBES_DIR=/nonexistent "$LOBES" render --profile "$p" --out "$TMP/$p"
	is "$rc" 0 "$p renders"
	out=$(python3 "$TMP/check.py" "$SRC" "$SRC/data/vllm" "$TMP/$p")
	is "$(res "$out" '"; ".join(d["problems"])')" "" "$p: every image a recorded full digest; every flag, value and parser in its vLLM's shipped lists"
	ok "$([ "$(res "$out" 'd["args"]')" -gt 0 ]; echo $?)" "$p: the check saw the rendered arguments ($(res "$out" 'd["args"]') of $(res "$out" 'd["roles"]') roles)"
	if [ -d "$REF" ]; then
		out=$(python3 "$TMP/check.py" "$SRC" "$REF" "$TMP/$p")
		is "$(res "$out" '"; ".join(d["problems"])')" "" "$p: … and in the reference lists at $REF"
	fi
done
out=$(python3 "$TMP/check.py" "$SRC" "$SRC/data/vllm" "$TMP/spark")
is "$(res "$out" 'd["parsers"]')" 5 "spark renders 5 parsers (cortex 2, senses 2, hand 1), all checked"
if [ -d "$REF" ]; then
	for v in "$REF"/*/; do
		v=$(basename "$v")
		for f in "$REF/$v"/*.txt; do
			cmp -s "$f" "$SRC/data/vllm/$v/$(basename "$f")"
			ok $? "data/vllm/$v/$(basename "$f") is the reference list as recorded"
		done
	done
fi
for f in "$SRC"/data/vllm/*/*.txt; do
	like "$(head -1 "$f")" "^# vLLM [0-9.a-z+]+ commit [0-9a-f]{9,40}" "$(basename "$(dirname "$f")")/$(basename "$f"): the first line names the commit"
done

# The checker is not vacuous: it catches a bad parser, flag and JSON value.
cp -r "$TMP/spark" "$TMP/bad"
sed -i "s/--tool-call-parser=qwen3_coder/--tool-call-parser=qwen4_coder/; s/'--enable-prefix-caching'/'--enable-prefix-cache'/; s/\"num_speculative_tokens\": 2}/\"num_speculative_tokens\": 2/" "$TMP/bad/docker-compose.yml"
out=$(python3 "$TMP/check.py" "$SRC" "$SRC/data/vllm" "$TMP/bad")
like "$(res "$out" '"; ".join(d["problems"])')" "tool parser 'qwen4_coder' not registered" "the check catches an unregistered tool parser"
like "$(res "$out" '"; ".join(d["problems"])')" "--enable-prefix-cache is not a flag" "… an unknown flag"
like "$(res "$out" '"; ".join(d["problems"])')" "--speculative-config=.* is not JSON" "… a JSON value that does not parse"
done_testing
