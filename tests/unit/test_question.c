/* test_question.c — recorded questions: the shipped ones load, bad files are
 * rejected with their position, and routing is three-valued (an unknown
 * observation never takes a route). */
#include "testutil.h"

#include "../../src/lib/verify/verify.h"

static void test_shipped_load(void **state)
{
	(void)state;
	struct question_set s;
	struct err *e = NULL;
	assert_int_equal(questions_load(&s, NULL, &e), 0);
	const struct question *q = question_find(&s, "fp8-kv-attribution");
	assert_non_null(q);
	assert_string_equal(q->role, "cortex");
	assert_int_equal(q->n_routes, 2);
	assert_non_null(question_find(&s, "attention-backend-env"));
	questions_free(&s);
}

static void bad(const char *yaml, const char *msg)
{
	struct question_set s = { 0 };
	struct err *e = NULL;
	assert_int_equal(question_add_yaml(&s, "q.yaml", yaml, strlen(yaml), &e), -1);
	assert_non_null(e);
	assert_string_equal(e->msg, msg);
	assert_int_equal(e->code, EXIT_CONFIG);
	err_free(e);
	questions_free(&s);
}

#define HEAD "kind: question\nid: x\ntitle: t\nrole: cortex\nundecided: u\n"

static void test_bad_files(void **state)
{
	(void)state;
	bad(HEAD "colour: red\nroutes: []\n",
	    "q.yaml:6:1: unknown key 'colour' in a question; expected one of the documented keys");
	bad("kind: card\nid: x\n", "q.yaml:1:7: kind 'card'; expected question");
	bad(HEAD "routes: []\n", "q.yaml:6:1: 'routes' is missing or empty; expected a list of routes");
	bad(HEAD "routes:\n  - id: r\n    answer: a\n    action: b\n",
	    "q.yaml:7:5: route 'r' has no conditions; expected a 'when' list");
	bad(HEAD "routes:\n  - id: r\n    answer: a\n    action: b\n    when:\n      - {obs: x, eq: 1, ne: 2}\n",
	    "q.yaml:11:10: condition on 'x' has several operators; expected exactly one of eq, ne, in, "
	    "lt, le, gt, ge");
	bad(HEAD "routes:\n  - id: r\n    answer: a\n    action: b\n    when:\n      - {obs: x, lt: small}\n",
	    "q.yaml:11:22: 'lt' of 'x' is not a number; expected a number");
	bad(HEAD "experiment: reboot-everything\nroutes: []\n",
	    "q.yaml:6:13: experiment 'reboot-everything' is not known; expected kv-cache-dtype or "
	    "speculative-config");
	bad(HEAD "routes:\n  - id: r\n    answer: a\n    action: b\n    when:\n      - {obs: x, in: y}\n",
	    "q.yaml:11:22: 'in' of 'x' is not a list; expected [VALUE, ...]");
	bad(HEAD "probe: maybe\nroutes: []\n",
	    "q.yaml:6:8: probe 'maybe' is not a boolean; expected true or false");
	bad("kind: question\nid: x\ntitle: t\nundecided: u\n",
	    "q.yaml:1:1: missing or non-scalar 'role' in a question; expected a string");
	/* evidence of the thresholds: a known kind and an observation */
	bad(HEAD "evidence:\n  - {kind: guessed, observation: o}\nroutes: []\n",
	    "q.yaml:7:12: evidence kind 'guessed' is not known; expected measured or declared");
	bad(HEAD "evidence:\n  - {kind: declared}\nroutes: []\n",
	    "q.yaml:7:6: missing or non-scalar 'observation' in an evidence entry; expected a string");
	bad(HEAD "evidence: declared\nroutes: []\n",
	    "q.yaml:6:11: 'evidence' is not a list of entries; expected [{kind: measured|declared, "
	    "observation: ...}]");
	bad(HEAD "evidence:\n  - {kind: declared, observation: o, colour: red}\nroutes: []\n",
	    "q.yaml:7:38: unknown key 'colour' in an evidence entry; expected one of the documented keys");
}

/* The mtp-acceptance thresholds are judgement: the question says declared,
 * and the decision of a record carries it (taken route or undecided); a
 * question without evidence says nothing, one with only measured entries
 * says measured. */
