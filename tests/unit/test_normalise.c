/*
 * test_normalise.c — what triage matches is the normalised record: one test
 * per normalisation rule, each with a line that an anchored signature (or a
 * shipped one) does not match without the rule; the cause hierarchy,
 * families and versions; traceback roots; strict loading of the new keys.
 */
#include "testutil.h"

#include "../../src/lib/triage/triage.h"

static struct sigset shipped, anchored;

/* `boom` only matches a record that is exactly the exception line. */
static const char *anchored_yaml =
	"kind: signatures\nsignatures:\n"
	"  - id: boom\n    regex: '^ValueError: boom here$'\n    severity: fatal\n"
	"    cause: c\n    remedy: r\n";

static int setup(void **state)
{
	(void)state;
	struct err *e = NULL;
	if (sigset_load(&shipped, NULL, &e) < 0 ||
	    sigset_add_yaml(&anchored, "t.yaml", anchored_yaml, strlen(anchored_yaml), true, &e) < 0) {
		fprintf(stderr, "# %s\n", e->msg);
		err_free(e);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sigset_free(&shipped);
	sigset_free(&anchored);
	return 0;
}

static struct triage *run_v(const struct sigset *set, const char *text, const char *version)
{
	struct triage *t = triage_new(set, TRIAGE_KEEP_ALL);
	if (version)
		assert_true(triage_set_version(t, version));
	triage_feed(t, text, strlen(text));
	triage_finish(t);
	return t;
}

static struct triage *run(const struct sigset *set, const char *text)
{
	return run_v(set, text, NULL);
}

/* "id@line ..." of every match */
static char *summary(const struct triage *t)
{
	size_t n;
	const struct triage_match *m = triage_matches(t, &n);
	char *s = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		char *x = xasprintf("%s%s%s@%llu", s, i ? " " : "", m[i].sig->id,
				    (unsigned long long)m[i].line_no);
		free(s);
		s = x;
	}
	return s;
}

/* The anchored signature matches line 2 of "INFO x\n<line>\n". */
static void expect_boom(const char *line)
{
	char *text = xasprintf("INFO start\n%s\n", line);
	struct triage *t = run(&anchored, text);
	char *got = summary(t);
	if (strcmp(got, "boom@2") != 0)
		fail_msg("line '%s': got '%s', expected boom@2", line, got);
	free(got);
	triage_free(t);
	free(text);
}

static void test_rule_none(void **state)
{
	(void)state;
	expect_boom("ValueError: boom here");
	/* the anchored signature really is anchored: a prefix it does not
	 * know is not stripped */
	struct triage *t = run(&anchored, "INFO start\nsomething ValueError: boom here\n");
	size_t n;
	triage_matches(t, &n);
	assert_int_equal(n, 0);
	triage_free(t);
}

static void test_rule_ansi(void **state)
{
	(void)state;
	expect_boom("\x1b[31mValueError\x1b[0m: boom here");
	expect_boom("\x1b]0;title\x07ValueError: boom here");
	/* ESC lost in a paste, or shown in caret notation */
	expect_boom("[1;36m(EngineCore_DP0 pid=7)[0;0m ValueError: boom here");
	expect_boom("^[[0;36m(EngineCore_DP0 pid=7)^[[0;0m ValueError: boom here");
	/* a shipped literal split by colour codes */
	struct triage *t = run(&shipped, "no kernel image is \x1b[1mavailable\x1b[0m for execution on the device\n");
	char *got = summary(t);
	assert_string_equal(got, "no-kernel-image@1");
	free(got);
	triage_free(t);
}

static void test_rule_compose(void **state)
{
	(void)state;
	expect_boom("cortex-1  | ValueError: boom here");
	expect_boom("vllm_1 | ValueError: boom here");
}

