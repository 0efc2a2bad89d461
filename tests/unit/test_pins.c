/*
 * test_pins.c — behaviours that no other test pinned down until a planted
 * bug survived the suite (docs/testing.md, make mutate). Each test names
 * the mutant of tools/mutants/regress.txt it kills; the runner replays
 * those mutants on every run so a test that stops catching one shows.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/deploy/deploy_int.h"
#include "../../src/lib/gateway/gateway.h"
#include "../../src/lib/knowledge/vllm.h"
#include "../../src/lib/plan/plan.h"
#include "../../src/lib/probe/probe.h"
#include "../../src/lib/render/render_int.h"
#include "../../src/lib/runtime/memory.h"
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

/* Every front-door path, its endpoint and its method: the proxied ones
 * take POST only, /v1/models, /health and /capabilities GET or HEAD.
 * Kills: route.c's endpoint table with one entry's method flipped. */
static void test_endpoint_table(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		enum gw_endpoint ep;
		bool post;
	} want[] = {
		{ "/v1/chat/completions", GW_EP_CHAT, true }, { "/v1/completions", GW_EP_COMPLETIONS, true },
		{ "/v1/embeddings", GW_EP_EMBEDDINGS, true }, { "/v1/rerank", GW_EP_RERANK, true },
		{ "/rerank", GW_EP_RERANK, true },	      { "/v2/rerank", GW_EP_RERANK, true },
		{ "/v1/score", GW_EP_SCORE, true },	      { "/score", GW_EP_SCORE, true },
		{ "/v1/models", GW_EP_MODELS, false },	      { "/health", GW_EP_HEALTH, false },
		{ "/capabilities", GW_EP_CAPABILITIES, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		bool ok = true;
		assert_int_equal(gw_endpoint_of("POST", want[i].path, &ok), want[i].ep);
		assert_int_equal(ok, want[i].post);
		assert_int_equal(gw_endpoint_of("GET", want[i].path, &ok), want[i].ep);
		assert_int_equal(ok, !want[i].post);
		assert_int_equal(gw_endpoint_of("HEAD", want[i].path, &ok), want[i].ep);
		assert_int_equal(ok, !want[i].post);
		assert_int_equal(gw_endpoint_proxied(want[i].ep), want[i].post);
	}
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

/* Every integer setting of the gateway's .env at its bounds: the lowest
 * and highest accepted, one past either refused with the range named.
 * Kills: config.c's INT_KEY bounds and env_int's "n < lo" / "n > hi". */
static void test_gateway_setting_bounds(void **state)
{
	(void)state;
	static const struct {
		const char *key;
		long lo, hi;
	} keys[] = {
		{ "LOBES_GATEWAY_PORT", 0, 65535 },
		{ "LOBES_GATEWAY_MAX_BODY_BYTES", 1024, 1L << 30 },
		{ "LOBES_GATEWAY_MAX_CONNECTIONS", 1, 65536 },
		{ "LOBES_GATEWAY_MAX_BUFFERED_BYTES", 1L << 20, 1L << 40 },
		{ "LOBES_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS", 1, 65536 },
		{ "LOBES_GATEWAY_HEADER_TIMEOUT", 1, 3600 },
		{ "LOBES_GATEWAY_MIN_UPLOAD_RATE", 0, 1L << 30 },
		{ "LOBES_GATEWAY_FIRST_BYTE_TIMEOUT", 1, 86400 },
		{ "LOBES_GATEWAY_CONNECT_TIMEOUT", 1, 3600 },
		{ "LOBES_GATEWAY_READ_TIMEOUT", 1, 86400 },
		{ "LOBES_GATEWAY_REQUEST_TIMEOUT", 0, 86400 },
		{ "LOBES_GATEWAY_IDLE_TIMEOUT", 1, 86400 },
		{ "LOBES_GATEWAY_DRAIN_TIMEOUT", 0, 86400 },
		{ "LOBES_GATEWAY_HEALTH_INTERVAL_MS", 50, 3600000 },
		{ "LOBES_GATEWAY_HEALTH_TIMEOUT_MS", 50, 600000 },
		{ "LOBES_GATEWAY_SWAP_MAX", 0, 100 },
		{ "LOBES_GATEWAY_IOWAIT_MAX", 0, 100 },
		{ "LOBES_GATEWAY_WORKERS", 1, 64 },
		{ "LOBES_GATEWAY_MAX_INFLIGHT", 1, 1000000 },
		{ "LOBES_GATEWAY_MAX_INFLIGHT_RERANKER", 1, 1000000 },
	};
	char *d = tmpdir();
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		const long tries[] = { keys[i].lo - 1, keys[i].lo, keys[i].hi, keys[i].hi + 1 };
		for (size_t k = 0; k < ARRAY_SIZE(tries); k++) {
			_cleanup_free_ char *env = xasprintf("%s%s=%ld\n", FLEET, keys[i].key, tries[k]);
			struct err *e = NULL;
			struct gw_config *c = fleet_in(d, env, 0600, &e);
			bool inside = k == 1 || k == 2;
			if (inside) {
				if (!c)
					fail_msg("%s=%ld refused: %s", keys[i].key, tries[k], e->msg);
				gw_config_unref(c);
				continue;
			}
			if (c)
				fail_msg("%s=%ld accepted; expected %ld-%ld", keys[i].key, tries[k], keys[i].lo,
					 keys[i].hi);
			_cleanup_free_ char *want = xasprintf("%s '%ld' is not valid; expected an integer %ld-%ld",
							      keys[i].key, tries[k], keys[i].lo, keys[i].hi);
			assert_string_contains(e->msg, want);
			err_free(e);
		}
	}
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

/* Each fact a predicate may name, read from the view: the card's and the
 * box's, a role's (name, lane, attention path, a knob, the method of
 * speculative_config) and its checkpoint's; an absent source is unknown,
 * never a default. Kills: predicate.c view_get's branches (each fact's
 * name test, its source chosen, its unknown case). */
static enum tri fact_eq(const struct fact_view *v, const char *fact, const char *value)
{
	char *vals[] = { (char *)value, NULL };
	struct condition c = { .fact = (char *)fact, .op = "eq", .values = vals };
	struct trait t = { .name = "t", .when = &c, .n_when = 1 };
	char *detail = NULL;
	enum tri r = trait_predicate(&t, v, &detail);
	free(detail);
	return r;
}

static void test_predicate_facts(void **state)
{
	(void)state;
	struct host_facts f = { 0 };
	struct card card = { .name = "thor", .memory_model = "unified" };
	struct checkpoint_facts ck = { .found = true, .kv_scales = TRI_TRUE, .hetero_head_dim = TRI_FALSE };
	struct fact_view v = { .facts = &f, .card = &card, .role = ROLE_RERANKER, .ckpt = &ck };
	v.knobs[KNOB_KV_CACHE_DTYPE] = "fp8";
	v.attention_path = "TRITON_ATTN";
	assert_int_equal(fact_eq(&v, "card.id", "thor"), TRI_TRUE);
	assert_int_equal(fact_eq(&v, "card.compute_cap", "11.0"), TRI_UNKNOWN);
	f.compute_cap.valid = true;
	f.compute_cap.value = "11.0";
	assert_int_equal(fact_eq(&v, "card.compute_cap", "11.0"), TRI_TRUE);
	/* memory model: the box's fact first, else the card's */
	assert_int_equal(fact_eq(&v, "card.memory_model", "unified"), TRI_TRUE);
	f.memory_model.valid = true;
	f.memory_model.value = "discrete";
	assert_int_equal(fact_eq(&v, "card.memory_model", "discrete"), TRI_TRUE);
	assert_int_equal(fact_eq(&v, "role.name", "reranker"), TRI_TRUE);
	assert_int_equal(fact_eq(&v, "role.lane", "pooling"), TRI_TRUE);
	assert_int_equal(fact_eq(&v, "role.attention_path", "TRITON_ATTN"), TRI_TRUE);
	assert_int_equal(fact_eq(&v, "role.kv_cache_dtype", "fp8"), TRI_TRUE);
	assert_int_equal(fact_eq(&v, "role.max_model_len", "1"), TRI_UNKNOWN);
	assert_int_equal(fact_eq(&v, "role.no_such_knob", "x"), TRI_UNKNOWN);
	assert_int_equal(fact_eq(&v, "role.speculative_method", "none"), TRI_UNKNOWN);
	v.knobs[KNOB_SPECULATIVE_CONFIG] = "none";
	assert_int_equal(fact_eq(&v, "role.speculative_method", "none"), TRI_TRUE);
	v.knobs[KNOB_SPECULATIVE_CONFIG] = "{\"method\": \"mtp\", \"num_speculative_tokens\": 1}";
	assert_int_equal(fact_eq(&v, "role.speculative_method", "mtp"), TRI_TRUE);
	v.knobs[KNOB_SPECULATIVE_CONFIG] = "{\"num_speculative_tokens\": 1}";
	assert_int_equal(fact_eq(&v, "role.speculative_method", "mtp"), TRI_UNKNOWN);
	assert_int_equal(fact_eq(&v, "checkpoint.kv_scales", "present"), TRI_TRUE);
	ck.kv_scales = TRI_FALSE;
	assert_int_equal(fact_eq(&v, "checkpoint.kv_scales", "absent"), TRI_TRUE);
	ck.kv_scales = TRI_UNKNOWN;
	assert_int_equal(fact_eq(&v, "checkpoint.kv_scales", "absent"), TRI_UNKNOWN);
	assert_int_equal(fact_eq(&v, "checkpoint.quant_method", "none"), TRI_TRUE);
	ck.quant_method = "modelopt";
	assert_int_equal(fact_eq(&v, "checkpoint.quant_method", "modelopt"), TRI_TRUE);
	assert_int_equal(fact_eq(&v, "checkpoint.hetero_head_dim", "false"), TRI_TRUE);
	ck.hetero_head_dim = TRI_UNKNOWN;
	assert_int_equal(fact_eq(&v, "checkpoint.hetero_head_dim", "false"), TRI_UNKNOWN);
	ck.found = false;
	assert_int_equal(fact_eq(&v, "checkpoint.quant_method", "modelopt"), TRI_UNKNOWN);
	v.ckpt = NULL;
	assert_int_equal(fact_eq(&v, "checkpoint.kv_scales", "absent"), TRI_UNKNOWN);
	assert_int_equal(fact_eq(&v, "checkpoint.hetero_head_dim", "false"), TRI_UNKNOWN);
	/* fleet level: every role fact unknown; no card: no card facts */
	v.role = -1;
	assert_int_equal(fact_eq(&v, "role.name", "reranker"), TRI_UNKNOWN);
	v.card = NULL;
	f.memory_model.valid = false;
	assert_int_equal(fact_eq(&v, "card.id", "thor"), TRI_UNKNOWN);
	assert_int_equal(fact_eq(&v, "card.memory_model", "unified"), TRI_UNKNOWN);
	assert_int_equal(fact_eq(&v, "no.such.fact", "x"), TRI_UNKNOWN);
}

/* Three-valued and: false wins over unknown wherever it comes; unknown
 * over true. Kills: trait_predicate's combination (an unknown after a
 * false must not lift the result to unknown). */
static void test_predicate_and(void **state)
{
	(void)state;
	struct host_facts f = { 0 };
	struct card card = { .name = "thor" };
	struct fact_view v = { .facts = &f, .card = &card, .role = -1 };
	char *yes[] = { "thor", NULL }, *no[] = { "spark", NULL };
	struct condition t1 = { .fact = "card.id", .op = "eq", .values = yes };
	struct condition f1 = { .fact = "card.id", .op = "eq", .values = no };
	struct condition u1 = { .fact = "card.compute_cap", .op = "eq", .values = yes };
	struct condition n1 = { .fact = "card.id", .op = "ne", .values = no };
	const struct {
		struct condition c[3];
		size_t n;
		enum tri want;
	} cases[] = {
		{ { t1, n1 }, 2, TRI_TRUE },   { { f1, u1 }, 2, TRI_FALSE }, { { u1, f1 }, 2, TRI_FALSE },
		{ { t1, u1 }, 2, TRI_UNKNOWN }, { { u1, t1 }, 2, TRI_UNKNOWN }, { { t1, u1, f1 }, 3, TRI_FALSE },
		{ { { 0 } }, 0, TRI_TRUE },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct trait t = { .name = "t", .when = (struct condition *)cases[i].c, .n_when = cases[i].n };
		char *detail = NULL;
		assert_int_equal(trait_predicate(&t, &v, &detail), cases[i].want);
		if (!cases[i].n)
			assert_string_equal(detail, "no conditions (always holds)");
		free(detail);
	}
	/* applied: true, or unknown with on_unknown: apply */
	struct trait a = { .name = "a", .on_unknown = "apply" }, s = { .name = "s", .on_unknown = "skip" };
	assert_true(trait_applies(&a, TRI_TRUE));
	assert_true(trait_applies(&a, TRI_UNKNOWN));
	assert_false(trait_applies(&a, TRI_FALSE));
	assert_false(trait_applies(&s, TRI_UNKNOWN));
	assert_true(trait_applies(&s, TRI_TRUE));
}

/* /proc/meminfo under LOBES_SYSROOT: a field is the whole name before
 * ':' (MemTotal is not Mem), in kB; a field without a number or absent is
 * an error naming the file. drop_caches writes "3". Kills: memory.c's
 * field match, its kB scale and its error paths. */
static void test_meminfo_and_drop_caches(void **state)
{
	(void)state;
	char *d = tmpdir();
	_cleanup_free_ char *proc = xasprintf("%s/proc/sys/vm", d);
	_cleanup_free_ char *mk = xasprintf("mkdir -p '%s'", proc);
	assert_int_equal(system(mk), 0);
	_cleanup_free_ char *mi = xasprintf("%s/proc/meminfo", d);
	const char *text = "MemTotal:       131072 kB\nMemFree: 0 kB\nMem:5 kB\n"
			   "Bad:   none\nMemAvailable:   2048 kB";
	assert_int_equal(fs_write_atomic(mi, text, strlen(text), 0644, NULL), 0);
	setenv("LOBES_SYSROOT", d, 1);
	uint64_t b = 7;
	struct err *e = NULL;
	assert_int_equal(meminfo_field("MemTotal", &b, &e), 0);
	assert_int_equal(b, 131072ull * 1024);
	assert_int_equal(meminfo_field("MemFree", &b, &e), 0);
	assert_int_equal(b, 0);
	assert_int_equal(meminfo_field("Mem", &b, &e), 0);
	assert_int_equal(b, 5 * 1024);
	assert_int_equal(meminfo_field("MemAvailable", &b, &e), 0); /* the last line, no newline */
	assert_int_equal(b, 2048 * 1024);
	b = 7;
	assert_int_equal(meminfo_field("Bad", &b, &e), -1);
	assert_string_contains(e->msg, "has no Bad field");
	err_free(e);
	e = NULL;
	assert_int_equal(meminfo_field("Cached", &b, &e), -1);
	assert_string_contains(e->msg, "/proc/meminfo' has no Cached field");
	assert_int_equal(b, 7);
	err_free(e);
	e = NULL;
	_cleanup_free_ char *dc = xasprintf("%s/drop_caches", proc);
	assert_int_equal(drop_caches(&e), -1); /* absent */
	assert_string_contains(e->msg, "drop caches: open");
	err_free(e);
	e = NULL;
	assert_int_equal(fs_write_atomic(dc, "0\n", 2, 0644, NULL), 0);
	assert_int_equal(drop_caches(&e), 0);
	_cleanup_free_ char *got = fs_read(dc, 64, NULL, NULL);
	assert_string_equal(got, "3\n");
	/* a drop_caches that takes no write (a full device): the error */
	assert_int_equal(unlink(dc), 0);
	assert_int_equal(symlink("/dev/full", dc), 0);
	assert_int_equal(drop_caches(&e), -1);
	assert_string_contains(e->msg, "drop caches: write");
	err_free(e);
	e = NULL;
	/* no /proc/meminfo at all: -1 and the reason, *bytes untouched
	 * (kills memory.c's "return -1" on a failed read becoming 0) */
	assert_int_equal(unlink(mi), 0);
	b = 7;
	assert_int_equal(meminfo_field("MemTotal", &b, &e), -1);
	assert_non_null(e);
	_cleanup_free_ char *want = xasprintf("open '%s': No such file or directory", mi);
	assert_string_equal(e->msg, want);
	assert_int_equal(b, 7);
	err_free(e);
	unsetenv("LOBES_SYSROOT");
	rmtree(d);
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
	/* with stdin closed the directory may open as fd 0, still a success
	 * (kills fs.c "if (dfd < 0)" -> "if (dfd <= 0)") */
	int keep = dup(0);
	assert_true(keep > 0);
	close(0);
	rc = fs_write_atomic(p, "y\n", 2, 0600, NULL);
	assert_int_equal(dup2(keep, 0), 0);
	close(keep);
	assert_int_equal(rc, 0);
	_cleanup_free_ char *got = fs_read(p, 16, NULL, NULL);
	assert_string_equal(got, "y\n");
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

/* The rerank probe's shape checks at their edges: 1 to 4 results, each
 * index in 0..3 once (4 is one past), the reason naming the range.
 * Kills: probe_judge.c judge_rerank's "n > N_DOCS", "k >= N_DOCS", "k < 0"
 * and the range in its reason. */
static void test_rerank_shape_edges(void **state)
{
	(void)state;
	static const struct {
		const char *body, *reason;
	} cases[] = {
		{ "{\"results\":[]}", "malformed body: expected 'results' with 1 to 4 entries" },
		{ "{\"results\":[{\"index\":1,\"relevance_score\":0.9},{\"index\":0,\"relevance_score\":0.5},"
		  "{\"index\":2,\"relevance_score\":0.4},{\"index\":3,\"relevance_score\":0.3},"
		  "{\"index\":3,\"relevance_score\":0.2}]}",
		  "malformed body: expected 'results' with 1 to 4 entries" },
		{ "{\"results\":[{\"index\":1,\"relevance_score\":0.9},{\"index\":4,\"relevance_score\":0.5}]}",
		  "malformed body: results[1] needs a new 'index' in 0..3 and a numeric 'relevance_score'" },
		{ "{\"results\":[{\"index\":-1,\"relevance_score\":0.9}]}",
		  "malformed body: results[0] needs a new 'index' in 0..3 and a numeric 'relevance_score'" },
		{ "{\"results\":[{\"index\":1,\"relevance_score\":\"high\"}]}",
		  "malformed body: results[0] needs a new 'index' in 0..3 and a numeric 'relevance_score'" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct probe p;
		probe_init(&p, ROLE_RERANKER, 8000, NULL);
		probe_judge(&p, 200, cases[i].body, strlen(cases[i].body));
		assert_int_equal(p.failure, PF_MALFORMED);
		assert_string_equal(p.reason, cases[i].reason);
		probe_free(&p);
	}
	/* index 3, the last document, is in range */
	struct probe p;
	const char *ok = "{\"results\":[{\"index\":1,\"relevance_score\":0.9},{\"index\":3,\"relevance_score\":0.1}]}";
	probe_init(&p, ROLE_RERANKER, 8000, NULL);
	probe_judge(&p, 200, ok, strlen(ok));
	assert_int_equal(p.status, PROBE_PASS);
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

/* The engine's environment: HF_HOME, HF_TOKEN (a secret, never a value)
 * and the CUDA-graph memory estimate off only where the image's vLLM
 * registers that variable (both recorded images do; a newer one may not).
 * Kills: args.c role_env without "&& vllm_reg_has_env(...)". */
static void test_role_env_follows_registry(void **state)
{
	(void)state;
	struct fleet_template t = { .hf_container = "/hf" };
	struct role_plan rp = { 0 };
	struct role_envvar out[ROLE_ENV_MAX];
	char *without[] = { "VLLM_USE_V1", NULL };
	char *with[] = { "VLLM_USE_V1", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", NULL };
	struct vllm_reg reg = { .envs = without };
	for (int k = 0; k < 3; k++) {
		rp.reg = k == 0 ? NULL : &reg;
		reg.envs = k == 2 ? with : without;
		size_t n = role_env(&t, &rp, out);
		assert_int_equal(n, k == 2 ? 3 : 2);
		assert_string_equal(out[0].name, "HF_HOME");
		assert_string_equal(out[0].value, "/hf");
		assert_string_equal(out[1].name, "HF_TOKEN");
		assert_null(out[1].value);
		assert_true(out[1].secret);
		if (k == 2) {
			assert_string_equal(out[2].name, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS");
			assert_string_equal(out[2].value, "0");
		}
	}
}

/* deploy_read: an absent file is NULL without an error; one that cannot
 * be read for another reason (a symlink loop) is an error, never "absent".
 * Kills: commit.c deploy_read without "&& errno == ENOENT". */
static void test_deploy_read_absent_or_error(void **state)
{
	(void)state;
	char *d = tmpdir();
	struct err *e = NULL;
	size_t len = 0;
	assert_null(deploy_read(d, ".env", &len, &e));
	assert_null(e);
	_cleanup_free_ char *env = xasprintf("%s/.env", d);
	assert_int_equal(fs_write_atomic(env, "A=1\n", 4, 0600, NULL), 0);
	_cleanup_free_ char *got = deploy_read(d, ".env", &len, &e);
	assert_string_equal(got, "A=1\n");
	_cleanup_free_ char *loop = xasprintf("%s/docker-compose.yml", d);
	assert_int_equal(symlink("docker-compose.yml", loop), 0);
	assert_null(deploy_read(d, "docker-compose.yml", &len, &e));
	assert_non_null(e);
	err_free(e);
	rmtree(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_score_served_by_embedder_and_reranker),
		cmocka_unit_test(test_endpoint_table),
		cmocka_unit_test(test_key_mode_group_bits_refused),
		cmocka_unit_test(test_gateway_setting_bounds),
		cmocka_unit_test(test_predicate_ge_lt),
		cmocka_unit_test(test_predicate_facts),
		cmocka_unit_test(test_predicate_and),
		cmocka_unit_test(test_meminfo_and_drop_caches),
		cmocka_unit_test(test_atomic_write_mode_under_umask),
		cmocka_unit_test(test_embed_tie_fails),
		cmocka_unit_test(test_rerank_shape_edges),
		cmocka_unit_test(test_single_quoted_item_doubles),
		cmocka_unit_test(test_role_env_follows_registry),
		cmocka_unit_test(test_deploy_read_absent_or_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
