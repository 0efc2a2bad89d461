#!/bin/bash
# hostile.t — malformed operator input through the CLI: every YAML loader
# (operator profiles, signatures, questions, doctor's compose read) refuses
# the libfyaml-hanging inputs with a positioned error instead of spinning
# (each command runs under `timeout`, so a hang fails the test, it does not
# hang the suite); bounds on other input (a FIFO as a profile, nested
# ${...} in a compose file, option values); .env fidelity through
# `init --apply` (operator lines kept byte for byte, a NUL refused, a
# symbolic link refused, an unknown --reset key refused).
. "${LOBES_SRC:-.}/tests/lib.sh"
HOSTS=$SRC/tests/fixtures/hosts
FAKE=$SRC/tests/fixtures/doctor
export LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1
export HF_HUB_CACHE=$TMP/hub
export PATH="$FAKE/bin:$PATH" FAKE_DOCKER_NVIDIA=1 FAKE_ENV_LIST=$FAKE/image-env.txt
export FAKE_DOCKER_LOG=$TMP/docker.log
unset LOBES_SYSROOT HF_HOME LOBES_DIR LOBES_DOCKER LOBES_COMPOSE
unset FAKE_DOCKER_DOWN FAKE_COMPOSE_V2 FAKE_COMPOSE_V1 FAKE_IMAGE_ABSENT FAKE_RUN_FAIL
LIMIT=60 # generous: each command takes milliseconds; only a hang gets near it

on() { local b=$1; shift; run timeout $LIMIT env LOBES_SYSROOT="$HOSTS/$b" LOBES_NVIDIA_SMI="$HOSTS/$b/bin/nvidia-smi" "$LOBES" "$@"; }

# The inputs: the 3-byte directive with an invalid octet, an alias loop,
# invalid UTF-8 inside a quoted scalar, and a UTF-16 file.
printf '%%\x8e\n' >"$TMP/directive.yaml"
printf 'kind: card\nname: &a [*a, *a]\n' >"$TMP/alias.yaml"
printf 'kind: card\nname: "\xc3\x28"\n' >"$TMP/utf8.yaml"
printf '\xff\xfek\x00i\x00n\x00d\x00:\x00' >"$TMP/utf16.yaml"
declare -A WANT=(
	[directive]=':1:2: invalid UTF-8 \(byte 0x8e\); expected UTF-8 text'
	[alias]=":2:7: a YAML anchor \('&'\); expected plain data"
	[utf8]=':2:8: invalid UTF-8 \(byte 0xc3\); expected UTF-8 text'
	[utf16]=':1:1: the text is UTF-16LE; expected UTF-8'
)

for k in directive alias utf8 utf16; do
	D=$TMP/op-$k
	mkdir -p "$D/profiles" "$D/signatures" "$D/questions"
	cp "$TMP/$k.yaml" "$D/profiles/x.yaml"
	on thor --dir "$D" explain --profile thor
	is "$rc" 3 "$k: an operator profile is refused (exit 3, no hang)"
	like "$errout" "$D/profiles/x.yaml${WANT[$k]}" "$k: … with file:line:column and what was expected"
	rm "$D/profiles/x.yaml"

	cp "$TMP/$k.yaml" "$D/signatures/x.yaml"
	echo "INFO hello" >"$TMP/boot.log"
	on thor --dir "$D" triage "$TMP/boot.log"
	is "$rc" 3 "$k: an operator signature file is refused (exit 3, no hang)"
	like "$errout" "$D/signatures/x.yaml${WANT[$k]}" "$k: … positioned"
	rm "$D/signatures/x.yaml"

	cp "$TMP/$k.yaml" "$D/questions/x.yaml"
	on thor --dir "$D" verify --list
	is "$rc" 3 "$k: an operator question file is refused (exit 3, no hang)"
	like "$errout" "$D/questions/x.yaml${WANT[$k]}" "$k: … positioned"
	rm "$D/questions/x.yaml"
done

# doctor's compose read
DEP=$TMP/dep
on thor --dir "$DEP" init --apply
is "$rc" 0 "init renders a deploy dir"
for k in directive alias utf8 utf16; do
	cp "$TMP/$k.yaml" "$DEP/docker-compose.yml"
	on thor --dir "$DEP" doctor
	is "$rc" 1 "$k: doctor reports a bad compose file as a finding (exit 1, no hang)"
	like "$out" "docker-compose.yml${WANT[$k]}" "$k: … positioned"
done

# --- bounds ----------------------------------------------------------------
F=$TMP/fifo
mkdir -p "$F/profiles"
mkfifo "$F/profiles/x.yaml"
on thor --dir "$F" explain --profile thor
is "$rc" 3 "a FIFO in the operator profiles is refused (exit 3), not waited on"
like "$errout" "'$F/profiles/x.yaml' is a FIFO; expected a regular file" "… naming the file and what was expected"

