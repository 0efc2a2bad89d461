#!/bin/bash
# corpus_split.t — the real-log excerpts of tests/fixtures/logs/train and
# heldout keep the rules their READMEs state: a header with the source's
# URL, verdict, split, and for fatal ones cause and root; each source on
# the side the seeded hash of its URL gives it; sources not already used by
# corpus/; bodies that cannot be read as header; train causes from the
# vocabulary; split 1 (heldout/, consumed: training data since
# 2026-12-03) unchanged since its freeze but for cause-shown header lines;
# and heldout2/ (split 2, consumed: training data since 2026-12-03): 62
# excerpts, one per source, none used by another split, each batch
# unchanged since its freeze commit; heldout3/ (split 3, consumed:
# training data since 2026-12-03): 87 excerpts, one per source, none used
# by another split, unchanged since its freeze commit; heldout4/ (split 4,
# consumed: training data since 2026-12-05): 98 excerpts, one per source,
# none used by another split, each batch unchanged since its freeze commit;
# heldout5/ (split 5, consumed: training data since 2026-12-05): 66
# excerpts, one per source, none used by another split, unchanged since its
# freeze commit; heldout6/ (split 6, held-out): 56 excerpts, one per
# source, none used by another split (nor any of its sources by another
# split), unchanged since its freeze commit; heldout6c/ (split 6, causes
# batch, held out): 40 excerpts, one per source, none used by another split
# or by split 6's main batch, unchanged since its freeze commit.
. "${LOBES_SRC:-.}/tests/lib.sh"
LOGS="$SRC/tests/fixtures/logs"
FREEZE=c0c0284ece61bb286fdf6571ffe4225974d8abc3
# heldout2/ was frozen in two batches (heldout2/README.md)
FREEZE2="cfd750fa1de6b91bab42b6e43ec86ffafa7382df 6bdbdae3a7f64d0cc1d9b5927df6f686e93203b0"
# heldout3/ (split 3, consumed) was frozen in one commit
FREEZE3=d48e4b466412e2c80547ea0e331a21ad8c5a1ac7
# heldout4/ (split 4, consumed) was frozen in two batches (heldout4/README.md)
FREEZE4="c95be2dbbf01800439b3c8395ba2105fd53732af a34c0d81c0f478eeec99e2cfee9b895625f487b8"
# heldout5/ (split 5, consumed) was frozen in one commit
FREEZE5=90e2d653c8c453b3ccc54ebb2a920fb874f9cea7
# heldout6/ (split 6, held-out) was frozen in one commit
FREEZE6=5d16fec58eeb8ea2be612227e7717b45434e1fef
# heldout6c/ (split 6, causes batch) was frozen in one commit
FREEZE6C=16033a610fa9c01143cab29dbeddce5efe0d818d

# the side the draw rule (heldout/README.md) gives a source URL
side() {
	local h
	h=$(printf 'lobes-triage-19:%s' "$1" | sha256sum | cut -c1-2)
	case "$1" in
	https://github.com/vllm-project/*) [ $((0x$h)) -lt 64 ] && echo heldout || echo train ;;
	*) [ $((0x$h)) -lt 192 ] && echo heldout || echo train ;;
	esac
}

# cause ids a training excerpt may carry
vocab() {
	grep -h '^ *- id: ' "$SRC"/data/signatures/*.yaml | sed 's/.*id: *//'
	grep -h '^    family: ' "$SRC"/data/signatures/*.yaml | sed 's/.*family: *//'
	sed -n 's/^| `\([a-z0-9-]*\)` |.*/\1/p' "$LOGS/causes.md"
	echo unknown
}

# The directories of excerpts in the order they were drawn: a source of a
# split drawn after split 1 (heldout2/ onwards) may not be one that a
# directory drawn before it already used.
ORDER="corpus train heldout heldout2 heldout3 heldout4 heldout5 heldout6 heldout6c"

