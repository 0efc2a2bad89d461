#!/bin/bash
# eval.t — `lobes eval compare` against the vLLM stand-in (a test double):
# a server against itself is KLD 0, same top 100%, agreement 100%; against
# its fp8 twin (--kv-cache-dtype fp8 on a checkpoint without KV scales,
# STANDIN_FP8_NOISE) the KLD is above 0 and every figure equals what this
# test computes on its own, with jq, from the two servers' raw
# prompt_logprobs; the noise model's bound holds (each log-probability
# moves by at most 2 x the noise); with the noise at 0 the twin is
# identical again. Bad sides are errors with their exit codes.
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/standin/lib.sh"
standin_test_env 10
command -v jq >/dev/null || skip_all "jq is not installed"
CORTEX=unsloth/Qwen3.8-27B-NVFP4
NOISE=0.25

standin_start base "$CORTEX" --served-model-name cortex --gpu-memory-utilization 0.1
A=http://127.0.0.1:$STANDIN_PORT
STANDIN_FP8_NOISE=$NOISE standin_start fp8 "$CORTEX" --served-model-name cortex \
	--kv-cache-dtype fp8 --gpu-memory-utilization 0.1
B=http://127.0.0.1:$STANDIN_PORT
like "$(cat "$TMP/fp8.log")" "Using KV cache scaling factor 1\.0" "the twin runs fp8 KV without checkpoint scales"
STANDIN_FP8_NOISE=0 standin_start fp8quiet "$CORTEX" --served-model-name cortex \
	--kv-cache-dtype fp8 --gpu-memory-utilization 0.1
C=http://127.0.0.1:$STANDIN_PORT

# ---- itself ---------------------------------------------------------------------
run "$LOBES" --json eval compare "$A/v1" "$A#cortex"
is "$rc" 0 "eval compare exits 0"
S=$out
is "$(jq -c '.logprobs | [.kld_mean, .kld_p99, .kld_max, .same_top, .dlogp_max, .ppl_ratio]' <<<"$S")" \
	'[0,0,0,1,0,1]' "a server against itself: KLD 0 (mean, p99, max), same top 100%, no |dlogp|, perplexity ratio 1"
is "$(jq -c '.tasks | [.agreement, .accuracy_a == .accuracy_b, .tasks, .synthetic, .seed, (.disagreements | length)]' <<<"$S")" \
	'[1,true,40,true,17,0]' "and 100% agreement on the 40 synthetic tasks (seed 17)"
acc=$(jq -r '.tasks.accuracy_a' <<<"$S")
ok $(awk -v a="$acc" 'BEGIN { exit !(a > 0.3 && a < 1) }'; echo $?) \
	"exact-match accuracy is judged ($acc: the toy does the arithmetic, not the string tasks)"
run "$LOBES" eval compare "$A" "$A"
like "$out" "same top token   100\.00%" "the text says it too"
like "$out" "the rest of each distribution as one bucket" "and says how the KLD is taken"

# ---- the fp8 twin, against figures computed here from the raw answers -------------
REF=$(cat "$SRC/data/evals/reference.txt")
raw() { # raw ORIGIN: {ids, plp}
	jq -n --arg p "$REF" '{model:"cortex",prompt:$p}' | curl -s --max-time 60 -d @- "$1/tokenize" >"$TMP/ids"
	jq -n --arg p "$REF" '{model:"cortex",prompt:$p,max_tokens:1,temperature:0,prompt_logprobs:20}' |
		curl -s --max-time 60 -d @- "$1/v1/completions" >"$TMP/plp"
	jq -cn --slurpfile i "$TMP/ids" --slurpfile p "$TMP/plp" '{ids: $i[0].tokens, plp: $p[0].choices[0].prompt_logprobs}'
}
raw "$A" >"$TMP/a.json"
raw "$B" >"$TMP/b.json"
# KL on the tokens both returned, the rest as one bucket; numpy's linear p99
jq -n --slurpfile a "$TMP/a.json" --slurpfile b "$TMP/b.json" '
def kl($pa; $pb): [$pa | to_entries[] | select($pb[.key] != null) | {la: .value.logprob, lb: $pb[.key].logprob}] as $c
	| ($c | map(.la | exp) | add) as $sa | ($c | map(.lb | exp) | add) as $sb
	| (($c | map((.la | exp) * (.la - .lb)) | add)
	   + (if 1 - $sa > 1e-12 then (1 - $sa) * (((1 - $sa) / ([1 - $sb, 1e-12] | max)) | log) else 0 end))
	| if . < 0 then 0 else . end;
