/*
 * test_gateway.c — the gateway's pure parts: routing (role by name, served
 * id, alias, default; infeasible, wrong endpoint, unknown model), the
 * byte-for-byte `model` rewrite, bearer checks, the settings loader's
 * errors with positions, the key file mode rule, the bind rule, and the
 * pressure policy (iowait off on a card where it lies).
 */
#include <sys/stat.h>

#include "testutil.h"
#include "../../src/lib/gateway/gateway.h"
#include "../../src/lib/util/fs.h"

static char *mkdeploy(const char *env, mode_t mode)
{
	char tmpl[] = "/tmp/lobes-gw-unit.XXXXXX";
	char *d = xstrdup(mkdtemp(tmpl));
	_cleanup_free_ char *p = xasprintf("%s/.env", d);
	assert_int_equal(fs_write_atomic(p, env, strlen(env), mode, NULL), 0);
	return d;
}

static void rmdeploy(char *d)
{
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

static const char *FLEET =
	"LOBES_PROFILE=spark\nLOBES_CARD=spark\n"
	"CORTEX_FEASIBLE=true\nCORTEX_PORT=9001\nCORTEX_MODEL=org/Big-27B\nCORTEX_MAX_MODEL_LEN=131072\n"
	"CORTEX_TOOL_CALL_PARSER=hermes\n"
	"SENSES_FEASIBLE=false\nSENSES_MODEL=org/Eyes-12B\n"
	"HAND_FEASIBLE=true\nHAND_PORT=9003\nHAND_MODEL=org/Small-1B\n"
	"EMBEDDER_FEASIBLE=true\nEMBEDDER_PORT=9004\nEMBEDDER_MODEL=org/Embed-0.6B\n"
	"RERANKER_FEASIBLE=true\nRERANKER_PORT=9005\nRERANKER_MODEL=org/Rerank-0.6B\n"
	"LOBES_GATEWAY_PEER_SENSES=http://orin.lan:8000\n";

static struct gw_config *load(const char *env, struct err **e)
{
	char *d = mkdeploy(env, 0600);
	struct gw_config *c = gw_config_load(d, NULL, e);
	rmdeploy(d);
	return c;
}

static void test_route_by_name_id_alias(void **state)
{
	(void)state;
	struct err *e = NULL;
	struct gw_config *c = load(FLEET, &e);
	assert_non_null(c);
	struct gw_route r;
	const char *b1 = "{\"model\":\"cortex\",\"messages\":[]}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b1, strlen(b1), &r), 0);
	assert_int_equal(r.role, ROLE_CORTEX);
	assert_null(r.body); /* the role name is served: relayed untouched */
	gw_route_free(&r);
	const char *b2 = "{\"model\":\"org/Small-1B\",\"stream\":true}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b2, strlen(b2), &r), 0);
	assert_int_equal(r.role, ROLE_HAND);
	assert_true(r.stream);
	assert_string_equal(r.body, "{\"model\":\"hand\",\"stream\":true}");
	gw_route_free(&r);
	/* alias: only the model value changes, every other byte stays */
	const char *b3 = "{ \"temperature\" : 0.70, \"x\":{\"model\":\"no\"},\n \"model\" :\"embed\" ,\"input\":[\"\\u00e9\"]}";
	assert_int_equal(gw_route_request(c, GW_EP_EMBEDDINGS, b3, strlen(b3), &r), 0);
	assert_int_equal(r.role, ROLE_EMBEDDER);
	assert_true(r.via_alias);
	assert_string_equal(r.body, "{ \"temperature\" : 0.70, \"x\":{\"model\":\"no\"},\n \"model\" :\"embedder\" ,\"input\":[\"\\u00e9\"]}");
	assert_int_equal(r.body_len, strlen(r.body));
	gw_route_free(&r);
	/* no model: the cortex; the body is relayed as it came */
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, "{}", 2, &r), 0);
	assert_int_equal(r.role, ROLE_CORTEX);
	assert_null(r.body);
	gw_route_free(&r);
	/* no model on rerank or embeddings: the cortex too, which does not
	 * serve them: a 400 naming the role that does */
	assert_int_equal(gw_route_request(c, GW_EP_RERANK, "{}", 2, &r), -1);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.message, "reranker"));
	gw_route_free(&r);
	assert_int_equal(gw_route_request(c, GW_EP_EMBEDDINGS, "{\"input\":\"x\"}", 13, &r), -1);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.message, "embedder"));
	gw_route_free(&r);
	gw_config_unref(c);
}

