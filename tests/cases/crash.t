#!/bin/bash
# crash.t — `init --apply` killed at every write/rename step (the fault hook,
# LOBES_FAULT_AT=N) and at random moments (SIGKILL): once the next run has
# gone, the deploy dir is exactly the old one or exactly the new one, lobes'
# own values never come back as operator edits, no temp file is left.
# `make crash-trials` runs the long version (CRASH_TRIALS, default 200).
. "${LOBES_SRC:-.}/tests/lib.sh"
. "$SRC/tests/crash/lib.sh"

crash_setup; ok $? "an old (spark) and a new (thor) deploy dir that differ"

# Every fault point of the apply, in order, until a run passes them all.
points=0 nold=0 nnew=0 bad=""
for n in $(seq 200); do
	d=$TMP/crash-fault
	rm -rf "$d" && cp -a "$OLD" "$d"
	LOBES_FAULT_AT=$n "$LOBES" --dir "$d" init --profile thor --apply >/dev/null 2>&1
	rc=$?
	[ "$rc" = 0 ] && break
	points=$n
	[ "$rc" = 99 ] || { bad="$bad point $n: exit $rc;"; continue; }
	res=$(crash_check "$d")
	case "$res" in old) nold=$((nold + 1)) ;; new) nnew=$((nnew + 1)) ;; *) bad="$bad point $n: $res;" ;; esac
done
echo "# fault points: $points (old $nold, new $nnew)"
ok "$([ "$points" -ge 10 ]; echo $?)" "the apply passes at least 10 fault points (temps, journal, renames): $points"
is "$bad" "" "a kill at every fault point leaves exactly the old or the new dir after the next run"
ok "$([ "$nold" -gt 0 ] && [ "$nnew" -gt 0 ]; echo $?)" "kills before the commit point roll back, kills after it roll forward"

# Random SIGKILLs (a short run here; make crash-trials runs >= 200).
set -- $(crash_random_trials "${CRASH_TRIALS:-15}")
echo "# random kills: trials $1, killed $2, finished $3, old $4, new $5, bad $6"
nbad=$6
shift 6
[ $# -gt 0 ] && echo "# the first: $*"
is "$nbad" 0 "random SIGKILLs: every trial is exactly old or new after the next run"

# A journal that is not ours: a positioned error, nothing changed.
d=$TMP/crash-journal
cp -a "$OLD" "$d"
printf '{"version": 1, "renames": [["../../etc/passwd", ".env"]]}\n' >"$d/.lobes-journal"
before=$(crash_snap "$d")
run "$LOBES" --dir "$d" init --apply
is "$rc" 3 "a journal naming a file outside the dir is a config error"
like "$errout" "\.lobes-journal: renames\[0\]: not a rename of this dir's files" "named with its position"
is "$(crash_snap "$d")" "$before" "and nothing is changed"
# A dry run reads a pending commit as committed and writes nothing.
d=$TMP/crash-pending
rm -rf "$d" && cp -a "$OLD" "$d"
for n in $(seq 200); do
	rm -rf "$d" && cp -a "$OLD" "$d"
	LOBES_FAULT_AT=$n "$LOBES" --dir "$d" init --profile thor --apply >/dev/null 2>&1
	[ -e "$d/.lobes-journal" ] && break
done
ok "$([ -e "$d/.lobes-journal" ]; echo $?)" "a kill can leave a committed journal behind"
before=$(crash_snap "$d")
run "$LOBES" --dir "$d" --json init
like "$out" '"name": "thor"' "a dry run sees the committed (thor) state"
like "$out" '"kept": \[\]' "with no operator edits"
is "$(crash_snap "$d")" "$before" "and changes zero bytes"
done_testing
