/*
 * test_triage.c — signature files (loading, strict validation, operator
 * override) and the matcher (every shipped signature against its test lines
 * in tests/fixtures/logs/signatures.log, streaming across feeds, line
 * numbers, the cause, unanchored regexes). The real-log corpus is
 * test_corpus.c's.
 */
#include "testutil.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/util/fs.h"
#include "triage_helpers.h"

static void test_shipped_load(void **state)
{
	(void)state;
	assert_true(shipped.n >= 30);
	for (size_t i = 0; i < shipped.n; i++) {
		const struct signature *s = &shipped.sigs[i];
		assert_true((s->literal != NULL) != (s->regex != NULL));
		assert_false(s->from_operator);
	}
	/* every shipped signature is found through anchors (the fast path) */
	struct triage *t = triage_new(&shipped, 0);
	assert_int_equal(triage_unanchored(t), 0);
	triage_free(t);
	const struct signature *s = sigset_find(&shipped, "cuda-launch-failure");
	assert_non_null(s);
	assert_string_equal(s->traits[0], "sm110-reranker-eager");
	assert_string_equal(s->traits[1], "sm110-lfm-hand-infeasible");
}

/* Every test line matches exactly its signature; every signature has one. */
static void test_signature_lines(void **state)
{
	(void)state;
	_cleanup_free_ char *path = src_path("tests/fixtures/logs/signatures.log");
	struct err *e = NULL;
	_cleanup_free_ char *text = fs_read(path, 0, NULL, &e);
	assert_non_null(text);
	struct triage *t = run(&shipped, text, 0);
	size_t n_matches;
	const struct triage_match *ms = triage_matches(t, &n_matches);
	size_t *tested = xcalloc(shipped.n, sizeof(size_t));
	char expect[128] = "";
	unsigned line_no = 0;
	size_t n_lines = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* strtok_r skips empty lines: recount from the pointer */
		line_no = 1;
		for (const char *p = text; p < line; p++)
			line_no += *p == '\n' || *p == '\0';
		if (sscanf(line, "# expect: %127s", expect) == 1)
			continue;
		if (line[0] == '#')
			continue;
		n_lines++;
		const struct signature *want = NULL;
		if (strcmp(expect, "none") != 0) {
			want = sigset_find(&shipped, expect);
			if (!want)
				fail_msg("line %u: no signature '%s'", line_no, expect);
			tested[want - shipped.sigs]++;
		}
		size_t got = 0;
		for (size_t i = 0; i < n_matches; i++) {
			if (ms[i].line_no != line_no)
				continue;
			got++;
			if (ms[i].sig != want)
				fail_msg("line %u: matched '%s', expected '%s'", line_no, ms[i].sig->id,
					 expect);
		}
		if (got != (want ? 1u : 0u))
			fail_msg("line %u: %zu matches, expected %s", line_no, got, expect);
	}
	assert_true(n_lines > shipped.n);
	for (size_t i = 0; i < shipped.n; i++)
		if (!tested[i])
			fail_msg("signature '%s' has no test line in signatures.log", shipped.sigs[i].id);
	free(tested);
	triage_free(t);
}


/* --- bad signature files: exact messages with positions --------------- */

static void expect_error(const char *yaml, const char *msg)
{
	struct sigset set = { 0 };
	struct err *e = NULL;
	assert_int_equal(sigset_add_yaml(&set, "t.yaml", yaml, strlen(yaml), false, &e), -1);
	assert_non_null(e);
	if (strcmp(e->msg, msg) != 0)
		fail_msg("got      '%s'\nexpected '%s'", e->msg, msg);
	assert_int_equal(e->code, EXIT_CONFIG);
	err_free(e);
	sigset_free(&set);
}

#define HEAD "kind: signatures\nsignatures:\n"
#define GOOD "  - id: a\n    literal: hello world\n    severity: info\n    cause: c\n    remedy: r\n"