static void test_thresholds_declared(void **state)
{
	(void)state;
	struct question_set s;
	assert_int_equal(questions_load(&s, NULL, NULL), 0);
	const struct question *q = question_find(&s, "mtp-acceptance");
	assert_non_null(q);
	assert_string_equal(question_thresholds(q), "declared");
	assert_int_equal(q->n_evidence, 1);
	assert_string_equal(q->evidence[0].kind, "declared");
	struct obs_set o = { 0 };
	obs_put(&o, "eval.agreement", "1.0");
	obs_put(&o, "mtp.tpot_speedup", "1.5");
	obs_put(&o, "mtp.acceptance", "0.6");
	json_auto_t *rec = json_object();
	assert_non_null(verify_decide(q, &o, rec));
	json_t *d = json_object_get(rec, "decision");
	assert_string_equal(json_string_value(json_object_get(d, "route")), "helps");
	assert_string_equal(json_string_value(json_object_get(d, "thresholds")), "declared");
	obs_free(&o);
	struct obs_set none = { 0 };
	json_auto_t *rec2 = json_object();
	assert_null(verify_decide(q, &none, rec2));
	assert_string_equal(json_string_value(json_object_get(json_object_get(rec2, "decision"), "thresholds")),
			    "declared");
	const struct question *plain = question_find(&s, "fp8-kv-attribution");
	assert_null(question_thresholds(plain));
	json_auto_t *rec3 = json_object();
	verify_decide(plain, &none, rec3);
	assert_true(json_is_null(json_object_get(json_object_get(rec3, "decision"), "thresholds")));
	json_auto_t *ev = question_evidence_json(q);
	assert_int_equal(json_array_size(ev), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "kind")), "declared");
	questions_free(&s);
	struct question_set m = { 0 };
	const char *y = HEAD "evidence:\n  - {kind: measured, observation: o, date: 2026-12-01}\n"
			"routes:\n  - id: r\n    answer: a\n    action: b\n    when:\n      - {obs: x, eq: y}\n";
	assert_int_equal(question_add_yaml(&m, "q.yaml", y, strlen(y), NULL), 0);
	assert_string_equal(question_thresholds(&m.q[0]), "measured");
	assert_string_equal(m.q[0].evidence[0].date, "2026-12-01");
	questions_free(&m);
}

static void test_routing_three_valued(void **state)
{
	(void)state;
	struct question_set s;
	struct err *e = NULL;
	assert_int_equal(questions_load(&s, NULL, &e), 0);
	const struct question *q = question_find(&s, "fp8-kv-attribution");
	struct obs_set o = { 0 };
	char *d = NULL;
	/* boots: every condition of fp8-boots-here holds */
	obs_put(&o, "args.kv_cache_dtype", "fp8");
	obs_put(&o, "checkpoint.kv_scales", "absent");
	obs_put(&o, "log.fp8-k-scale-assert", "absent");
	obs_put(&o, "log.startup-complete", "present");
	obs_put(&o, "container.restarts", "0");
	const struct q_route *r = question_route(q, &o, &d);
	assert_non_null(r);
	assert_string_equal(r->id, "fp8-boots-here");
	free(d);
	/* checkpoint facts unknown: no route may be taken on a guess */
	obs_put(&o, "checkpoint.kv_scales", NULL);
	r = question_route(q, &o, &d);
	assert_null(r);
	assert_string_contains(d, "checkpoint.kv_scales = unknown (eq \"absent\"): unknown");
	free(d);
	/* the assert in the log: the crash route */
	obs_put(&o, "checkpoint.kv_scales", "absent");
	obs_put(&o, "log.fp8-k-scale-assert", "present");
	r = question_route(q, &o, &d);
	assert_string_equal(r->id, "fp8-crashes-here");
	free(d);
	/* not running fp8 at all: undecided */
	obs_put(&o, "args.kv_cache_dtype", "auto");
	r = question_route(q, &o, &d);
	assert_null(r);
	free(d);
	obs_free(&o);
	questions_free(&s);
}

/* fp8-kv-accuracy: numeric thresholds, any one loss figure, the band
 * between undecided, a figure that is not a number unknown. */