def top($p): $p | to_entries | max_by(.value.logprob) | .key;
def pct($v; $q): ($v | sort) as $s | ($q / 100 * (($s | length) - 1)) as $r | ($r | floor) as $lo
	| ([$lo + 1, ($s | length) - 1] | min) as $hi | $s[$lo] + ($s[$hi] - $s[$lo]) * ($r - $lo);
$a[0] as $A | $b[0] as $B
| [range(1; $A.ids | length) | . as $i | ($A.ids[$i] | tostring) as $t
   | {k: kl($A.plp[$i]; $B.plp[$i]), same: (top($A.plp[$i]) == top($B.plp[$i])),
      la: $A.plp[$i][$t].logprob, lb: $B.plp[$i][$t].logprob}] as $p
| ($p | length) as $n
| {positions: $n, kld_mean: ($p | map(.k) | add / $n), kld_p99: pct($p | map(.k); 99), kld_max: ($p | map(.k) | max),
   same_top: ($p | map(select(.same)) | length / $n),
   dlogp_mean: ($p | map(.la - .lb | fabs) | add / $n), dlogp_max: ($p | map(.la - .lb | fabs) | max),
   ppl_a: (($p | map(.la) | add / $n) * -1 | exp), ppl_b: (($p | map(.lb) | add / $n) * -1 | exp)}
| .ppl_ratio = .ppl_b / .ppl_a' >"$TMP/expected.json"
run "$LOBES" --json eval compare "$A" "$B"
is "$rc" 0 "eval compare against the fp8 twin exits 0"
echo "$out" >"$TMP/got.json"
kld=$(jq -r '.logprobs.kld_mean' "$TMP/got.json")
ok $(awk -v k="$kld" 'BEGIN { exit !(k > 0) }'; echo $?) "the fp8 twin's mean KLD is above 0 ($kld)"
for f in positions kld_mean kld_p99 kld_max same_top dlogp_mean dlogp_max ppl_a ppl_b ppl_ratio; do
	g=$(jq -r ".logprobs.$f" "$TMP/got.json")
	w=$(jq -r ".$f" "$TMP/expected.json")
	ok $(awk -v g="$g" -v w="$w" 'BEGIN { d = g - w; if (d < 0) d = -d; m = w < 0 ? -w : w; exit !(d <= 1e-9 + 1e-6 * m) }'; echo $?) \
		"$f: lobes says $g, computed here from the raw prompt_logprobs $w"
done
dmax=$(jq -r '.logprobs.dlogp_max' "$TMP/got.json")
ok $(awk -v d="$dmax" -v n="$NOISE" 'BEGIN { exit !(d > 0 && d <= 2 * n + 1e-9) }'; echo $?) \
	"the noise model's bound: the text's token moves by at most 2 x $NOISE nats (max $dmax)"
is "$(jq -r '.tasks.agreement' "$TMP/got.json")" 1 "the twin's greedy answers are unchanged (only logprobs are perturbed)"

# ---- noise 0: fp8 that loses nothing --------------------------------------------------
run "$LOBES" --json eval compare "$A" "$C"
is "$(jq -c '.logprobs | [.kld_mean, .same_top]' <<<"$out")" '[0,1]' "STANDIN_FP8_NOISE=0: the fp8 twin is identical again"

# ---- errors ---------------------------------------------------------------------------
P=$(standin_free_port)
run "$LOBES" eval compare "$A" "http://127.0.0.1:$P#cortex"
is "$rc" 4 "a side nothing listens on: exit 4"
like "$errout" "127\.0\.0\.1:$P" "naming it"
run "$LOBES" eval compare "$A" "$A#nosuch" --max-tasks 2
is "$rc" 4 "a model the side does not serve: exit 4"
like "$errout" "answered 404" "with the server's answer"
run "$LOBES" eval compare "$A" "$A" --tasks nosuch
is "$rc" 3 "an unknown task set: exit 3"
run "$LOBES" eval compare "$A"
is "$rc" 2 "one side only is a usage error"
run "$LOBES" eval compare "$A" "$A" --top-k 21
is "$rc" 2 "--top-k above 20 is a usage error"
run "$LOBES" eval compare "$A" notarole
is "$rc" 2 "a side that is neither a URL nor a role is a usage error"
run "$LOBES" --json eval compare "$A" "$A" --max-tasks 3
is "$(jq -r '.tasks.tasks' <<<"$out")" 3 "--max-tasks bounds the task set"

done_testing
