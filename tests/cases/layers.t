#!/bin/bash
# layers.t — tools/check-layers.sh holds the house rules on this tree, and
# fails on each kind of violation planted in a small tree of its own.
. "${LOBES_SRC:-.}/tests/lib.sh"
CHECK="$SRC/tools/check-layers.sh"

run "$CHECK" "$SRC"
is "$rc" 0 "this tree keeps its rooms and sizes"
is "$out" "" "and says nothing"

# A small tree: three rooms, lowest first.
mk() {
	rm -rf "$TMP/t"; mkdir -p "$TMP/t/docs" "$TMP/t/src/lib/low" "$TMP/t/src/lib/mid" \
		"$TMP/t/src/lib/high" "$TMP/t/src/cmd"
	echo "Some words.
    floors: low mid high
More words." > "$TMP/t/docs/architecture.md"
	echo 'int low(void);' > "$TMP/t/src/lib/low/low.h"
	printf '#include "../low/low.h"\n#include "mid.h"\n' > "$TMP/t/src/lib/mid/mid.c"
	echo 'int mid(void);' > "$TMP/t/src/lib/mid/mid.h"
	printf '#include "../mid/mid.h"\n#include "../low/low.h"\n' > "$TMP/t/src/lib/high/high.c"
	echo '#include "../lib/high/high.h"' > "$TMP/t/src/cmd/c.c"
}
mk
run "$CHECK" "$TMP/t"
is "$rc" 0 "includes of its own room and rooms below pass"

mk
printf '\n#include "../high/high.h"\n' >> "$TMP/t/src/lib/low/low.h"
run "$CHECK" "$TMP/t"
is "$rc" 1 "an include from a lower room to a higher one fails"
like "$out" '^src/lib/low/low.h:3: includes \.\./high/high\.h: low \(floor 1\) may not include from high \(floor 3\)' \
	"the violation names file:line and both floors"

mk
printf '#include "../../cmd/c.h"\n' >> "$TMP/t/src/lib/mid/mid.c"
run "$CHECK" "$TMP/t"
is "$rc" 1 "the library including from the commands fails"
like "$out" 'mid.c:3: .*never includes from the commands' "and says so"

mk
mkdir "$TMP/t/src/lib/attic" && echo 'int x;' > "$TMP/t/src/lib/attic/x.c"
run "$CHECK" "$TMP/t"
is "$rc" 1 "a folder of src/lib that is not a room fails"
like "$out" "room 'attic' is not on the floors line" "and is named"

mk
sed -i 's/floors: low mid high/floors: low high mid/' "$TMP/t/docs/architecture.md"
run "$CHECK" "$TMP/t"
is "$rc" 1 "the order is read from the document (mid above high now)"
like "$out" 'high.c:1: .*high \(floor 2\) may not include from mid \(floor 3\)' "so high may no longer include mid"

mk
sed -i '/floors:/d' "$TMP/t/docs/architecture.md"
run "$CHECK" "$TMP/t"
is "$rc" 3 "no floors line: exit 3"
like "$errout" "expected exactly one line 'floors: ROOM" "with what was expected"

mk
echo "    floors: low" >> "$TMP/t/docs/architecture.md"
run "$CHECK" "$TMP/t"
is "$rc" 3 "two floors lines: exit 3"

# Public faces: another room, or a command, enters a room by ROOM/ROOM.h.
mk
echo 'int mid_part(void);' > "$TMP/t/src/lib/mid/part.h"
printf '#include "../mid/part.h"\n' >> "$TMP/t/src/lib/high/high.c"
run "$CHECK" "$TMP/t"
is "$rc" 1 "another room including a piece of a room, not its face, fails"
like "$out" 'high.c:3: includes \.\./mid/part\.h: enter the mid room by its public face, mid/mid.h' "and names the face"
mk
echo 'int mid_in(void);' > "$TMP/t/src/lib/mid/mid_int.h"
printf '#include "../lib/mid/mid_int.h"\n' >> "$TMP/t/src/cmd/c.c"
run "$CHECK" "$TMP/t"
is "$rc" 1 "a command including a room's insides fails"
like "$out" 'src/cmd/c.c:2: .*the insides of mid are not for other rooms' "and says why"
mk
printf '#include "part.h"\n' >> "$TMP/t/src/lib/mid/mid.c"; echo 'int p;' > "$TMP/t/src/lib/mid/part.h"
mkdir -p "$TMP/t/src/lib/util" "$TMP/t/tests/unit"; echo 'int u;' > "$TMP/t/src/lib/util/buf.h"
sed -i 's/floors: low mid high/floors: util low mid high/' "$TMP/t/docs/architecture.md"
printf '#include "../util/buf.h"\n' >> "$TMP/t/src/lib/high/high.c"
printf '#include "../../src/lib/mid/mid_int.h"\n' > "$TMP/t/tests/unit/t.c"
run "$CHECK" "$TMP/t"
is "$rc" 0 "a room's own pieces, util's tools and white-box unit tests pass"

# Sizes.
mk
seq 1 601 | sed 's/^/\/\/ /' > "$TMP/t/src/lib/mid/long.c"
run "$CHECK" "$TMP/t"
is "$rc" 1 "a file of 601 lines fails"
like "$out" 'src/lib/mid/long.c: 601 lines, over 600' "and is named with its length"
mk
seq 1 600 | sed 's/^/\/\/ /' > "$TMP/t/src/lib/mid/long.c"
run "$CHECK" "$TMP/t"
is "$rc" 0 "a file of 600 lines passes"

fn() { # fn FILE BODY_LINES [COMMENT]
	{ [ -n "${3:-}" ] && echo "/* $3 */"; echo 'int f(int a)'; echo '{'
	  for i in $(seq 1 "$2"); do echo "	a += $i;"; done; echo '	return a;'; echo '}'; } > "$1"
}
mk; fn "$TMP/t/src/lib/mid/f.c" 146
run "$CHECK" "$TMP/t"
is "$rc" 0 "a function of 150 lines passes"
mk; fn "$TMP/t/src/lib/mid/f.c" 147
run "$CHECK" "$TMP/t"
is "$rc" 1 "a function of 151 lines fails"
like "$out" 'src/lib/mid/f.c:1: function of 151 lines, over 150 .*int f\(int a\)' "and is named where it starts"
mk; mkdir -p "$TMP/t/tests/standin"; fn "$TMP/t/tests/standin/f.c" 147
run "$CHECK" "$TMP/t"
is "$rc" 1 "the stand-in's functions are held to it too"
mk; fn "$TMP/t/src/lib/mid/f.c" 147 "one table of cases; longer than 150 lines because splitting it hides the order"
run "$CHECK" "$TMP/t"
is "$rc" 0 "a long function whose comment says why passes"

run "$CHECK" a b
is "$rc" 2 "two arguments: usage error"
done_testing