static void test_routing_thresholds(void **state)
{
	(void)state;
	struct question_set s;
	struct err *e = NULL;
	assert_int_equal(questions_load(&s, NULL, &e), 0);
	const struct question *q = question_find(&s, "fp8-kv-accuracy");
	assert_non_null(q);
	assert_string_equal(q->experiment, "kv-cache-dtype");
	struct obs_set o = { 0 };
	char *d = NULL;
	obs_put(&o, "eval.kld_mean", "0");
	obs_put(&o, "eval.same_top", "1");
	obs_put(&o, "eval.accuracy_delta", "0");
	obs_put(&o, "eval.agreement", "1");
	const struct q_route *r = question_route(q, &o, &d);
	assert_string_equal(r->id, "no-measurable-loss");
	free(d);
	obs_put(&o, "eval.kld_mean", "0.005"); /* le: the bound itself still holds */
	r = question_route(q, &o, &d);
	assert_string_equal(r->id, "no-measurable-loss");
	free(d);
	obs_put(&o, "eval.kld_mean", "0.01"); /* between: undecided */
	r = question_route(q, &o, &d);
	assert_null(r);
	free(d);
	obs_put(&o, "eval.kld_mean", "0.0201");
	r = question_route(q, &o, &d);
	assert_string_equal(r->id, "loss-distribution");
	free(d);
	obs_put(&o, "eval.kld_mean", "0.001");
	obs_put(&o, "eval.accuracy_delta", "-0.125");
	r = question_route(q, &o, &d);
	assert_string_equal(r->id, "loss-answers");
	free(d);
	obs_put(&o, "eval.accuracy_delta", "0");
	obs_put(&o, "eval.same_top", "0.9");
	r = question_route(q, &o, &d);
	assert_string_equal(r->id, "loss-top-token");
	free(d);
	obs_put(&o, "eval.same_top", "nan-ish");
	r = question_route(q, &o, &d);
	assert_null(r);
	assert_string_contains(d, "eval.same_top = \"nan-ish\" (ge \"0.97\"): unknown");
	free(d);
	obs_free(&o);
	questions_free(&s);
}

/* The route mtp-acceptance takes for these figures (NULL: undecided). */
static const char *mtp_route(const struct question *q, const char *agree, const char *speedup,
			     const char *acc)
{
	struct obs_set o = { 0 };
	char *d = NULL;
	obs_put(&o, "eval.agreement", agree);
	obs_put(&o, "mtp.tpot_speedup", speedup);
	obs_put(&o, "mtp.acceptance", acc);
	obs_put(&o, "mtp.throughput_ratio", speedup);
	obs_put(&o, "eval.accuracy_delta", "0");
	const struct q_route *r = question_route(q, &o, &d);
	free(d);
	obs_free(&o);
	return r ? r->id : NULL;
}

/* mtp-acceptance: each route, each threshold on both sides, a changed
 * answer before any speed, an unknown figure undecided. */
static void test_routing_mtp(void **state)
{
	(void)state;
	struct question_set s;
	struct err *e = NULL;
	assert_int_equal(questions_load(&s, NULL, &e), 0);
	const struct question *q = question_find(&s, "mtp-acceptance");
	assert_non_null(q);
	assert_string_equal(q->experiment, "speculative-config");
	assert_string_equal(q->role, "cortex");
	/* helps: faster by 1.15x or more, answers the same, drafts accepted */
	assert_string_equal(mtp_route(q, "1", "2.4", "0.7"), "helps");
	assert_string_equal(mtp_route(q, "1", "1.15", "0.7"), "helps");      /* ge: the bound holds */
	assert_string_equal(mtp_route(q, "0.95", "2.4", "0.7"), "helps");    /* ge: the bound holds */
	assert_null(mtp_route(q, "1", "1.1499", "0.7"));                     /* just below: undecided */
	assert_null(mtp_route(q, "1", "2.4", "0"));                          /* no draft accepted */
	assert_null(mtp_route(q, "1", "2.4", NULL));                         /* no counters */
	/* answers changed: below 0.95, whatever the speed */
	assert_string_equal(mtp_route(q, "0.9499", "2.4", "0.7"), "answers-changed");
	assert_string_equal(mtp_route(q, "0.875", "1", "0.7"), "answers-changed");
	assert_string_equal(mtp_route(q, "0", NULL, NULL), "answers-changed");
	/* no gain: within 5%, or slower */
	assert_string_equal(mtp_route(q, "1", "1.05", "0.7"), "no-gain");    /* le: the bound holds */
	assert_string_equal(mtp_route(q, "1", "0.8", "0.7"), "no-gain");
	assert_string_equal(mtp_route(q, "1", "1", NULL), "no-gain");        /* acceptance not needed */
	assert_null(mtp_route(q, "1", "1.0501", "0.7"));                     /* just above: undecided */
	/* unknown */
	assert_null(mtp_route(q, NULL, "2.4", "0.7"));
	assert_null(mtp_route(q, "1", NULL, "0.7"));
	questions_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_load),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_thresholds_declared),
		cmocka_unit_test(test_routing_three_valued),
		cmocka_unit_test(test_routing_thresholds),
		cmocka_unit_test(test_routing_mtp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
