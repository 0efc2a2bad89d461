/*
 * test_gateway_access.c — the access line the gateway writes for every
 * request (log.c, gw_access_format): byte for byte what jansson writes for
 * the same object (the line used to be built and dumped with jansson, and
 * readers of the log rely on its shape), over odd strings (quotes,
 * backslashes, control bytes, slashes, non-ASCII text), every kind of
 * real jansson shortens (integers, exponents both ways, rounding at 6
 * digits), null and the optional keys; and a string that is not UTF-8,
 * which jansson refused (the line was lost), written with '?' instead.
 */
#include "testutil.h"
#include "../../src/lib/gateway/log.h"

/* What the gateway wrote before: the object dumped by jansson. */
static char *by_jansson(const struct gw_access *a)
{
	json_t *line = json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:s}", "id", a->id, "method",
				 a->method, "path", a->path ? a->path : "", "role",
				 a->role ? a->role : "", "status", a->status, "bytes",
				 (json_int_t)a->bytes, "outcome", a->outcome);
	assert_non_null(line);
	json_object_set_new(line, "upstream_ms", a->upstream_ms >= 0 ? json_real(a->upstream_ms)
								     : json_null());
	json_object_set_new(line, "total_ms", json_real(a->total_ms));
	if (a->alias)
		json_object_set_new(line, "alias", json_true());
	if (a->key)
		json_object_set_new(line, "key", json_string(a->key));
	if (a->trace_id)
		json_object_set_new(line, "trace_id", json_string(a->trace_id));
	char *s = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(line);
	return s;
}

static void same_as_jansson(const struct gw_access *a)
{
	_cleanup_free_ char *want = by_jansson(a);
	_cleanup_free_ char *got = gw_access_format(a);
	assert_string_equal(got, want);
}

static void test_access_line_matches_jansson(void **state)
{
	(void)state;
	const char *strings[] = {
		"/v1/chat/completions", "", "a\"quote", "back\\slash", "tab\there", "nl\nline",
		"ctl\x01\x1f", "del\x7f", "/path/with/slashes?q=1&b=2", "caf\xc3\xa9 \xe2\x82\xac",
		"\xf0\x9f\x98\x80 emoji", "gw-0000abcd00000001",
	};
	const double reals[] = {
		0, 0.5, 0.01, 12.34, 100, 99.99, 1000000, 1234567.89, 123456.5, 0.0001, 0.00001,
		1e-7, 3.14159265, 999999.5, 1e21, 42.1,
	};
	for (size_t i = 0; i < ARRAY_SIZE(strings); i++) {
		struct gw_access a = { .id = "req-1", .method = "POST", .path = strings[i],
				       .role = "cortex", .outcome = strings[i], .status = 200,
				       .bytes = 123, .upstream_ms = 1.5, .total_ms = 2.25 };
		same_as_jansson(&a);
		a.id = strings[i];
		a.method = strings[i];
		a.role = strings[i];
		same_as_jansson(&a);
	}
	for (size_t i = 0; i < ARRAY_SIZE(reals); i++) {
		struct gw_access a = { .id = "r", .method = "GET", .path = "/health", .role = "",
				       .outcome = "ok", .status = 404, .bytes = 1LL << 40,
				       .upstream_ms = reals[i], .total_ms = reals[i] };
		same_as_jansson(&a);
		a.upstream_ms = -1; /* null */
		a.alias = true;
		a.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
		same_as_jansson(&a);
		a.key = "alice"; /* an API key's name (keys.yaml) */
		same_as_jansson(&a);
	}
	struct gw_access unrouted = { .id = "r", .method = "POST", .path = NULL, .role = NULL,
				      .outcome = "not_found", .status = 404, .upstream_ms = -1 };
	same_as_jansson(&unrouted);
}

static void test_access_line_not_utf8(void **state)
{
	(void)state;
	struct gw_access a = { .id = "r", .method = "GET", .path = "/v1/\xff\xfe-x\xc3",
			       .role = "", .outcome = "not_found", .status = 404, .upstream_ms = -1,
			       .total_ms = 0.5 };
	json_t *refused = json_pack("{s:s}", "path", a.path); /* the old line was lost */
	assert_null(refused);
	_cleanup_free_ char *got = gw_access_format(&a);
	json_error_t je;
	json_t *j = json_loads(got, 0, &je);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "path")), "/v1/?" "?-x?");
	assert_int_equal(json_integer_value(json_object_get(j, "status")), 404);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_access_line_matches_jansson),
		cmocka_unit_test(test_access_line_not_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
