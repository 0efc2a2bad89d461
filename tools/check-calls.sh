#!/bin/bash
# tools/check-calls.sh — no call loop between the files of the library.
#
#   tools/check-calls.sh [BUILD]     (BUILD: a build folder, default build/)
#
# Reads the objects the build made of src/lib (BUILD/src/lib/ROOM/NAME.o)
# with nm: the symbols each file defines and the ones it uses but does not
# define. File A calls file B when A uses a symbol B defines (a function or
# data: a table of callbacks counts). Every set of two or more files that
# call each other round (a strongly connected component of that graph) is a
# call loop: it is named with its files and one loop through them, each
# arrow with the symbols it stands for, e.g.
#
#   call loop of 2 files: src/lib/x/a.c src/lib/x/b.c
#     src/lib/x/a.c -> src/lib/x/b.c (b_fn) -> src/lib/x/a.c (a_fn)
#
# A file calls only down; where a lower file must tell a higher one
# something, the higher one registers a callback (docs/architecture.md).
#
# Rooms whose loops predate this check are listed in KNOWN below: a loop
# wholly inside one of them is printed as known and does not fail; any other
# loop does. Take a room off the list once its loops are split.
#
# Exits 1 on a loop that is not known, 0 otherwise (known loops printed);
# 2 when there are no objects to read (build first) or nm fails.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -le 1 ] || { echo "usage: tools/check-calls.sh [BUILD]" >&2; exit 2; }
BUILD=${1:-$ROOT/build}
# Rooms with call loops from before this check (split them, then drop them here):
# render (args.c, compose.c; k8s.c, k8s_tree.c).
KNOWN="render"

[ -d "$BUILD/src/lib" ] || { echo "check-calls: $BUILD/src/lib: no objects; build first (make all)" >&2; exit 2; }
syms=$(mktemp)
trap 'rm -f "$syms"' EXIT
n=0
while IFS= read -r o; do
	f=${o#"$BUILD"/}; f=${f%.o}.c
	d=$(nm -g --defined-only "$o") || { echo "check-calls: nm $o failed" >&2; exit 2; }
	u=$(nm -u "$o") || { echo "check-calls: nm $o failed" >&2; exit 2; }
	printf '%s\n' "$d" | awk -v f="$f" 'NF >= 3 { print "D", f, $3 }'
	printf '%s\n' "$u" | awk -v f="$f" 'NF >= 2 { print "U", f, $NF }'
	n=$((n + 1))
done < <(find "$BUILD/src/lib" -name '*.o' | LC_ALL=C sort) > "$syms"
[ "$n" -gt 0 ] || { echo "check-calls: $BUILD/src/lib: no objects; build first (make all)" >&2; exit 2; }

awk -v known="$KNOWN" '
function room(f,   p) { p = f; sub(/^src\/lib\//, "", p); sub(/\/.*/, "", p); return p }
$1 == "D" { if (!($2 in id)) { id[$2] = ++nn; name[nn] = $2 } def[$3] = id[$2]; next }
$1 == "U" { if (!($2 in id)) { id[$2] = ++nn; name[nn] = $2 } nu++; ua[nu] = id[$2]; us[nu] = $3 }
END {
	nk = split(known, ks, " ")
	for (i = 1; i <= nk; i++) isknown[ks[i]] = 1
	# edges a -> b, with the symbols (a few) each stands for
	for (k = 1; k <= nu; k++) {
		if (!(us[k] in def)) continue
		a = ua[k]; b = def[us[k]]
		if (a == b) continue
		if (!((a, b) in e)) { e[a, b] = 1; deg[a]++; adj[a, deg[a]] = b; why[a, b] = us[k]; nsym[a, b] = 1 }
		else if (nsym[a, b] < 3 && index(" " why[a, b] " ", " " us[k] " ") == 0) {
			why[a, b] = why[a, b] " " us[k]; nsym[a, b]++
		} else if (nsym[a, b] == 3) { why[a, b] = why[a, b] " ..."; nsym[a, b]++ }
	}
	# reach[s, t]: t is reachable from s (one search per file)
	for (s = 1; s <= nn; s++) {
		top = 0; stack[++top] = s
		while (top) {
			v = stack[top--]
			for (j = 1; j <= deg[v]; j++) {
				w = adj[v, j]
				if (!((s, w) in reach)) { reach[s, w] = 1; stack[++top] = w }
			}
		}
	}
	bad = 0
	for (s = 1; s <= nn; s++) {
		if (done[s] || !((s, s) in reach)) continue
		# the loop s is in: every file s reaches that reaches s back
		m = 0; members = ""; allknown = 1
		for (t = 1; t <= nn; t++)
			if (t == s || (((s, t) in reach) && ((t, s) in reach))) {
				done[t] = 1; insc[s, t] = 1; m++; members = members " " name[t]
				if (!(room(name[t]) in isknown)) allknown = 0
			}
		# one loop through s: a breadth-first search inside the component
		split("", prev)
		head = 1; tail = 0; found = 0
		for (j = 1; j <= deg[s]; j++) {
			w = adj[s, j]
			if (((s, w) in insc) && !(w in prev)) { prev[w] = s; q[++tail] = w }
		}
		while (head <= tail && !found) {
			v = q[head++]
			if (v == s) { found = 1; break }
			for (j = 1; j <= deg[v]; j++) {
				w = adj[v, j]
				if (((s, w) in insc) && !(w in prev)) { prev[w] = v; q[++tail] = w }
			}
		}
		nseq = 0; seqr[++nseq] = s; v = prev[s]
		while (v != s) { seqr[++nseq] = v; v = prev[v] }
		seqr[++nseq] = s
		path = name[s]
		for (i = nseq - 1; i >= 1; i--) path = path " -> " name[seqr[i]] " (" why[seqr[i + 1], seqr[i]] ")"
		tag = allknown ? "known call loop (a room on the KNOWN list, not a failure)" : "call loop"
		printf "%s of %d files:%s\n  %s\n", tag, m, members, path
		if (!allknown) bad = 1
	}
	exit bad
}' "$syms"
