/*
 * test_measure.c — the pure parts of measure/: percentiles by numpy's
 * linear rule, the summaries in ms, the prompt word lists (reproducible,
 * N words), the shapes.
 */
#include <math.h>

#include "testutil.h"
#include "../../src/lib/measure/measure.h"
#include "../../src/lib/measure/measure_int.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile), cmocka_unit_test(test_summary),
		cmocka_unit_test(test_prompt), cmocka_unit_test(test_shape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
