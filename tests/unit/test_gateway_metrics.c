/*
 * test_gateway_metrics.c — the gateway's counters (metrics.c) and their
 * exposition (metrics_expo.c): the usage scan over an engine's bytes
 * however they are cut (every split point of a JSON answer and of an SSE
 * stream, the last usage of a stream winning, "usage" as text or as a null
 * value, an object too long to be one), the histogram buckets' edges,
 * cumulative buckets equal to _count, labels from the fixed table only, and
 * the keyless/keyed rule of the gateway's own views.
 */
#include "testutil.h"
#include "../../src/lib/gateway/metrics.h"

static void feed_split(const char *text, size_t at, long long *p, long long *c)
{
	struct gw_usage u = { 0 };
	size_t n = strlen(text);
	gw_usage_feed(&u, text, at);
	gw_usage_feed(&u, text + at, n - at);
	*p = u.prompt;
	*c = u.completion;
	gw_usage_free(&u);
}

static void test_usage_every_split(void **state)
{
	(void)state;
	const char *json = "{\"id\":\"x\",\"choices\":[{\"text\":\"the \\\"usage\\\": {\\\"prompt_tokens\\\": 99}\"}],"
			   "\"usage\" : {\"prompt_tokens\":12,\"total_tokens\":20,\"completion_tokens\":8,"
			   "\"prompt_tokens_details\":null}}";
	for (size_t at = 0; at <= strlen(json); at++) {
		long long p, c;
		feed_split(json, at, &p, &c);
		assert_int_equal(p, 12);
		assert_int_equal(c, 8);
	}
	/* a stream: usage null in the first frames, the last one counts */
	const char *sse = "data: {\"choices\":[],\"usage\":null}\n\n"
			  "data: {\"choices\":[{\"delta\":{\"content\":\"usage\"}}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\n\n"
			  "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\ndata: [DONE]\n\n";
	for (size_t at = 0; at <= strlen(sse); at++) {
		long long p, c;
		feed_split(sse, at, &p, &c);
		assert_int_equal(p, 5);
		assert_int_equal(c, 7);
	}
	/* byte by byte */
	struct gw_usage u = { 0 };
	for (const char *s = sse; *s; s++)
		gw_usage_feed(&u, s, 1);
	assert_int_equal(u.prompt, 5);
	assert_int_equal(u.completion, 7);
	gw_usage_free(&u);
}

static void test_usage_not_counted(void **state)
{
	(void)state;
	long long p, c;
	/* "usage" as a value, escaped inside a string, null, no usage at all */
	feed_split("{\"a\":\"usage\",\"b\":\"say \\\"usage\\\":{\\\"prompt_tokens\\\":3}\"}", 9, &p, &c);
	assert_int_equal(p, 0);
	feed_split("{\"usage\":null}", 4, &p, &c);
	assert_int_equal(p, 0);
	feed_split("{\"usage\":{\"total_tokens\":3}}", 4, &p, &c);
	assert_int_equal(p, 0);
	/* an object past GW_USAGE_MAX is given up, and a later usage still found */
	char big[4 * GW_USAGE_MAX];
	int n = snprintf(big, sizeof(big), "{\"usage\":{\"pad\":\"");
	memset(big + n, 'x', 2 * GW_USAGE_MAX);
	n += 2 * GW_USAGE_MAX;
	n += snprintf(big + n, sizeof(big) - (size_t)n,
		      "\"},\"x\":{\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2}}}");
	feed_split(big, 100, &p, &c);
	assert_int_equal(p, 4);
	assert_int_equal(c, 2);
	/* embeddings: prompt tokens only */
	feed_split("{\"data\":[],\"usage\":{\"prompt_tokens\":9,\"total_tokens\":9}}", 30, &p, &c);
	assert_int_equal(p, 9);
	assert_int_equal(c, 0);
}

static unsigned long long sample(const char *text, const char *series)
{
	char *k = xasprintf("\n%s ", series);
	const char *s = strstr(text, k);
	free(k);
	assert_non_null(s);
	return strtoull(s + strlen(series) + 2, NULL, 10);
}

