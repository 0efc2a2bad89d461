# tests/crash/lib.sh — crash-consistency helpers for `init --apply` (source
# after tests/lib.sh). The deploy dir must be exactly the old or exactly the
# new one once the next writer has run, with no temp file of ours left.
#
#   crash_setup              $OLD (spark applied) and $NEW (the same dir after
#                            an uninterrupted `init --profile thor --apply`),
#                            both settled by one more plain `init --apply`
#   crash_snap DIR           every file of DIR (names and sha256), sorted
#   crash_check DIR          settle DIR with `init --apply` (the next run), then
#                            print old, new or bad:REASON
unset LOBES_SYSROOT

crash_snap() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

crash_settle() {
	local d=$1 o
	o=$("$LOBES" --dir "$d" --json init --apply 2>&1) || { echo "bad:the next init --apply failed: $o"; return 1; }
	# lobes' own values must never come back as operator edits
	case "$o" in *'"kept": []'*) ;; *) echo "bad:the next run kept values as operator edits: $(printf '%s' "$o" | grep -o '"kept": \[[^]]*\]')"; return 1 ;; esac
	return 0
}

crash_setup() {
	OLD=$TMP/crash-old
	NEW=$TMP/crash-new
	"$LOBES" --dir "$OLD" init --profile spark --apply >/dev/null || return 1
	crash_settle "$OLD" >/dev/null || return 1
	cp -a "$OLD" "$NEW"
	"$LOBES" --dir "$NEW" init --profile thor --apply >/dev/null || return 1
	crash_settle "$NEW" >/dev/null || return 1
	crash_snap "$OLD" >"$TMP/crash-old.sum"
	crash_snap "$NEW" >"$TMP/crash-new.sum"
	! cmp -s "$TMP/crash-old.sum" "$TMP/crash-new.sum"
}

crash_check() {
	local d=$1
	crash_settle "$d" || return 0
	if ls -a "$d" | grep -Eq '\.lobes-tmp-|\.tmp\.[0-9]+$'; then
		echo "bad:a temp file survived the next run: $(ls -a "$d" | grep -E 'lobes-tmp|\.tmp\.' | tr '\n' ' ')"
		return 0
	fi
	crash_snap "$d" >"$TMP/crash-got.sum"
	if cmp -s "$TMP/crash-got.sum" "$TMP/crash-old.sum"; then echo old
	elif cmp -s "$TMP/crash-got.sum" "$TMP/crash-new.sum"; then echo new
	else echo "bad:neither old nor new: $(diff "$TMP/crash-old.sum" "$TMP/crash-got.sum" | grep '^>' | head -3 | tr '\n' ' ')"
	fi
}

# crash_random_trials N: N runs of `init --profile thor --apply` on a copy of
# $OLD, each sent SIGKILL after a random delay in [0, its run time];
# prints "trials killed finished old new bad" and the first bad reasons.
crash_random_trials() {
	local n=$1 i t0 t1 ms d pid res killed=0 finished=0 nold=0 nnew=0 nbad=0 first=""
	t0=$(date +%s%N)
	cp -a "$OLD" "$TMP/crash-time" && "$LOBES" --dir "$TMP/crash-time" init --profile thor --apply >/dev/null
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 + 1 ))
	for i in $(seq "$n"); do
		d=$TMP/crash-trial
		rm -rf "$d" && cp -a "$OLD" "$d"
		"$LOBES" --dir "$d" init --profile thor --apply >/dev/null 2>&1 &
		pid=$!
		sleep "$(awk -v m=$((RANDOM % ms)) 'BEGIN { printf "%.3f", m / 1000 }')"
		kill -KILL "$pid" 2>/dev/null
		if wait "$pid"; then finished=$((finished + 1)); else killed=$((killed + 1)); fi
		res=$(crash_check "$d")
		case "$res" in
		old) nold=$((nold + 1)) ;;
		new) nnew=$((nnew + 1)) ;;
		*) nbad=$((nbad + 1)); [ -z "$first" ] && first="trial $i: $res" ;;
		esac
	done
	echo "$n $killed $finished $nold $nnew $nbad"
	[ -n "$first" ] && echo "$first"
	return 0
}