# check DIR: print one line per broken rule, nothing when all hold
check() {
	local dir=$1 want f field url verdict cause split root phase d
	local -a before=()
	want=$(basename "$dir")
	for d in $ORDER; do
		[ "$d" = "$want" ] && break
		before+=("$LOGS/$d"/*.log)
	done
	for f in "$dir"/*.log; do
		[ -e "$f" ] || continue
		field() { sed -n "/^# [a-z-]*: /!q; s/^# $1: //p" "$f"; }
		url=$(field origin | cut -d' ' -f1)
		verdict=$(field verdict)
		cause=$(field cause)
		split=$(field split)
		root=$(field root)
		phase=$(field phase)
		case "$url" in https://*) ;; *) echo "$f: no origin URL" ;; esac
		case "$verdict" in fatal | clean) ;; *) echo "$f: verdict '$verdict'" ;; esac
		[ "$split" = "$want" ] || echo "$f: split '$split' in $want/"
		if [[ "$want" == heldout?* ]]; then
			grep -qF "# origin: $url " "${before[@]}" && echo "$f: source already used outside $want/"
		else
			[ "$(side "$url")" = "$want" ] || echo "$f: the rule puts $url in $(side "$url")/"
			grep -qF "# origin: $url " "$LOGS"/corpus/*.log && echo "$f: source already in corpus/"
		fi
		if [ "$verdict" = fatal ]; then
			[ -n "$cause" ] || echo "$f: fatal without cause"
			# (split 3 was frozen with one fatal row that has no root line;
			# its root figure counts the rows that have one)
			[ -n "$root" ] || [ "$want" = heldout3 ] || echo "$f: fatal without root"
		fi
		case "$phase" in '' | pre-start | load | profile | warm-up | graph-capture | serving) ;;
		*) echo "$f: phase '$phase'" ;; esac
		[ "$want" = train ] && [ -n "$cause" ] && ! vocab | grep -qx -- "$cause" &&
			echo "$f: cause '$cause' is in no signature and not in causes.md"
		awk 'h == 0 && /^# [a-z-]+: / { next } { h = 1 } /^#/ { print FILENAME ": body line begins with #"; exit }' "$f"
	done
}

n=$(ls "$LOGS"/heldout/*.log | wc -l)
is "$n" 49 "heldout/ holds the 49 excerpts frozen in $FREEZE"
n=$(ls "$LOGS"/heldout2/*.log | wc -l)
is "$n" 62 "heldout2/ holds the 62 excerpts frozen in its two batches"
is "$(sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$LOGS"/heldout2/*.log | sort | uniq -d)" "" \
	"heldout2/: one excerpt per source"
n=$(ls "$LOGS"/heldout3/*.log | wc -l)
is "$n" 87 "heldout3/ holds the 87 excerpts frozen in $FREEZE3"
is "$(sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$LOGS"/heldout3/*.log | sort | uniq -d)" "" \
	"heldout3/: one excerpt per source"
n=$(ls "$LOGS"/heldout4/*.log | wc -l)
is "$n" 98 "heldout4/ holds the 98 excerpts frozen in its two batches"
is "$(sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$LOGS"/heldout4/*.log | sort | uniq -d)" "" \
	"heldout4/: one excerpt per source"
n=$(ls "$LOGS"/heldout5/*.log | wc -l)
is "$n" 66 "heldout5/ holds the 66 excerpts frozen in $FREEZE5"
is "$(sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$LOGS"/heldout5/*.log | sort | uniq -d)" "" \
	"heldout5/: one excerpt per source"
n=$(ls "$LOGS"/heldout6/*.log | wc -l)
is "$n" 56 "heldout6/ holds the 56 excerpts frozen in $FREEZE6"
is "$(sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$LOGS"/heldout6/*.log | sort | uniq -d)" "" \
	"heldout6/: one excerpt per source"
n=$(ls "$LOGS"/heldout6c/*.log | wc -l)
is "$n" 40 "heldout6c/ holds the 40 excerpts frozen in $FREEZE6C"
is "$(sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$LOGS"/heldout6c/*.log | sort | uniq -d)" "" \
	"heldout6c/: one excerpt per source"
for d in train heldout heldout2 heldout3 heldout4 heldout5 heldout6 heldout6c; do
	problems=$(check "$LOGS/$d")
	is "$problems" "" "$d/: headers, draw rule, new sources, vocabulary"
done

heldout_sources=$(sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$LOGS"/heldout/*.log | sort -u)
train_sources=$(sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$LOGS"/train/*.log | sort -u)
is "$(comm -12 <(echo "$heldout_sources") <(echo "$train_sources"))" "" "no source is on both sides"
# split 6 (held-out) and every other directory of excerpts, each way: a
# source taken by split 6 is in no other directory, whichever was written
# later
split6_sources=$(sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$LOGS"/heldout6/*.log | sort -u)
other_sources=$(for f in "$LOGS"/*/*.log; do
	case "$f" in "$LOGS"/heldout6/*) continue ;; esac
	sed -n 's/^# origin: \([^ ]*\).*/\1/p' "$f"
done | sort -u)
is "$(comm -12 <(echo "$split6_sources") <(echo "$other_sources"))" "" \
	"no source of heldout6/ is in another directory of excerpts"

# the checker catches each broken rule (planted files)
P="$TMP/plant/train"
mkdir -p "$P"
cat > "$P/a.log" <<'L'
# origin: https://github.com/vllm-project/vllm/issues/1738 (drawn held-out, filed here)
# verdict: fatal
# cause: no-such-family
# split: train
ImportError: x
L
cat > "$P/b.log" <<'L'
# origin: https://github.com/vllm-project/vllm/issues/11994 (a corpus-free train source)
# verdict: fatal
# cause: unknown
# root: RuntimeError
# phase: startup
# split: train
#033[1;36m(VllmWorker pid=1) ERROR x
L
problems=$(check "$P")
like "$problems" "a.log: the rule puts .*1738 in heldout/" "a source on the wrong side is caught"
like "$problems" "a.log: fatal without root" "a fatal excerpt without root is caught"
like "$problems" "a.log: cause 'no-such-family' is in no signature" "a cause outside the vocabulary is caught"
like "$problems" "b.log: phase 'startup'" "an unknown phase is caught"
like "$problems" "b.log: body line begins with #" "a body line that reads as header is caught"
unlike "$problems" "b.log: (the rule|fatal without|cause)" "a well-formed header passes"

# plant_used SPLIT URL: check a planted SPLIT/ whose one file, u.log, has a
# source another split already holds
plant_used() {
	mkdir -p "$TMP/plant/$1"
	printf '# origin: %s (a source another split already holds)\n# verdict: clean\n# split: %s\n%s\n' \
		"$2" "$1" 'INFO:     Application startup complete.' > "$TMP/plant/$1/u.log"
	check "$TMP/plant/$1"
}
problems=$(plant_used heldout2 https://github.com/vllm-project/vllm/issues/1738)
like "$problems" "u.log: source already used outside heldout2/" "a heldout2 source used by another split is caught"
unlike "$problems" "u.log: the rule puts" "heldout2 sources are not placed by the hash rule"
problems=$(plant_used heldout6c https://github.com/axolotl-ai-cloud/axolotl/issues/2528)
like "$problems" "u.log: source already used outside heldout6c/" "a heldout6c source used by split 6's main batch is caught"
unlike "$problems" "u.log: the rule puts" "heldout6c sources are not placed by the hash rule"

# split 1's bodies are never edited after the freeze (in a git checkout);
# since it was consumed (heldout/README.md) a header may gain a training
# annotation (`# cause-shown:`), nothing else
if git -C "$SRC" cat-file -e "$FREEZE^{commit}" 2>/dev/null; then
	changed=""
	for f in $(git -C "$SRC" ls-tree --name-only "$FREEZE" tests/fixtures/logs/heldout/ | grep '\.log$'); do
		was=$(git -C "$SRC" show "$FREEZE:$f" | awk 'h == 0 && /^# [a-z-]+: / { next } { h = 1; print }')
		now=$(awk 'h == 0 && /^# [a-z-]+: / { next } { h = 1; print }' "$SRC/$f" 2>/dev/null)
		[ "$was" = "$now" ] || changed="$changed $f"
		extra=$(diff <(git -C "$SRC" show "$FREEZE:$f" | sed -n '/^# [a-z-]*: /!q; p') \
			<(sed -n '/^# [a-z-]*: /!q; p' "$SRC/$f") | grep '^[<>]' | grep -v '^> # cause-shown: ')
		[ -z "$extra" ] || changed="$changed $f(header)"
	done
	is "$changed" "" "split 1's excerpts unchanged since the freeze $FREEZE but for cause-shown lines"
else
	ok 0 "# skip held-out freeze check: not a git checkout with $FREEZE"
fi
# unchanged_since SPLIT COMMIT [N]: the excerpts SPLIT/ held at COMMIT (N
# of them, where given) are unchanged since
unchanged_since() {
	local d=$1 c=$2 n=${3:-} frozen changed
	if ! git -C "$SRC" cat-file -e "$c^{commit}" 2>/dev/null; then
		ok 0 "# skip $d freeze check: not a git checkout with $c"
		return
	fi
	frozen=$(git -C "$SRC" ls-tree --name-only "$c" "tests/fixtures/logs/$d/" | grep '\.log$')
	[ -z "$n" ] || is "$(printf '%s\n' "$frozen" | grep -c '\.log$')" "$n" "the freeze $c holds $d's $n excerpts"
	changed=$(cd "$SRC" && [ -n "$frozen" ] && git diff --name-only "$c" -- $frozen)
	is "$changed" "" "$d excerpts unchanged since the freeze $c"
}
# each heldout2 and heldout4 batch, and heldout3, heldout5 and heldout6 (one
# commit each): the excerpts unchanged since their freeze (heldout3's README says
# since the freeze that the split was consumed; the .log files never change)
for c in $FREEZE2; do unchanged_since heldout2 "$c"; done
unchanged_since heldout3 "$FREEZE3" 87
for c in $FREEZE4; do unchanged_since heldout4 "$c"; done
unchanged_since heldout5 "$FREEZE5" 66
unchanged_since heldout6 "$FREEZE6" 56
unchanged_since heldout6c "$FREEZE6C" 40
done_testing
