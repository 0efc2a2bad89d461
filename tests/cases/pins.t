#!/bin/bash
# pins.t — behaviours no other case test pinned down until a planted bug
# survived the suite (docs/testing.md, make mutate); each names the mutant
# of tools/mutants/regress.txt it kills.
. "${LOBES_SRC:-.}/tests/lib.sh"
HOSTS=$SRC/tests/fixtures/hosts
export LOBES_DIR=$TMP/deploy LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1
export HF_HUB_CACHE=$TMP/empty-hub
unset LOBES_SYSROOT HF_HOME
command -v python3 >/dev/null || skip_all "python3 is needed to read --json"
on() { local b=$1; shift; run env LOBES_SYSROOT="$HOSTS/$b" LOBES_NVIDIA_SMI="$HOSTS/$b/bin/nvidia-smi" "$LOBES" "$@"; }
j() { printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); v=$1; print(v if isinstance(v,str) else json.dumps(v))"; }

# overrides: between two traits setting one knob, the one that declares
# precedence wins whatever their order in the profile (explain.t lists the
# overriding trait last; here it comes first).
# Kills: resolve.c "if (trait_overrides(prev, t))" -> "if (0)".
OP=$TMP/op/profiles; mkdir -p "$OP"
cat > "$OP/force-fp8.yaml" <<'Y'
kind: trait
name: force-fp8
cause: synthetic test trait that wants fp8 on sm_110
when:
  - fact: card.compute_cap
    eq: "11.0"
on_unknown: skip
set:
  kv_cache_dtype: fp8
overrides: [fp8-kv-needs-scales-on-triton]
evidence:
  - kind: declared
    observation: test only
Y
for where in before after; do
	if [ $where = before ]; then
		sed 's/^  - fp8-kv-needs-scales-on-triton$/  - force-fp8\n  - fp8-kv-needs-scales-on-triton/' \
			"$SRC/data/profiles/thor.yaml" > "$OP/thor.yaml"
	else
		sed 's/^  - fp8-kv-needs-scales-on-triton$/  - fp8-kv-needs-scales-on-triton\n  - force-fp8/' \
			"$SRC/data/profiles/thor.yaml" > "$OP/thor.yaml"
	fi
	grep -q '^  - force-fp8$' "$OP/thor.yaml" || { ok 1 "the profile lists force-fp8 ($where)"; continue; }
	LOBES_DIR=$TMP/op on thor --json explain cortex
	is "$rc" 0 "overriding trait listed $where the one it beats: no conflict"
	is "$(j 'd["roles"]["cortex"]["knobs"]["kv_cache_dtype"]["value"]')" fp8 "… and its value wins ($where)"
done
done_testing
