/*
 * test_engine_metrics.c — the Prometheus text reader (what it accepts, and
 * the line and column of what it refuses), the figure names per recorded
 * vLLM version, the figures out of a body (sums over engines, the fullest
 * KV cache, neighbours with longer names ignored), rates from two samples
 * (counter resets, missing figures), and the scrape against a loopback
 * server (200, 404, nothing listening, a body that is not metrics).
 */
#include <math.h>
#include <microhttpd.h>

#include "../../src/lib/runtime/runtime.h"
#include "testutil.h"

/* ---- the text format ---- */

struct seen {
	int n;
	char names[16][64];
	double v[16];
	char labels[16][256]; /* "k=v;k=v;" */
	long long ts[16];
};

static int keep(void *ud, const struct prom_sample *s, struct err **err)
{
	(void)err;
	struct seen *x = ud;
	if (x->n >= 16)
		return 0;
	snprintf(x->names[x->n], sizeof(x->names[0]), "%s", s->name);
	x->v[x->n] = s->v;
	x->ts[x->n] = s->has_ts ? s->ts : -1;
	x->labels[x->n][0] = '\0';
	for (size_t i = 0; i < s->n_labels; i++) {
		size_t l = strlen(x->labels[x->n]);
		snprintf(x->labels[x->n] + l, sizeof(x->labels[0]) - l, "%s=%s;", s->label[i],
			 s->value[i]);
	}
	x->n++;
	return 0;
}

static void test_parse_accepts(void **state)
{
	(void)state;
	const char *t =
		"# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
		"# TYPE vllm:num_requests_running gauge\n"
		"vllm:num_requests_running{engine=\"0\",model_name=\"coder\"} 3.0\n"
		"\n"
		"# a plain comment, with { and \" in it\n"
		"x_total{a=\"q\\\"uo\\\\te\\n\",b=\"\",} 1e3 1700000000000\n"
		"up NaN\n"
		"  spaced{ k = \"v\" }\t+Inf  \n"
		"neg -Inf\n"
		"last 42"; /* no final newline */
	struct seen x = { 0 };
	struct err *e = NULL;
	int got = prom_parse("t", t, strlen(t), keep, &x, &e);
	if (e)
		fail_msg("%s", e->msg);
	assert_int_equal(got, 6);
	assert_null(e);
	assert_int_equal(x.n, 6);
	assert_string_equal(x.names[0], "vllm:num_requests_running");
	assert_string_equal(x.labels[0], "engine=0;model_name=coder;");
	assert_true(x.v[0] == 3.0);
	assert_int_equal(x.ts[0], -1);
	assert_string_equal(x.names[1], "x_total");
	assert_string_equal(x.labels[1], "a=q\"uo\\te\n;b=;");
	assert_true(x.v[1] == 1000.0);
	assert_int_equal(x.ts[1], 1700000000000LL);
	assert_true(isnan(x.v[2]));
	assert_string_equal(x.names[3], "spaced");
	assert_string_equal(x.labels[3], "k=v;");
	assert_true(isinf(x.v[3]) && x.v[3] > 0);
	assert_true(isinf(x.v[4]) && x.v[4] < 0);
	assert_true(x.v[5] == 42.0);
	/* empty input: no samples, no error */
	assert_int_equal(prom_parse("t", "", 0, keep, &x, &e), 0);
}

static void refused(const char *text, const char *where, const char *expected)
{
	struct seen x = { 0 };
	struct err *e = NULL;
	if (prom_parse("src", text, strlen(text), keep, &x, &e) != -1)
		fail_msg("accepted: %s", text);
	assert_non_null(e);
	assert_int_equal(e->code, EXIT_RUNTIME);
	assert_string_contains(e->msg, "src: ");
	assert_string_contains(e->msg, where);
	assert_string_contains(e->msg, expected);
	err_free(e);
}