static void test_bad_files(void **state)
{
	(void)state;
	expect_error(HEAD "  - id: a\n    literal: x\n    severity: info\n    cause: c\n    remedy: r\n"
			  "    colour: red\n",
		     "t.yaml:8:5: unknown key 'colour' in a signature; expected one of id, literal, "
		     "regex, severity, cause, remedy, trait, captures, generic, parent, family, versions, "
		     "excerpts");
	expect_error(HEAD "  - id: a\n    literal: x\n    severity: info\n    remedy: r\n",
		     "t.yaml:3:5: signature has no 'cause'; expected id, severity, cause, remedy and "
		     "one of literal or regex");
	expect_error(HEAD "  - id: a\n    literal: x\n    severity: bad\n    cause: c\n    remedy: r\n",
		     "t.yaml:5:15: bad severity 'bad' of 'a'; expected fatal, warning or info");
	expect_error(HEAD "  - id: a\n    regex: 'ab(c'\n    severity: info\n    cause: c\n    remedy: r\n",
		     "t.yaml:4:17: regex of 'a' does not compile: missing closing parenthesis at "
		     "offset 4; expected a PCRE2 pattern");
	expect_error(HEAD GOOD GOOD,
		     "t.yaml:8:5: duplicate signature id 'a' (first at t.yaml:3:5); expected each id "
		     "once");
	expect_error(HEAD "  - id: a\n    literal: x\n    regex: x\n    severity: info\n    cause: c\n"
			  "    remedy: r\n",
		     "t.yaml:3:5: signature 'a' has both literal and regex; expected exactly one of "
		     "literal or regex");
	expect_error(HEAD "  - id: a\n    regex: '(?<n>x)y'\n    severity: info\n    cause: c\n"
			  "    remedy: r\n    captures: [m]\n",
		     "t.yaml:8:16: capture 'm' of 'a' is not a group of its regex; expected a name of "
		     "a (?<name>...) group");
	expect_error(HEAD "  - id: a\n    literal: x\n    severity: info\n    cause: c\n    remedy: r\n"
			  "    trait: no-such-trait\n",
		     "t.yaml:8:12: unknown trait 'no-such-trait' in 'a'; expected a trait of "
		     "data/traits/");
	expect_error("kind: cards\nsignatures: []\n", "t.yaml:1:7: kind is 'cards'; expected signatures");
	expect_error(HEAD "  - id: Bad_Id\n    literal: x\n    severity: info\n    cause: c\n    remedy: r\n",
		     "t.yaml:3:9: bad signature id 'Bad_Id'; expected lower-case letters, digits and '-'");
	expect_error(HEAD "  - id: a\n    literal: x\n    severity: info\n    generic: true\n"
			  "    cause: c\n    remedy: r\n",
		     "t.yaml:6:14: generic on the info signature 'a'; expected it on fatal ones only");
	/* YAML syntax errors carry libfyaml's position */
	struct sigset set = { 0 };
	struct err *e = NULL;
	const char *broken = HEAD "  - id: [a\n";
	assert_int_equal(sigset_add_yaml(&set, "t.yaml", broken, strlen(broken), false, &e), -1);
	assert_true(str_starts_with(e->msg, "t.yaml:4:"));
	assert_string_contains(e->msg, "; expected valid YAML");
	err_free(e);
	sigset_free(&set);
}

/* An operator file replaces a shipped signature of the same id whole and
 * may add new ones; its own duplicates are errors. */
static void test_operator_override(void **state)
{
	(void)state;
	char dir[] = "/tmp/lobes-sig.XXXXXX";
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *sd = xasprintf("%s/signatures", dir);
	assert_int_equal(mkdir(sd, 0700), 0);
	_cleanup_free_ char *f = xasprintf("%s/local.yaml", sd);
	const char *yaml = HEAD "  - id: startup-complete\n    literal: \"READY NOW\"\n    severity: warning\n"
			   "    cause: mine\n    remedy: none\n"
			   "  - id: my-own\n    regex: 'custom failure (?<code>[0-9]+)'\n    severity: fatal\n"
			   "    cause: c\n    remedy: r\n    captures: [code]\n    trait: my-operator-trait\n";
	struct err *e = NULL;
	assert_int_equal(fs_write_atomic(f, yaml, strlen(yaml), 0600, &e), 0);
	struct sigset set = { 0 };
	assert_int_equal(sigset_load(&set, dir, &e), 0);
	assert_int_equal(set.n, shipped.n + 1);
	const struct signature *s = sigset_find(&set, "startup-complete");
	assert_true(s->from_operator);
	assert_string_equal(s->literal, "READY NOW");
	assert_int_equal(s->severity, SEV_WARNING);
	struct triage *t = run(&set, "Application startup complete.\nx READY NOW\ncustom failure 42\n", 0);
	_cleanup_free_ char *got = summary(t);
	assert_string_equal(got, "startup-complete@2 my-own@3");
	const struct triage_match *c = triage_cause(t);
	assert_string_equal(c->sig->id, "my-own");
	assert_int_equal(c->n_caps, 1);
	assert_string_equal(c->caps[0].value, "42");
	triage_free(t);
	sigset_free(&set);
	/* a second operator file with the same id is a duplicate */
	_cleanup_free_ char *f2 = xasprintf("%s/more.yaml", sd);
	const char *dup = HEAD "  - id: my-own\n    literal: xyzw\n    severity: info\n    cause: c\n"
			  "    remedy: r\n";
	assert_int_equal(fs_write_atomic(f2, dup, strlen(dup), 0600, &e), 0);
	assert_int_equal(sigset_load(&set, dir, &e), -1);
	_cleanup_free_ char *want = xasprintf("%s:3:5: duplicate signature id 'my-own' (first at %s:8:5); "
					      "expected each id once", f2, f);
	assert_string_equal(e->msg, want);
	err_free(e);
	sigset_free(&set);
	unlink(f);
	unlink(f2);
	rmdir(sd);
	rmdir(dir);
}

