/*
 * test_yaml_guard.c — the pre-parse guard on its own, and hostile inputs
 * through every YAML loader of the library (knowledge, fleet template,
 * signatures, questions; doctor's compose read is driven through the CLI in
 * tests/cases/hostile.t). Each loader call runs under an alarm: libfyaml's
 * known hangs (a directive with an invalid octet spins forever) kill the
 * test by SIGALRM instead of hanging the suite.
 */
#include "testutil.h"

#include <signal.h>
#include <unistd.h>

#include "../../src/lib/knowledge/knowledge.h"
#include "../../src/lib/render/render.h"
#include "../../src/lib/util/buf.h"
#include "../../src/lib/util/yaml_guard.h"
#include "../../src/lib/verify/verify.h"
#include "../../src/lib/triage/triage.h"

#define WATCHDOG_S 30 /* generous: a guarded parse of a few bytes takes microseconds */

/* guard(text) → the error message, or NULL when accepted (caller frees). */
static char *guard(const char *text, size_t len)
{
	struct err *e = NULL;
	if (yaml_guard("f.yaml", text, len, &e) == 0)
		return NULL;
	return test_err_msg(e, EXIT_CONFIG);
}

#define GUARD_IS(lit, want)                                                  \
	do {                                                                 \
		_cleanup_free_ char *_m = guard(lit, sizeof(lit) - 1);       \
		if (!(want)) {                                               \
			if (_m)                                              \
				fail_msg("refused %s: %s", #lit, _m);        \
		} else if (!_m || strcmp(_m, (want) ? (want) : "") != 0) {   \
			fail_msg("%s\n got: %s\nwant: %s", #lit, _m ? _m : "(accepted)", \
				 (want) ? (want) : "");                      \
		}                                                            \
	} while (0)

static void test_accepts_plain_data(void **state)
{
	(void)state;
	GUARD_IS("a: 1\nb: [x, y]\nc: {d: e}\n", NULL);
	GUARD_IS("a: \"x & y *z\"\nb: 'it''s *x'\nc: a*b & c\nd: it's\n", NULL);
	GUARD_IS("c: |\n  *not an alias\n  &nor an anchor\n  %nor a directive\nd: x\n", NULL);
	GUARD_IS("- - - x\n- !!str y\n--- \nz: 1 # &c *c ? d\ne: a ? b\n", NULL);
	GUARD_IS("\xEF\xBB\xBFkey: caf\xC3\xA9 \xF0\x9F\x98\x80\n", NULL); /* BOM, 2- and 4-byte UTF-8 */
	GUARD_IS("", NULL);
}

static void test_refuses_with_position(void **state)
{
	(void)state;
	GUARD_IS("%\x8e\n", "f.yaml:1:2: invalid UTF-8 (byte 0x8e); expected UTF-8 text");
	GUARD_IS("%YAML 1.2\n---\na: 1\n",
		 "f.yaml:1:1: a YAML directive; expected none (lobes files use no %YAML or %TAG lines)");
	GUARD_IS("a: &x [*x]\n", "f.yaml:1:4: a YAML anchor ('&'); expected plain data (lobes files "
				 "use no anchors or aliases; quote a value that starts with '&')");
	GUARD_IS("a:\n  - b\n  - *x\n", "f.yaml:3:5: a YAML alias ('*'); expected plain data (lobes "
					 "files use no anchors or aliases; quote a value that starts with '*')");
	GUARD_IS("a: [1, &y 2]\n", "f.yaml:1:8: a YAML anchor ('&'); expected plain data (lobes files "
				   "use no anchors or aliases; quote a value that starts with '&')");
	GUARD_IS("a: !!str &t x\n", "f.yaml:1:10: a YAML anchor ('&'); expected plain data (lobes "
				    "files use no anchors or aliases; quote a value that starts with '&')");
	GUARD_IS("a: caf\xC3\xA9 \"\xC3\x28\"\n",
		 "f.yaml:1:10: invalid UTF-8 (byte 0xc3); expected UTF-8 text");
	GUARD_IS("a: \xC0\xAF\n", "f.yaml:1:4: invalid UTF-8 (byte 0xc0); expected UTF-8 text");
	GUARD_IS("a: \xED\xA0\x80\n", "f.yaml:1:4: invalid UTF-8 (byte 0xed); expected UTF-8 text");
	GUARD_IS("a: 1\x01\n", "f.yaml:1:5: control character U+0001; expected printable text");
	GUARD_IS("a: \"x\n", "f.yaml:1:4: a quoted string that is never closed; expected a closing \"");
	GUARD_IS("a: 1\nb: %x\n", "f.yaml:2:4: '%' starting a value; expected a quoted string");
	GUARD_IS("? ?-te-d:\t\t: \t\t\n", "f.yaml:1:1: an explicit mapping key ('? '); expected plain "
					  "'key: value' entries");
	GUARD_IS("a: [? b]\n", "f.yaml:1:5: an explicit mapping key ('? '); expected plain 'key: value' "
			       "entries");
	GUARD_IS("a: 'x''y''z'\n", NULL);
	GUARD_IS("a: 'x''''y'\n", "f.yaml:1:8: '' escapes in a row in a single-quoted string; expected "
				  "one at a time (write the value double-quoted)");
	GUARD_IS("\xFF\xFE" "a\0:\0", "f.yaml:1:1: the text is UTF-16LE; expected UTF-8 (convert it, "
				     "e.g. iconv -f UTF-16LE -t UTF-8)");
	GUARD_IS("a\0:\0 \0x\0", "f.yaml:1:1: the text is UTF-16LE; expected UTF-8 (convert it, e.g. "
				"iconv -f UTF-16LE -t UTF-8)");
	GUARD_IS("a: 1\n\0", "f.yaml:2:1: a NUL byte; expected UTF-8 text");
}

static void test_depth_and_size_caps(void **state)
{
	(void)state;
	_cleanup_free_ char *flow = xcalloc(1, 300);
	memcpy(flow, "a: ", 3);
	memset(flow + 3, '[', 100);
	_cleanup_free_ char *m = guard(flow, strlen(flow));
	assert_non_null(m);
	assert_string_contains(m, "nesting deeper than 64 levels; expected a flatter document");
	/* 80 block levels */
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	for (int i = 0; i < 80; i++)
		buf_printf(&b, "%*sk:\n", i, "");
	_cleanup_free_ char *m2 = guard(b.data, b.len);
	assert_non_null(m2);
	assert_string_contains(m2, "f.yaml:65:65: nesting deeper than 64 levels");
	/* 40 levels are fine */
	buf_reset(&b);
	for (int i = 0; i < 40; i++)
		buf_printf(&b, "%*sk:\n", i, "");
	_cleanup_free_ char *m3 = guard(b.data, b.len);
	assert_null(m3);
	/* size cap: only the length is looked at before the cap refuses */
	_cleanup_free_ char *m4 = guard("a", YAML_GUARD_MAX_BYTES + 1);
	assert_non_null(m4);
	assert_string_contains(m4, "expected at most 16777216 for a YAML file");
}

/* Hostile inputs every loader must refuse (with an EXIT_CONFIG positioned
 * error) without hanging. */
static const struct {
	const char *text;
	size_t len;
	const char *pos;
} hostile[] = {
	{ "%\x8e\n", 3, ":1:2: invalid UTF-8" },
	{ "a: &a [*a, *a]\nb: *a\n", 21, ":1:4: a YAML anchor" },
	{ "kind: card\nname: \"\xfe\xff\"\n", 25, ":2:8: invalid UTF-8" },
	{ "kind: card\nname: x\xC3\n", 20, ":2:8: invalid UTF-8" },
	{ "%TAG ! tag:x,2000:\n--- !x\nkind: card\n", 37, ":1:1: a YAML directive" },
	{ "\xFE\xFF\0k\0i\0n\0d", 10, ":1:1: the text is UTF-16BE" },
};

static void check_refused(const char *loader, int rc, struct err *e, size_t i)
{
	if (rc == 0)
		fail_msg("%s accepted hostile input %zu", loader, i);
	_cleanup_free_ char *want = xasprintf("h.yaml%s", hostile[i].pos);
	if (!e || strncmp(e->msg, want, strlen(want)) != 0)
		fail_msg("%s, input %zu:\n got: %s\nwant: %s...", loader, i, e ? e->msg : "(no error)",
			 want);
	assert_int_equal(e->code, EXIT_CONFIG);
}

/* The kubernetes template: a missing key and a port out of range are
 * errors naming the file; the shipped one loads. */
static void test_k8s_template(void **state)
{
	(void)state;
	struct k8s_template kt;
	struct err *e = NULL;
	assert_int_equal(k8s_template_load(&kt, &e), 0);
	assert_string_equal(kt.runtime_class, "nvidia");
	assert_int_equal(kt.gateway_port, 8000);
	k8s_template_free(&kt);
	const char *missing = "kind: kubernetes\nnamespace: lobes\n";
	assert_int_equal(k8s_template_parse(&kt, "k.yaml", missing, strlen(missing), &e), -1);
	assert_non_null(strstr(e->msg, "k.yaml:1:1: '/lobes_image' missing or not a scalar"));
	err_free(e);
	e = NULL;
	const char *port = "namespace: a\nlobes_image: b\nshm_size: c\nhf_cache_host: d\n"
			   "adapters_host: e\ngpu_resource: f\nruntime_class: g\nprofile_label: h\n"
			   "gateway_port: 70000\ntermination_grace_seconds: 5\n";
	assert_int_equal(k8s_template_parse(&kt, "k.yaml", port, strlen(port), &e), -1);
	assert_non_null(strstr(e->msg, "'/gateway_port' is '70000'; expected a whole number 1-65535"));
	err_free(e);
}

static void test_every_loader_refuses(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		alarm(WATCHDOG_S);
		struct err *e = NULL;
		struct knowledge k = { 0 };
		int rc = knowledge_add_yaml(&k, "h.yaml", hostile[i].text, hostile[i].len, true, &e);
		check_refused("knowledge", rc, e, i);
		knowledge_free(&k);
		err_free(e);

		e = NULL;
		struct fleet_template t = { 0 };
		rc = fleet_template_parse(&t, "h.yaml", hostile[i].text, hostile[i].len, &e);
		check_refused("fleet template", rc, e, i);
		fleet_template_free(&t);
		err_free(e);

		e = NULL;
		struct k8s_template kt = { 0 };
		rc = k8s_template_parse(&kt, "h.yaml", hostile[i].text, hostile[i].len, &e);
		check_refused("kubernetes template", rc, e, i);
		k8s_template_free(&kt);
		err_free(e);

		e = NULL;
		struct sigset s = { 0 };
		rc = sigset_add_yaml(&s, "h.yaml", hostile[i].text, hostile[i].len, true, &e);
		check_refused("signatures", rc, e, i);
		sigset_free(&s);
		err_free(e);

		e = NULL;
		struct question_set q = { 0 };
		rc = question_add_yaml(&q, "h.yaml", hostile[i].text, hostile[i].len, &e);
		check_refused("questions", rc, e, i);
		questions_free(&q);
		err_free(e);
		alarm(0);
	}
}