static void test_parse_refuses(void **state)
{
	(void)state;
	refused("<html>\n", "line 1, column 1", "a metric name");
	refused("ok 1\nbad\n", "line 2, column 4", "a blank before the value");
	refused("a 1\nm{x=\"1\"}\n", "line 2, column 9", "a blank before the value");
	refused("m 0x10\n", "line 1, column 3", "a number");
	refused("m {x=\"1\"} 1\n", "line 1, column 3", "a number");
	refused("m 1.5abc\n", "line 1, column 3", "a number");
	refused("m infinity\n", "line 1, column 3", "a number");
	refused("m 1 12.5\n", "line 1, column 5", "a timestamp");
	refused("m 1 12 junk\n", "line 1, column 8", "the end of the line");
	refused("m 1\r\n", "line 1, column 4", "carriage return");
	refused("m{x=\"a\\t\"} 1\n", "line 1, column 8", "an escape");
	refused("m{x=\"open} 1\n", "line 1", "closing the label value");
	refused("m{x=1} 1\n", "line 1, column 5", "opening a label value");
	refused("m{1x=\"a\"} 1\n", "line 1, column 3", "a label name");
	refused("m{x=\"a\" y=\"b\"} 1\n", "line 1, column 9", "',' or '}'");
	refused("m{x:y=\"a\"} 1\n", "line 1, column 4", "'='");
	refused("# TYPE m gaug\n", "line 1, column 10", "counter, gauge");
	refused("# TYPE m gauge extra\n", "line 1, column 10", "counter, gauge");
	refused("# TYPE 9m gauge\n", "line 1, column 8", "a metric name after # TYPE");
	refused("# HELP\n", "line 1", "a metric name after # HELP");
	refused("m\n", "line 1, column 2", "a blank before the value");
	refused("m \n", "line 1, column 3", "a number");
	/* 33 labels: one over the limit */
	char many[1024] = "m{";
	for (int i = 0; i < 33; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "l%d=\"v\",", i);
	snprintf(many + strlen(many), sizeof(many) - strlen(many), "} 1\n");
	refused(many, "line 1", "at most 32 labels");
	/* a NUL inside the body */
	struct err *e = NULL;
	struct seen x = { 0 };
	assert_int_equal(prom_parse("src", "m 1\n\0m 2\n", 9, keep, &x, &e), -1);
	assert_string_contains(e->msg, "NUL byte at offset 4");
	err_free(e);
}

static int stop_at_second(void *ud, const struct prom_sample *s, struct err **err)
{
	int *n = ud;
	if (++*n == 2)
		return err_set(err, EXIT_INTERNAL, "stopped at %s", s->name);
	return 0;
}

static void test_parse_callback_stops(void **state)
{
	(void)state;
	int n = 0;
	struct err *e = NULL;
	assert_int_equal(prom_parse("t", "a 1\nb 2\nc 3\n", 12, stop_at_second, &n, &e), -1);
	assert_int_equal(n, 2);
	assert_string_equal(e->msg, "stopped at b");
	err_free(e);
}

/* ---- names per version ---- */

static void test_names(void **state)
{
	(void)state;
	static const char *const folders[] = { "93d8f834d", "5a4c8d992" };
	for (size_t i = 0; i < 2; i++) {
		struct engine_metric_names n;
		struct err *e = NULL;
		assert_int_equal(engine_metric_names_load(&n, folders[i], &e), 0);
		assert_string_equal(n.folder, folders[i]);
		assert_string_equal(n.sample[EM_RUNNING], "vllm:num_requests_running");
		assert_string_equal(n.sample[EM_WAITING], "vllm:num_requests_waiting");
		assert_string_equal(n.sample[EM_KV_USAGE], "vllm:kv_cache_usage_perc");
		assert_string_equal(n.sample[EM_PROMPT_TOKENS], "vllm:prompt_tokens_total");
		assert_string_equal(n.sample[EM_GENERATION_TOKENS], "vllm:generation_tokens_total");
		assert_string_equal(n.sample[EM_SPEC_DRAFTS], "vllm:spec_decode_num_drafts_total");
		assert_string_equal(n.sample[EM_SPEC_DRAFT_TOKENS],
				    "vllm:spec_decode_num_draft_tokens_total");
		assert_string_equal(n.sample[EM_SPEC_ACCEPTED],
				    "vllm:spec_decode_num_accepted_tokens_total");
		engine_metric_names_free(&n);
	}
	struct engine_metric_names n;
	struct err *e = NULL;
	assert_int_equal(engine_metric_names_load(&n, "nosuch", &e), -1);
	assert_int_equal(e->code, EXIT_CONFIG);
	assert_string_contains(e->msg, "data/vllm/nosuch/");
	assert_null(n.folder);
	err_free(e);
	assert_string_equal(engine_metric_key(EM_KV_USAGE), "kv_usage");
	assert_string_equal(engine_metric_key(EM_SPEC_ACCEPTED), "spec_accepted_tokens");
}

