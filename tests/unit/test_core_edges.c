/*
 * test_core_edges.c — behaviours of the core rooms that a seeded mutation
 * run (make mutate, seed 2003; docs/testing.md) found no test pinning: each
 * case here fails on the mutant it names (tools/mutants/regress.txt keeps
 * them).
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/gateway/gateway.h"
#include "../../src/lib/gateway/config_int.h"
#include "../../src/lib/knowledge/embedded.h"
#include "../../src/lib/plan/plan.h"
#include "../../src/lib/runtime/memory.h"
#include "../../src/lib/triage/triage.h"
#include "../../src/lib/util/fs.h"

static char *tmpdir(void)
{
	char tmpl[] = "/tmp/lobes-core-edges.XXXXXX";
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	return xstrdup(d);
}

static void rmtree(char *d)
{
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

/* route.c pick(): a model id that two feasible roles both serve goes to
 * the first of them in role order (the order of the served names), not to
 * the last. Kills `role < 0` → `role <= 0` in the model-id loop, which
 * let the cortex's match (role 0) be replaced by the hand's; and an empty
 * model id matches no role that has no model. */
static void test_shared_model_goes_to_first_role(void **state)
{
	(void)state;
	char *d = tmpdir();
	_cleanup_free_ char *p = xasprintf("%s/.env", d);
	const char *env = "LOBES_PROFILE=spark\nLOBES_CARD=spark\n"
			  "CORTEX_FEASIBLE=true\nCORTEX_PORT=9001\nCORTEX_MODEL=org/Same-1B\n"
			  "SENSES_FEASIBLE=false\n"
			  "HAND_FEASIBLE=true\nHAND_PORT=9003\nHAND_MODEL=org/Same-1B\n"
			  "EMBEDDER_FEASIBLE=true\nEMBEDDER_PORT=9004\nEMBEDDER_MODEL=org/Other-1B\n"
			  "RERANKER_FEASIBLE=false\n";
	assert_int_equal(fs_write_atomic(p, env, strlen(env), 0600, NULL), 0);
	struct err *e = NULL;
	struct gw_config *c = gw_config_load(d, NULL, &e);
	rmtree(d);
	assert_null(e);
	assert_non_null(c);
	struct gw_route r;
	const char *b = "{\"model\":\"org/Same-1B\"}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b, strlen(b), &r), 0);
	assert_int_equal(r.role, ROLE_CORTEX);
	assert_string_equal(r.body, "{\"model\":\"cortex\"}");
	gw_route_free(&r);
	/* the hand is still reached by its role name */
	b = "{\"model\":\"hand\"}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b, strlen(b), &r), 0);
	assert_int_equal(r.role, ROLE_HAND);
	gw_route_free(&r);
	/* an empty model id is no role's: the roles without a model (senses,
	 * reranker here) do not match it (kills dropping `*model &&`) */
	b = "{\"model\":\"\"}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b, strlen(b), &r), -1);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "model_not_found");
	gw_route_free(&r);
	/* a model id served by the role after a match is not taken over */
	b = "{\"model\":\"org/Other-1B\",\"input\":\"x\"}";
	assert_int_equal(gw_route_request(c, GW_EP_EMBEDDINGS, b, strlen(b), &r), 0);
	assert_int_equal(r.role, ROLE_EMBEDDER);
	gw_route_free(&r);
	gw_config_unref(c);
}

/* memory.c drop_caches(): the file opened at fd 0 (stdin closed, as under
 * a service manager) is written, not refused. Kills `fd < 0` → `fd < 1`. */
static void test_drop_caches_at_fd_zero(void **state)
{
	(void)state;
	char *d = tmpdir();
	_cleanup_free_ char *vm = xasprintf("%s/proc/sys/vm", d);
	_cleanup_free_ char *mk = xasprintf("mkdir -p '%s'", vm);
	assert_int_equal(system(mk), 0);
	_cleanup_free_ char *dc = xasprintf("%s/drop_caches", vm);
	assert_int_equal(fs_write_atomic(dc, "0\n", 2, 0644, NULL), 0);
	const char *root = getenv("LOBES_SYSROOT");
	_cleanup_free_ char *keep = root ? xstrdup(root) : NULL;
	setenv("LOBES_SYSROOT", d, 1);
	int saved = dup(0);
	assert_true(saved > 0);
	close(0);
	struct err *e = NULL;
	int rc = drop_caches(&e);
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	keep ? setenv("LOBES_SYSROOT", keep, 1) : unsetenv("LOBES_SYSROOT");
	assert_null(e);
	assert_int_equal(rc, 0);
	_cleanup_free_ char *got = fs_read(dc, 64, NULL, NULL);
	assert_string_equal(got, "3\n");
	rmtree(d);
}

