/*
 * test_measure.c — the pure parts of measure/: percentiles by numpy's
 * linear rule, the summaries in ms, the prompt word lists (reproducible,
 * N words), the shapes.
 */
#include <math.h>

#include "testutil.h"
#include "../../src/lib/measure/measure.h"
#include "../../src/lib/measure/measure_int.h"
#include "../../src/lib/runtime/runtime.h"
#include "../../src/lib/util/fs.h"

static void test_percentile(void **state)
{
	(void)state;
	double v[] = { 1, 2, 3, 4 };
	/* numpy.percentile([1,2,3,4], q) */
	assert_float_equal(measure_percentile(v, 4, 50), 2.5, 1e-12);
	assert_float_equal(measure_percentile(v, 4, 90), 3.7, 1e-12);
	assert_float_equal(measure_percentile(v, 4, 99), 3.97, 1e-12);
	assert_float_equal(measure_percentile(v, 4, 0), 1, 1e-12);
	assert_float_equal(measure_percentile(v, 4, 100), 4, 1e-12);
	assert_float_equal(measure_percentile(v, 1, 99), 1, 1e-12);
	assert_true(isnan(measure_percentile(v, 0, 50)));
}

static void test_summary(void **state)
{
	(void)state;
	double v[] = { 0.004, 0.001, 0.003, 0.002 }; /* seconds, unsorted */
	json_t *s = measure_summary_ms(v, 4);
	assert_float_equal(json_number_value(json_object_get(s, "mean")), 2.5, 1e-9);
	assert_float_equal(json_number_value(json_object_get(s, "median")), 2.5, 1e-9);
	assert_float_equal(json_number_value(json_object_get(s, "p90")), 3.7, 1e-9);
	assert_float_equal(json_number_value(json_object_get(s, "p99")), 3.97, 1e-9);
	json_decref(s);
	s = measure_summary_ms(v, 0);
	assert_true(json_is_null(json_object_get(s, "median")));
	json_decref(s);
}

static void test_prompt(void **state)
{
	(void)state;
	struct err *e = NULL;
	char *a = bench_prompt(7, 3, 50, &e), *b = bench_prompt(7, 3, 50, &e);
	char *c = bench_prompt(7, 4, 50, &e);
	assert_non_null(a);
	assert_string_equal(a, b);        /* reproducible */
	assert_string_not_equal(a, c);    /* each request its own prompt */
	int words = 1;
	for (const char *p = a; *p; p++)
		words += *p == ' ';
	assert_int_equal(words, 50);
	free(a);
	free(b);
	free(c);
	size_t n;
	assert_non_null(measure_words(&n, &e));
	assert_true(n >= 256);
}

static void test_shape(void **state)
{
	(void)state;
	int in, out;
	assert_int_equal(bench_shape("prompt-heavy", &in, &out), 0);
	assert_true(in > out);
	assert_int_equal(bench_shape("decode-heavy", &in, &out), 0);
	assert_true(in < out);
	assert_int_equal(bench_shape("wide", &in, &out), -1);
}

