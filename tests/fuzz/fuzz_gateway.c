/* fuzz_gateway.c — what a client sends the gateway: the endpoint of a
 * method and path, the bearer check, and the routing of a request body
 * (JSON validation, model lookup, the byte-for-byte `model` rewrite), plus
 * an operator's gateway.yaml alias file. Input: byte 0 picks the endpoint,
 * byte 1 the mode (body / path+auth / aliases), the rest is the text.
 * Invariants: a routed request names a feasible role that serves the
 * endpoint; a rewritten body is valid JSON whose `model` is that role's name
 * and whose other members are unchanged; an error has a 4xx status and an
 * OpenAI-shaped body; the streaming body pass (body.c) reads what jansson
 * reads (the same model and stream) whenever it does not leave the body to
 * jansson. See fuzz.h. */
#include <jansson.h>

#include "../../src/lib/gateway/gateway.h"
#include "fuzz.h"

static struct gw_config *cfg(void)
{
	static struct gw_config c;
	static bool done;
	if (done)
		return &c;
	done = true;
	c.refs = 1;
	c.profile = (char *)"thor";
	c.card = (char *)"thor";
	c.key = (char *)"k-secret";
	c.dir = (char *)"/nonexistent"; /* no keys.yaml: the default key alone */
	if (gw_keys_load(&c, NULL) < 0)
		abort();
	static const char *models[ROLE__COUNT] = { "org/Big-27B", "org/Eyes-12B", "org/Small-1B",
						   "org/Embed-0.6B", "org/Rerank-0.6B" };
	for (int r = 0; r < ROLE__COUNT; r++) {
		c.roles[r].feasible = r != ROLE_HAND;
		c.roles[r].port = 9000 + r;
		c.roles[r].model = (char *)models[r];
		c.roles[r].quantization = (char *)"";
	}
	c.roles[ROLE_HAND].hosted_by = (char *)"http://peer:8000";
	const char *a = "aliases:\n  chat: cortex\n  embed: embedder\n  small: hand\n";
	if (gw_aliases_parse(&c, a, strlen(a), "seed", NULL) < 0)
		abort();
	return &c;
}

/* body.c's verdict, when it gives one, is jansson's */
static void check_body_scan(const char *body, size_t len)
{
	struct gw_body fb;
	if (gw_body_scan(body, len, &fb) == GW_BODY_OK) {
		json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
		json_t *m = json_object_get(j, "model");
		if (!json_is_object(j) || (m && !json_is_null(m) && !json_is_string(m)))
			abort();
		const char *ms = json_string_value(m);
		if (!ms != !fb.model || (ms && strcmp(ms, fb.model) != 0))
			abort();
		if (fb.stream != json_is_true(json_object_get(j, "stream")))
			abort();
		json_decref(j);
	}
	gw_body_free(&fb);
}

static void check_route(const struct gw_config *c, enum gw_endpoint ep, const char *body, size_t len)
{
	check_body_scan(body, len);
	struct gw_route r;
	int rc = gw_route_request(c, ep, body, len, &r);
	if (rc == 0) {
		if (r.role < 0 || r.role >= ROLE__COUNT || !c->roles[r.role].feasible || r.status)
			abort();
		if (r.body) {
			json_t *a = json_loadb(r.body, r.body_len, 0, NULL);
			json_t *b = json_loadb(body, len, 0, NULL);
			if (!a || !b)
				abort();
			if (strcmp(json_string_value(json_object_get(a, "model")),
				   role_name((enum role_id)r.role)) != 0)
				abort();
			json_object_del(a, "model");
			json_object_del(b, "model");
			if (!json_equal(a, b))
				abort();
			json_decref(a);
			json_decref(b);
		}
	} else {
		if (r.status < 400 || r.status > 499 || !r.message || !r.type || !r.code)
			abort();
		char *e = gw_error_body(r.message, r.type, r.code, r.extra);
		json_t *j = e ? json_loads(e, 0, NULL) : NULL;
		if (!json_is_object(json_object_get(j, "error")))
			abort();
		json_decref(j);
		free(e);
	}
	gw_route_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct gw_config *c = cfg();
	enum gw_endpoint ep = (enum gw_endpoint)(data[0] % GW_EP__COUNT);
	_cleanup_free_ char *text = fuzz_cstr(data + 2, size - 2);
	switch (data[1] % 3) {
	case 0:
		check_route(c, ep, text, size - 2);
		break;
	case 1: {
		bool ok;
		enum gw_endpoint e = gw_endpoint_of((data[0] & 1) ? "POST" : "GET", text, &ok);
		if (e == GW_EP_NONE && ok)
			abort();
		/* the header holds text up to its first NUL, as an HTTP header would */
		char *h = xasprintf("Bearer %s", text);
		if ((gw_key_of(c, h) != NULL) != (strcmp(text, c->key) == 0))
			abort();
		free(h);
		break;
	}
	default: {
		struct gw_config tmp = { .refs = 1 };
		struct err *e = NULL;
		int rc = gw_aliases_parse(&tmp, text, size - 2, "gateway.yaml", &e);
		fuzz_check_err(rc, e);
		for (size_t i = 0; i < tmp.n_aliases; i++) {
			if (tmp.aliases[i].role >= ROLE__COUNT)
				abort();
			free(tmp.aliases[i].name);
			free(tmp.aliases[i].source);
		}
		free(tmp.aliases);
	}
	}
	return 0;
}
