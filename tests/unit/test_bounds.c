/*
 * test_bounds.c — bounded reads of hostile input: strict numbers for
 * options, compose interpolation with a nesting cap (a 20k-level input is
 * refused, not processed), fs_read on a FIFO and on an oversized file,
 * config.json caps and encodings, and the .env parser's fidelity (NUL,
 * UTF-16, quotes, the operator's lines kept byte for byte by the merge).
 * Calls that could block run under an alarm so a hang fails the test.
 */
#include "testutil.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/facts/facts.h"
#include "../../src/lib/deploy/deploy_int.h"
#include "../../src/lib/util/buf.h"
#include "../../src/lib/util/fs.h"
#include "../../src/lib/util/interp.h"
#include "../../src/lib/util/num.h"

#define WATCHDOG_S 30

static void test_num(void **state)
{
	(void)state;
	long l;
	double d;
	assert_true(num_parse_long("120", 0, 604800, &l));
	assert_int_equal(l, 120);
	assert_false(num_parse_long("", 0, 10, &l));
	assert_false(num_parse_long(" 1", 0, 10, &l));
	assert_false(num_parse_long("-1", 0, 10, &l));
	assert_false(num_parse_long("11", 0, 10, &l));
	assert_false(num_parse_long("99999999999999999999999", 0, 10, &l));
	assert_false(num_parse_long("1x", 0, 10, &l));
	assert_true(num_parse_double("2.5", 0, 4096, &d));
	assert_true(d == 2.5);
	assert_true(num_parse_double("1e2", 0, 4096, &d));
	assert_false(num_parse_double("nan", 0, 4096, &d));
	assert_false(num_parse_double("inf", 0, 4096, &d));
	assert_false(num_parse_double("-inf", -1e9, 4096, &d));
	assert_false(num_parse_double("1e400", 0, 1e308, &d));
	assert_false(num_parse_double("0x10", 0, 4096, &d));
	assert_false(num_parse_double("-1", 0, 4096, &d));
	assert_false(num_parse_double("", 0, 4096, &d));
}

static const char *lookup(const char *name, void *ctx)
{
	(void)ctx;
	if (strcmp(name, "SET") == 0)
		return "v";
	if (strcmp(name, "EMPTY") == 0)
		return "";
	return NULL;
}

static char *ip(const char *s, char **why)
{
	return interp_compose(s, lookup, NULL, why);
}

static void test_interp(void **state)
{
	(void)state;
	char *why = NULL;
	static const struct { const char *in, *out; } cases[] = {
		{ "a $SET b", "a v b" },         { "${SET}", "v" },
		{ "${UNSET:-d}", "d" },          { "${EMPTY:-d}", "d" },
		{ "${EMPTY-d}", "" },            { "${UNSET-${SET}}", "v" },
		{ "${UNSET:-${UNSET:-x}}y", "xy" }, { "$$SET", "$SET" },
		{ "${SET:?must}", "v" },         { "${open", "${open" },
		{ "$", "$" },                    { "100$", "100$" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *v = ip(cases[i].in, &why);
		assert_non_null(v);
		assert_null(why);
		if (strcmp(v, cases[i].out) != 0)
			fail_msg("'%s' → '%s', want '%s'", cases[i].in, v, cases[i].out);
	}
	/* nesting: 32 levels are read, 33 and 20000 refused with the column */
	for (int levels = 31; levels <= 20000; levels = levels == 33 ? 20000 : levels + 1) {
		_cleanup_buf_ struct buf b;
		buf_init(&b, 0);
		buf_adds(&b, "x=");
		for (int i = 0; i < levels; i++)
			buf_adds(&b, "${A:-");
		buf_adds(&b, "end");
		for (int i = 0; i < levels; i++)
			buf_adds(&b, "}");
		_cleanup_free_ char *v = ip(buf_str(&b), &why);
		if (levels <= INTERP_MAX_DEPTH) {
			assert_non_null(v);
			assert_string_equal(v, "x=end");
		} else {
			assert_null(v);
			assert_non_null(why);
			assert_string_equal(why, "'${' nested more than 32 levels deep at column 3; "
						 "expected at most 32");
			free(why);
			why = NULL;
		}
	}
}

static void test_fs_read_fifo_and_cap(void **state)
{
	(void)state;
	char dir[] = "/tmp/lobes-bounds.XXXXXX";
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *fifo = xasprintf("%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(WATCHDOG_S); /* a blocking open would end the test here */
	struct err *e = NULL;
	assert_null(fs_read(fifo, 0, NULL, &e));
	_cleanup_free_ char *want = xasprintf("'%s' is a FIFO; expected a regular file", fifo);
	assert_string_equal(e->msg, want);
	err_free(e);
	e = NULL;
	assert_null(fs_read(dir, 0, NULL, &e));
	assert_string_contains(e->msg, "is a directory; expected a regular file");
	err_free(e);
	alarm(0);
	/* over the cap: refused from its size, before reading */
	_cleanup_free_ char *big = xasprintf("%s/big", dir);
	FILE *f = fopen(big, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), 5 << 20), 0);
	fclose(f);
	e = NULL;
	assert_null(fs_read(big, 1 << 20, NULL, &e));
	_cleanup_free_ char *want2 = xasprintf("'%s' is 5242880 bytes; expected at most 1048576", big);
	assert_string_equal(e->msg, want2);
	err_free(e);
	unlink(big);
	unlink(fifo);
	rmdir(dir);
}

