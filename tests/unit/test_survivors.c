/*
 * test_survivors.c — the four mutants of the seed 2003 run (make mutate;
 * docs/testing.md) that every unit and case test let live: a profile
 * forced on its own card, a trait that sets knobs and also carries a
 * bring-up and a dead env, a long speculative method in a predicate, and a
 * freed role_args. Each case fails on the mutant it names
 * (tools/mutants/regress.txt keeps them).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/knowledge/knowledge.h"
#include "../../src/lib/plan/plan.h"
#include "../../src/lib/render/render_int.h"
#include "../../src/lib/util/fs.h"

static void write_file(const char *dir, const char *rel, const char *text)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, rel);
	_cleanup_free_ char *d = xstrdup(p);
	*strrchr(d, '/') = '\0';
	assert_int_equal(fs_mkdirs(d, 0755, NULL), 0);
	assert_int_equal(fs_write_atomic(p, text, strlen(text), 0644, NULL), 0);
}

/* The plan of profile (NULL: the card's own) on a box with the nominal
 * facts of card; the checkpoints are not read. */
static void resolve_on(const struct knowledge *k, const char *card, const char *profile,
		       struct plan *p)
{
	const struct card *c = knowledge_card(k, card);
	assert_non_null(c);
	struct host_facts f;
	host_facts_nominal(&f, c);
	struct plan_input in = { .k = k, .facts = &f, .profile = profile,
				 .read_checkpoint = checkpoint_nominal };
	struct err *e = NULL;
	int rc = plan_resolve(p, &in, &e);
	host_facts_free(&f);
	if (rc < 0)
		fail_msg("plan_resolve(%s on %s): %s", profile ? profile : "(card's)", card, e->msg);
}

static size_t warnings_with(const struct plan *p, const char *needle)
{
	size_t n = 0;
	for (char **w = p->warnings; w && *w; w++)
		if (strstr(*w, needle))
			n++;
	return n;
}

/* resolve.c select_profile: --profile naming the very card that was
 * detected is no mismatch: no "not for the detected card" warning, and the
 * plan is not unvalidated; a profile of another card forced on it still
 * warns, naming both. Kills `strcmp(pr->card, p->card->name) != 0` → `!= 1`
 * in the warning's condition (equal names then warned too). */
static void test_profile_forced_on_its_own_card(void **state)
{
	(void)state;
	struct knowledge k = { 0 };
	struct err *e = NULL;
	if (knowledge_load(&k, NULL, &e) < 0)
		fail_msg("knowledge_load: %s", e->msg);
	static const char *const cards[] = { "thor", "spark" };
	for (size_t i = 0; i < ARRAY_SIZE(cards); i++) {
		struct plan p;
		resolve_on(&k, cards[i], cards[i], &p);
		assert_true(p.forced);
		assert_non_null(p.card);
		assert_string_equal(p.card->name, cards[i]);
		assert_int_equal(warnings_with(&p, "not for the detected card"), 0);
		assert_false(p.unvalidated);
		plan_free(&p);
	}
	struct plan p;
	resolve_on(&k, "thor", "spark", &p);
	assert_int_equal(warnings_with(&p, "not for the detected card"), 1);
	assert_int_equal(warnings_with(&p, "profile 'spark' is validated for card 'spark', not for "
					   "the detected card 'thor'; proceeding as asked"),
			 1);
	assert_true(p.unvalidated);
	plan_free(&p);
	knowledge_free(&k);
}

/* knowledge/trait.c: a trait sets role knobs (set:) or fleet knobs
 * (bringup:, dead_env:), never both: the resolver reads set: per role and
 * the fleet knobs once, skipping a trait with set: there, so a trait with
 * both would have its fleet half ignored without a word. The loader refuses
 * it at the fleet key's line. (With that refusal, the resolver's skip of a
 * knob trait in its fleet loop, resolve.c's `continue` → `if (0)`, changes
 * nothing: tools/mutants/equivalent.txt.) */
static void load_trait_err(const char *body, const char *want)
{
	char dir[] = "/tmp/lobes-survivors.XXXXXX";
	assert_non_null(mkdtemp(dir));
	write_file(dir, "traits/mixed.yaml", body);
	struct knowledge k = { 0 };
	struct err *e = NULL;
	int rc = knowledge_load(&k, dir, &e);
	if (want) {
		assert_int_equal(rc, -1);
		assert_non_null(e);
		assert_string_contains(e->msg, want);
		err_free(e);
	} else {
		if (rc < 0)
			fail_msg("knowledge_load: %s", e->msg);
		assert_non_null(knowledge_trait(&k, "mixed-trait"));
	}
	knowledge_free(&k);
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
}

#define MIXED_HEAD                                                                       \
	"kind: trait\n"                                                                    \
	"name: mixed-trait\n"                                                              \
	"cause: a role trait that also names fleet knobs\n"                                \
	"roles: [embedder]\n"                                                              \
	"when: []\n"                                                                       \
	"on_unknown: apply\n"