static void test_record_and_render(void **state)
{
	(void)state;
	struct gw_metrics *m = gw_metrics_new();
	snprintf(m->version, sizeof(m->version), "9.9");
	struct gw_obs o = { .role = ROLE_CORTEX, .ep = GW_EP_CHAT, .status = 200, .total_ms = 5,
			    .ttfb_ms = 5.001, .resp_bytes = 10, .req_bytes = 3, .prompt_tokens = 4,
			    .completion_tokens = 6, .own = -1, .throttle = -1, .uperr = -1 };
	gw_metrics_record(m, &o); /* 5 ms: in the first bucket (le is inclusive) */
	o.total_ms = 600000;      /* 10 min: the last finite bucket */
	o.status = 429;
	o.throttle = GW_THR_CONCURRENCY;
	o.own = gw_metrics_own_index("concurrency_limit");
	gw_metrics_record(m, &o);
	o.total_ms = 600001; /* past it: +Inf only */
	o.status = 503;
	o.throttle = -1;
	o.own = gw_metrics_own_index("backend_unavailable");
	o.uperr = GW_UPERR_CONNECT;
	gw_metrics_relay_begin(m, ROLE_CORTEX, GW_EP_CHAT);
	o.relayed = true;
	gw_metrics_record(m, &o);
	struct gw_obs x = { .role = -1, .ep = GW_EP_NONE, .status = 404, .total_ms = 1, .ttfb_ms = -1,
			    .own = gw_metrics_own_index("not_found"), .throttle = -1, .uperr = -1 };
	gw_metrics_record(m, &x);
	gw_metrics_reloaded(m);
	struct gw_expo_state st = { .workers = 2 };
	st.ready[ROLE_CORTEX] = st.feasible[ROLE_CORTEX] = true;
	char *t = gw_metrics_render(m, &st);
	const char *l = "{role=\"cortex\",route=\"/v1/chat/completions\"";
	char k[256];
#define S(fmt, ...) (snprintf(k, sizeof(k), fmt, __VA_ARGS__), sample(t, k))
	assert_int_equal(S("lobes_gateway_requests_total%s,code=\"200\"}", l), 1);
	assert_int_equal(S("lobes_gateway_requests_total%s,code=\"429\"}", l), 1);
	assert_int_equal(S("lobes_gateway_request_duration_seconds_bucket%s,le=\"0.005\"}", l), 1);
	assert_int_equal(S("lobes_gateway_request_duration_seconds_bucket%s,le=\"300\"}", l), 1);
	assert_int_equal(S("lobes_gateway_request_duration_seconds_bucket%s,le=\"600\"}", l), 2);
	assert_int_equal(S("lobes_gateway_request_duration_seconds_bucket%s,le=\"+Inf\"}", l), 3);
	assert_int_equal(S("lobes_gateway_request_duration_seconds_count%s}", l), 3);
	assert_int_equal(S("lobes_gateway_time_to_first_byte_seconds_bucket%s,le=\"0.005\"}", l), 0);
	assert_int_equal(S("lobes_gateway_time_to_first_byte_seconds_bucket%s,le=\"0.01\"}", l), 3);
	assert_int_equal(S("lobes_gateway_throttled_total%s,reason=\"concurrency\"}", l), 1);
	assert_int_equal(S("lobes_gateway_throttled_total%s,reason=\"pressure\"}", l), 0);
	assert_int_equal(S("lobes_gateway_error_answers_total%s,code=\"backend_unavailable\"}", l), 1);
	assert_int_equal(S("lobes_gateway_upstream_errors_total%s,kind=\"connect\"}", l), 1);
	assert_int_equal(S("lobes_gateway_requests_in_flight%s}", l), 0);
	assert_int_equal(S("lobes_gateway_prompt_tokens_total%s}", l), 12);
	assert_int_equal(S("lobes_gateway_completion_tokens_total%s}", l), 18);
	assert_int_equal(sample(t, "lobes_gateway_requests_total{role=\"none\",route=\"other\",code=\"404\"}"), 1);
	assert_int_equal(sample(t, "lobes_gateway_error_answers_total{role=\"none\",route=\"other\",code=\"not_found\"}"), 1);
	assert_int_equal(sample(t, "lobes_gateway_role_ready{role=\"cortex\"}"), 1);
	assert_int_equal(sample(t, "lobes_gateway_role_ready{role=\"hand\"}"), 0);
	assert_int_equal(sample(t, "lobes_gateway_config_reloads_total"), 1);
	assert_non_null(strstr(t, "lobes_gateway_build_info{version=\"9.9\"} 1\n"));
	/* a route nobody used is not shown; every family is typed once */
	assert_null(strstr(t, "route=\"/v1/embeddings\""));
	assert_non_null(strstr(t, "# TYPE lobes_gateway_request_duration_seconds histogram\n"));
	assert_null(strstr(strstr(t, "# TYPE lobes_gateway_requests_total") + 1, "# TYPE lobes_gateway_requests_total"));
	free(t);
	gw_metrics_free(m);
}

static void test_observe_auth(void **state)
{
	(void)state;
	struct gw_config c = { 0 };
	assert_false(gw_endpoint_needs_key(&c, GW_EP_METRICS));
	assert_false(gw_endpoint_needs_key(&c, GW_EP_HEALTH));
	assert_true(gw_endpoint_needs_key(&c, GW_EP_CHAT));
	c.observe_keyed = true;
	assert_true(gw_endpoint_needs_key(&c, GW_EP_METRICS));
	assert_false(gw_endpoint_needs_key(&c, GW_EP_HEALTH));
	bool ok;
	assert_int_equal(gw_endpoint_of("GET", "/metrics", &ok), GW_EP_METRICS);
	assert_true(ok);
	assert_string_equal(gw_metrics_route_label(GW_EP_RERANK), "/v1/rerank");
	assert_string_equal(gw_metrics_route_label(GW_EP_NONE), "other");
	assert_int_equal(gw_metrics_own_index("upstream_error"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_every_split),
		cmocka_unit_test(test_usage_not_counted),
		cmocka_unit_test(test_record_and_render),
		cmocka_unit_test(test_observe_auth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
