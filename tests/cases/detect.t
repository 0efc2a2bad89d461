#!/bin/bash
# detect.t — `lobes detect` end to end on the fixture boxes in
# tests/fixtures/hosts/ (sysroot files, stub nvidia-smi) and the stub NVML
# library tests/nvml.mk builds; then on this machine itself, whatever GPU it
# has or has not.
. "${LOBES_SRC:-.}/tests/lib.sh"

HOSTS=$SRC/tests/fixtures/hosts
STUB=${LOBES_BUILD:-$SRC/build}/tests/stubs/libnvidia-ml.so.1
NO_NVML=$TMP/absent/libnvidia-ml.so.1
export LOBES_DIR=$TMP/deploy
export STUB_SMI_LOG=$TMP/smi.argv
unset LOBES_SYSROOT LOBES_NVML_LIB LOBES_NVIDIA_SMI LOBES_NO_NVML LOBES_SMI_TIMEOUT_MS
unset STUB_NVML_NAME STUB_NVML_CC STUB_NVML_MEM STUB_NVML_DRIVER STUB_NVML_FAIL_INIT

# jget PATH: a dotted path into the JSON on stdin, strings raw, the rest as
# JSON; jvalid: the JSON on stdin parses; junknown_with_value: how many facts
# are reported unknown yet carry a value (there must be none).
if command -v jq >/dev/null 2>&1; then
	jget() { jq -r ".$1"; }
	jvalid() { jq -e . >/dev/null; }
	junknown_with_value() { jq '[.facts[] | select(.valid == false and .value != null)] | length'; }