/* triage_result.c rank_cmp(): two fatal causes alike in every rank key
 * (same line, no version, no parent, not on a traceback's root) come in
 * the order their signatures were loaded; listing them the other way
 * round swaps them. Kills the flipped last comparison (`>=`), which put
 * the later signature first. */
static void causes_in_load_order(const char *first, const char *second)
{
	_cleanup_free_ char *yaml = xasprintf(
		"kind: signatures\nsignatures:\n"
		"  - id: %s\n    literal: \"disk %s\"\n    severity: fatal\n    cause: c %s\n    remedy: r\n"
		"  - id: %s\n    literal: \"disk %s\"\n    severity: fatal\n    cause: c %s\n    remedy: r\n",
		first, first, first, second, second, second);
	struct sigset set = { 0 };
	struct err *e = NULL;
	assert_int_equal(sigset_add_yaml(&set, "t.yaml", yaml, strlen(yaml), false, &e), 0);
	assert_int_equal(sigset_link(&set, &e), 0);
	struct triage *t = triage_new(&set, 0);
	const char *log = "INFO starting\nERROR disk alpha disk beta gone\nINFO after\n";
	triage_feed(t, log, strlen(log));
	triage_finish(t);
	const struct triage_match *c[3] = { 0 };
	assert_int_equal(triage_causes(t, c, 3), 2);
	assert_int_equal(c[0]->line_no, 2);
	assert_int_equal(c[1]->line_no, 2);
	assert_string_equal(c[0]->sig->id, first);
	assert_string_equal(c[1]->sig->id, second);
	assert_ptr_equal(triage_cause(t), c[0]);
	/* room for one: the count is still 2, and only out[0] is written
	 * (kills `i < max` → `i <= max`, a write past the caller's array) */
	const struct triage_match *one[2] = { NULL, (const struct triage_match *)&one };
	assert_int_equal(triage_causes(t, one, 1), 2);
	assert_ptr_equal(one[0], c[0]);
	assert_ptr_equal(one[1], (const struct triage_match *)&one);
	assert_int_equal(triage_causes(t, one, 0), 2);
	triage_free(t);
	sigset_free(&set);
}

static void test_equal_causes_in_load_order(void **state)
{
	(void)state;
	causes_in_load_order("alpha", "beta");
	causes_in_load_order("beta", "alpha");
}

/* triage_result.c by_sig(): the matches of one record are kept in
 * signature order, whichever path found them first. Here signature 0 has
 * a long literal (the Wu-Manber prefilter finds it) and signature 1 is a
 * regex with no literal to anchor on (tried on every line, visited before
 * the prefilter's hit on the same line). Kills by_sig's last comparison
 * flipped (`<=`: a later signature found first stays first). */
static void test_record_matches_in_signature_order(void **state)
{
	(void)state;
	const char *yaml =
		"kind: signatures\nsignatures:\n"
		"  - id: anchored\n    literal: \"replica disk alpha gone\"\n    severity: fatal\n"
		"    cause: c1\n    remedy: r\n"
		"  - id: classes-only\n    regex: '[a-z]+ [a-z]+ [a-z]+ [a-z]+$'\n    severity: warning\n"
		"    cause: c2\n    remedy: r\n";
	struct sigset set = { 0 };
	struct err *e = NULL;
	assert_int_equal(sigset_add_yaml(&set, "t.yaml", yaml, strlen(yaml), false, &e), 0);
	assert_int_equal(sigset_link(&set, &e), 0);
	struct triage *t = triage_new(&set, TRIAGE_KEEP_ALL);
	const char *log = "INFO 1 2\nERROR replica disk alpha gone\n";
	triage_feed(t, log, strlen(log));
	triage_finish(t);
	size_t n = 0;
	const struct triage_match *m = triage_matches(t, &n);
	assert_int_equal(n, 2);
	assert_string_equal(m[0].sig->id, "anchored");
	assert_string_equal(m[1].sig->id, "classes-only");
	assert_int_equal(m[0].line_no, 2);
	assert_int_equal(m[1].line_no, 2);
	triage_free(t);
	sigset_free(&set);
}