/* A hub with one snapshot whose config.json is made by make(path). */
static void checkpoint_with(void (*make)(const char *path), const char *want_why)
{
	char hub[] = "/tmp/lobes-hub.XXXXXX";
	assert_non_null(mkdtemp(hub));
	_cleanup_free_ char *snap = xasprintf("%s/models--o--m/snapshots/r", hub);
	assert_int_equal(fs_mkdirs(snap, 0700, NULL), 0);
	_cleanup_free_ char *cfg = xasprintf("%s/config.json", snap);
	make(cfg);
	alarm(WATCHDOG_S);
	struct checkpoint_facts c;
	assert_int_equal(checkpoint_facts_read_in(hub, "o/m", &c, NULL), 0);
	alarm(0);
	assert_int_equal(c.kv_scales, TRI_UNKNOWN);
	assert_string_contains(c.kv_scales_why, want_why);
	checkpoint_facts_free(&c);
	unlink(cfg);
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", hub);
	assert_int_equal(system(cmd), 0);
}

static void make_fifo(const char *p) { assert_int_equal(mkfifo(p, 0600), 0); }
static void make_huge(const char *p)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), (off_t)200 << 20), 0); /* sparse: no disk used */
	fclose(f);
}
static void make_utf16(const char *p)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fwrite("\xff\xfe{\0}\0", 1, 6, f);
	fclose(f);
}

static void test_config_json_bounds(void **state)
{
	(void)state;
	checkpoint_with(make_fifo, "is a FIFO; expected a regular file");
	checkpoint_with(make_huge, "is 209715200 bytes; expected at most 4194304");
	checkpoint_with(make_utf16, "config.json:1:1: the text is UTF-16LE; expected UTF-8 JSON");
}

static char *env_err(const char *text, size_t len)
{
	struct env_file f;
	struct err *e = NULL;
	if (env_parse_len(text, len, ".env", &f, &e) == 0) {
		env_file_free(&f);
		return NULL;
	}
	return test_err_msg(e, EXIT_CONFIG);
}

static void test_env_refusals(void **state)
{
	(void)state;
	static const char nul[] = "A=1\nB=x\0y\nC=3\n";
	_cleanup_free_ char *m1 = env_err(nul, sizeof(nul) - 1);
	assert_string_equal(m1, ".env:2:4: a NUL byte; expected text (the rest of the line would be lost)");
	_cleanup_free_ char *m2 = env_err("\xff\xfe" "A\0=\0", 6);
	assert_string_equal(m2, ".env:1:1: the file is UTF-16LE; expected UTF-8 text (convert it, e.g. "
				"iconv -f UTF-16LE -t UTF-8)");
	_cleanup_free_ char *m3 = env_err("A=\"open\n", 8);
	assert_string_equal(m3, ".env:1:3: a double-quoted value not closed on its line; expected a "
				"closing \"");
	_cleanup_free_ char *m4 = env_err("A='x' y\n", 8);
	assert_string_equal(m4, ".env:1:7: text after the closing quote; expected a comment (# ...) or "
				"the end of the line");
}

static void test_env_values(void **state)
{
	(void)state;
	static const char text[] = "# c\n"
				   "export A=\"a b # c\"\n"
				   "B=\"l1\\nl2\\t\\\"q\\\" \\\\ \\x\"  # note\n"
				   "C='lit \\n $X'\n"
				   "D=plain value # comment\n"
				   "E=a#b\n"
				   "F=\n"
				   "G=  spaced  \r\n";
	struct env_file f;
	struct err *e = NULL;
	if (env_parse(text, ".env", &f, &e) < 0)
		fail_msg("%s", e->msg);
	assert_string_equal(env_get(&f, "A"), "a b # c");
	assert_string_equal(env_get(&f, "B"), "l1\nl2\t\"q\" \\ \\x");
	assert_string_equal(env_get(&f, "C"), "lit \\n $X");
	assert_string_equal(env_get(&f, "D"), "plain value");
	assert_string_equal(env_get(&f, "E"), "a#b");
	assert_string_equal(env_get(&f, "F"), "");
	assert_string_equal(env_get(&f, "G"), "spaced");
	assert_string_equal(env_entry_get(&f, "A")->raw, "export A=\"a b # c\"");
	assert_string_equal(env_entry_get(&f, "B")->raw, "B=\"l1\\nl2\\t\\\"q\\\" \\\\ \\x\"  # note");
	assert_int_equal(env_entry_get(&f, "B")->line, 3);
	env_file_free(&f);
}