static void test_figures(void **state)
{
	(void)state;
	struct err *e = NULL;
	json_t *ids = json_pack("[i, i, i]", 1, 5, 9);
	json_t *a = json_loads("[null, {\"5\": {\"logprob\": -0.5, \"rank\": 1}, \"7\": {\"logprob\": -1.5, \"rank\": 2}},"
			       " {\"9\": {\"logprob\": -2.0, \"rank\": 3}, \"4\": {\"logprob\": -0.1, \"rank\": 1}}]", 0, NULL);
	json_t *b = json_loads("[null, {\"5\": {\"logprob\": -0.6, \"rank\": 2}, \"7\": {\"logprob\": -0.55, \"rank\": 1}},"
			       " {\"9\": {\"logprob\": -2.0, \"rank\": 3}, \"4\": {\"logprob\": -0.1, \"rank\": 1}}]", 0, NULL);
	json_t *f = eval_logprob_figures(a, a, ids, &e);
	assert_non_null(f);
	assert_true(json_number_value(json_object_get(f, "kld_max")) == 0);
	assert_true(json_number_value(json_object_get(f, "same_top")) == 1);
	json_decref(f);
	f = eval_logprob_figures(a, b, ids, &e);
	assert_non_null(f);
	/* position 1 by hand: tokens 5 and 7 in both, the rest one bucket */
	double pa5 = exp(-0.5), pa7 = exp(-1.5), pb5 = exp(-0.6), pb7 = exp(-0.55);
	double ra = 1 - pa5 - pa7, rb = 1 - pb5 - pb7;
	double k1 = pa5 * 0.1 + pa7 * (-1.5 + 0.55) + ra * log(ra / rb);
	assert_float_equal(json_number_value(json_object_get(f, "kld_max")), k1, 1e-12);
	assert_float_equal(json_number_value(json_object_get(f, "kld_mean")), k1 / 2, 1e-12);
	assert_int_equal(json_integer_value(json_object_get(f, "positions")), 2);
	assert_float_equal(json_number_value(json_object_get(f, "same_top")), 0.5, 1e-12); /* 5 vs 7 on top */
	assert_float_equal(json_number_value(json_object_get(f, "dlogp_max")), 0.1, 1e-12);
	assert_float_equal(json_number_value(json_object_get(f, "dlogp_mean")), 0.05, 1e-12);
	assert_float_equal(json_number_value(json_object_get(f, "ppl_a")), exp((0.5 + 2.0) / 2), 1e-12);
	assert_float_equal(json_number_value(json_object_get(f, "ppl_ratio")), exp(0.1 / 2), 1e-12);
	json_decref(f);
	/* a side that lacks the prompt's token, and arrays that do not line up */
	json_t *short_ids = json_pack("[i, i]", 1, 5);
	assert_null(eval_logprob_figures(a, b, short_ids, &e));
	assert_int_equal(e->code, EXIT_RUNTIME);
	err_free(e);
	e = NULL;
	json_t *other = json_pack("[i, i, i]", 1, 6, 9);
	assert_null(eval_logprob_figures(a, b, other, &e));
	assert_string_contains(e->msg, "prompt token 6");
	err_free(e);
	json_decref(other);
	json_decref(short_ids);
	json_decref(ids);
	json_decref(a);
	json_decref(b);
}

/* measure_spec_parse with names n, its error freed; -1 when it failed (and
 * said why). */
static int spec_parse_n(const struct engine_metric_names *n, const char *text, struct spec_counters *c)
{
	struct err *e = NULL;
	int rc = measure_spec_parse("m", text, n, c, &e);
	assert_true(rc < 0 ? e != NULL : e == NULL);
	err_free(e);
	return rc;
}

/* The names measure reads come from the image's version: at every pinned
 * commit the recorded metrics.txt gives vLLM's three spec-decode counters
 * (their exposed "_total" samples). */
static void test_spec_names(void **state)
{
	(void)state;
	const char *commits[] = { "93d8f834d", "5a4c8d992" };
	for (size_t i = 0; i < 2; i++) {
		struct engine_metric_names n;
		assert_int_equal(engine_metric_names_load(&n, commits[i], NULL), 0);
		assert_string_equal(n.sample[EM_SPEC_DRAFTS], "vllm:spec_decode_num_drafts_total");
		assert_string_equal(n.sample[EM_SPEC_DRAFT_TOKENS], "vllm:spec_decode_num_draft_tokens_total");
		assert_string_equal(n.sample[EM_SPEC_ACCEPTED], "vllm:spec_decode_num_accepted_tokens_total");
		engine_metric_names_free(&n);
	}
}

/* measure reads the counters by the names of the image's version, not a
 * table of its own: with a version whose accepted-tokens family is named
 * otherwise, that name is read and the old one ignored; with a version
 * that records no spec-decode counters, none is read. */
static void test_spec_names_of_version(void **state)
{
	(void)state;
	struct engine_metric_names later = { 0 }, none = { 0 };
	later.sample[EM_SPEC_DRAFTS] = "vllm:spec_decode_num_drafts_total";
	later.sample[EM_SPEC_DRAFT_TOKENS] = "vllm:spec_decode_num_draft_tokens_total";
	later.sample[EM_SPEC_ACCEPTED] = "vllm:spec_decode_accepted_total";
	const char *text = "vllm:spec_decode_num_draft_tokens_total 10\n"
			   "vllm:spec_decode_num_accepted_tokens_total 99\n"
			   "vllm:spec_decode_accepted_total 7\n";
	struct spec_counters c;
	assert_int_equal(spec_parse_n(&later, text, &c), 0);
	assert_true(c.present && c.draft_tokens == 10 && c.accepted == 7);
	assert_int_equal(spec_parse_n(&none, text, &c), 0);
	assert_false(c.present);
	/* the old name alone is not this version's accepted counter */
	assert_int_equal(spec_parse_n(&later, "vllm:spec_decode_num_draft_tokens_total 10\n"
					      "vllm:spec_decode_num_accepted_tokens_total 9\n", &c), -1);
}

