/*
 * test_bench_faults.c — measure/bench.c against a fake engine (libmicrohttpd
 * on 127.0.0.1, an ephemeral port) that answers each way an engine can
 * answer badly: an HTTP error, a stream that is not JSON, one without
 * choices, without [DONE], without usage, a connection dropped mid-stream,
 * an answer slower than the request's bound, nobody listening, a pooling
 * answer without its array. Each must land in its own error kind, counted
 * in `errors` and never in the latency figures; and what bench sends (the
 * body, the key) is checked as the engine receives it.
 */
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/measure/measure.h"

enum mode {
	M_OK, M_NO_DONE, M_NO_USAGE, M_NOT_JSON, M_NO_CHOICES, M_HTTP_500, M_DROP, M_SLOW,
	M_POOL_OK, M_POOL_BAD,
};

static enum mode mode;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char last_body[1 << 16];
static char last_auth[256];
static char last_url[64];
static int requests_seen;

struct upload {
	char *data;
	size_t len;
};

struct stream {
	const char *text;
	size_t len, cut; /* cut: bytes sent before an error end (0: none) */
	bool slow;
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	if (s->slow) {
		usleep(1500 * 1000); /* past the request's 0.3 s bound */
		s->slow = false;
	}
	size_t end = s->cut ? s->cut : s->len;
	if (pos >= end)
		return s->cut ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
	size_t n = end - (size_t)pos < max ? end - (size_t)pos : max;
	memcpy(buf, s->text + pos, n);
	return (ssize_t)n;
}

static const char FRAMES[] =
	"data: {\"choices\": [{\"text\": \"a\"}]}\n\n"
	": a comment line\n"
	"data:{\"choices\": [{\"text\": \"b\"}]}\r\n\r\n"
	"data: {\"choices\": [{\"text\": \"c\"}]}\n\n";
static const char USAGE[] = "data: {\"choices\": [], \"usage\": {\"prompt_tokens\": 11, \"completion_tokens\": 3}}\n\n";
static const char DONE[] = "data: [DONE]\n\n";

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *data,
			      size_t *size, void **ctx)
{
	(void)cls, (void)method, (void)version;
	struct upload *u = *ctx;
	if (!u) {
		*ctx = xcalloc(1, sizeof *u);
		return MHD_YES;
	}
	if (*size) {
		u->data = xrealloc(u->data, u->len + *size + 1);
		memcpy(u->data + u->len, data, *size);
		u->len += *size;
		u->data[u->len] = 0;
		*size = 0;
		return MHD_YES;
	}
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	pthread_mutex_lock(&mu);
	snprintf(last_body, sizeof last_body, "%s", u->data ? u->data : "");
	snprintf(last_auth, sizeof last_auth, "%s", auth ? auth : "");
	snprintf(last_url, sizeof last_url, "%s", url);
	requests_seen++;
	enum mode m = mode;
	pthread_mutex_unlock(&mu);

	static char text[4096];
	const char *body = text;
	unsigned status = 200;
	size_t cut = 0;
	switch (m) {
	case M_OK: snprintf(text, sizeof text, "%s%s%s", FRAMES, USAGE, DONE); break;
	case M_NO_DONE: snprintf(text, sizeof text, "%s%s", FRAMES, USAGE); break;
	case M_NO_USAGE: snprintf(text, sizeof text, "%s%s", FRAMES, DONE); break;
	case M_NOT_JSON: snprintf(text, sizeof text, "%sdata: {\"choices\": [\n\n%s%s", FRAMES, USAGE, DONE); break;
	case M_NO_CHOICES: snprintf(text, sizeof text, "%s%s", USAGE, DONE); break;
	case M_HTTP_500: body = "{\"error\": \"boom\"}"; status = 500; break;
	case M_DROP:
		snprintf(text, sizeof text, "%s%s%s", FRAMES, USAGE, DONE);
		cut = strlen(FRAMES) - 5;
		break;
	case M_SLOW: snprintf(text, sizeof text, "%s%s%s", FRAMES, USAGE, DONE); break;
	case M_POOL_OK:
		body = strstr(url, "rerank") ? "{\"results\": [], \"usage\": {\"prompt_tokens\": 9}}"
					     : "{\"data\": [], \"usage\": {\"prompt_tokens\": 9}}";
		break;
	case M_POOL_BAD: body = "{\"object\": \"list\"}"; break;
	}
	struct MHD_Response *r;
	if (status == 200 && m != M_POOL_OK && m != M_POOL_BAD) {
		static struct stream s;
		s = (struct stream){ .text = text, .len = strlen(text), .cut = cut, .slow = m == M_SLOW };
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, stream_read, &s, NULL);
	} else {
		r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	}
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static void done_cb(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode t)
{
	(void)cls, (void)c, (void)t;
	struct upload *u = *ctx;
	if (u) {
		free(u->data);
		free(u);
	}
	*ctx = NULL;
}