static void test_route_errors(void **state)
{
	(void)state;
	struct err *e = NULL;
	struct gw_config *c = load(FLEET, &e);
	assert_non_null(c);
	struct gw_route r;
	const char *b = "{\"model\":\"senses\"}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b, strlen(b), &r), -1);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "role_infeasible");
	assert_string_equal(json_string_value(json_object_get(r.extra, "hosted_by")),
			    "http://orin.lan:8000");
	gw_route_free(&r);
	/* the infeasible role's checkpoint id is the same honest 404 */
	b = "{\"model\":\"org/Eyes-12B\"}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b, strlen(b), &r), -1);
	assert_string_equal(r.code, "role_infeasible");
	gw_route_free(&r);
	b = "{\"model\":\"cortex\",\"input\":\"x\"}";
	assert_int_equal(gw_route_request(c, GW_EP_EMBEDDINGS, b, strlen(b), &r), -1);
	assert_int_equal(r.status, 400);
	assert_string_contains(r.message, "'embedder'");
	gw_route_free(&r);
	b = "{\"model\":\"gpt-4o\"}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b, strlen(b), &r), -1);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "model_not_found");
	json_t *served = json_object_get(r.extra, "served");
	assert_int_equal(json_array_size(served), 8); /* 4 feasible roles x 2 names */
	_cleanup_free_ char *body = gw_error_body(r.message, r.type, r.code, r.extra);
	assert_string_contains(body, "{\"error\":{\"message\":");
	assert_string_contains(body, "\"type\":\"invalid_request_error\",\"code\":\"model_not_found\"");
	gw_route_free(&r);
	/* a model name cut inside a UTF-8 sequence still gives a JSON error body */
	_cleanup_free_ char *lb = xasprintf("{\"model\":\"%0199d\xc3\xa9\"}", 0); /* 199 digits, then a 2-byte letter */
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, lb, strlen(lb), &r), -1);
	_cleanup_free_ char *ub = gw_error_body(r.message, r.type, r.code, r.extra);
	assert_non_null(ub);
	assert_string_contains(ub, "0000?' does not exist");
	gw_route_free(&r);
	/* duplicate keys could make the gateway and the engine disagree */
	b = "{\"model\":\"hand\",\"model\":\"cortex\"}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b, strlen(b), &r), -1);
	assert_int_equal(r.status, 400);
	gw_route_free(&r);
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, "[1]", 3, &r), -1);
	assert_int_equal(r.status, 400);
	gw_route_free(&r);
	b = "{\"model\":7}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b, strlen(b), &r), -1);
	assert_string_equal(r.code, "invalid_model");
	gw_route_free(&r);
	gw_config_unref(c);
}

static void test_endpoints_and_auth(void **state)
{
	(void)state;
	bool ok;
	assert_int_equal(gw_endpoint_of("POST", "/v2/rerank", &ok), GW_EP_RERANK);
	assert_true(ok);
	assert_int_equal(gw_endpoint_of("GET", "/v1/chat/completions", &ok), GW_EP_CHAT);
	assert_false(ok);
	assert_int_equal(gw_endpoint_of("GET", "/v1/nothing", &ok), GW_EP_NONE);
	assert_true(gw_endpoint_keyless(GW_EP_HEALTH) && gw_endpoint_keyless(GW_EP_CAPABILITIES));
	assert_false(gw_endpoint_keyless(GW_EP_MODELS));
	struct gw_config c = { .key = (char *)"s3cret-key", .dir = (char *)"/nonexistent" };
	struct err *e = NULL;
	assert_int_equal(gw_keys_load(&c, &e), 0); /* no keys.yaml: the default key alone */
	assert_true(gw_auth_required(&c));
	assert_string_equal(gw_key_of(&c, "Bearer s3cret-key")->name, "default");
	assert_non_null(gw_key_of(&c, "bearer s3cret-key"));
	assert_null(gw_key_of(&c, "Bearer s3cret-kez"));
	assert_null(gw_key_of(&c, "Bearer s3cret-key2"));
	assert_null(gw_key_of(&c, "Bearer s3cret"));
	assert_null(gw_key_of(&c, "Basic s3cret-key"));
	assert_null(gw_key_of(&c, NULL));
	gw_keys_free(c.keys);
	assert_true(gw_bind_is_loopback("127.0.0.1") && gw_bind_is_loopback("127.1.2.3"));
	assert_false(gw_bind_is_loopback("0.0.0.0"));
}

