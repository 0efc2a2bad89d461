#!/bin/bash
# logs.t — durable per-boot logs without a real dockerd: a fake Docker
# Engine API (tests/secrets/fake_engine.py) holds a hand container whose
# log is a real boot failure (tests/fixtures/logs/train/, CUDA error 804),
# stamped as Docker stamps lines with timestamps=1. `lobes logs --collect
# --once` passes keep it under DIR/logs/hand/: appended lines come once;
# when the container restarts (a new StartedAt) the lines the old boot wrote
# after the last pass still go to its file and the new boot gets the next
# file; `lobes logs hand --previous` shows the killed boot, `lobes logs
# hand` the current one, --list both, -n the last lines; `triage --role hand
# --previous` names the killed boot's cause; files are 0600; a 100 MB flood
# stays within the bounds, and a 100 MB burst between two passes (more than a
# pass reads) is read in chunks over several passes, every line kept once.
. "${LOBES_SRC:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed for the fake engine"
unset LOBES_SYSROOT LOBES_DIR DOCKER_HOST
export LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1 NO_COLOR=1

D=$TMP/deploy
"$LOBES" --dir "$D" init --profile thor --apply >/dev/null
ok $? "a thor deploy dir"
sed -i 's/^COMPOSE_PROJECT_NAME=.*/COMPOSE_PROJECT_NAME=fleetx/' "$D/.env"
E=$TMP/engine
mkdir -p "$E"
CID=$(printf 'd0%.0s' $(seq 32))
# container NAME STARTED RESTARTS: the hand container's inspect and list entry
container() {
	python3 - "$SRC/tests/fixtures/engine" "$E" "$CID" "$1" "$2" <<'PY'
import json, sys
src, out, cid, started, restarts = sys.argv[1:]
l = json.load(open(src + "/containers-list.json"))[0]
i = json.load(open(src + "/inspect-senses.json"))
l["Id"] = i["Id"] = cid
l["Names"] = ["/fleetx_hand_1"]; i["Name"] = "/fleetx_hand_1"
i["State"]["StartedAt"] = started
i["RestartCount"] = int(restarts)
for labels in (l["Labels"], i["Config"]["Labels"]):
    labels["com.docker.compose.project"] = "fleetx"
    labels["com.docker.compose.service"] = labels["lobes.role"] = "hand"
json.dump([l], open(out + "/list.json", "w"))
json.dump(i, open(out + "/inspect-%s.json" % cid, "w"))
PY
}
LOG=$E/log-$CID.txt
# stamp SECOND FILE: FILE's lines, stamped 2026-12-03T14:00:SECOND.<n>Z as Docker does
stamp() { awk -v s="$1" '{ printf "2026-12-03T14:00:%02d.%09dZ %s\n", s, NR * 1000, $0 }' "$2"; }
HLOG=$SRC/tests/fixtures/logs/train/gpustack-1254-cudagetdevicecount-error-804.log
head -5 "$HLOG" >"$TMP/part1"
tail -n +6 "$HLOG" >"$TMP/part2"
container 2026-12-03T14:00:01Z 0
stamp 02 "$TMP/part1" >"$LOG"
python3 "$SRC/tests/secrets/fake_engine.py" "$TMP/docker.sock" "$E" &
FAKE=$!
trap 'kill "$FAKE" 2>/dev/null; wait "$FAKE" 2>/dev/null; rm -rf "$TMP"' EXIT
for i in $(seq "$TEST_POLLS"); do [ -S "$TMP/docker.sock" ] && break; sleep 0.1; done
export DOCKER_HOST=unix://$TMP/docker.sock

run "$LOBES" --dir "$D" logs hand
is "$rc" 3 "nothing kept yet: exit 3"
like "$errout" "no boot of hand kept in '$D/logs/hand'" "… saying where it looked"
run "$LOBES" --dir "$D" logs --collect --once
is "$rc" 0 "a collector pass"
is "$out" "kept 5 new lines" "… keeps the first boot's five lines"
run "$LOBES" --dir "$D" logs hand
is "$(printf '%s\n' "$out" | tail -n +2)" "$(cat "$TMP/part1")" "lobes logs hand: the lines as the engine wrote them"
like "$(printf '%s\n' "$out" | head -1)" "^# lobes boot 000001 container $CID started 2026-12-03T14:00:01Z$" "… after a header naming the boot"