static void test_rule_journald(void **state)
{
	(void)state;
	expect_boom("Aug 19 18:30:11 vllm vllm[8707]: ValueError: boom here");
	expect_boom("Aug  9 18:30:11 host python3: ValueError: boom here");
	/* the month in the host's locale */
	expect_boom("d\xc3\xa9""c. 19 02:07:16 host bash[2211]: ValueError: boom here");
	expect_boom("M\xc3\xa4r 19 02:07:16 host bash[2211]: ValueError: boom here");
	expect_boom("mai 19 02:07:16 host bash[2211]: ValueError: boom here");
}

static void test_rule_timestamps(void **state)
{
	(void)state;
	expect_boom("[2025-03-10T15:07:20Z] ValueError: boom here");           /* CI */
	expect_boom("2025-03-10T15:07:20.123456789Z ValueError: boom here");   /* kubectl --timestamps */
	expect_boom("2025-03-10T15:07:20.123456789Z stderr F ValueError: boom here"); /* CRI */
	expect_boom("2025-03-10 15:07:20,123 ValueError: boom here");
	expect_boom("2025-04-29 22:18:08.494 | ValueError: boom here");
	expect_boom("2025-03-10T15:07:20+02:00 ValueError: boom here");
	/* a markdown list item in front of a timestamp (and a quote mark) */
	expect_boom("> - 2024-06-22T20:16:34.700+00:00 ValueError: boom here");
	expect_boom("* 2025-03-10 15:07:20,123 ValueError: boom here");
}

static void test_rule_kubectl_prefix(void **state)
{
	(void)state;
	expect_boom("[pod/vllm-0/vllm] ValueError: boom here");
}

static void test_rule_process_prefix(void **state)
{
	(void)state;
	expect_boom("(RayWorkerWrapper pid=164587, ip=128.1.219.180) ValueError: boom here");
	expect_boom("(EngineCore_DP0 pid=77) ValueError: boom here");
	expect_boom("(VllmWorker TP0 pid=3412) ValueError: boom here");
	expect_boom("(raylet) ValueError: boom here");
}

static void test_rule_quote_marks(void **state)
{
	(void)state;
	expect_boom("> ValueError: boom here");
	expect_boom("\xe2\x94\x82 ValueError: boom here      \xe2\x94\x82");
	expect_boom("\xe2\x96\x8e ValueError: boom here");
}

static void test_rule_layers_nest(void **state)
{
	(void)state;
	expect_boom("vllm-1  | 2025-03-10T15:07:20Z \x1b[36m(EngineCore_DP0 pid=7)\x1b[0m ValueError: boom here");
}

/* A message wrapped over lines is matched as one record, at its first line. */
static void test_rule_wrapped(void **state)
{
	(void)state;
	/* wrapped at a word boundary (a pasted newline) */
	struct triage *t = run(&shipped,
		"INFO 07-13 10:00:00 [core.py:1] starting\n"
		"ValueError: The model's max seq len (32768) is larger than the maximum number of\n"
		"tokens that can be stored in KV cache (7344). Try increasing `gpu_memory_utilization`\n"
		"INFO 07-13 10:00:01 [core.py:1] next record\n");
	char *got = summary(t);
	assert_string_equal(got, "max-seq-len-exceeds-kv-cache@2");
	const struct triage_match *m = triage_cause(t);
	assert_int_equal(m->lines, 2);
	free(got);
	triage_free(t);
	/* a terminal's hard wrap in the middle of a number, behind compose
	 * prefixes (joined without a separator) */
	t = run(&shipped,
		"vllm-1  | ValueError: Free memory on device (59.32/79.15 GiB) on startup is less than desired GPU memory utilization (0.9, 71.\n"
		"vllm-1  | 24 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n");
	got = summary(t);
	assert_string_equal(got, "free-memory-below-utilization@1");
	assert_string_equal(triage_cause(t)->caps[3].value, "71.24");
	free(got);
	triage_free(t);
	/* the same text fed one byte at a time gives the same record */
	const char *two = "ValueError: The model's max seq len (32768) is larger than the maximum number of\n"
			  "tokens that can be stored in KV cache (7344).\n";
	t = triage_new(&shipped, TRIAGE_KEEP_ALL);
	for (size_t i = 0; two[i]; i++)
		triage_feed(t, two + i, 1);
	triage_finish(t);
	got = summary(t);
	assert_string_equal(got, "max-seq-len-exceeds-kv-cache@1");
	free(got);
	triage_free(t);
}