static struct MHD_Daemon *d;
static char origin[64];

static int setup(void **state)
{
	(void)state;
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL,
			     NULL, answer, NULL, MHD_OPTION_NOTIFY_COMPLETED, done_cb, NULL,
			     MHD_OPTION_END);
	if (!d)
		return -1;
	snprintf(origin, sizeof origin, "http://127.0.0.1:%d",
		 MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	MHD_stop_daemon(d);
	return 0;
}

static struct bench_opts opts(long requests)
{
	return (struct bench_opts){ .input_len = 4, .output_len = 3, .requests = requests,
				    .concurrency = 2, .batch = 1, .seed = 7, .timeout_s = 30 };
}

/* One run of n generate requests while the engine answers m. */
static json_t *run_gen(enum mode m, long n, const struct bench_opts *o_in)
{
	pthread_mutex_lock(&mu);
	mode = m;
	pthread_mutex_unlock(&mu);
	struct bench_target t = { .label = "fake", .origin = origin, .model = "m/x", .kind = BENCH_GENERATE };
	struct bench_opts o = o_in ? *o_in : opts(n);
	struct err *e = NULL;
	json_t *r = bench_run(&t, &o, &e);
	assert_null(e);
	assert_non_null(r);
	return r;
}

static long num(const json_t *r, const char *k)
{
	return (long)json_integer_value(json_object_get(r, k));
}

/* Every request of the run failed as KIND and no latency was counted. */
static void all_failed_as(enum mode m, const char *kind)
{
	json_auto_t *r = run_gen(m, 3, NULL);
	assert_int_equal(num(r, "sent"), 3);
	assert_int_equal(num(r, "completed"), 0);
	assert_int_equal(num(r, "failed"), 3);
	json_t *errs = json_object_get(r, "errors");
	if (json_object_size(errs) != 1 || num(errs, kind) != 3) {
		_cleanup_free_ char *s = json_dumps(errs, 0);
		fail_msg("errors %s; expected {\"%s\": 3}", s, kind);
	}
	assert_int_equal(num(r, "output_tokens"), 0);
	assert_true(json_is_null(json_object_get(r, "input_tokens")));
	assert_true(json_is_null(json_object_get(json_object_get(r, "ttft_ms"), "median")));
	assert_int_equal(json_real_value(json_object_get(r, "request_throughput")), 0);
}

static void test_good_stream(void **state)
{
	(void)state;
	struct bench_opts o = opts(4);
	o.ignore_eos = true;
	json_auto_t *r = run_gen(M_OK, 4, &o);
	assert_int_equal(num(r, "sent"), 4);
	assert_int_equal(num(r, "completed"), 4);
	assert_int_equal(num(r, "failed"), 0);
	assert_int_equal(json_object_size(json_object_get(r, "errors")), 0);
	/* usage from the engine, not counted frames */
	assert_int_equal(num(r, "input_tokens"), 44);
	assert_int_equal(num(r, "output_tokens"), 12);
	assert_false(json_is_null(json_object_get(json_object_get(r, "ttft_ms"), "median")));
	assert_false(json_is_null(json_object_get(json_object_get(r, "itl_ms"), "median")));
	assert_false(json_is_null(json_object_get(json_object_get(r, "tpot_ms"), "median")));
	assert_true(json_is_null(json_object_get(r, "goodput"))); /* no SLO given */
	assert_string_equal(json_string_value(json_object_get(r, "kind")), "generate");
	assert_true(json_is_null(json_object_get(r, "rate")));
	/* what the engine received */
	assert_string_equal(last_url, "/v1/completions");
	assert_string_equal(last_auth, "");
	json_auto_t *b = json_loads(last_body, 0, NULL);
	assert_non_null(b);
	assert_string_equal(json_string_value(json_object_get(b, "model")), "m/x");
	assert_int_equal(json_integer_value(json_object_get(b, "max_tokens")), 3);
	assert_true(json_is_true(json_object_get(b, "stream")));
	assert_true(json_is_true(json_object_get(b, "ignore_eos")));
	assert_true(json_is_true(json_object_get(json_object_get(b, "stream_options"), "include_usage")));
	assert_true(json_is_string(json_object_get(b, "prompt")));

	/* without ignore_eos the key is not sent at all */
	json_auto_t *r2 = run_gen(M_OK, 1, NULL);
	json_auto_t *b2 = json_loads(last_body, 0, NULL);
	assert_null(json_object_get(b2, "ignore_eos"));
}