static void test_config_errors(void **state)
{
	(void)state;
	struct err *e = NULL;
	_cleanup_free_ char *bad = xasprintf("%sLOBES_GATEWAY_PORT=eighty\n", FLEET);
	assert_null(load(bad, &e));
	assert_string_contains(e->msg, ".env:20: LOBES_GATEWAY_PORT 'eighty' is not valid; expected an integer 0-65535");
	err_free(e);
	e = NULL;
	_cleanup_free_ char *open = xasprintf("%sLOBES_GATEWAY_BIND=0.0.0.0\n", FLEET);
	assert_null(load(open, &e));
	assert_string_contains(e->msg, "refusing to listen on '0.0.0.0' without an API key");
	err_free(e);
	e = NULL;
	/* with a key in .env (0600) it may */
	_cleanup_free_ char *keyed =
		xasprintf("%sLOBES_GATEWAY_BIND=0.0.0.0\nLOBES_GATEWAY_API_KEY=k1\n", FLEET);
	struct gw_config *c = load(keyed, &e);
	assert_non_null(c);
	assert_string_equal(c->key, "k1");
	gw_config_unref(c);
	/* a key file others can read is refused */
	char *d = mkdeploy(FLEET, 0600);
	_cleanup_free_ char *kf = xasprintf("%s/gateway.key", d);
	assert_int_equal(fs_write_atomic(kf, "abc\n", 4, 0644, NULL), 0);
	assert_null(gw_config_load(d, NULL, &e));
	assert_string_contains(e->msg, "has mode 0644; expected 0600");
	err_free(e);
	e = NULL;
	assert_int_equal(chmod(kf, 0600), 0);
	c = gw_config_load(d, NULL, &e);
	assert_non_null(c);
	assert_string_equal(c->key, "abc");
	gw_config_unref(c);
	/* operator aliases: a bad role is an error at its position */
	_cleanup_free_ char *gy = xasprintf("%s/gateway.yaml", d);
	const char *y = "aliases:\n  mybot: cortex\n  other: brain\n";
	assert_int_equal(fs_write_atomic(gy, y, strlen(y), 0644, NULL), 0);
	assert_null(gw_config_load(d, NULL, &e));
	assert_string_contains(e->msg, "gateway.yaml:3:10: alias 'other' names 'brain'; expected a role");
	err_free(e);
	e = NULL;
	y = "aliases:\n  mybot: cortex\n  chat: hand\n";
	assert_int_equal(fs_write_atomic(gy, y, strlen(y), 0644, NULL), 0);
	c = gw_config_load(d, NULL, &e);
	assert_non_null(c);
	struct gw_route r;
	const char *b = "{\"model\":\"chat\"}";
	assert_int_equal(gw_route_request(c, GW_EP_CHAT, b, strlen(b), &r), 0);
	assert_int_equal(r.role, ROLE_HAND); /* the operator's alias wins over the shipped one */
	gw_route_free(&r);
	gw_config_unref(c);
	rmdeploy(d);
}

static void test_pressure_policy(void **state)
{
	(void)state;
	struct err *e = NULL;
	struct gw_config *c = load(FLEET, &e);
	assert_non_null(c);
	const char *why;
	assert_false(c->iowait_off_by_card);
	assert_false(gw_pressure_shed(c, 10, 10, &why));
	assert_true(gw_pressure_shed(c, 80, 0, &why));
	assert_string_equal(why, "swap");
	assert_true(gw_pressure_shed(c, 0, 59, &why));
	assert_string_equal(why, "iowait");
	gw_config_unref(c);
	/* Orin: iowait reads ~59% with no disk I/O (trait 7): off there */
	_cleanup_free_ char *orin = xasprintf("LOBES_CARD=orin\n%s", FLEET + strlen("LOBES_PROFILE=spark\nLOBES_CARD=spark\n"));
	c = load(orin, &e);
	assert_non_null(c);
	assert_true(c->iowait_off_by_card);
	assert_false(gw_pressure_shed(c, 0, 59, &why));
	assert_true(gw_pressure_shed(c, 90, 59, &why));
	gw_config_unref(c);
	_cleanup_free_ char *off = xasprintf("%sLOBES_GATEWAY_SWAP_MAX=100\n", FLEET);
	c = load(off, &e);
	assert_false(gw_pressure_shed(c, 99, 0, &why));
	gw_config_unref(c);
}

