#!/bin/bash
# tools/check-layers.sh — the house rules that a reader of the include lines
# and the line counts can check, so they cannot erode unnoticed.
#
#   tools/check-layers.sh [ROOT]     (ROOT: a source tree, default the repo)
#
# 1. Rooms. The room order is read from docs/architecture.md, from its one
#    line of the form `floors: util facts ... verify` (lowest first). Every
#    `#include "…"` of a file under src/lib/ROOM/ is resolved against the
#    including file's folder; it may name a file of its own room or of a
#    room below it, never one above, never src/cmd/ or src/main.c, and every
#    folder of src/lib/ must be a room of that line. With no arrow up there
#    can be no include cycle between files of different rooms. From another
#    room (or from src/cmd/ and src/main.c), a room is entered by its
#    public face only, ROOM/ROOM.h; util/ is a toolbox of one header per
#    tool; a `*_int.h` is never included from outside its room.
# 2. Sizes. No file of src/, tests/standin/ or tools/ over 600 lines; no
#    function (a definition opening at column 0, closing with `}` at column
#    0) over 150 lines unless one of the 12 lines above it is a comment
#    saying why, with the words "longer than 150 lines".
#
# Prints one line per violation (file:line: what, and the rule) and exits 1
# when there is any; exits 0 silently otherwise; 2 on a usage error, 3 when
# the order cannot be read.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[ $# -le 1 ] || { echo "usage: tools/check-layers.sh [ROOT]" >&2; exit 2; }
DOC="$ROOT/docs/architecture.md"
[ -r "$DOC" ] || { echo "check-layers: $DOC: cannot read the room order" >&2; exit 3; }
order=$(sed -n 's/^ *floors: *//p' "$DOC")
[ "$(sed -n '/^ *floors: /p' "$DOC" | wc -l)" = 1 ] && [ -n "$order" ] ||
	{ echo "check-layers: $DOC: expected exactly one line 'floors: ROOM ROOM ...' (lowest first)" >&2; exit 3; }

fail=0
bad() { printf '%s\n' "$*"; fail=1; }

# face FILE LINE INCLUDE TARGET: an include from outside a room names its face.
face() {
	local room=${4#src/lib/} base=${4##*/}
	room=${room%%/*}
	case $base in
	*_int.h) bad "$1:$2: includes $3: the insides of $room are not for other rooms; include $room/$room.h" ;;
	*) [ "$room" = util ] || [ "$base" = "$room.h" ] ||
		bad "$1:$2: includes $3: enter the $room room by its public face, $room/$room.h" ;;
	esac
}

declare -A floor=()
i=0
for r in $order; do i=$((i + 1)); floor[$r]=$i; done

cd "$ROOT" || exit 3
for d in src/lib/*/; do
	r=$(basename "$d")
	[ -n "${floor[$r]:-}" ] || bad "$d: room '$r' is not on the floors line of docs/architecture.md"
done

while IFS= read -r f; do
	room=${f#src/lib/}; room=${room%%/*}
	mine=${floor[$room]:-0}
	dir=$(dirname "$f")
	while IFS=: read -r ln inc; do
		target=$(realpath -m --relative-to=. "$dir/$inc")
		case $target in
		src/lib/*)
			other=${target#src/lib/}; other=${other%%/*}
			[ "$other" = "$room" ] && continue
			theirs=${floor[$other]:-}
			if [ -z "$theirs" ]; then
				bad "$f:$ln: includes $inc from '$other', which is not a room"
			elif [ "$theirs" -gt "$mine" ]; then
				bad "$f:$ln: includes $inc: $room (floor $mine) may not include from $other (floor $theirs), a room above it"
			else
				face "$f" "$ln" "$inc" "$target"
			fi ;;
		src/*) bad "$f:$ln: includes $inc: the library never includes from the commands ($target)" ;;
		esac
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1:\2/')
done < <(find src/lib -type f \( -name '*.c' -o -name '*.h' \) | sort)

# Outside the library: the commands and main.c (unit and fuzz tests are
# white-box: they may reach inside a room).
while IFS= read -r f; do
	dir=$(dirname "$f")
	while IFS=: read -r ln inc; do
		target=$(realpath -m --relative-to=. "$dir/$inc")
		case $target in src/lib/*/*) face "$f" "$ln" "$inc" "$target" ;; esac
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1:\2/')
done < <(find src -maxdepth 2 -type f \( -name '*.c' -o -name '*.h' \) -not -path 'src/lib/*' 2>/dev/null | sort)

# Sizes.
sizes=$(mktemp)
trap 'rm -f "$sizes"' EXIT
while IFS= read -r f; do
	n=$(wc -l < "$f")
	[ "$n" -le 600 ] || bad "$f: $n lines, over 600: split it by responsibility"
	[ "${f%.c}" != "$f" ] || continue
	awk -v F="$f" '
		{ line[NR] = $0 }
		/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ && !/^(typedef|struct [a-z_]+ *\{|static const|#)/ {
			if (!start) { start = NR; name = $0 }
		}
		/^}/ && start {
			n = NR - start + 1
			if (n > 150) {
				why = 0
				for (k = start - 12; k < start; k++) if (k > 0 && line[k] ~ /longer than 150 lines/) why = 1
				if (!why) printf "%s:%d: function of %d lines, over 150 (say why in its comment, or split it): %s\n", F, start, n, name
			}
			start = 0
		}' "$f"
done < <(find src tests/standin tools -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | sort) > "$sizes"
if [ -s "$sizes" ]; then cat "$sizes"; fail=1; fi
exit $fail
