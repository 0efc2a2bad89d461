/*
 * test_render_edges.c — the render's templates refused with their
 * file:line:column when they are not what the render needs: not a
 * mapping, a missing or non-scalar value, a port or retry count that is not
 * a whole number in range (each bound, and past the range of a long), for
 * the fleet template and the Kubernetes one alike.
 */
#include "testutil.h"

#include "../../src/lib/render/render.h"

#define HC "healthcheck:\n  interval: 15s\n  timeout: 5s\n  retries: %s\n  start_period: 900s\n"
#define HF "hf_cache:\n  host: ~/.cache/huggingface\n  container: /root/.cache/huggingface\n"
#define PORTS "ports:\n  cortex: %s\n  senses: 8002\n  hand: 8003\n  embedder: 8004\n  reranker: 8005\n"

/* fleet_template_parse of text: the message (caller frees), or NULL with
 * *t filled (caller frees *t). */
static char *fleet(const char *text, struct fleet_template *t)
{
	struct err *e = NULL;
	if (fleet_template_parse(t, "f.yaml", text, strlen(text), &e) == 0)
		return NULL;
	assert_null(t->source); /* freed on failure */
	return test_err_msg(e, EXIT_CONFIG);
}

static char *fleet_with(const char *retries, const char *port, struct fleet_template *t)
{
	_cleanup_free_ char *text = xasprintf("kind: template\n" HF HC PORTS, retries, port);
	return fleet(text, t);
}

static void test_fleet_template(void **state)
{
	(void)state;
	struct fleet_template t;
	/* the bounds are accepted */
	assert_null(fleet_with("0", "1", &t));
	assert_int_equal(t.hc_retries, 0);
	assert_int_equal(t.ports[ROLE_CORTEX], 1);
	assert_int_equal(t.ports[ROLE_RERANKER], 8005);
	assert_string_equal(t.hc_start_period, "900s");
	fleet_template_free(&t);
	assert_null(fleet_with("100", "65535", &t));
	assert_int_equal(t.hc_retries, 100);
	assert_int_equal(t.ports[ROLE_CORTEX], 65535);
	fleet_template_free(&t);
	/* one past each bound, and what is not a whole number */
	static const struct {
		const char *retries, *port, *want;
	} bad[] = {
		{ "3", "0", "f.yaml:11:11: '/ports/cortex' is '0'; expected a whole number 1-65535" },
		{ "3", "65536", "f.yaml:11:11: '/ports/cortex' is '65536'; expected a whole number 1-65535" },
		{ "3", "80x", "f.yaml:11:11: '/ports/cortex' is '80x'; expected a whole number 1-65535" },
		{ "3", "\"\"", "f.yaml:11:11: '/ports/cortex' is ''; expected a whole number 1-65535" },
		{ "3", "99999999999999999999",
		  "f.yaml:11:11: '/ports/cortex' is '99999999999999999999'; expected a whole number 1-65535" },
		{ "3", "[8001]", "f.yaml:11:11: '/ports/cortex' missing or not a scalar; expected a value" },
		{ "-1", "8001", "f.yaml:8:12: '/healthcheck/retries' is '-1'; expected a whole number 0-100" },
		{ "101", "8001", "f.yaml:8:12: '/healthcheck/retries' is '101'; expected a whole number 0-100" },
		{ "three", "8001", "f.yaml:8:12: '/healthcheck/retries' is 'three'; expected a whole number 0-100" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		_cleanup_free_ char *m = fleet_with(bad[i].retries, bad[i].port, &t);
		if (!m || strcmp(m, bad[i].want) != 0)
			fail_msg("retries %s port %s\n got: %s\nwant: %s", bad[i].retries, bad[i].port,
				 m ? m : "(loaded)", bad[i].want);
	}
	/* a missing value is reported at the document */
	_cleanup_free_ char *m1 = fleet("kind: template\n" HF "ports: {}\n", &t);
	assert_string_equal(m1, "f.yaml:1:1: '/healthcheck/interval' missing or not a scalar; expected a value");
	_cleanup_free_ char *m2 = fleet("kind: template\nhf_cache: {host: x}\n", &t);
	assert_string_equal(m2, "f.yaml:1:1: '/hf_cache/container' missing or not a scalar; expected a value");
	/* a mapping where a scalar belongs is reported where it is */
	_cleanup_free_ char *m3 = fleet("kind: template\nhf_cache:\n  host: {a: b}\n", &t);
	assert_string_equal(m3, "f.yaml:3:9: '/hf_cache/host' missing or not a scalar; expected a value");
	/* not a mapping */
	_cleanup_free_ char *m4 = fleet("- a\n- b\n", &t);
	assert_non_null(m4);
	assert_string_contains(m4, "f.yaml:1:1: ");
	assert_string_contains(m4, "mapping");
}

static void test_k8s_template_ints(void **state)
{
	(void)state;
	static const char base[] = "namespace: a\nlobes_image: b\nshm_size: c\nhf_cache_host: d\n"
				   "adapters_host: e\ngpu_resource: f\nruntime_class: g\nprofile_label: h\n"
				   "gateway_port: %s\ntermination_grace_seconds: %s\n";
	static const struct {
		const char *port, *grace, *want;
	} cases[] = {
		{ "1", "3600", NULL },
		{ "65535", "1", NULL },
		{ "0", "5", "k.yaml:9:15: '/gateway_port' is '0'; expected a whole number 1-65535" },
		{ "8000", "0", "k.yaml:10:28: '/termination_grace_seconds' is '0'; expected a whole number 1-3600" },
		{ "8000", "3601", "k.yaml:10:28: '/termination_grace_seconds' is '3601'; expected a whole number 1-3600" },
		{ "8000", "5s", "k.yaml:10:28: '/termination_grace_seconds' is '5s'; expected a whole number 1-3600" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *text = xasprintf(base, cases[i].port, cases[i].grace);
		struct k8s_template kt;
		struct err *e = NULL;
		int rc = k8s_template_parse(&kt, "k.yaml", text, strlen(text), &e);
		if (!cases[i].want) {
			assert_int_equal(rc, 0);
			assert_int_equal(kt.gateway_port, (int)strtol(cases[i].port, NULL, 10));
			assert_int_equal(kt.grace_seconds, (int)strtol(cases[i].grace, NULL, 10));
			k8s_template_free(&kt);
			continue;
		}
		assert_int_equal(rc, -1);
		if (strcmp(e->msg, cases[i].want) != 0)
			fail_msg("port %s grace %s\n got: %s\nwant: %s", cases[i].port, cases[i].grace,
				 e->msg, cases[i].want);
		assert_int_equal(e->code, EXIT_CONFIG);
		err_free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet_template),
		cmocka_unit_test(test_k8s_template_ints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