/* --- streaming, line numbers, cause ------------------------------------ */

static const char *boot =
	"INFO starting\r\n"
	"WARNING Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND\n"
	"\n"
	"ERROR EngineCore failed to start.\n"
	"ERROR ValueError: No available memory for the cache blocks. Try increasing x\n"
	"ERROR RuntimeError: Engine core initialization failed. See root cause above.\n"
	"INFO:     Application startup complete.";

static void test_stream_chunks(void **state)
{
	(void)state;
	struct triage *whole = run(&shipped, boot, 0);
	_cleanup_free_ char *want = summary(whole);
	assert_string_equal(want, "env-attention-backend-unknown@2 engine-core-failed-to-start@4 "
				  "no-cache-blocks@5 engine-core-init-failed@6 startup-complete@7");
	assert_int_equal(triage_lines(whole), 7);
	/* the cause prefers the specific fatal over the generic one before it */
	assert_string_equal(triage_cause(whole)->sig->id, "no-cache-blocks");
	assert_int_equal(triage_cause(whole)->line_no, 5);
	const struct triage_match *f = triage_first(whole, (size_t)(sigset_find(&shipped,
		"env-attention-backend-unknown") - shipped.sigs));
	assert_string_equal(f->caps[0].name, "name");
	assert_string_equal(f->caps[0].value, "VLLM_ATTENTION_BACKEND");
	assert_string_equal(f->sig->traits[0], "attention-backend-env-dead");
	triage_free(whole);
	/* any split of the input gives the same matches and line numbers */
	for (size_t chunk = 1; chunk < 80; chunk += 7) {
		struct triage *t = run(&shipped, boot, chunk);
		_cleanup_free_ char *got = summary(t);
		assert_string_equal(got, want);
		assert_int_equal(triage_lines(t), 7);
		triage_free(t);
	}
}

/* A line split across two feeds is matched once, with its line number. */
static void test_split_line(void **state)
{
	(void)state;
	struct triage *t = triage_new(&shipped, TRIAGE_KEEP_ALL);
	const char *a = "a\nb\nValueError: No available mem", *b = "ory for the cache blocks.\nc\n";
	triage_feed(t, a, strlen(a));
	size_t n;
	triage_matches(t, &n);
	assert_int_equal(n, 0);
	triage_feed(t, b, strlen(b));
	const struct triage_match *m = triage_matches(t, &n);
	assert_int_equal(n, 1);
	assert_int_equal(m[0].line_no, 3);
	assert_string_equal(m[0].text, "ValueError: No available memory for the cache blocks.");
	assert_int_equal(triage_lines(t), 4);
	triage_finish(t);
	triage_finish(t);
	assert_int_equal(triage_lines(t), 4);
	triage_free(t);
}