/* triage_result.c rank_cmp(): a specific signature on the root exception's
 * record is the cause, ahead of one whose version range fits the log
 * better on an earlier line. Kills dropping the on_root key (`if (0)`),
 * which let the version score pick the earlier line. */
static void test_root_record_outranks_version_fit(void **state)
{
	(void)state;
	const char *yaml =
		"kind: signatures\nsignatures:\n"
		"  - id: early\n    literal: \"EngineCore failed to start.\"\n    severity: fatal\n"
		"    cause: c1\n    remedy: r\n    versions: [\">=0.11\"]\n"
		"  - id: oom\n    literal: \"CUDA out of memory\"\n    severity: fatal\n"
		"    cause: c2\n    remedy: r\n";
	struct sigset set = { 0 };
	struct err *e = NULL;
	assert_int_equal(sigset_add_yaml(&set, "t.yaml", yaml, strlen(yaml), false, &e), 0);
	assert_int_equal(sigset_link(&set, &e), 0);
	const char *log =
		"(EngineCore_DP0 pid=7) ERROR 07-13 10:00:00 [core.py:1] EngineCore failed to start.\n"
		"(EngineCore_DP0 pid=7) ERROR 07-13 10:00:00 [core.py:1] Traceback (most recent call last):\n"
		"(EngineCore_DP0 pid=7) ERROR 07-13 10:00:00 [core.py:1]   File \"/x/vllm/v1/worker/gpu_worker.py\", "
		"line 9, in determine_available_memory\n"
		"(EngineCore_DP0 pid=7) ERROR 07-13 10:00:00 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. "
		"Tried to allocate 2.00 GiB.\n"
		"(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above.\n";
	struct triage *t = triage_new(&set, 0);
	assert_true(triage_set_version(t, "0.11.0"));
	triage_feed(t, log, strlen(log));
	triage_finish(t);
	const struct triage_match *c[3] = { 0 };
	assert_int_equal(triage_causes(t, c, 3), 2);
	assert_string_equal(c[0]->sig->id, "oom");
	assert_int_equal(c[0]->line_no, 4);
	assert_string_equal(c[1]->sig->id, "early");
	assert_int_equal(c[1]->line_no, 1);
	/* the version does fit the earlier one better: it is not that */
	assert_int_equal(triage_version_fit(t, c[1]->sig), 1);
	assert_int_equal(triage_version_fit(t, c[0]->sig), -1);
	triage_free(t);
	sigset_free(&set);
}

/* config.c gw_embedded(): every file compiled into the binary is found by
 * its path, the first and the last of the sorted table too, and a path
 * that is not there is NULL. Kills the loop starting at 1. */
static void test_embedded_lookup_ends(void **state)
{
	(void)state;
	assert_true(embedded_files_count > 2);
	const struct embedded_file *first = &embedded_files[0];
	const struct embedded_file *last = &embedded_files[embedded_files_count - 1];
	assert_ptr_equal(gw_embedded(first->path), first);
	assert_ptr_equal(gw_embedded(last->path), last);
	assert_non_null(gw_embedded("data/gateway/ui.html"));
	assert_null(gw_embedded("data/gateway/absent.html"));
	assert_null(gw_embedded(""));
}

static struct gw_config *load_env(const char *env, struct err **e)
{
	char *d = tmpdir();
	_cleanup_free_ char *p = xasprintf("%s/.env", d);
	assert_int_equal(fs_write_atomic(p, env, strlen(env), 0600, NULL), 0);
	struct gw_config *c = gw_config_load(d, NULL, e);
	rmtree(d);
	return c;
}

/* config.c roles_from_env(): a feasible role's port out of 1-65535 is
 * refused as not valid, at its line, with the range; 65535 is a port; an
 * infeasible role's port is not read. Kills the refusal's `return -1` →
 * `return -0` (the load went on and blamed a missing port instead). */
