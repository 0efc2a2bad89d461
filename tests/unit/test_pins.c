/*
 * test_pins.c — behaviours that no other test pinned down until a planted
 * bug survived the suite (docs/testing.md, make mutate). Each test names
 * the mutant of tools/mutants/regress.txt it kills; the runner replays
 * those mutants on every run so a test that stops catching one shows.
 */
#include <sys/stat.h>

#include "testutil.h"
#include "../../src/lib/gateway/gateway.h"
#include "../../src/lib/plan/plan.h"
#include "../../src/lib/probe/probe.h"
#include "../../src/lib/render/render_int.h"
#include "../../src/lib/util/fs.h"

static char *tmpdir(void)
{
	char tmpl[] = "/tmp/lobes-pins.XXXXXX";
	return xstrdup(mkdtemp(tmpl));
}

static void rmtree(char *d)
{
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

static const char *FLEET =
	"LOBES_PROFILE=spark\nLOBES_CARD=spark\n"
	"CORTEX_FEASIBLE=true\nCORTEX_PORT=9001\nCORTEX_MODEL=org/Big-27B\n"
	"HAND_FEASIBLE=true\nHAND_PORT=9003\nHAND_MODEL=org/Small-1B\n"
	"EMBEDDER_FEASIBLE=true\nEMBEDDER_PORT=9004\nEMBEDDER_MODEL=org/Embed-0.6B\n"
	"RERANKER_FEASIBLE=true\nRERANKER_PORT=9005\nRERANKER_MODEL=org/Rerank-0.6B\n";

static struct gw_config *fleet_in(const char *d, const char *env, mode_t mode, struct err **e)
{
	_cleanup_free_ char *p = xasprintf("%s/.env", d);
	assert_int_equal(fs_write_atomic(p, env, strlen(env), mode, NULL), 0);
	return gw_config_load(d, NULL, e);
}

/* /v1/score is served by the reranker and by the embedder (vLLM's score
 * API takes both); a generator is the wrong endpoint.
 * Kills: route.c serves() without "|| r == ROLE_EMBEDDER". */
static void test_score_served_by_embedder_and_reranker(void **state)
{
	(void)state;
	char *d = tmpdir();
	struct err *e = NULL;
	struct gw_config *c = fleet_in(d, FLEET, 0600, &e);
	assert_non_null(c);
	static const struct {
		const char *model;
		int rc, role;
	} cases[] = {
		{ "embedder", 0, ROLE_EMBEDDER },
		{ "org/Embed-0.6B", 0, ROLE_EMBEDDER },
		{ "reranker", 0, ROLE_RERANKER },
		{ "hand", -1, -1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *b = xasprintf("{\"model\":\"%s\",\"text_1\":\"a\",\"text_2\":\"b\"}",
						  cases[i].model);
		struct gw_route r;
		assert_int_equal(gw_route_request(c, GW_EP_SCORE, b, strlen(b), &r), cases[i].rc);
		if (cases[i].rc == 0)
			assert_int_equal(r.role, cases[i].role);
		else
			assert_int_equal(r.status, 400);
		gw_route_free(&r);
	}
	gw_config_unref(c);
	rmtree(d);
}

/* The key file and a .env holding the key: any group or other bit is
 * refused, not only the world-readable 0644 (0640 is the common slip).
 * Kills: config.c "st.st_mode & 077" -> "& 007" (both places). */
static void test_key_mode_group_bits_refused(void **state)
{
	(void)state;
	char *d = tmpdir();
	struct err *e = NULL;
	_cleanup_free_ char *kf = xasprintf("%s/gateway.key", d);
	static const mode_t bad[] = { 0640, 0620, 0610, 0604 };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(fs_write_atomic(kf, "abc\n", 4, bad[i], NULL), 0);
		assert_null(fleet_in(d, FLEET, 0600, &e));
		_cleanup_free_ char *want = xasprintf("has mode %04o; expected 0600", (unsigned)bad[i]);
		assert_string_contains(e->msg, want);
		err_free(e);
		e = NULL;
	}
	assert_int_equal(unlink(kf), 0);
	_cleanup_free_ char *keyed = xasprintf("%sLOBES_GATEWAY_API_KEY=k1\n", FLEET);
	assert_null(fleet_in(d, keyed, 0640, &e));
	assert_string_contains(e->msg, "holds LOBES_GATEWAY_API_KEY but has mode 0640; expected 0600");
	err_free(e);
	e = NULL;
	struct gw_config *c = fleet_in(d, keyed, 0600, &e);
	assert_non_null(c);
	assert_string_equal(c->key, "k1");
	gw_config_unref(c);
	rmtree(d);
}

/* Predicate operators ge and lt, evaluated at their boundary: card.mem_gib
 * of exactly 128 GiB reads "128.0"; ge 128 holds, lt 128 does not.
 * Kills: predicate.c "a < b" -> "a <= b", "a >= b" -> "a > b", and the
 * op test "lt" read as "ge". */
static enum tri cond(const char *op, const char *value, const char *bytes)
{
	struct host_facts f = { 0 };
	f.mem_total.valid = bytes != NULL;
	f.mem_total.value = (char *)bytes;
	struct fact_view v = { .facts = &f, .role = -1 };
	char *vals[] = { (char *)value, NULL };
	struct condition c = { .fact = "card.mem_gib", .op = (char *)op, .values = vals };
	struct trait t = { .name = "t", .when = &c, .n_when = 1 };
	char *detail = NULL;
	enum tri r = trait_predicate(&t, &v, &detail);
	free(detail);
	return r;
}

static void test_predicate_ge_lt(void **state)
{
	(void)state;
	const char *gib128 = "137438953472";
	assert_int_equal(cond("ge", "128", gib128), TRI_TRUE);
	assert_int_equal(cond("lt", "128", gib128), TRI_FALSE);
	assert_int_equal(cond("ge", "128.1", gib128), TRI_FALSE);
	assert_int_equal(cond("lt", "128.1", gib128), TRI_TRUE);
	assert_int_equal(cond("ge", "127.9", gib128), TRI_TRUE);
	assert_int_equal(cond("lt", "127.9", gib128), TRI_FALSE);
	/* an unknown fact or a value that is not a number: unknown */
	assert_int_equal(cond("ge", "128", NULL), TRI_UNKNOWN);
	assert_int_equal(cond("lt", "lots", gib128), TRI_UNKNOWN);
}

/* The atomic write sets the mode it is asked for whatever the umask:
 * docker-compose.yml must stay 0644 under umask 077.
 * Kills: fs.c fs_write_temp without "fchmod(fd, mode) < 0 ||". */
static void test_atomic_write_mode_under_umask(void **state)
{
	(void)state;
	char *d = tmpdir();
	_cleanup_free_ char *p = xasprintf("%s/docker-compose.yml", d);
	mode_t old = umask(077);
	int rc = fs_write_atomic(p, "x\n", 2, 0644, NULL);
	umask(old);
	assert_int_equal(rc, 0);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	rmtree(d);
}

/* The embed probe's tie: cos(paraphrase) == cos(unrelated) is a model
 * that cannot tell them apart, a failure.
 * Kills: probe_judge.c "if (cp > cu)" -> "if (cp >= cu)". */
static void test_embed_tie_fails(void **state)
{
	(void)state;
	struct probe p;
	const char *body = "{\"data\":[{\"index\":0,\"embedding\":[1,0,0]},"
			   "{\"index\":1,\"embedding\":[0,1,0]},{\"index\":2,\"embedding\":[0,0,1]}]}";
	probe_init(&p, ROLE_EMBEDDER, 8000, NULL);
	probe_judge(&p, 200, body, strlen(body));
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_contains(p.reason, "cos(paraphrase)=0.000 <= cos(unrelated)=0.000");
	assert_string_equal(p.summary, "cos(paraphrase)=0.000 <= cos(unrelated)=0.000");
	probe_free(&p);
	/* equal non-zero cosines too */
	body = "{\"data\":[{\"index\":0,\"embedding\":[1,0]},"
	       "{\"index\":1,\"embedding\":[1,1]},{\"index\":2,\"embedding\":[1,-1]}]}";
	probe_init(&p, ROLE_EMBEDDER, 8000, NULL);
	probe_judge(&p, 200, body, strlen(body));
	assert_int_equal(p.failure, PF_WRONG);
	probe_free(&p);
}

/* A single-quoted compose item: ' is doubled for YAML and $ for compose's
 * interpolation. No shipped knob value can hold a $ today (each refuses
 * it), so this is where the doubling is pinned.
 * Kills: args.c render_add_sq without the "$$" branch. */
static void test_single_quoted_item_doubles(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 0);
	render_add_sq(&b, "{\"a\": \"it's $HOME ${X:-y}\"}");
	_cleanup_free_ char *s = buf_take(&b);
	assert_string_equal(s, "{\"a\": \"it''s $$HOME $${X:-y}\"}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_score_served_by_embedder_and_reranker),
		cmocka_unit_test(test_key_mode_group_bits_refused),
		cmocka_unit_test(test_predicate_ge_lt),
		cmocka_unit_test(test_atomic_write_mode_under_umask),
		cmocka_unit_test(test_embed_tie_fails),
		cmocka_unit_test(test_single_quoted_item_doubles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
