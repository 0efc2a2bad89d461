#!/bin/bash
# hostile.t — malformed operator input through the CLI: every YAML loader
# (operator profiles, signatures, questions, doctor's compose read) refuses
# the libfyaml-hanging inputs with a positioned error instead of spinning
# (each command runs under `timeout`, so a hang fails the test, it does not
# hang the suite).
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

done_testing