/* ---- figures out of a body ---- */

static const char body[] =
	"# TYPE vllm:num_requests_running gauge\n"
	"vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 2.0\n"
	"vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 3.0\n"
	"vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 1.0\n"
	"vllm:num_requests_waiting_by_reason{engine=\"0\",model_name=\"m\",reason=\"capacity\"} 9.0\n"
	"vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n"
	"vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.5\n"
	"vllm:prompt_tokens_total{engine=\"0\",model_name=\"m\"} 100.0\n"
	"vllm:prompt_tokens_created{engine=\"0\",model_name=\"m\"} 1.7e9\n"
	"vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} 40.0\n";

static void load(struct engine_metric_names *n)
{
	assert_int_equal(engine_metric_names_load(n, "5a4c8d992", NULL), 0);
}

/* Which recorded names an engine's figures are read by: its image's when
 * recorded, else (nothing to ask) the newest recorded, said to be assumed. */
static void test_folder(void **state)
{
	(void)state;
	struct knowledge k = { 0 };
	assert_int_equal(knowledge_load(&k, NULL, NULL), 0);
	char *from = NULL;
	char *f = engine_metric_folder(&k, "vllm/vllm-openai@sha256:7c5a10e9a8b3c8642f4d0463a41215176c0dd834"
					   "b4f0967287c7e3e517cf1be9", 0, 100, &from);
	assert_string_equal(f, "93d8f834d");
	assert_string_equal(from, "image");
	free(f);
	free(from);
	f = engine_metric_folder(&k, "lobes-standin:test", 0, 100, &from);
	assert_string_equal(f, "5a4c8d992");
	assert_string_equal(from, "assumed");
	free(f);
	free(from);
	f = engine_metric_folder(&k, NULL, 0, 100, &from);
	assert_string_equal(from, "assumed");
	free(f);
	free(from);
	knowledge_free(&k);
}

static void test_figures(void **state)
{
	(void)state;
	struct engine_metric_names n;
	load(&n);
	struct engine_sample s;
	assert_int_equal(engine_metrics_parse("t", body, strlen(body), &n, &s, NULL), 0);
	assert_true(s.v[EM_RUNNING] == 5.0);
	assert_true(s.v[EM_WAITING] == 1.0); /* not the by-reason gauge */
	assert_true(s.v[EM_KV_USAGE] == 0.5);
	assert_true(s.v[EM_PROMPT_TOKENS] == 100.0); /* not the _created sample */
	assert_true(s.v[EM_GENERATION_TOKENS] == 40.0);
	assert_true(isnan(s.v[EM_SPEC_DRAFTS]));
	assert_true(isnan(s.v[EM_SPEC_ACCEPTED]));
	assert_true(s.at > 0);
	struct err *e = NULL;
	assert_int_equal(engine_metrics_parse("engine on port 1: /metrics", "<html>", 6, &n, &s, &e),
			 -1);
	assert_string_contains(e->msg, "engine on port 1: /metrics: line 1, column 1");
	err_free(e);
	engine_metric_names_free(&n);
}