# doctor: ${A:-${A:-...}} nested 20000 levels in a compose command
on thor --dir "$DEP" init --apply
python3 - "$DEP/docker-compose.yml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
deep = "${A:-" * 20000 + "x" + "}" * 20000
i = s.index("command:")
j = s.index("\n", i)
s = s[:j + 1] + "      - '--note=" + deep + "'\n" + s[j + 1:]
open(p, "w").write(s)
PY
on thor --dir "$DEP" doctor
is "$rc" 1 "doctor: 20000 nested \${...} levels are a finding (exit 1), not minutes of work"
like "$out" "docker-compose.yml: '\\\$\{' nested more than 32 levels deep at column 8; expected at most 32" "… with a clear error"
on thor --dir "$DEP" init --apply

# options
for a in "--margin-gib nan" "--margin-gib inf" "--margin-gib -inf" "--margin-gib 1e999" "--mem-wait 99999999999" \
	"--window-wait 9223372036854775808" "--ready-wait -5" "--poll-ms ''"; do
	eval "on thor --dir \"$DEP\" serve $a"
	is "$rc" 2 "serve $a: refused as a usage error"
done
like "$errout" "--poll-ms '' is not a whole number; expected 1 to 60000" "… naming the option and the range"
on thor --dir "$DEP" serve --margin-gib nan
like "$errout" "--margin-gib 'nan' is not a size in GiB; expected a finite number from 0 to 4096" "… and for the margin"
on thor --dir "$DEP" stop --wait ''
is "$rc" 2 "stop --wait '': refused"
like "$errout" "--wait '' is not a number of seconds; expected a whole number from 0 to 604800" "… with the range"
on thor --dir "$DEP" stop --wait 99999999999999999999
is "$rc" 2 "stop --wait with an overflowing value: refused"

# --- .env fidelity through init --apply --------------------------------------
E=$TMP/envdir
on thor --dir "$E" init --apply
printf 'MY_FLAGS="a b # c"\nMY_MSG="l1\\nl2"  # two lines\nexport MY_LIT='"'"'$x y'"'"'\n' >>"$E/.env"
on thor --dir "$E" init --profile base --apply
is "$rc" 0 "init --apply rewrites the .env for another profile"
like "$(grep '^MY_FLAGS=' "$E/.env")" '^MY_FLAGS="a b # c"$' "a quoted value with ' # ' keeps its quotes (compose would cut it at the #)"
like "$(grep '^MY_MSG=' "$E/.env")" '^MY_MSG="l1\\nl2"  # two lines$' "a \\n escape and a comment are kept byte for byte"
like "$(grep 'MY_LIT=' "$E/.env")" "^export MY_LIT='\\\$x y'\$" "an export line with a single-quoted value is kept as written"

# a NUL byte: refused with its position, nothing written, no backup
N=$TMP/nul
on thor --dir "$N" init --apply
printf 'MY_KEY=before\0after\n' >>"$N/.env"
cp "$N/.env" "$TMP/nul-env-before"
ls "$N" >"$TMP/nul-ls-before"
on thor --dir "$N" init --profile base --apply
is "$rc" 3 "a NUL byte in .env: refused (exit 3)"
like "$errout" "\.env:[0-9]+:14: a NUL byte; expected text" "… at its line and column"
cmp -s "$N/.env" "$TMP/nul-env-before"
is "$?" 0 "… the .env is unchanged, its NUL and what follows included"
is "$(ls "$N")" "$(cat "$TMP/nul-ls-before")" "… and no file was added (no backup, no temp)"

# a symbolic link as .env: refused, the link and its target unchanged
S=$TMP/link
on thor --dir "$S" init --apply
mv "$S/.env" "$TMP/real.env"
ln -s "$TMP/real.env" "$S/.env"
cp "$TMP/real.env" "$TMP/real.env.before"
on thor --dir "$S" init --profile base --apply
is "$rc" 3 "a symlinked .env: refused (exit 3)"
like "$errout" "'$S/.env' is a symbolic link \(to '$TMP/real.env'\); expected a regular file" "… saying so"
ok $([ -L "$S/.env" ] && cmp -s "$TMP/real.env" "$TMP/real.env.before"; echo $?) "… the link and its target are unchanged"
rm "$S/.env"
mv "$TMP/real.env" "$S/.env"
mv "$S/docker-compose.yml" "$TMP/real.yml"
ln -s "$TMP/real.yml" "$S/docker-compose.yml"
on thor --dir "$S" init --apply
is "$rc" 3 "a symlinked compose file: refused too"

# --reset with a key that exists nowhere
on thor --dir "$E" init --reset NO_SUCH_KEY
is "$rc" 2 "--reset of an unknown key: a usage error"
like "$errout" "--reset: no such key 'NO_SUCH_KEY' in $E/.env or in the render" "… naming it"
on thor --dir "$E" init --reset MY_FLAGS
is "$rc" 0 "--reset of a key of .env is accepted"

done_testing