/* A line that starts like a record is not joined, however long the line
 * above it is; a short line is not continued. */
static void test_rule_record_start(void **state)
{
	(void)state;
	struct triage *t = run(&shipped,
		"(APIServer pid=1) INFO 07-13 10:23:45 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s\n"
		"(EngineCore_DP0 pid=7) INFO 07-13 10:23:46 [kv_cache_utils.py:1] GPU KV cache size: 1,234 tokens\n"
		"short line\n"
		"GPU KV cache size: 5 tokens\n");
	char *got = summary(t);
	assert_string_equal(got, "kv-cache-size@2 kv-cache-size@4");
	free(got);
	triage_free(t);
	struct norm k;
	char out[256];
	const char *kinds[][2] = {
		{ "INFO 07-13 10:23:46 [core.py:1] x", "R" },
		{ "ERROR 11-18 18:07:28 engine.py:366]   File \"x.py\", line 1", "I" },
		{ "  File \"x.py\", line 1, in f", "I" },
		{ "torch.OutOfMemoryError: CUDA out of memory.", "E" },
		{ "Traceback (most recent call last):", "T" },
		{ "INFO:     Application startup complete.", "R" },
		{ "tokens that can be stored", "C" },
		{ "Killed", "R" },
		{ "vllm-1  | ", "B" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		norm_line(kinds[i][0], strlen(kinds[i][0]), out, &k);
		char c = k.traceback ? 'T' : k.exception ? 'E' : k.kind == NK_RECORD ? 'R'
			 : k.kind == NK_INDENT ? 'I' : k.kind == NK_BLANK ? 'B' : 'C';
		if (c != kinds[i][1][0])
			fail_msg("'%s': kind %c, expected %s", kinds[i][0], c, kinds[i][1]);
	}
}

/* The last exception line of a traceback is its root; a cause there ranks
 * before an earlier one. */
static void test_rule_traceback_root(void **state)
{
	(void)state;
	const char *log =
		"ERROR 01-01 00:00:00 [x.py:1] an illegal memory access was encountered\n"
		"ERROR 01-01 00:00:01 [core.py:1] Traceback (most recent call last):\n"
		"ERROR 01-01 00:00:01 [core.py:1]   File \"x.py\", line 1, in <module>\n"
		"ERROR 01-01 00:00:01 [core.py:1]     f()\n"
		"INFO 01-01 00:00:01 [other.py:1] interleaved\n"
		"ERROR 01-01 00:00:01 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
	struct triage *t = run(&shipped, log);
	struct triage_root r[4];
	assert_int_equal(triage_roots(t, r, 4), 1);
	assert_int_equal(r[0].line_no, 6);
	assert_string_equal(r[0].text, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB");
	const struct triage_match *c[4];
	assert_int_equal(triage_causes(t, c, 4), 2);
	assert_string_equal(c[0]->sig->id, "cuda-out-of-memory");
	assert_true(c[0]->root);
	assert_string_equal(c[1]->sig->id, "illegal-memory-access");
	triage_free(t);
	/* a traceback split over many feeds and slices finds the same root */
	t = triage_new(&shipped, 0);
	size_t len = strlen(log);
	for (size_t i = 0; i < len; i += 7)
		triage_feed(t, log + i, len - i < 7 ? len - i : 7);
	triage_finish(t);
	assert_int_equal(triage_roots(t, r, 4), 1);
	assert_int_equal(r[0].line_no, 6);
	assert_string_equal(triage_cause(t)->sig->id, "cuda-out-of-memory");
	triage_free(t);
}

/* A specific cause wins over its parent and over generic ones, whatever
 * the order. */
static void test_hierarchy(void **state)
{
	(void)state;
	struct triage *t = run(&shipped,
		"ERROR EngineCore failed to start.\n"
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
		"RuntimeError: CUDA out of memory occurred when warming up pooler with 256 dummy requests.\n"
		"RuntimeError: Engine core initialization failed. See root cause above.\n");
	const struct triage_match *c[8];
	size_t n = triage_causes(t, c, 8);
	assert_int_equal(n, 1);
	assert_string_equal(c[0]->sig->id, "oom-warming-up-pooler");
	triage_free(t);
	t = run(&shipped,
		"[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
		"[rank0]: Last error:\n"
		"[rank0]: Error while creating shared memory segment /dev/shm/nccl-eQz2sT (size 5767520)\n");
	assert_string_equal(triage_cause(t)->sig->id, "nccl-shm-too-small");
	triage_free(t);
	/* on one record the parent is not reported beside its child */
	t = run(&shipped, "huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url x\n");
	char *got = summary(t);
	assert_string_equal(got, "gated-repository@1");
	free(got);
	triage_free(t);
	/* only generic lines: the first of them is the cause */
	t = run(&shipped, "ERROR EngineCore failed to start.\nRuntimeError: Engine core initialization failed.\n");
	assert_string_equal(triage_cause(t)->sig->id, "engine-core-failed-to-start");
	triage_free(t);
}

/* The wording the log's version prints is preferred; nothing is dropped
 * when the version is unknown. */
static void test_versions(void **state)
{
	(void)state;
	const char *old = "WARNING 03-25 22:34:30 [kv_cache.py:82] Checkpoint does not provide a q scaling "
			  "factor. Setting it to k_scale. This only matters for the flash-attn backend.\n";
	struct triage *t = run(&shipped, old);
	char *got = summary(t);
	assert_string_equal(got, "fp8-q-scale-missing-pre-0-11-1@1");
	free(got);
	char v[32];
	triage_version(t, v, sizeof(v));
	assert_string_equal(v, "");
	triage_free(t);
	t = run_v(&shipped, old, "0.10.2");
	got = summary(t);
	assert_string_equal(got, "fp8-q-scale-missing-pre-0-11-1@1");
	assert_int_equal(triage_version_fit(t, sigset_find(&shipped, "fp8-q-scale-missing-pre-0-11-1")), 1);
	free(got);
	triage_free(t);
	/* a version that does not print that wording: the neutral entry */
	t = run_v(&shipped, old, "0.12.0");
	got = summary(t);
	assert_string_equal(got, "fp8-q-scale-missing@1");
	assert_int_equal(triage_version_fit(t, sigset_find(&shipped, "fp8-q-scale-missing-pre-0-11-1")), 0);
	free(got);
	triage_free(t);
	/* the banner gives the version */
	char *banner = xasprintf("INFO 10-10 10:23:00 api_server.py:526] vLLM API server version 0.12.0rc1\n%s", old);
	t = run(&shipped, banner);
	triage_version(t, v, sizeof(v));
	assert_string_equal(v, "0.12.0");
	got = summary(t);
	assert_string_equal(got, "vllm-version-banner@1 fp8-q-scale-missing@2");
	free(got);
	triage_free(t);
	free(banner);
	/* causes: one printed only by another version ranks after the others */
	const char *two = "ERROR 05-26 00:17:47 [engine.py:448] 'ColumnParallelLinear' object has no attribute 'input_scale'\n"
			  "ERROR 05-26 00:17:48 [x.py:1] CUDA error: no kernel image is available for execution on the device\n";
	t = run(&shipped, two);
	assert_string_equal(triage_cause(t)->sig->id, "input-scale-attribute-regression");
	triage_free(t);
	t = run_v(&shipped, two, "0.8.3");
	assert_string_equal(triage_cause(t)->sig->id, "input-scale-attribute-regression");
	triage_free(t);
	t = run_v(&shipped, two, "0.9.0");
	const struct triage_match *c[4];
	assert_int_equal(triage_causes(t, c, 4), 2); /* not dropped: ranked last */
	assert_string_equal(c[0]->sig->id, "no-kernel-image");
	triage_free(t);
	assert_false(triage_set_version(t = triage_new(&shipped, 0), "banana"));
	triage_free(t);
}

static void expect_load_error(const char *yaml, const char *msg)
{
	struct sigset set = { 0 };
	struct err *e = NULL;
	int rc = sigset_add_yaml(&set, "t.yaml", yaml, strlen(yaml), false, &e);
	if (rc == 0)
		rc = sigset_link(&set, &e);
	assert_int_equal(rc, -1);
	if (strcmp(e->msg, msg) != 0)
		fail_msg("got      '%s'\nexpected '%s'", e->msg, msg);
	err_free(e);
	sigset_free(&set);
}

#define HEAD "kind: signatures\nsignatures:\n"
#define SIG(id) "  - id: " id "\n    literal: text " id "\n    severity: fatal\n    cause: c\n    remedy: r\n"

static void test_loader_new_keys(void **state)
{
	(void)state;
	expect_load_error(HEAD SIG("a") "    parent: nope\n",
			  "t.yaml:8:13: unknown parent 'nope' of 'a'; expected the id of a signature");
	expect_load_error(HEAD SIG("a") "    parent: b\n" SIG("b") "    parent: a\n",
			  "t.yaml:8:13: parent 'b' of 'a' leads back to 'a'; expected no cycle");
	expect_load_error(HEAD SIG("a") "    parent: a\n",
			  "t.yaml:8:13: bad parent 'a' of 'a'; expected the id of another signature");
	expect_load_error(HEAD SIG("a") "    versions: [\">=0.11\", \"<<1\"]\n",
			  "t.yaml:8:27: bad version range '<<1' of 'a' at byte 1; expected e.g. \">=0.11\", "
			  "\"<0.11.1\" or \">=0.6,<0.11\"");
	expect_load_error(HEAD SIG("a") "    versions: \">=0.6,x\"\n",
			  "t.yaml:8:16: bad version range '>=0.6,x' of 'a' at byte 7; expected e.g. \">=0.11\", "
			  "\"<0.11.1\" or \">=0.6,<0.11\"");
	expect_load_error(HEAD SIG("a") "    family: Bad_Family\n",
			  "t.yaml:8:13: bad family 'Bad_Family' of 'a'; expected lower-case letters, digits and '-'");
	/* good ones load */
	const char *good = HEAD SIG("a") SIG("b") "    parent: a\n    family: x-y\n    versions: [\">=0.6,<0.11\", \"0.4\"]\n";
	struct sigset set = { 0 };
	struct err *e = NULL;
	assert_int_equal(sigset_add_yaml(&set, "t.yaml", good, strlen(good), false, &e), 0);
	assert_int_equal(sigset_link(&set, &e), 0);
	const struct signature *b = sigset_find(&set, "b");
	assert_string_equal(b->parent, "a");
	assert_string_equal(sig_cause_id(b), "x-y");
	assert_string_equal(b->versions[1], "0.4");
	sigset_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_none),
		cmocka_unit_test(test_rule_ansi),
		cmocka_unit_test(test_rule_compose),
		cmocka_unit_test(test_rule_journald),
		cmocka_unit_test(test_rule_timestamps),
		cmocka_unit_test(test_rule_kubectl_prefix),
		cmocka_unit_test(test_rule_process_prefix),
		cmocka_unit_test(test_rule_quote_marks),
		cmocka_unit_test(test_rule_layers_nest),
		cmocka_unit_test(test_rule_wrapped),
		cmocka_unit_test(test_rule_record_start),
		cmocka_unit_test(test_rule_traceback_root),
		cmocka_unit_test(test_hierarchy),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_loader_new_keys),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