static void test_bad_streams(void **state)
{
	(void)state;
	all_failed_as(M_NO_DONE, "dropped");
	all_failed_as(M_NO_USAGE, "no-usage");
	all_failed_as(M_NOT_JSON, "malformed");
	all_failed_as(M_NO_CHOICES, "malformed");
	all_failed_as(M_HTTP_500, "http-500");
	all_failed_as(M_DROP, "dropped");
}

static void test_timeout_and_refused(void **state)
{
	(void)state;
	struct bench_opts o = opts(1);
	o.timeout_s = 0.3;
	o.concurrency = 1;
	json_auto_t *r = run_gen(M_SLOW, 1, &o);
	assert_int_equal(num(json_object_get(r, "errors"), "timeout"), 1);
	assert_int_equal(num(r, "completed"), 0);

	/* nobody listens: a port this process held and let go */
	struct MHD_Daemon *d2 = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer,
						 NULL, MHD_OPTION_END);
	assert_non_null(d2);
	char gone[64];
	snprintf(gone, sizeof gone, "http://127.0.0.1:%d", MHD_get_daemon_info(d2, MHD_DAEMON_INFO_BIND_PORT)->port);
	MHD_stop_daemon(d2);
	struct bench_target t = { .label = "gone", .origin = gone, .model = "m", .kind = BENCH_GENERATE };
	struct bench_opts o2 = opts(2);
	struct err *e = NULL;
	json_auto_t *r2 = bench_run(&t, &o2, &e);
	assert_non_null(r2);
	assert_int_equal(num(json_object_get(r2, "errors"), "refused"), 2);
	assert_int_equal(num(r2, "failed"), 2);
}

static void test_pooling(void **state)
{
	(void)state;
	pthread_mutex_lock(&mu);
	mode = M_POOL_OK;
	pthread_mutex_unlock(&mu);
	struct bench_target t = { .label = "emb", .origin = origin, .model = "e", .bearer = "k-1",
				  .kind = BENCH_EMBED };
	struct bench_opts o = opts(2);
	o.batch = 3;
	struct err *e = NULL;
	json_auto_t *r = bench_run(&t, &o, &e);
	assert_non_null(r);
	assert_int_equal(num(r, "completed"), 2);
	assert_int_equal(num(r, "input_tokens"), 18);
	assert_int_equal(num(r, "batch"), 3);
	assert_string_equal(json_string_value(json_object_get(r, "kind")), "embed");
	assert_null(json_object_get(r, "ttft_ms"));
	assert_false(json_is_null(json_object_get(json_object_get(r, "latency_ms"), "median")));
	assert_string_equal(last_url, "/v1/embeddings");
	assert_string_equal(last_auth, "Bearer k-1");
	json_auto_t *b = json_loads(last_body, 0, NULL);
	assert_int_equal(json_array_size(json_object_get(b, "input")), 3);
	/* the key is never in the result */
	_cleanup_free_ char *dump = json_dumps(r, 0);
	assert_null(strstr(dump, "k-1"));

	t.kind = BENCH_RERANK;
	json_auto_t *r2 = bench_run(&t, &o, &e);
	assert_int_equal(num(r2, "completed"), 2);
	assert_string_equal(json_string_value(json_object_get(r2, "kind")), "rerank");
	assert_string_equal(last_url, "/v1/rerank");
	json_auto_t *b2 = json_loads(last_body, 0, NULL);
	assert_int_equal(json_array_size(json_object_get(b2, "documents")), 3);
	assert_true(json_is_string(json_object_get(b2, "query")));

	/* an answer without its array is malformed, for each kind */
	pthread_mutex_lock(&mu);
	mode = M_POOL_BAD;
	pthread_mutex_unlock(&mu);
	json_auto_t *r3 = bench_run(&t, &o, &e);
	assert_int_equal(num(json_object_get(r3, "errors"), "malformed"), 2);
	t.kind = BENCH_EMBED;
	json_auto_t *r4 = bench_run(&t, &o, &e);
	assert_int_equal(num(json_object_get(r4, "errors"), "malformed"), 2);
	assert_null(e);
}