#define MIXED_TAIL "evidence:\n  - kind: declared\n    observation: fixture\n"

static void test_trait_is_role_or_fleet(void **state)
{
	(void)state;
	/* both: refused at the fleet key (line 8 of the file) */
	load_trait_err(MIXED_HEAD "set: {max_num_seqs: 3}\n"
				  "bringup: one-at-a-time\n" MIXED_TAIL,
		       "mixed.yaml:8:");
	load_trait_err(MIXED_HEAD "set: {max_num_seqs: 3}\n"
				  "bringup: one-at-a-time\n" MIXED_TAIL,
		       "sets role knobs (set:) and fleet knobs (bringup:/dead_env:)");
	load_trait_err(MIXED_HEAD "set: {max_num_seqs: 3}\n"
				  "dead_env: [VLLM_SURVIVOR_DEAD]\n" MIXED_TAIL,
		       "mixed.yaml:8:");
	/* either alone loads */
	load_trait_err(MIXED_HEAD "set: {max_num_seqs: 3}\n" MIXED_TAIL, NULL);
	load_trait_err(MIXED_HEAD "bringup: one-at-a-time\n"
				  "dead_env: [VLLM_SURVIVOR_DEAD]\n" MIXED_TAIL,
		       NULL);
}

/* predicate.c view_get: role.speculative_method is the whole "method" of
 * speculative_config, however long. It was copied into a 32-byte buffer,
 * so a method of 32 characters or more was cut to its first 31: the full
 * method then failed `eq` and its 31-character prefix passed. Kills the
 * copy cut short (`snprintf(numbuf, 32, ...)`, its `33` mutant, which also
 * wrote past the buffer; now `xstrdup(m)` → `strndup(m, 31)`). */
static enum tri method_eq(const char *method, const char *value)
{
	struct host_facts f = { 0 };
	struct fact_view v = { .facts = &f, .role = ROLE_CORTEX };
	_cleanup_free_ char *sc = xasprintf("{\"method\": \"%s\", \"num_speculative_tokens\": 1}",
					    method);
	v.knobs[KNOB_SPECULATIVE_CONFIG] = sc;
	char *vals[] = { (char *)value, NULL };
	struct condition c = { .fact = "role.speculative_method", .op = "eq", .values = vals };
	struct trait t = { .name = "t", .when = &c, .n_when = 1 };
	char *detail = NULL;
	enum tri r = trait_predicate(&t, &v, &detail);
	/* the detail shows the method read, whole */
	_cleanup_free_ char *shown = xasprintf("role.speculative_method = %s (eq", method);
	assert_string_contains(detail, shown);
	free(detail);
	return r;
}

static void test_long_speculative_method(void **state)
{
	(void)state;
	/* 31, 32, 33 and 48 characters: the old buffer held 31 */
	static const size_t lens[] = { 31, 32, 33, 48 };
	const char *alpha = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		_cleanup_free_ char *m = xasprintf("%.*s", (int)lens[i], alpha);
		assert_int_equal(strlen(m), lens[i]);
		assert_int_equal(method_eq(m, m), TRI_TRUE);
		_cleanup_free_ char *shorter = xasprintf("%.*s", (int)lens[i] - 1, alpha);
		assert_int_equal(method_eq(m, shorter), TRI_FALSE);
		_cleanup_free_ char *p31 = xasprintf("%.31s", alpha);
		assert_int_equal(method_eq(m, p31), lens[i] == 31 ? TRI_TRUE : TRI_FALSE);
	}
}

/* render/args.c role_args_free leaves the struct empty (no vector, no
 * count), so a second free, or a role_args() into it after, is safe.
 * Kills `memset(a, 0, ...)` → `memset(a, 1, ...)`. */
static void test_role_args_free_twice(void **state)
{
	(void)state;
	struct role_args a = { 0 };
	a.n = 2;
	a.v = xcalloc(a.n, sizeof(*a.v));
	a.v[0] = (struct role_arg){ "--x=", xstrdup("k"), xstrdup("v") };
	a.v[1] = (struct role_arg){ "", NULL, xstrdup("w") };
	role_args_free(&a);
	assert_null(a.v);
	assert_int_equal(a.n, 0);
	role_args_free(&a); /* nothing left to free: no double free */
	assert_null(a.v);
	assert_int_equal(a.n, 0);
	/* an empty one is freed the same way */
	struct role_args b = { 0 };
	role_args_free(&b);
	assert_null(b.v);
	assert_int_equal(b.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_forced_on_its_own_card),
		cmocka_unit_test(test_trait_is_role_or_fleet),
		cmocka_unit_test(test_long_speculative_method),
		cmocka_unit_test(test_role_args_free_twice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