static void test_rates(void **state)
{
	(void)state;
	struct engine_sample a, b;
	for (int m = 0; m < EM__COUNT; m++)
		a.v[m] = b.v[m] = NAN;
	a.at = 10.0;
	b.at = 12.0;
	a.v[EM_PROMPT_TOKENS] = 100;
	b.v[EM_PROMPT_TOKENS] = 300;
	a.v[EM_GENERATION_TOKENS] = 500;
	b.v[EM_GENERATION_TOKENS] = 60; /* restarted: counts from zero */
	a.v[EM_SPEC_DRAFT_TOKENS] = 10;
	b.v[EM_SPEC_DRAFT_TOKENS] = 30;
	a.v[EM_SPEC_ACCEPTED] = 7;
	b.v[EM_SPEC_ACCEPTED] = 22;
	struct engine_rates r;
	engine_rates(&a, &b, &r);
	assert_true(r.prompt_tps == 100.0);
	assert_true(r.generation_tps == 30.0);
	assert_true(r.accept == 0.75);
	assert_true(fabs(r.accept_total - 22.0 / 30.0) < 1e-12);
	/* one sample: only the life-long acceptance */
	engine_rates(NULL, &b, &r);
	assert_true(isnan(r.prompt_tps) && isnan(r.accept));
	assert_true(fabs(r.accept_total - 22.0 / 30.0) < 1e-12);
	/* no time passed, nothing drafted, a figure missing: NaN, not 0 or Inf */
	b.at = a.at;
	engine_rates(&a, &b, &r);
	assert_true(isnan(r.prompt_tps) && isnan(r.generation_tps) && isnan(r.accept));
	b.at = 12.0;
	b.v[EM_SPEC_DRAFT_TOKENS] = 10;
	a.v[EM_PROMPT_TOKENS] = NAN;
	engine_rates(&a, &b, &r);
	assert_true(isnan(r.accept));
	assert_true(isnan(r.prompt_tps));
	assert_true(r.generation_tps == 30.0);
}

/* ---- the scrape ---- */

static unsigned reply_status = 200;
static const char *reply_body = body;

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *data,
			      size_t *size, void **ctx)
{
	(void)cls, (void)method, (void)version, (void)data, (void)size, (void)ctx;
	const char *b = strcmp(url, "/metrics") == 0 ? reply_body : "not found";
	unsigned st = strcmp(url, "/metrics") == 0 ? reply_status : 404;
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(b), (void *)b,
								 MHD_RESPMEM_PERSISTENT);
	enum MHD_Result rc = MHD_queue_response(c, st, r);
	MHD_destroy_response(r);
	return rc;
}

static void test_scrape(void **state)
{
	(void)state;
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
						answer, NULL, MHD_OPTION_END);
	assert_non_null(d);
	int port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
	struct engine_metric_names n;
	load(&n);
	struct engine_sample s;
	struct err *e = NULL;
	assert_int_equal(engine_metrics_scrape(port, 5000, &n, &s, &e), 0);
	assert_true(s.v[EM_RUNNING] == 5.0 && s.v[EM_GENERATION_TOKENS] == 40.0);

	reply_status = 500;
	assert_int_equal(engine_metrics_scrape(port, 5000, &n, &s, &e), -1);
	_cleanup_free_ char *want = xasprintf("engine on port %d: /metrics: HTTP 500", port);
	assert_string_equal(e->msg, want);
	err_free(e);
	e = NULL;

	reply_status = 200;
	reply_body = "{\"error\": \"not metrics\"}\n";
	assert_int_equal(engine_metrics_scrape(port, 5000, &n, &s, &e), -1);
	assert_string_contains(e->msg, "/metrics: line 1, column 1: expected a metric name");
	err_free(e);
	e = NULL;
	reply_body = body;
	MHD_stop_daemon(d);

	/* nothing listens there any more */
	assert_int_equal(engine_metrics_scrape(port, 2000, &n, &s, &e), -1);
	assert_int_equal(e->code, EXIT_RUNTIME);
	_cleanup_free_ char *pre = xasprintf("engine on port %d: /metrics: ", port);
	assert_string_contains(e->msg, pre);
	err_free(e);
	e = NULL;
	assert_int_equal(engine_metrics_scrape(0, 2000, &n, &s, &e), -1);
	assert_int_equal(e->code, EXIT_INTERNAL);
	err_free(e);
	engine_metric_names_free(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_accepts),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_parse_callback_stops),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_folder),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_scrape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
