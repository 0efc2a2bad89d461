#!/bin/sh
# tools/gen-evals.sh SEED [N] — writes the synthetic task set of `lobes eval`
# (data/evals/synthetic.json) to stdout: N tasks (default 40) with exact
# answers, drawn by a linear congruential generator from SEED: sums,
# differences and products of small numbers, and string tasks (reverse a
# word, count its letters, upper-case it) on words of data/bench/words.txt.
# The same SEED gives the same bytes; the seed and this command are recorded
# in the file. Synthetic: it checks that two settings answer alike, not what
# a model knows.
set -eu
seed=${1:?usage: gen-evals.sh SEED [N]}
n=${2:-40}
dir=$(dirname "$0")/..
grep -v '^#' "$dir/data/bench/words.txt" | awk -v seed="$seed" -v n="$n" '
function rnd(m) { state = (state * 1103515245 + 12345) % 2147483648; return int(state / 65536) % m }
function rev(s,  r, i) { r = ""; for (i = length(s); i > 0; i--) r = r substr(s, i, 1); return r }
length($0) >= 4 { w[nw++] = $0 }
END {
	state = seed
	printf "{\n  \"name\": \"synthetic\",\n  \"synthetic\": true,\n  \"seed\": %d,\n", seed
	printf "  \"generator\": \"tools/gen-evals.sh %d %d\",\n", seed, n
	printf "  \"about\": \"generated arithmetic and string tasks with exact answers (synthetic: whether two settings answer alike, not what a model knows)\",\n"
	printf "  \"tasks\": [\n"
	for (i = 1; i <= n; i++) {
		k = rnd(6)
		if (k == 0) { a = 10 + rnd(90); b = 10 + rnd(90); p = "What is " a " + " b "? Answer with the number only."; ans = a + b; id = "add" }
		else if (k == 1) { a = 50 + rnd(50); b = 1 + rnd(49); p = "What is " a " - " b "? Answer with the number only."; ans = a - b; id = "sub" }
		else if (k == 2) { a = 2 + rnd(11); b = 2 + rnd(11); p = "What is " a " * " b "? Answer with the number only."; ans = a * b; id = "mul" }
		else { x = w[rnd(nw)]
			if (k == 3) { p = "Write the word \\\"" x "\\\" backwards. Answer with the word only."; ans = rev(x); id = "reverse" }
			else if (k == 4) { p = "How many letters are in the word \\\"" x "\\\"? Answer with the number only."; ans = length(x); id = "length" }
			else { p = "Write the word \\\"" x "\\\" in capital letters. Answer with the word only."; ans = toupper(x); id = "upper" } }
		printf "    {\"id\": \"%s-%d\", \"prompt\": \"%s\", \"answer\": \"%s\"}%s\n", id, i, p, ans, i < n ? "," : ""
	}
	printf "  ]\n}\n"
}'