static void test_feasible_role_port_bounds(void **state)
{
	(void)state;
	struct err *e = NULL;
	struct gw_config *c = load_env("LOBES_PROFILE=spark\nCORTEX_FEASIBLE=true\nCORTEX_PORT=9001\n"
				       "HAND_FEASIBLE=true\nHAND_PORT=65536\n", &e);
	assert_null(c);
	assert_non_null(e);
	assert_string_contains(e->msg, ".env:5: HAND_PORT '65536' is not valid; expected an integer 1-65535");
	err_free(e);
	e = NULL;
	c = load_env("LOBES_PROFILE=spark\nCORTEX_FEASIBLE=true\nCORTEX_PORT=0\n", &e);
	assert_null(c);
	assert_string_contains(e->msg, ".env:3: CORTEX_PORT '0' is not valid");
	err_free(e);
	e = NULL;
	c = load_env("LOBES_PROFILE=spark\nCORTEX_FEASIBLE=true\nCORTEX_PORT=65535\n"
		     "HAND_FEASIBLE=false\nHAND_PORT=99999\n", &e);
	assert_null(e);
	assert_non_null(c);
	struct gw_route r;
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, "{}", 2, &r), 0);
	assert_int_equal(r.role, ROLE_CORTEX);
	gw_route_free(&r);
	gw_config_unref(c);
}

/* predicate.c trait_applies(): an unknown truth applies only a trait that
 * says on_unknown: apply; one that says nothing (NULL) or skip does not.
 * Kills dropping `t->on_unknown &&` (strcmp of NULL). */
static void test_trait_applies_on_unknown(void **state)
{
	(void)state;
	struct trait t = { 0 };
	assert_false(trait_applies(&t, TRI_UNKNOWN));
	assert_true(trait_applies(&t, TRI_TRUE));
	assert_false(trait_applies(&t, TRI_FALSE));
	t.on_unknown = "skip";
	assert_false(trait_applies(&t, TRI_UNKNOWN));
	t.on_unknown = "apply";
	assert_true(trait_applies(&t, TRI_UNKNOWN));
	assert_false(trait_applies(&t, TRI_FALSE));
}

/* memory.c meminfo_field(): /proc/meminfo is read with a 1 MiB cap — a
 * file past it is refused, not read. Kills the cap `1 << 20` → `0 << 20`
 * (0 is fs_read's 64 MiB default). */
static void test_meminfo_cap(void **state)
{
	(void)state;
	char *d = tmpdir();
	_cleanup_free_ char *proc = xasprintf("%s/proc", d);
	assert_int_equal(mkdir(proc, 0700), 0);
	_cleanup_free_ char *mi = xasprintf("%s/meminfo", proc);
	size_t n = (1u << 20) + 1;
	char *text = xcalloc(n + 1, 1);
	memset(text, 'x', n);
	memcpy(text, "MemTotal: 1024 kB\n", 18);
	assert_int_equal(fs_write_atomic(mi, text, n, 0644, NULL), 0);
	const char *root = getenv("LOBES_SYSROOT");
	_cleanup_free_ char *keep = root ? xstrdup(root) : NULL;
	setenv("LOBES_SYSROOT", d, 1);
	uint64_t b = 7;
	struct err *e = NULL;
	int rc = meminfo_field("MemTotal", &b, &e);
	/* one byte less is read */
	assert_int_equal(fs_write_atomic(mi, text, n - 1, 0644, NULL), 0);
	uint64_t b2 = 0;
	struct err *e2 = NULL;
	int rc2 = meminfo_field("MemTotal", &b2, &e2);
	keep ? setenv("LOBES_SYSROOT", keep, 1) : unsetenv("LOBES_SYSROOT");
	free(text);
	rmtree(d);
	assert_int_equal(rc, -1);
	assert_non_null(e);
	assert_int_equal(b, 7);
	err_free(e);
	assert_null(e2);
	assert_int_equal(rc2, 0);
	assert_int_equal(b2, 1024 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_model_goes_to_first_role),
		cmocka_unit_test(test_drop_caches_at_fd_zero),
		cmocka_unit_test(test_equal_causes_in_load_order),
		cmocka_unit_test(test_record_matches_in_signature_order),
		cmocka_unit_test(test_root_record_outranks_version_fit),
		cmocka_unit_test(test_embedded_lookup_ends),
		cmocka_unit_test(test_feasible_role_port_bounds),
		cmocka_unit_test(test_trait_applies_on_unknown),
		cmocka_unit_test(test_meminfo_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