elif command -v python3 >/dev/null 2>&1; then
	jget() { python3 -c 'import json,sys
d = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d = d[k]
print(d if isinstance(d, str) else json.dumps(d))' "$1"; }
	jvalid() { python3 -c 'import json,sys; json.load(sys.stdin)'; }
	junknown_with_value() { python3 -c 'import json,sys
d = json.load(sys.stdin)
print(len([k for k, f in d["facts"].items() if not f["valid"] and f["value"] is not None]))'; }
else
	skip_all "neither python3 nor jq to read --json"
fi

ok "$([ -e "$STUB" ]; echo $?)" "stub NVML library is built ($STUB)"

# detect_box BOX [VAR=VALUE...]: text and --json of `lobes detect` on a box;
# sets $out/$errout/$rc (text) and $json/$jrc. nvidia-smi is the box's stub
# (absent on boxes without one), NVML is absent unless the caller sets it.
# The stub nvidia-smi logs its argv to $STUB_SMI_LOG (text run) and
# $STUB_SMI_LOG.json (--json run).
detect_box() {
	local box=$1
	shift
	rm -f "$STUB_SMI_LOG" "$STUB_SMI_LOG.json"
	run env LOBES_SYSROOT="$HOSTS/$box" LOBES_NVML_LIB="$NO_NVML" \
		LOBES_NVIDIA_SMI="$HOSTS/$box/bin/nvidia-smi" "$@" "$LOBES" detect
	json=$(env LOBES_SYSROOT="$HOSTS/$box" LOBES_NVML_LIB="$NO_NVML" \
		LOBES_NVIDIA_SMI="$HOSTS/$box/bin/nvidia-smi" STUB_SMI_LOG="$STUB_SMI_LOG.json" \
		"$@" "$LOBES" --json detect 2>/dev/null)
	jrc=$?
}

# common checks after detect_box: exit 0, JSON parses with the same card as
# the text, and nothing unknown is shown as a number.
check_box() {
	local name=$1 card=$2
	is "$rc" 0 "$name: exits 0"
	is "$jrc" 0 "$name: --json exits 0"
	ok "$(printf '%s' "$json" | jvalid; echo $?)" "$name: --json parses"
	is "$(printf '%s' "$json" | jget card.id)" "$card" "$name: --json card is $card"
	like "$out" "^card: $card[ ]" "$name: text card is $card"
	is "$(printf '%s' "$json" | junknown_with_value)" 0 "$name: no unknown fact carries a value"
	unlike "$out" "(^|[[:space:]])0 bytes|[[:space:]]0\.0 GiB|^[a-z_]+ +0 " \
		"$name: nothing is printed as 0"
}

smi_argv_ok() {
	is "$(cat "$STUB_SMI_LOG" 2>/dev/null)" "--query-gpu=name,compute_cap
--format=csv,noheader" "$1: nvidia-smi ran with name,compute_cap only"
	unlike "$(cat "$STUB_SMI_LOG" 2>/dev/null)" "memory" "$1: nvidia-smi was never asked for memory"
}

# --- DGX Spark (GB10), nvidia-smi only --------------------------------------
detect_box gb10
check_box gb10 spark
like "$out" "^gpu_name +NVIDIA GB10 +\(nvidia-smi\)" "gb10: name from nvidia-smi"
like "$out" "^compute_cap +12\.1 +\(nvidia-smi\)" "gb10: compute capability from nvidia-smi"
like "$out" "^mem_total +[0-9]+ bytes \(121\.7 GiB\) +\(/proc/meminfo\)" "gb10: MemTotal is the memory"
like "$out" "^memory_model +unified" "gb10: unified memory"
like "$out" "^card: spark \(validated\) — device name \"NVIDIA GB10\" matches marker \"GB10\"; compute capability 12\.1; memory 121\.7 GiB within 100-140" \
	"gb10: why names the deciding facts"
like "$out" "^profile: spark$" "gb10: default profile spark"
like "$out" "nvml: .*not found" "gb10: the missing NVML is noted"
unlike "$out" "no NVIDIA GPU" "gb10: a GPU was detected"
smi_argv_ok gb10

# nvidia-smi found through PATH (no LOBES_NVIDIA_SMI)
rm -f "$STUB_SMI_LOG"
run env LOBES_SYSROOT="$HOSTS/gb10" LOBES_NVML_LIB="$NO_NVML" PATH="$HOSTS/gb10/bin:$PATH" "$LOBES" detect
is "$rc" 0 "gb10 via PATH: exits 0"
like "$out" "^card: spark " "gb10 via PATH: card spark"
smi_argv_ok "gb10 via PATH"

# GB10 through NVML: memory NOT_SUPPORTED, so MemTotal is used
detect_box gb10 LOBES_NVML_LIB="$STUB" STUB_NVML_NAME="NVIDIA GB10" STUB_NVML_CC=12.1 \
	STUB_NVML_MEM=NOT_SUPPORTED STUB_NVML_DRIVER=580.95.05
check_box "gb10 nvml" spark
is "$(printf '%s' "$json" | jget facts.gpu_name.source)" nvml "gb10 nvml: name from NVML"
is "$(printf '%s' "$json" | jget facts.compute_cap.value)" 12.1 "gb10 nvml: compute capability 12.1"
is "$(printf '%s' "$json" | jget facts.mem_total.source)" /proc/meminfo "gb10 nvml: memory from MemTotal"
is "$(printf '%s' "$json" | jget facts.driver.source)" nvml "gb10 nvml: driver from NVML"
ok "$([ ! -e "$STUB_SMI_LOG" ]; echo $?)" "gb10 nvml: nvidia-smi not run once NVML answered"

# --- Jetson AGX Thor ---------------------------------------------------------
detect_box thor
check_box thor thor
like "$out" "^gpu_name +NVIDIA Thor +\(nvidia-smi\)" "thor: name from nvidia-smi"
like "$out" "^dt_model +NVIDIA Jetson AGX Thor Developer Kit +\(/proc/device-tree/model\)" "thor: dt model"
like "$out" "^l4t_release +R38\.2\.0 " "thor: L4T release"
like "$out" "^mem_total +[0-9]+ bytes \(122\.8 GiB\)" "thor: MemTotal 122.8 GiB"
like "$out" "^profile: thor$" "thor: default profile thor"
smi_argv_ok thor

# NVML fails to initialise: falls back to nvidia-smi
detect_box thor LOBES_NVML_LIB="$STUB" STUB_NVML_FAIL_INIT=1
check_box "thor nvml init fails" thor
like "$out" "nvml: nvmlInit_v2 failed" "thor nvml init fails: noted"
is "$(printf '%s' "$json" | jget facts.gpu_name.source)" nvidia-smi "thor nvml init fails: name from nvidia-smi"
smi_argv_ok "thor nvml init fails"

# --- Jetson AGX Orin, Orin Nano Super (no nvidia-smi) ------------------------
detect_box agx-orin
check_box agx-orin orin
like "$out" "^gpu_name +unknown +\(tried NVML, nvidia-smi\)" "agx-orin: unknown name says what was tried"
like "$out" "nvidia-smi: .*not found" "agx-orin: missing nvidia-smi noted"
like "$out" "^l4t_release +R36\.4\.3 " "agx-orin: L4T R36"
like "$out" "memory 61\.3 GiB within 48-72" "agx-orin: band decides"

detect_box orin-nano-super
check_box orin-nano-super orin-nano-super
like "$out" "^card: orin-nano-super \(unvalidated\)" "orin-nano-super: named, unvalidated"
unlike "$out" "^card: orin " "orin-nano-super: never the 64 GB Orin"

# --- H100 workstation (unknown card) ----------------------------------------
detect_box h100 LOBES_NVML_LIB="$STUB" STUB_NVML_NAME="NVIDIA H100 80GB HBM3" STUB_NVML_CC=9.0 \
	STUB_NVML_MEM=85520809984
check_box h100 unknown
is "$(printf '%s' "$json" | jget facts.memory_model.value)" discrete "h100: discrete"
is "$(printf '%s' "$json" | jget facts.mem_total.value)" 85520809984 "h100: NVML total"
is "$(printf '%s' "$json" | jget card.profile)" base "h100: base profile"
like "$out" "^card: unknown — no card matches: device name \"NVIDIA H100 80GB HBM3\".*compute capability 9\.0.* — lobes will use the conservative base profile" \
	"h100: unknown names the facts"
like "$errout" "warning: .*base" "h100: warns on stderr"
like "$out" "^profile: base$" "h100: profile base"

detect_box h100
check_box "h100 smi only" unknown
like "$out" "^mem_total +unknown" "h100 smi only: memory unknown, not read from nvidia-smi"
smi_argv_ok "h100 smi only"

# --- CPU-only box ------------------------------------------------------------
detect_box cpu-only
check_box cpu-only unknown
like "$out" "no NVIDIA GPU was detected" "cpu-only: says no GPU plainly"
is "$(printf '%s' "$json" | jget gpu_detected)" false "cpu-only: gpu_detected false"
is "$(printf '%s' "$json" | jget facts.mem_total.value)" null "cpu-only: mem_total null"
like "$out" "^hostname +ci-runner +\(/etc/hostname\)" "cpu-only: hostname from the sysroot"

# --- nvidia-smi hangs --------------------------------------------------------
detect_box smi-hang LOBES_SMI_TIMEOUT_MS=300 timeout 60
check_box smi-hang unknown
like "$out" "nvidia-smi timed out after 300 ms" "smi-hang: gives up and says so"
like "$out" "^gpu_name +unknown" "smi-hang: name unknown"
smi_argv_ok smi-hang

# --- usage ------------------------------------------------------------------
run "$LOBES" detect extra
is "$rc" 2 "an extra argument is a usage error"

# --- this machine, as it is --------------------------------------------------
# Whatever is here (CI and dev boxes usually have no GPU): exit 0, JSON agrees
# with the text, and a missing GPU is said plainly.
run "$LOBES" detect
is "$rc" 0 "this machine: exits 0"
json=$("$LOBES" --json detect 2>/dev/null)
ok "$(printf '%s' "$json" | jvalid; echo $?)" "this machine: --json parses"
like "$out" "^card: $(printf '%s' "$json" | jget card.id) " "this machine: text and JSON agree on the card"
if [ "$(printf '%s' "$json" | jget gpu_detected)" = false ]; then
	like "$out" "no NVIDIA GPU was detected" "this machine: no GPU is said plainly"
else
	like "$out" "^gpu_name +$(printf '%s' "$json" | jget facts.gpu_name.value | sed 's/[][().*+?^$|\\]/\\&/g') " \
		"this machine: the GPU is named"
fi
is "$(printf '%s' "$json" | junknown_with_value)" 0 "this machine: no unknown fact carries a value"
done_testing