/* Lines over TRIAGE_LINE_CAP are matched on their head; counting goes on. */
static void test_long_line(void **state)
{
	(void)state;
	size_t big = TRIAGE_LINE_CAP + 4096;
	char *line = xcalloc(1, big + 64);
	memcpy(line, "Application startup complete.", 29);
	memset(line + 29, 'x', big - 29);
	struct triage *t = triage_new(&shipped, TRIAGE_KEEP_ALL);
	triage_feed(t, "first\n", 6);
	for (size_t off = 0; off < big; off += 1000)
		triage_feed(t, line + off, big - off < 1000 ? big - off : 1000);
	triage_feed(t, "\nno kernel image is available for execution on the device\n", 58);
	triage_finish(t);
	_cleanup_free_ char *got = summary(t);
	assert_string_equal(got, "startup-complete@2 no-kernel-image@3");
	size_t n;
	const struct triage_match *m = triage_matches(t, &n);
	assert_true(m[0].truncated);
	assert_int_equal(strlen(m[0].text), TRIAGE_TEXT_CAP);
	struct triage_notes notes;
	triage_get_notes(t, &notes);
	assert_int_equal(notes.long_lines, 1);
	assert_int_equal(notes.first_long_line, 2);
	triage_free(t);
	/* fed at once (a mapped file of a few MiB): the long lines are noted
	 * too, a line of exactly TRIAGE_LINE_CAP bytes is not */
	size_t total = 3 * TRIAGE_LINE_CAP + 8192;
	char *text = xcalloc(1, total + 1);
	size_t o = 0;
	memcpy(text + o, "first\n", 6);
	o += 6;
	memset(text + o, 'y', TRIAGE_LINE_CAP);
	o += TRIAGE_LINE_CAP;
	text[o++] = '\n';
	memset(text + o, 'z', TRIAGE_LINE_CAP + 1);
	o += TRIAGE_LINE_CAP + 1;
	text[o++] = '\n';
	memset(text + o, 'w', TRIAGE_LINE_CAP + 10);
	o += TRIAGE_LINE_CAP + 10;
	memcpy(text + o, "\nlast\n", 6);
	o += 6;
	t = triage_new(&shipped, 0);
	triage_feed(t, text, o);
	triage_finish(t);
	triage_get_notes(t, &notes);
	assert_int_equal(notes.long_lines, 2);
	assert_int_equal(notes.first_long_line, 3);
	assert_int_equal(triage_lines(t), 5);
	triage_free(t);
	free(text);
	free(line);
}

/* Matches in a large input (many slices) keep their line numbers. */
static void test_many_slices(void **state)
{
	(void)state;
	const char *filler = "(APIServer pid=1) INFO 07-13 10:23:45 [loggers.py:123] Engine 000: "
			     "Avg prompt throughput: 0.0 tokens/s, GPU KV cache usage: 0.5%\n";
	size_t fl = strlen(filler), lines = 200000;
	char *text = xcalloc(lines + 10, fl + 64);
	size_t len = 0;
	for (size_t i = 1; i <= lines; i++) {
		const char *l = i == 123457 ? "(EngineCore_DP0 pid=7) INFO 07-13 10:23:46 [kv_cache_utils.py:1] "
					      "GPU KV cache size: 1,234 tokens\n" : filler;
		memcpy(text + len, l, strlen(l));
		len += strlen(l);
	}
	struct triage *t = triage_new(&shipped, TRIAGE_KEEP_ALL);
	triage_feed(t, text, len);
	triage_finish(t);
	_cleanup_free_ char *got = summary(t);
	assert_string_equal(got, "kv-cache-size@123457");
	assert_int_equal(triage_lines(t), lines);
	triage_free(t);
	free(text);
}

static int cb_calls;
static void count_cb(const struct triage_match *m, void *opaque)
{
	(void)m;
	(void)opaque;
	cb_calls++;
}

/* Without KEEP_ALL only firsts and counts are kept; the callback sees all. */
static void test_firsts_and_callback(void **state)
{
	(void)state;
	struct triage *t = triage_new(&shipped, 0);
	triage_set_callback(t, count_cb, NULL);
	const char *s = "Unknown vLLM environment variable detected: VLLM_A\n"
			"Unknown vLLM environment variable detected: VLLM_B\n";
	triage_feed(t, s, strlen(s));
	triage_finish(t);
	size_t i = (size_t)(sigset_find(&shipped, "env-unknown") - shipped.sigs), n;
	assert_int_equal(triage_count(t, i), 2);
	assert_int_equal(triage_first(t, i)->line_no, 1);
	assert_string_equal(triage_first(t, i)->caps[0].value, "VLLM_A");
	triage_matches(t, &n);
	assert_int_equal(n, 0);
	assert_int_equal(cb_calls, 2);
	assert_null(triage_cause(t));
	triage_free(t);
}