/* Single-quoted scalars (with and without '' escapes) everywhere a
 * signature file has a scalar, read through yaml_scalar0(): nothing leaks
 * (make asan runs this under LeakSanitizer) and the values are read
 * unescaped. Escapes in a row, which libfyaml misreads and leaks on, are
 * refused by the guard (test_refuses_with_position). */
static void test_signatures_single_quoted(void **state)
{
	(void)state;
	static const char y[] = "'kind': 'signatures'\n"
				"'signatures':\n"
				"  - 'id': 'q-one'\n"
				"    'regex': 'it''s (?<what>broken)'\n"
				"    'captures': ['what']\n"
				"    'severity': 'fatal'\n"
				"    'cause': 'a ''quoted'' cause ''x''y''z'''\n"
				"    'remedy': 'r'\n";
	struct sigset s = { 0 };
	struct err *e = NULL;
	if (sigset_add_yaml(&s, "q.yaml", y, sizeof(y) - 1, true, &e) < 0)
		fail_msg("%s", e->msg);
	const struct signature *g = sigset_find(&s, "q-one");
	assert_non_null(g);
	assert_string_equal(g->cause, "a 'quoted' cause 'x'y'z'");
	sigset_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_plain_data),
		cmocka_unit_test(test_refuses_with_position),
		cmocka_unit_test(test_depth_and_size_caps),
		cmocka_unit_test(test_every_loader_refuses),
		cmocka_unit_test(test_k8s_template),
		cmocka_unit_test(test_signatures_single_quoted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
