#!/bin/bash
# layers_calls.t — tools/check-calls.sh finds no call loop between the files
# of this build's library (outside the rooms it lists as known), and names
# each loop planted in a small build of its own.
. "${LOBES_SRC:-.}/tests/lib.sh"
CHECK="$SRC/tools/check-calls.sh"
BUILD=${LOBES_BUILD:-$SRC/build}
CC=${CC:-cc}

[ -d "$BUILD/src/lib" ] || skip_all "no build in $BUILD (make all first)"

run "$CHECK" "$BUILD"
is "$rc" 0 "no call loop in the library but the known ones"
unlike "$out" '^call loop' "every loop printed is a known one"
unlike "$out" 'src/lib/(gateway|doctor|probe|facts|knowledge|runtime)/' \
	"gateway, doctor, probe, facts, knowledge and runtime have no call loop"

# A small build: objects compiled from tiny files of two rooms.
obj() { # obj ROOM/NAME 'C source'
	mkdir -p "$TMP/b/src/lib/$(dirname "$1")"
	printf '%s\n' "$2" > "$TMP/$(basename "$1").c"
	"$CC" -c -o "$TMP/b/src/lib/$1.o" "$TMP/$(basename "$1").c"
}
rm -rf "$TMP/b"
obj x/a 'int b_fn(void); int a_fn(void) { return 1; } int a_main(void) { return b_fn(); }'
obj x/b 'int a_fn(void); int b_fn(void) { return a_fn() + 1; }'
run "$CHECK" "$TMP/b"
is "$rc" 1 "two files that call each other fail"
like "$out" '^call loop of 2 files: src/lib/x/a\.c src/lib/x/b\.c$' "the loop is named with its files"
like "$out" '^  src/lib/x/a\.c -> src/lib/x/b\.c \(b_fn\) -> src/lib/x/a\.c \(a_fn\)$' \
	"and one way round it, each arrow with its symbols"

rm -rf "$TMP/b"
obj x/a 'int b_fn(void); int a_fn(void) { return b_fn(); }'
obj x/b 'int c_fn(void); int b_fn(void) { return c_fn(); }'
obj y/c 'int c_fn(void) { return 3; }'
run "$CHECK" "$TMP/b"
is "$rc" 0 "a chain that calls only down passes"
is "$out" "" "and prints nothing"

obj y/c 'int a_fn(void); int c_fn(void) { return a_fn(); }'
run "$CHECK" "$TMP/b"
is "$rc" 1 "a loop of three files across two rooms fails"
like "$out" 'call loop of 3 files: src/lib/x/a\.c src/lib/x/b\.c src/lib/y/c\.c' "with the three files"
like "$out" 'src/lib/x/a\.c -> src/lib/x/b\.c \(b_fn\) -> src/lib/y/c\.c \(c_fn\) -> src/lib/x/a\.c \(a_fn\)' \
	"and the way round"

# Data counts: a table of callbacks is a use of the file that defines it.
rm -rf "$TMP/b"
obj x/a 'struct ops { int (*f)(void); }; extern const struct ops b_ops; int a_fn(void) { return b_ops.f(); }'
obj x/b 'int a_fn(void); struct ops { int (*f)(void); }; const struct ops b_ops = { a_fn };'
run "$CHECK" "$TMP/b"
is "$rc" 1 "a loop through a data symbol fails too"
like "$out" 'src/lib/x/a\.c -> src/lib/x/b\.c \(b_ops\) -> src/lib/x/a\.c \(a_fn\)' "and names it"

# A loop inside a room on the known list is printed, not failed.
rm -rf "$TMP/b"
obj render/a 'int b_fn(void); int a_fn(void) { return b_fn(); }'
obj render/b 'int a_fn(void); int b_fn(void) { return a_fn(); }'
run "$CHECK" "$TMP/b"
is "$rc" 0 "a loop inside a known room does not fail"
like "$out" '^known call loop .* of 2 files: src/lib/render/a\.c src/lib/render/b\.c' "but is listed"
obj x/c 'int a_fn(void); int c_fn(void) { return a_fn(); }'
obj render/b 'int a_fn(void); int c_fn(void); int b_fn(void) { return a_fn() + c_fn(); }'
run "$CHECK" "$TMP/b"
is "$rc" 1 "a known room's loop that takes in a file of another room fails"

run "$CHECK" "$TMP/nothing"
is "$rc" 2 "no build: exit 2"
like "$errout" 'no objects; build first' "saying so"

done_testing
