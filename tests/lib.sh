# tests/lib.sh — a tiny TAP library for the shell tests in tests/cases/ and
# tests/integration/. Source it; call plan N (or done_testing at the end),
# ok/is/like/unlike, and skip_all "reason" when a precondition is missing.
set -u
LOBES=${LOBES_BIN:-$(pwd)/build/lobes}
SRC=${LOBES_SRC:-$(pwd)}
_n=0
_failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lobes-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# python3 behind pyenv's shim runs a bash script and a version lookup before
# each interpreter start (~5x the start-up of the interpreter itself); the
# tests call it hundreds of times, so they call the interpreter the shim
# would pick for this directory, once resolved, through a link first in PATH
case $(command -v python3 2>/dev/null) in
*/shims/python3)
	_py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) &&
		[ -x "$_py" ] && mkdir -p "$TMP/.py" && ln -s "$_py" "$TMP/.py/python3" &&
		PATH=$TMP/.py:$PATH
	;;
esac
# The bound of a polled wait, in 0.1 s polls: LOBES_TEST_WAIT seconds (180)
# at the least. A wait ends as soon as its condition holds, so a long bound
# costs nothing on an idle box and keeps a loaded one (CI) from failing.
TEST_POLLS=$(( ${LOBES_TEST_WAIT:-180} * 10 ))

plan() { echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
done_testing() { echo "1..$_n"; [ "$_failed" = 0 ]; exit $?; }
_res() {
	_n=$((_n + 1))
	if [ "$1" = 0 ]; then echo "ok $_n - $2"; else
		echo "not ok $_n - $2"; _failed=$((_failed + 1))
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/# /'
	fi
	return 0
}
ok() { local c=$1; shift; _res "$c" "$*"; }
# is GOT EXPECTED NAME
is() { if [ "$1" = "$2" ]; then _res 0 "$3"; else _res 1 "$3" "got:      '$1'
expected: '$2'"; fi; }
# like TEXT REGEX NAME   (grep -E)
like() { if printf '%s' "$1" | grep -Eq -- "$2"; then _res 0 "$3"; else _res 1 "$3" "'$1'
does not match /$2/"; fi; }
unlike() { if printf '%s' "$1" | grep -Eq -- "$2"; then _res 1 "$3" "'$1'
matches /$2/"; else _res 0 "$3"; fi; }
# run CMD... : sets $out (stdout), $errout (stderr), $rc
run() { out=$("$@" 2>"$TMP/.stderr"); rc=$?; errout=$(cat "$TMP/.stderr"); }