/* vLLM's spec-decode counters from Prometheus text: summed over label sets,
 * a '}' or space inside a quoted label value, comments skipped, a metric
 * whose name only starts the same not taken, absence is "not present",
 * a malformed sample an error; the delta of two reads and its rates. */
static void test_spec_counters(void **state)
{
	(void)state;
	struct engine_metric_names n;
	assert_int_equal(engine_metric_names_load(&n, "5a4c8d992", NULL), 0);
	struct spec_counters c;
	const char *text =
		"# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.\n"
		"# TYPE vllm:spec_decode_num_drafts_total counter\n"
		"vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"cortex\"} 10.0\n"
		"vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"cortex\"} 20.0\n"
		"vllm:spec_decode_num_draft_tokens_total{engine=\"1\",model_name=\"a} b\"} 4\n"
		"vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"cortex\"} 13.0\n"
		"vllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"0\"} 99.0\n"
		"vllm:spec_decode_num_accepted_tokens_created{engine=\"0\"} 1.7e9\n"
		"vllm:spec_decode_num_drafts_totalx{engine=\"0\"} 5.0\n"
		"vllm:generation_tokens_total{engine=\"0\"} 40.0\n";
	assert_int_equal(spec_parse_n(&n, text, &c), 0);
	assert_true(c.present);
	assert_true(c.drafts == 10 && c.draft_tokens == 24 && c.accepted == 13);
	/* no label set, a timestamp after the value */
	assert_int_equal(spec_parse_n(&n, "vllm:spec_decode_num_draft_tokens_total 8 1700000000\n"
					  "vllm:spec_decode_num_accepted_tokens_total 6", &c), 0);
	assert_true(c.present && c.draft_tokens == 8 && c.accepted == 6 && c.drafts == 0);
	/* without speculative decoding vLLM registers none */
	assert_int_equal(spec_parse_n(&n, "vllm:generation_tokens_total{engine=\"0\"} 40.0\n", &c), 0);
	assert_false(c.present);
	assert_int_equal(spec_parse_n(&n, "", &c), 0);
	assert_false(c.present);
	/* malformed: no value, an unclosed label set, a negative count, half the pair */
	assert_int_equal(spec_parse_n(&n, "vllm:spec_decode_num_draft_tokens_total{a=\"1\"}\n", &c), -1);
	assert_int_equal(spec_parse_n(&n, "vllm:spec_decode_num_draft_tokens_total{a=\"}\" 3\n", &c), -1);
	assert_int_equal(spec_parse_n(&n, "vllm:spec_decode_num_draft_tokens_total -3\n"
					  "vllm:spec_decode_num_accepted_tokens_total 1\n", &c), -1);
	assert_int_equal(spec_parse_n(&n, "vllm:spec_decode_num_draft_tokens_total 3\n", &c), -1);
	assert_false(c.present);
	engine_metric_names_free(&n);

	struct spec_counters a = { true, 2, 4, 3 }, b = { true, 12, 24, 17 }, none = { 0 };
	json_auto_t *d = measure_spec_delta(&a, &b);
	assert_true(json_real_value(json_object_get(d, "draft_tokens")) == 20);
	assert_true(json_real_value(json_object_get(d, "accepted_tokens")) == 14);
	assert_true(fabs(json_real_value(json_object_get(d, "acceptance_rate")) - 0.7) < 1e-12);
	assert_true(fabs(json_real_value(json_object_get(d, "mean_acceptance_length")) - 2.4) < 1e-12);
	json_auto_t *z = measure_spec_delta(&b, &b);
	assert_true(json_is_null(json_object_get(z, "acceptance_rate")));
	assert_true(json_is_null(json_object_get(z, "mean_acceptance_length")));
	json_auto_t *nn = measure_spec_delta(&none, &none);
	assert_true(json_is_null(nn));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile), cmocka_unit_test(test_summary),
		cmocka_unit_test(test_prompt), cmocka_unit_test(test_shape),
		cmocka_unit_test(test_figures), cmocka_unit_test(test_spec_counters),
		cmocka_unit_test(test_spec_names_of_version),
		cmocka_unit_test(test_spec_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
