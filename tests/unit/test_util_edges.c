/*
 * test_util_edges.c — the util room's edges that test_util.c and
 * test_yaml_guard.c leave out: the YAML guard's encoding sniffing without a
 * byte order mark (UTF-32 and big-endian UTF-16), its UTF-8 decoder at the
 * edges of the valid ranges (truncated, overlong, past U+10FFFF, the C1
 * controls and noncharacters), a byte order mark in the middle, and the
 * scanner's quoted, flow, tag and block-scalar paths, each refusal with its
 * line:column; the strict number parsers at their bounds; fs_read on what
 * is not a regular file.
 */
#include "testutil.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../src/lib/util/fs.h"
#include "../../src/lib/util/num.h"
#include "../../src/lib/util/yaml_guard.h"

/* guard(text, len) → the message, or NULL when accepted (caller frees). */
static char *guard(const char *text, size_t len)
{
	struct err *e = NULL;
	if (yaml_guard("g.yaml", text, len, &e) == 0) {
		assert_null(e);
		return NULL;
	}
	return test_err_msg(e, EXIT_CONFIG);
}

#define REFUSED(lit, want)                                                                     \
	do {                                                                                   \
		_cleanup_free_ char *_m = guard(lit, sizeof(lit) - 1);                         \
		if (!_m || strcmp(_m, want) != 0)                                              \
			fail_msg("%s\n got: %s\nwant: %s", #lit, _m ? _m : "(accepted)", want); \
	} while (0)

#define ACCEPTED(lit)                                                                          \
	do {                                                                                   \
		_cleanup_free_ char *_m = guard(lit, sizeof(lit) - 1);                         \
		if (_m)                                                                        \
			fail_msg("refused %s: %s", #lit, _m);                                  \
	} while (0)

#define ENC(e) "g.yaml:1:1: the text is " e "; expected UTF-8 (convert it, e.g. iconv -f " e " -t UTF-8)"

static void test_foreign_encodings(void **state)
{
	(void)state;
	/* with a byte order mark: UTF-32 is told from UTF-16 by the two NULs */
	REFUSED("\xFF\xFE\0\0k\0\0\0", ENC("UTF-32LE"));
	REFUSED("\0\0\xFE\xFF\0\0\0k", ENC("UTF-32BE"));
	REFUSED("\xFE\xFF\0k", ENC("UTF-16BE"));
	/* without one: the NUL pattern of the first character */
	REFUSED("\0\0\0k\0\0\0:", ENC("UTF-32BE"));
	REFUSED("k\0\0\0:\0\0\0", ENC("UTF-32LE"));
	REFUSED("\0k\0:", ENC("UTF-16BE"));
	assert_string_equal(text_foreign_encoding("\0k", 2), "UTF-16BE");
	assert_string_equal(text_foreign_encoding("k\0", 2), "UTF-16LE");
	/* too short to tell, or plain UTF-8: none */
	assert_null(text_foreign_encoding("k", 1));
	assert_null(text_foreign_encoding("\xFF", 1));
	assert_null(text_foreign_encoding("kk\0\0", 4)); /* k, k: neither pattern */
	assert_null(text_foreign_encoding("key: 1", 6));
	/* a NUL where no pattern matches is refused by the decoder, at its place */
	REFUSED("ab\0\0", "g.yaml:1:3: a NUL byte; expected UTF-8 text");
}

static void test_utf8_edges(void **state)
{
	(void)state;
	/* a sequence cut by the end of the text */
	REFUSED("a: \xC3", "g.yaml:1:4: invalid UTF-8 (byte 0xc3); expected UTF-8 text");
	REFUSED("a: \xF0\x9F\x98", "g.yaml:1:4: invalid UTF-8 (byte 0xf0); expected UTF-8 text");
	/* overlong three- and four-byte forms, and past U+10FFFF */
	REFUSED("a: \xE0\x9F\xBF", "g.yaml:1:4: invalid UTF-8 (byte 0xe0); expected UTF-8 text");
	REFUSED("a: \xF0\x8F\xBF\xBF", "g.yaml:1:4: invalid UTF-8 (byte 0xf0); expected UTF-8 text");
	REFUSED("a: \xF4\x90\x80\x80", "g.yaml:1:4: invalid UTF-8 (byte 0xf4); expected UTF-8 text");
	REFUSED("a: \xF5\x80\x80\x80", "g.yaml:1:4: invalid UTF-8 (byte 0xf5); expected UTF-8 text");
	/* the last valid code point of each length, and the first three-byte one */
	ACCEPTED("a: \xDF\xBF \xE0\xA0\x80 \xF4\x8F\xBF\xBD\n");
	ACCEPTED("a: \xF0\x90\x80\x80\n"); /* U+10000 */
	/* YAML's printable set: tab, CR, NEL (U+0085) and U+00A0 are in it;
	 * the other C1 controls, DEL and the noncharacter U+FFFE are not */
	ACCEPTED("a:\tb\r\nc: x\xC2\x85y\xC2\xA0z\n");
	REFUSED("a: \xC2\x9F", "g.yaml:1:4: control character U+009F; expected printable text");
	REFUSED("a: \x7F", "g.yaml:1:4: control character U+007F; expected printable text");
	REFUSED("a: \xEF\xBF\xBE", "g.yaml:1:4: control character U+FFFE; expected printable text");
	ACCEPTED("a: \xEF\xBF\xBD\n"); /* U+FFFD */
	/* a byte order mark is allowed first only; the column counts characters */
	REFUSED("a: \xC3\xA9\xEF\xBB\xBF",
		"g.yaml:1:5: a byte order mark inside the text; expected one at the start at most");
	REFUSED("a: 1\nb: \xEF\xBB\xBF",
		"g.yaml:2:4: a byte order mark inside the text; expected one at the start at most");
}

static void test_scanner_paths(void **state)
{
	(void)state;
	/* a double-quoted string with escaped quotes, over two lines: an alias
	 * after it is found on the right line */
	REFUSED("a: \"x\\\" &y\n  z\"\nb: *c\n",
		"g.yaml:3:4: a YAML alias ('*'); expected plain data (lobes files use no anchors "
		"or aliases; quote a value that starts with '*')");
	/* an unclosed single-quoted string spanning lines is reported where it opened */
	REFUSED("a: 1\nb: 'x\ny\n", "g.yaml:2:4: a quoted string that is never closed; expected a closing '");
	/* a backslash at the end of a line does not escape the newline */
	REFUSED("a: \"x\\\n", "g.yaml:1:4: a quoted string that is never closed; expected a closing \"");
	/* a block scalar's deeper lines are text, the next key at its indent is not */
	ACCEPTED("a: >\n  &x\n\n  *y\nb: c\n");
	REFUSED("a: |\n  &x\nb: *y\n",
		"g.yaml:3:4: a YAML alias ('*'); expected plain data (lobes files use no anchors "
		"or aliases; quote a value that starts with '*')");
	/* in a flow collection '|' is plain text and a tag ends at ',' */
	ACCEPTED("a: [|, >, x]\n");
	REFUSED("a: [!!str, &x y]\n",
		"g.yaml:1:12: a YAML anchor ('&'); expected plain data (lobes files use no anchors "
		"or aliases; quote a value that starts with '&')");
	/* flow mapping: "b:*x" is one plain scalar, but after a quoted key the
	 * colon needs no space and the alias is a node */
	ACCEPTED("a: {b:*x}\n");
	REFUSED("a: {\"b\":*x}\n", "g.yaml:1:9: a YAML alias ('*'); expected plain data (lobes files "
				"use no anchors or aliases; quote a value that starts with '*')");
	/* a plain scalar in flow ends at ']', so the next entry may start */
	REFUSED("a: [x], b: [y, *z]\n",
		"g.yaml:1:16: a YAML alias ('*'); expected plain data (lobes files use no anchors "
		"or aliases; quote a value that starts with '*')");
	/* '#' not after a blank is text; after one it starts a comment */
	ACCEPTED("a: b#*x\nc: d #*y\n");
	/* document markers, and '...' that is text */
	ACCEPTED("---\na: 1\n...\n--- \nb: 2\n");
	REFUSED("...x: *y\n", "g.yaml:1:7: a YAML alias ('*'); expected plain data (lobes files "
			      "use no anchors or aliases; quote a value that starts with '*')");
	/* a closing bracket with no opening one does not underflow the depth */
	ACCEPTED("a: ]\nb: }\n");
	/* '?' followed by text is a plain scalar, as is '-' or ':' */
	ACCEPTED("a: ?x\nb: -1\nc: :d\n");
	/* a directive after a line of data is still refused at its line */
	REFUSED("a: 1\n%TAG ! x\n",
		"g.yaml:2:1: a YAML directive; expected none (lobes files use no %YAML or %TAG lines)");
	/* the line's indentation counts from the BOM's end */
	REFUSED("\xEF\xBB\xBF&a x\n", "g.yaml:1:1: a YAML anchor ('&'); expected plain data (lobes "
				      "files use no anchors or aliases; quote a value that starts with '&')");
}

static void test_depth_by_sequence_entries(void **state)
{
	(void)state;
	/* "- - - ... x": each entry on one line nests once more */
	char deep[2 * 70 + 3];
	for (int i = 0; i < 70; i++)
		memcpy(deep + 2 * i, "- ", 2);
	memcpy(deep + 140, "x\n", 3);
	_cleanup_free_ char *m = guard(deep, strlen(deep));
	assert_non_null(m);
	/* the 64th entry (the first line is level 1) is refused, at its column */
	assert_string_equal(m, "g.yaml:1:127: nesting deeper than 64 levels; expected a flatter document");
	deep[2 * 63] = 'x';
	deep[2 * 63 + 1] = '\0';
	_cleanup_free_ char *ok = guard(deep, strlen(deep));
	assert_null(ok);
}

static void test_guard_size_and_null(void **state)
{
	(void)state;
	struct err *e = NULL;
	/* no name: the position alone */
	assert_int_equal(yaml_guard(NULL, "a", YAML_GUARD_MAX_BYTES + 1, &e), -1);
	assert_string_equal(e->msg, "1:1: 16777217 bytes; expected at most 16777216 for a YAML file");
	err_free(e);
	e = NULL;
	/* exactly the cap is not refused for its size (the text is never read
	 * past the first NUL-free check for this test: use NULL, which is empty) */
	assert_int_equal(yaml_guard("n.yaml", NULL, YAML_GUARD_MAX_BYTES + 1, &e), 0);
	assert_null(e);
}

static void test_num_bounds(void **state)
{
	(void)state;
	long l = -7;
	assert_true(num_parse_long("0", 0, 10, &l));
	assert_int_equal(l, 0);
	assert_true(num_parse_long("10", 0, 10, &l));
	assert_int_equal(l, 10);
	l = -7;
	assert_false(num_parse_long("11", 0, 10, &l));
	assert_false(num_parse_long("4", 5, 10, &l));
	assert_false(num_parse_long(NULL, 0, 10, &l));
	assert_false(num_parse_long("", 0, 10, &l));
	assert_false(num_parse_long("-1", -5, 10, &l)); /* digits only: no sign */
	assert_false(num_parse_long("99999999999999999999", 0, __LONG_MAX__, &l)); /* ERANGE */
	assert_int_equal(l, -7); /* untouched on refusal */

	double d = -7;
	assert_true(num_parse_double("1e2", 0, 100, &d));
	assert_true(d == 100.0);
	assert_true(num_parse_double("-0.5", -1, 1, &d));
	assert_true(d == -0.5);
	assert_true(num_parse_double("+2", 0, 2, &d));
	d = -7;
	assert_false(num_parse_double("100.5", 0, 100, &d));
	assert_false(num_parse_double("-1.5", -1, 1, &d));
	assert_false(num_parse_double(" 1", 0, 2, &d));
	assert_false(num_parse_double("", 0, 2, &d));
	assert_false(num_parse_double(NULL, 0, 2, &d));
	assert_false(num_parse_double("nan", -1e300, 1e300, &d));
	assert_false(num_parse_double("inf", -1e300, 1e300, &d));
	assert_false(num_parse_double("0x10", 0, 100, &d));
	assert_false(num_parse_double("1e999", 0, 1e308, &d)); /* ERANGE */
	assert_false(num_parse_double("1.5x", 0, 2, &d));
	assert_true(d == -7);
}

static void test_fs_read_not_regular(void **state)
{
	(void)state;
	char dir[] = "/tmp/lobes-utiledges.XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct err *e = NULL;
	/* a directory */
	assert_null(fs_read(dir, 0, NULL, &e));
	_cleanup_free_ char *want = xasprintf("'%s' is a directory; expected a regular file", dir);
	assert_string_equal(e->msg, want);
	assert_int_equal(e->code, EXIT_CONFIG);
	err_free(e);
	e = NULL;
	/* a FIFO: refused without blocking on it */
	_cleanup_free_ char *fifo = xasprintf("%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(fs_read(fifo, 0, NULL, &e));
	_cleanup_free_ char *want2 = xasprintf("'%s' is a FIFO; expected a regular file", fifo);
	assert_string_equal(e->msg, want2);
	err_free(e);
	e = NULL;
	/* a socket cannot be opened at all (ENXIO): refused by open, so
	 * file_kind's "a socket" is unreachable from fs_read */
	_cleanup_free_ char *sock = xasprintf("%s/s", dir);
	int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_null(fs_read(sock, 0, NULL, &e));
	_cleanup_free_ char *want3 = xasprintf("open '%s': No such device or address", sock);
	assert_string_equal(e->msg, want3);
	err_free(e);
	e = NULL;
	close(sfd);
	/* a character device */
	assert_null(fs_read("/dev/null", 0, NULL, &e));
	assert_string_equal(e->msg, "'/dev/null' is a character device; expected a regular file");
	err_free(e);
	e = NULL;
	/* fs_read_sys: a missing file is not an error, a directory is */
	assert_null(fs_read_sys("/nonexistent-lobes/x", 0, &e));
	assert_null(e);
	assert_null(fs_read_sys(dir, 0, &e));
	assert_non_null(e);
	assert_string_contains(e->msg, "is a directory; expected a regular file");
	err_free(e);
	unlink(fifo);
	unlink(sock);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foreign_encodings),
		cmocka_unit_test(test_utf8_edges),
		cmocka_unit_test(test_scanner_paths),
		cmocka_unit_test(test_depth_by_sequence_entries),
		cmocka_unit_test(test_guard_size_and_null),
		cmocka_unit_test(test_num_bounds),
		cmocka_unit_test(test_fs_read_not_regular),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