/* The merge writes the operator's lines, not a re-serialised value. */
static void test_env_merge_keeps_lines(void **state)
{
	(void)state;
	static const char rendered[] = "# header\nA=1\nB=2\nC=3\n";
	static const char mine[] = "A=1\nB=\"a b # c\"\nC=\"l1\\nl2\"  # two lines\nX='mine'\n";
	struct env_file old, renv;
	assert_int_equal(env_parse(mine, ".env", &old, NULL), 0);
	assert_int_equal(env_parse(rendered, ".env", &renv, NULL), 0);
	char *edited[] = { "B", "C", "X", NULL };
	_cleanup_free_ char *m = env_merge(rendered, mine, &old, edited, &renv);
	assert_string_equal(m, "# header\nA=1\nB=\"a b # c\"\nC=\"l1\\nl2\"  # two lines\n"
			       "\n# operator keys (kept by lobes init)\nX='mine'\n");
	/* and what compose reads back from it is what the operator meant */
	struct env_file back;
	assert_int_equal(env_parse(m, ".env", &back, NULL), 0);
	assert_string_equal(env_get(&back, "B"), "a b # c");
	assert_string_equal(env_get(&back, "C"), "l1\nl2");
	assert_string_equal(env_get(&back, "X"), "mine");
	env_file_free(&back);
	env_file_free(&old);
	env_file_free(&renv);
}

/* The operator's comment lines stay before the key they stood before, the
 * render's own comments are not doubled, a line written differently with
 * the render's value keeps its form, and merging again changes nothing. */
static void test_env_merge_keeps_comments(void **state)
{
	(void)state;
	static const char rendered[] = "# lobes header\n# --- cortex\nA=1\nB=2\n\n# --- hand\nC=3\n";
	static const char mine[] = "# lobes header\n# my top note\n# --- cortex\nA=1\n"
				   "  # indented note on B\nB=2  # keep me\n\n# --- hand\n# why C\n\n"
				   "# second para\n\nC=3\n# note on gone\nD=9\nX=mine\n# trailing note\n";
	static const char want[] = "# lobes header\n# --- cortex\n# my top note\nA=1\n"
				   "  # indented note on B\nB=2  # keep me\n\n# --- hand\n# why C\n\n"
				   "# second para\nC=3\n\n# operator keys (kept by lobes init)\nX=mine\n"
				   "# note on gone\n# trailing note\n";
	struct env_file old, renv;
	assert_int_equal(env_parse(mine, ".env", &old, NULL), 0);
	assert_int_equal(env_parse(rendered, ".env", &renv, NULL), 0);
	char *edited[] = { "X", NULL };
	_cleanup_free_ char *m = env_merge(rendered, mine, &old, edited, &renv);
	assert_string_equal(m, want);
	/* a second init over its own output writes the same bytes */
	struct env_file again;
	assert_int_equal(env_parse(m, ".env", &again, NULL), 0);
	_cleanup_free_ char *m2 = env_merge(rendered, m, &again, edited, &renv);
	assert_string_equal(m2, want);
	/* no old text (a first init): the render as it is */
	struct env_file none = { 0 };
	_cleanup_free_ char *m3 = env_merge(rendered, NULL, &none, NULL, &renv);
	assert_string_equal(m3, rendered);
	env_file_free(&again);
	env_file_free(&old);
	env_file_free(&renv);
	/* a render line the parser reads with a key the line does not start
	 * with (indented) is still that key's line: the operator's edit of it
	 * is kept, not lost (tests/fuzz/crashes/env_merge/indented-render-key) */
	struct env_file r2, o2;
	assert_int_equal(env_parse("\tA=1\nB=2\n", ".env", &r2, NULL), 0);
	assert_int_equal(env_parse("A=mine\nB=2\n", ".env", &o2, NULL), 0);
	char *ed2[] = { "A", NULL };
	_cleanup_free_ char *m4 = env_merge("\tA=1\nB=2\n", "A=mine\nB=2\n", &o2, ed2, &r2);
	assert_string_equal(m4, "A=mine\nB=2\n");
	env_file_free(&r2);
	env_file_free(&o2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_num),
		cmocka_unit_test(test_interp),
		cmocka_unit_test(test_fs_read_fifo_and_cap),
		cmocka_unit_test(test_config_json_bounds),
		cmocka_unit_test(test_env_refusals),
		cmocka_unit_test(test_env_values),
		cmocka_unit_test(test_env_merge_keeps_lines),
		cmocka_unit_test(test_env_merge_keeps_comments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