# the boot goes on, then dies; Docker restarts the container before the next pass
stamp 03 "$TMP/part2" >>"$LOG"
run "$LOBES" --dir "$D" logs --collect --once
is "$out" "kept $(wc -l <"$TMP/part2") new lines" "the next pass keeps only the new lines"
printf 'the last words of boot 1\n' >"$TMP/last"
stamp 04 "$TMP/last" >>"$LOG"
container 2026-12-03T14:00:10Z 1
printf 'INFO boot 2 starts\nINFO boot 2 loads\n' >"$TMP/boot2"
stamp 11 "$TMP/boot2" >>"$LOG"
run "$LOBES" --dir "$D" logs --collect --once
is "$out" "kept 3 new lines" "after the restart: one last line of boot 1, two of boot 2"
run "$LOBES" --dir "$D" logs hand
is "$(printf '%s\n' "$out" | tail -n +2)" "$(cat "$TMP/boot2")" "lobes logs hand: the current boot only"
like "$out" "^# lobes boot 000002 .* started 2026-12-03T14:00:10Z" "… boot 2"
run "$LOBES" --dir "$D" logs hand --previous
is "$(printf '%s\n' "$out" | tail -n +2)" "$(cat "$HLOG" "$TMP/last")" "--previous: the killed boot whole, its last line (written after the last pass) included"
run "$LOBES" --dir "$D" logs hand --previous -n 1
is "$out" "the last words of boot 1" "-n 1: its last line"
run "$LOBES" --dir "$D" logs hand --list
is "$rc" 0 "--list"
like "$out" "^ +1 +[0-9]+ bytes  # lobes boot 000001" "… boot 1"
like "$out" "^ +2 +[0-9]+ bytes  # lobes boot 000002 .*\(current\)$" "… boot 2, current"
run "$LOBES" --dir "$D" --json logs hand --list
is "$(printf '%s' "$out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["boots"]))')" "2" "--list --json: two boots"
is "$(stat -c %a "$D/logs/hand/000001.log") $(stat -c %a "$D/logs/hand")" "600 700" "files 0600, the directory 0700"
run "$LOBES" --dir "$D" logs --collect --once
is "$out" "kept 0 new lines" "a pass with nothing new keeps nothing (no line twice)"

# triage of the killed boot
run "$LOBES" --dir "$D" --json triage --role hand --previous
is "$rc" 1 "triage --role hand --previous: fatal (exit 1)"
like "$out" '"id": "cuda-forward-compat-unsupported"' "… names the killed boot's cause"
run "$LOBES" --dir "$D" triage --previous
is "$rc" 2 "--previous without --role is a usage error"

# a 100 MB flood in one boot, in five passes of 20 MB (each pass's file holds only its
# new lines, as since= would give): the boot stays within two 8 MiB parts, its last
# line kept, every file 0600
container 2026-12-03T14:01:00Z 2
n=0
for part in 1 2 3 4 5; do
	awk -v p="$part" 'BEGIN { for (i = 0; i < 200000; i++)
		printf "2026-12-03T14:%02d:%02d.%09dZ flood %d line %07d %s\n", 1 + p, 1 + int(i / 10000), i % 10000 * 1000, p, i,
			"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }' >"$LOG"
	run "$LOBES" --dir "$D" logs --collect --once
	[ "$rc" = 0 ] && n=$((n + 1))
done
is "$n" 5 "five flood passes (100 MB of log)"
B=$D/logs/hand/000003.log
ok "$([ "$(stat -c %s "$B")" -le $((8 << 20)) ] && [ "$(stat -c %s "$B.1")" -le $((8 << 20)) ]; echo $?)" \
	"the flooded boot's two parts are each within 8 MiB ($(stat -c %s "$B") and $(stat -c %s "$B.1") bytes)"
is "$(ls "$D/logs/hand" | grep -c '^000003')" 2 "… and there are two of them"
run "$LOBES" --dir "$D" logs hand -n 1
like "$out" "^flood 5 line 0199999 " "the flood's last line is kept"
is "$(find "$D/logs" -type f ! -perm 600 | wc -l)" 0 "every kept file is 0600"
total=$(du -sb "$D/logs" | cut -f1)
ok "$([ "$total" -le $((10 * 16 << 20)) ]; echo $?)" "the role's logs stay within 10 boots of 16 MiB ($total bytes)"

# a faster flood: 100 MB logged between two passes, more than one pass reads
# (64 MiB): the passes read it in chunks, each one ok, every line kept once
container 2026-12-03T14:11:00Z 3
awk 'BEGIN { for (i = 0; i < 1000000; i++) { s = int(i / 10000)
	printf "2026-12-03T14:%02d:%02d.%09dZ burst line %07d %s\n", 11 + int(s / 60), s % 60, i % 10000 * 1000, i,
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" } }' >"$LOG"
ok "$([ "$(stat -c %s "$LOG")" -gt $((64 << 20)) ]; echo $?)" "the burst is over one pass's 64 MiB ($(stat -c %s "$LOG") bytes)"
kept=0 passes=0 failed=0 got=
for i in 1 2 3 4 5 6 7 8; do
	run "$LOBES" --dir "$D" --json logs --collect --once
	[ "$rc" = 0 ] || { failed=$((failed + 1)); printf '%s\n' "$errout" | sed 's/^/# /'; }
	got=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["lines"])' 2>/dev/null)
	[ "${got:-0}" -gt 0 ] || break
	kept=$((kept + got)) passes=$((passes + 1))
done
is "$failed" 0 "no pass fails"
ok "$([ "$passes" -ge 2 ]; echo $?)" "the burst took more than one pass ($passes)"
is "$kept" 1000000 "every line of the burst was kept, none twice"
run "$LOBES" --dir "$D" logs hand -n 1
like "$out" "^burst line 0999999 " "its last line is kept"
B=$D/logs/hand/000004.log
ok "$([ "$(stat -c %s "$B")" -le $((8 << 20)) ] && [ "$(stat -c %s "$B.1")" -le $((8 << 20)) ]; echo $?)" \
	"the burst's boot stays within its two 8 MiB parts"

run "$LOBES" --dir "$D" logs hand -f --previous
is "$rc" 2 "-f with --previous is a usage error"
run "$LOBES" --dir "$D" logs nosuch
is "$rc" 2 "an unknown role is a usage error"
done_testing
