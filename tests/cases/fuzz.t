#!/bin/bash
# fuzz.t — the regression replay of the fuzz targets: every committed seed
# (tests/fuzz/corpus/TARGET/) and crash input (tests/fuzz/crashes/TARGET/)
# goes once through its target, built without clang
# (LOBES_BUILD/fuzz/replay_TARGET, see tests/fuzz.mk). Under `make asan`
# the replay runs with AddressSanitizer, UBSan and LeakSanitizer.
. "${LOBES_SRC:-.}/tests/lib.sh"
BUILD=${LOBES_BUILD:-$SRC/build}
for f in "$SRC"/tests/fuzz/fuzz_*.c; do
	t=$(basename "$f" .c)
	t=${t#fuzz_}
	bin=$BUILD/fuzz/replay_$t
	dirs=("$SRC/tests/fuzz/corpus/$t")
	[ -d "$SRC/tests/fuzz/crashes/$t" ] && dirs+=("$SRC/tests/fuzz/crashes/$t")
	n=$(ls "$SRC/tests/fuzz/corpus/$t" 2>/dev/null | wc -l)
	ok $([ "$n" -gt 0 ]; echo $?) "$t: has committed seeds ($n)"
	if [ ! -x "$bin" ]; then
		ok 1 "$t: replay binary $bin is built (make test-helpers)"
		continue
	fi
	run timeout 300 "$bin" "${dirs[@]}"
	is "$rc" 0 "$t: every committed input replays cleanly"
	[ "$rc" = 0 ] || printf '%s\n' "$errout" | tail -20 | sed 's/^/# /'
done
done_testing