static void test_capabilities(void **state)
{
	(void)state;
	struct err *e = NULL;
	struct gw_config *c = load(FLEET, &e);
	bool ready[ROLE__COUNT] = { true, false, false, true, false };
	json_t *caps = gw_capabilities(c, ready);
	json_t *roles = json_object_get(caps, "roles");
	assert_int_equal(json_array_size(roles), ROLE__COUNT);
	json_t *cx = json_array_get(roles, ROLE_CORTEX), *se = json_array_get(roles, ROLE_SENSES);
	assert_true(json_is_true(json_object_get(cx, "tools")));
	assert_int_equal(json_integer_value(json_object_get(cx, "context")), 131072);
	assert_true(json_is_true(json_object_get(cx, "ready")));
	assert_true(json_is_false(json_object_get(se, "feasible")));
	assert_string_equal(json_string_value(json_object_get(se, "hosted_by")), "http://orin.lan:8000");
	json_decref(caps);
	json_t *m = gw_models(c, ready);
	json_t *data = json_object_get(m, "data");
	assert_int_equal(json_array_size(data), 4); /* cortex and embedder, two names each */
	assert_string_equal(json_string_value(json_object_get(json_array_get(data, 1), "id")), "org/Big-27B");
	json_decref(m);
	gw_config_unref(c);
}

/* routes.txt → the routes a role serves: by the task column, POST only,
 * "always" for every role, a|b for either task. */
static void test_vllm_routes(void **state)
{
	(void)state;
	const char *txt = "# vLLM x commit y\n"
			  "/tokenize\tPOST\talways\talways\tf.py:1\n"
			  "/v1/responses\tPOST\tgenerate\t'generate' in t\tf.py:2\n"
			  "/classify\tPOST\tclassify\t'classify' in t\tf.py:3\n"
			  "/pooling\tGET\tpooling\tp\tf.py:4\n"
			  "/v1/messages\tPOST\tembed|generate\tx\tf.py:5\n"
			  "/detokenize\tPOST\n";
	unsigned g = gw_vllm_routes_of(ROLE_CORTEX, txt), r = gw_vllm_routes_of(ROLE_RERANKER, txt);
	unsigned e = gw_vllm_routes_of(ROLE_EMBEDDER, txt);
	assert_int_equal(g, (1u << GW_EP_TOKENIZE) | (1u << GW_EP_RESPONSES) | (1u << GW_EP_MESSAGES));
	assert_int_equal(r, (1u << GW_EP_TOKENIZE) | (1u << GW_EP_CLASSIFY));
	assert_int_equal(e, (1u << GW_EP_TOKENIZE) | (1u << GW_EP_MESSAGES));
	assert_int_equal(gw_vllm_routes_of(ROLE_HAND, NULL), 0);
	/* the shipped lists: an unknown image gets what every recorded vLLM serves */
	struct err *err = NULL;
	struct gw_config *c = load(FLEET, &err);
	assert_non_null(c);
	assert_null(c->roles[ROLE_CORTEX].vllm_version);
	assert_true((c->roles[ROLE_CORTEX].routes >> GW_EP_RESPONSES) & 1u);
	assert_false((c->roles[ROLE_CORTEX].routes >> GW_EP_POOLING) & 1u);
	assert_true((c->roles[ROLE_RERANKER].routes >> GW_EP_CLASSIFY) & 1u);
	assert_false((c->roles[ROLE_EMBEDDER].routes >> GW_EP_CLASSIFY) & 1u);
	assert_true((c->roles[ROLE_EMBEDDER].routes >> GW_EP_POOLING) & 1u);
	struct gw_route rt;
	assert_int_equal(gw_route_model(c, GW_EP_TRANSCRIPTIONS, "org/Small-1B", &rt), 0);
	assert_int_equal(rt.role, ROLE_HAND);
	assert_null(rt.body);
	gw_route_free(&rt);
	assert_int_equal(gw_route_model(c, GW_EP_CLASSIFY, "embedder", &rt), -1);
	assert_int_equal(rt.status, 404);
	assert_string_equal(rt.code, "route_not_served");
	gw_route_free(&rt);
	gw_config_unref(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_by_name_id_alias),
		cmocka_unit_test(test_route_errors),
		cmocka_unit_test(test_endpoints_and_auth),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_pressure_policy),
		cmocka_unit_test(test_capabilities),
		cmocka_unit_test(test_vllm_routes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