static void progress(void *cls, size_t done, size_t total, double elapsed)
{
	size_t *calls = cls;
	assert_true(done >= 1 && done <= total && total == 3 && elapsed >= 0);
	calls[0]++;
	calls[1] = done;
}

static void test_bounds_rate_slo_progress(void **state)
{
	(void)state;
	struct bench_target t = { .label = "fake", .origin = origin, .model = "m", .kind = BENCH_GENERATE };
	struct err *e = NULL;
	/* a run without concurrency, without a bound, without a timeout, or a
	 * pooling run without a batch cannot be set up */
	struct bench_opts bad[4] = { opts(1), opts(1), opts(1), opts(1) };
	bad[0].concurrency = 0;
	bad[1].requests = 0;
	bad[2].timeout_s = 0;
	bad[3].batch = 0;
	for (int i = 0; i < 4; i++) {
		t.kind = i == 3 ? BENCH_EMBED : BENCH_GENERATE;
		assert_null(bench_run(&t, &bad[i], &e));
		assert_non_null(e);
		assert_int_equal(e->code, EXIT_INTERNAL);
		err_free(e);
		e = NULL;
	}
	/* generate needs no batch */
	t.kind = BENCH_GENERATE;
	pthread_mutex_lock(&mu);
	mode = M_OK;
	pthread_mutex_unlock(&mu);
	json_auto_t *okb = bench_run(&t, &bad[3], &e);
	assert_non_null(okb);

	/* a rate: Poisson arrivals, every request still sent and counted */
	size_t calls[2] = { 0, 0 };
	struct bench_opts o = opts(3);
	o.rate = 500;
	o.progress = progress;
	o.progress_cls = calls;
	o.slo_e2el_ms = 1e-6; /* no request can meet a nanosecond */
	json_auto_t *r = bench_run(&t, &o, &e);
	assert_non_null(r);
	assert_int_equal(num(r, "completed"), 3);
	assert_true(json_real_value(json_object_get(r, "rate")) == 500);
	assert_int_equal(calls[0], 3);
	assert_int_equal(calls[1], 3);
	assert_true(json_is_real(json_object_get(r, "goodput")));
	assert_true(json_real_value(json_object_get(r, "goodput")) == 0);
	/* an SLO every request meets: goodput is the request rate */
	o.slo_e2el_ms = 0;
	o.slo_ttft_ms = 1e9;
	o.slo_tpot_ms = 1e9;
	calls[0] = 0;
	json_auto_t *r2 = bench_run(&t, &o, &e);
	assert_true(json_real_value(json_object_get(r2, "goodput")) ==
		    json_real_value(json_object_get(r2, "request_throughput")));
	assert_true(json_real_value(json_object_get(r2, "goodput")) > 0);

	/* a duration bound alone: it sends until the time is up, then stops */
	pthread_mutex_lock(&mu);
	int before = requests_seen;
	pthread_mutex_unlock(&mu);
	struct bench_opts od = opts(0);
	od.duration_s = 0.2;
	od.concurrency = 1;
	json_auto_t *r3 = bench_run(&t, &od, &e);
	assert_non_null(r3);
	assert_true(num(r3, "sent") >= 1);
	assert_int_equal(num(r3, "failed"), 0);
	pthread_mutex_lock(&mu);
	assert_int_equal(requests_seen - before, num(r3, "sent"));
	pthread_mutex_unlock(&mu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_stream),
		cmocka_unit_test(test_bad_streams),
		cmocka_unit_test(test_timeout_and_refused),
		cmocka_unit_test(test_pooling),
		cmocka_unit_test(test_bounds_rate_slo_progress),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
