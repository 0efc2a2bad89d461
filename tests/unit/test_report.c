/* test_report.c — a failed role's report names the log line its cause came
 * from, with the right line number, even when the tail no longer holds it
 * (a restarted engine, or stderr's traceback followed by more stdout). */
#include "testutil.h"

#include "../../src/lib/util/buf.h"
#include "../../src/lib/triage/triage.h"

static void test_cause_line_outside_tail(void **state)
{
	(void)state;
	struct sigset set = { 0 };
	struct err *e = NULL;
	assert_int_equal(sigset_load(&set, NULL, &e), 0);
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	int n = 0;
	for (int i = 0; i < 20; i++, n++)
		buf_printf(&b, "INFO boot 1 line %d\n", i);
	buf_printf(&b, "  File \"triton_attn.py\", line 312, in forward\n");
	buf_printf(&b, "    assert layer.k_scale > 0.0\n");
	n += 2;
	int assert_line = n;
	buf_printf(&b, "AssertionError\n");
	n++;
	for (int i = 0; i < 30; i++, n++)
		buf_printf(&b, "INFO boot 2 (after the restart) line %d\n", i);
	json_t *r = failure_report(buf_str(&b), 12, &set);
	assert_non_null(r);
	const json_t *c = json_object_get(r, "cause");
	assert_non_null(c);
	assert_string_equal(json_string_value(json_object_get(c, "signature")), "fp8-k-scale-assert");
	assert_string_contains(json_string_value(json_object_get(c, "line")), "assert layer.k_scale > 0.0");
	assert_int_equal(json_integer_value(json_object_get(c, "line_no")), assert_line);
	/* the tail is still the last 12 lines, numbered from where they start */
	const char *tail = json_string_value(json_object_get(r, "log_tail"));
	assert_null(strstr(tail, "k_scale"));
	assert_string_contains(tail, "boot 2 (after the restart) line 29");
	assert_int_equal(json_integer_value(json_object_get(r, "log_lines")), n);
	assert_int_equal(json_integer_value(json_object_get(r, "log_tail_from")), n - 11);
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "fatal");
	json_decref(r);
	/* a death no signature names: the verdict, the phase and the root
	 * exception (test lines written for the test) */
	r = failure_report("INFO 07-13 10:00:00 [loader.py:1] Starting to load model x\n"
			   "Traceback (most recent call last):\n"
			   "  File \"/x/vllm/model_executor/model_loader/loader.py\", line 9, in load_model\n"
			   "FrobError: the frobnicator broke\n", 12, &set);
	assert_null(json_object_get(r, "cause"));
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "fatal");
	assert_string_equal(json_string_value(json_object_get(r, "phase")), "load");
	const json_t *re = json_object_get(r, "root_exception");
	assert_string_equal(json_string_value(json_object_get(re, "type")), "FrobError");
	assert_int_equal(json_integer_value(json_object_get(re, "line_no")), 4);
	json_decref(r);
	sigset_free(&set);
}

static void test_short_and_empty_logs(void **state)
{
	(void)state;
	json_t *r = failure_report("one\ntwo", 12, NULL);
	assert_int_equal(json_integer_value(json_object_get(r, "log_lines")), 2);
	assert_int_equal(json_integer_value(json_object_get(r, "log_tail_from")), 1);
	assert_string_equal(json_string_value(json_object_get(r, "log_tail")), "one\ntwo");
	assert_null(json_object_get(r, "cause"));
	json_decref(r);
	r = failure_report("", 12, NULL);
	assert_int_equal(json_integer_value(json_object_get(r, "log_lines")), 0);
	assert_string_equal(json_string_value(json_object_get(r, "log_tail")), "");
	json_decref(r);
	assert_null(failure_report(NULL, 12, NULL));
}

/* The tail and the cause line go through the masking rule (secret.h). */
static void test_report_masks_secrets(void **state)
{
	(void)state;
	const char *log = "INFO non-default args: {'api_key': ['sk-report-0001'], 'port': 8001}\n"
			  "DEBUG Authorization: Bearer report-bearer-0002\n"
			  "INFO using hf_ReportToken0123456789abcdef\n"
			  "ERROR --api-key=sk-report-0003     assert layer.k_scale > 0.0\n";
	struct sigset set = { 0 };
	assert_int_equal(sigset_load(&set, NULL, NULL), 0);
	json_t *r = failure_report(log, 12, &set);
	char *s = json_dumps(r, 0);
	assert_null(strstr(s, "sk-report-0001"));
	assert_null(strstr(s, "report-bearer-0002"));
	assert_null(strstr(s, "hf_ReportToken"));
	assert_null(strstr(s, "sk-report-0003"));
	assert_string_contains(s, "Authorization: Bearer <hidden>");
	assert_string_contains(json_string_value(json_object_get(json_object_get(r, "cause"), "line")),
			       "--api-key=<hidden>");
	free(s);
	json_decref(r);
	sigset_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cause_line_outside_tail),
		cmocka_unit_test(test_short_and_empty_logs),
		cmocka_unit_test(test_report_masks_secrets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