/* Regexes the anchor walk must not get wrong: optional atoms, case
 * folding, alternation, short patterns (found by the full scan). */
static void test_anchor_walk(void **state)
{
	(void)state;
	const char *yaml = HEAD
		"  - id: opt\n    regex: 'colou?r schemes+ broken'\n    severity: info\n    cause: c\n    remedy: r\n"
		"  - id: fold\n    regex: '(?i)shouting loudly'\n    severity: info\n    cause: c\n    remedy: r\n"
		"  - id: alt\n    regex: 'alpha beta|gamma delta'\n    severity: info\n    cause: c\n    remedy: r\n"
		"  - id: short\n    regex: '^[0-9]+ ab$'\n    severity: warning\n    cause: c\n    remedy: r\n"
		"  - id: tiny\n    literal: 'qz'\n    severity: info\n    cause: c\n    remedy: r\n"
		"  - id: quant\n    regex: 'x{0,3}yyyy z{2}ww'\n    severity: info\n    cause: c\n    remedy: r\n"
		"  - id: hex\n    regex: '\\x41BCDEF'\n    severity: info\n    cause: c\n    remedy: r\n";
	struct sigset set = { 0 };
	struct err *e = NULL;
	assert_int_equal(sigset_add_yaml(&set, "t.yaml", yaml, strlen(yaml), true, &e), 0);
	struct triage *t = triage_new(&set, TRIAGE_KEEP_ALL);
	assert_int_equal(triage_unanchored(t), 4); /* fold, short, tiny, hex */
	triage_free(t);
	t = run(&set, "my color schemesss broken\n"
		      "SHOUTING LOUDLY\n"
		      "x gamma delta\n"
		      "12 ab\n"
		      "no 12 ab\n"
		      "aqzb\n"
		      "yyyy zzww\n"
		      "colour schemes broken alpha beta\n"
		      "ABCDEF\n", 0);
	_cleanup_free_ char *got = summary(t);
	assert_string_equal(got, "opt@1 fold@2 alt@3 short@4 tiny@6 quant@7 opt@8 alt@8 hex@9");
	triage_free(t);
	sigset_free(&set);
}

/* The prefilter is built once per set and shared by its triages; a
 * signature added to the set afterwards is seen by the next triage (the
 * set's cache is dropped), not missed by a stale prefilter. */
static void test_prefilter_cached_per_set(void **state)
{
	(void)state;
	const char *a = HEAD "  - id: first-kind\n    literal: 'first failure kind'\n    severity: fatal\n"
			     "    cause: c\n    remedy: r\n";
	const char *b = HEAD "  - id: second-kind\n    literal: 'second failure kind'\n    severity: fatal\n"
			     "    cause: c\n    remedy: r\n";
	const char *log = "x first failure kind\ny second failure kind\n";
	struct sigset set = { 0 };
	struct err *e = NULL;
	assert_int_equal(sigset_add_yaml(&set, "a.yaml", a, strlen(a), true, &e), 0);
	assert_null(set.cache);
	struct triage *t1 = run(&set, log, 0);
	assert_non_null(set.cache);
	void *built = set.cache;
	struct triage *t2 = run(&set, log, 0);
	assert_ptr_equal(set.cache, built); /* not built again */
	_cleanup_free_ char *g1 = summary(t1);
	_cleanup_free_ char *g2 = summary(t2);
	assert_string_equal(g1, "first-kind@1");
	assert_string_equal(g2, "first-kind@1");
	triage_free(t1);
	triage_free(t2);
	assert_int_equal(sigset_add_yaml(&set, "b.yaml", b, strlen(b), true, &e), 0);
	assert_null(set.cache); /* dropped with the change */
	struct triage *t3 = run(&set, log, 0);
	_cleanup_free_ char *g3 = summary(t3);
	assert_string_equal(g3, "first-kind@1 second-kind@2");
	triage_free(t3);
	sigset_free(&set);
	assert_null(set.cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_load),
		cmocka_unit_test(test_signature_lines),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_operator_override),
		cmocka_unit_test(test_stream_chunks),
		cmocka_unit_test(test_split_line),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_many_slices),
		cmocka_unit_test(test_firsts_and_callback),
		cmocka_unit_test(test_anchor_walk),
		cmocka_unit_test(test_prefilter_cached_per_set),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
