/*
 * route.c — where a request goes, decided from the snapshot alone (no I/O,
 * so it is unit-tested and fuzzed directly).
 *
 * The `model` field picks the role: a role name, a served checkpoint id
 * (<ROLE>_MODEL) or an alias; no `model` means the cortex, on every
 * endpoint (the operators' wire contract, FACTS.md "The front door"), so
 * an embeddings, rerank or score request without one is the 400 below,
 * naming the role that serves it. An infeasible role is 404
 * role_infeasible (with hosted_by when a peer is declared), never another
 * model; a role that does not serve the endpoint is 400 wrong_endpoint
 * naming the one that does; an unknown model is 404 model_not_found
 * listing what is served.
 *
 * The body is relayed byte for byte except the value of a top-level `model`
 * given as a checkpoint id or an alias, which is replaced by the role name:
 * the one served name every engine has (`--served-model-name` starts with
 * it), whatever else it serves.
 * The whole body is validated first (duplicate keys refused, so the
 * gateway and the engine cannot read different models from one body): by
 * one streaming pass (body.c), or by jansson where that pass is unsure;
 * only then is the value's byte span located by a lexical skim of the
 * already valid text (strings and nesting), and spliced.
 */
#include <string.h>
#include <strings.h>

#include "../util/cleanup.h"
#include "gateway.h"
#include "peers.h"

static const struct {
	const char *path;
	enum gw_endpoint ep;
	bool post;
} endpoints[] = {
	{ "/v1/chat/completions", GW_EP_CHAT, true },
	{ "/v1/completions", GW_EP_COMPLETIONS, true },
	{ "/v1/embeddings", GW_EP_EMBEDDINGS, true },
	{ "/v1/rerank", GW_EP_RERANK, true },
	{ "/rerank", GW_EP_RERANK, true },
	{ "/v2/rerank", GW_EP_RERANK, true },
	{ "/v1/score", GW_EP_SCORE, true },
	{ "/score", GW_EP_SCORE, true },
	{ "/tokenize", GW_EP_TOKENIZE, true },
	{ "/detokenize", GW_EP_DETOKENIZE, true },
	{ "/v1/responses", GW_EP_RESPONSES, true },
	{ "/v1/messages", GW_EP_MESSAGES, true },
	{ "/v1/audio/transcriptions", GW_EP_TRANSCRIPTIONS, true },
	{ "/v1/audio/translations", GW_EP_TRANSLATIONS, true },
	{ "/pooling", GW_EP_POOLING, true },
	{ "/classify", GW_EP_CLASSIFY, true },
	{ "/v1/models", GW_EP_MODELS, false },
	{ "/health", GW_EP_HEALTH, false },
	{ "/capabilities", GW_EP_CAPABILITIES, false },
	{ "/metrics", GW_EP_METRICS, false },
	{ "/status", GW_EP_STATUS, false },
	{ "/ui", GW_EP_UI, false },
};

enum gw_endpoint gw_endpoint_of(const char *method, const char *path, bool *method_ok)
{
	*method_ok = false;
	for (size_t i = 0; i < ARRAY_SIZE(endpoints); i++) {
		if (strcmp(path, endpoints[i].path) != 0)
			continue;
		bool post = !strcmp(method, "POST");
		bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
		*method_ok = endpoints[i].post ? post : get;
		return endpoints[i].ep;
	}
	return GW_EP_NONE;
}

bool gw_endpoint_keyless(enum gw_endpoint ep)
{
	return ep == GW_EP_HEALTH || ep == GW_EP_CAPABILITIES;
}

bool gw_endpoint_observe(enum gw_endpoint ep)
{
	return ep == GW_EP_METRICS || ep == GW_EP_STATUS || ep == GW_EP_UI;
}

bool gw_endpoint_needs_key(const struct gw_config *c, enum gw_endpoint ep)
{
	if (ep == GW_EP_UI) /* the page holds no data; it asks for the key when /status does */
		return false;
	if (gw_endpoint_observe(ep))
		return c->observe_keyed;
	return !gw_endpoint_keyless(ep);
}

bool gw_endpoint_proxied(enum gw_endpoint ep)
{
	return ep >= GW_EP_CHAT && ep <= GW_EP_CLASSIFY;
}

bool gw_endpoint_engine_checked(enum gw_endpoint ep)
{
	return ep >= GW_EP_TOKENIZE && ep <= GW_EP_CLASSIFY;
}

bool gw_endpoint_multipart(enum gw_endpoint ep)
{
	return ep == GW_EP_TRANSCRIPTIONS || ep == GW_EP_TRANSLATIONS;
}

static bool serves(const struct gw_config *c, enum role_id r, enum gw_endpoint ep)
{
	if (gw_endpoint_engine_checked(ep)) /* the engine's routes.txt (vroutes.c) */
		return (c->roles[r].routes >> ep) & 1u;
	switch (ep) {
	case GW_EP_CHAT:
	case GW_EP_COMPLETIONS:
		return role_lane(r) == LANE_GENERATE;
	case GW_EP_EMBEDDINGS:
		return r == ROLE_EMBEDDER;
	case GW_EP_RERANK:
		return r == ROLE_RERANKER;
	case GW_EP_SCORE:
		return r == ROLE_RERANKER || r == ROLE_EMBEDDER;
	default:
		return false;
	}
}

/* No `model` in the body: the cortex, on every endpoint (the operators'
 * wire contract, FACTS.md "The front door"). An embeddings or rerank
 * request without one therefore gets the wrong-endpoint 400 that names the
 * role serving that endpoint, never a silent pick of another model. */
static enum role_id default_role(enum gw_endpoint ep)
{
	(void)ep;
	return ROLE_CORTEX;
}

/* A JSON string of s; bytes of an invalid UTF-8 text (a client's model
 * name cut at 200 bytes, a parser's message quoting the input) become '?'. */
static json_t *jtext(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	char *t = xstrdup(s);
	for (char *p = t; *p; p++)
		if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
			*p = '?';
	j = json_string(t);
	free(t);
	return j;
}

char *gw_error_body(const char *message, const char *type, const char *code, const json_t *extra)
{
	json_t *e = json_pack("{s:o, s:s, s:s, s:n}", "message", jtext(message), "type", type, "code",
			      code, "param");
	if (extra)
		json_object_update(e, (json_t *)extra);
	json_t *o = json_pack("{s:o}", "error", e);
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

json_t *gw_served_names(const struct gw_config *c)
{
	json_t *a = json_array();
	for (int r = 0; r < ROLE__COUNT; r++) {
		if (!c->roles[r].feasible)
			continue;
		json_array_append_new(a, json_string(role_name((enum role_id)r)));
		if (*c->roles[r].model)
			json_array_append_new(a, json_string(c->roles[r].model));
	}
	return a;
}

static int fail(struct gw_route *out, int status, const char *type, const char *code, char *msg)
{
	out->role = -1;
	out->status = status;
	out->type = type;
	out->code = code;
	out->message = msg;
	return -1;
}

/* Skip JSON whitespace. */
static size_t ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* End (one past) of the string starting at s[i] == '"'. */
static size_t str_end(const char *s, size_t i, size_t n)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return n;
}

/* End of the value starting at s[i] (valid JSON: jansson checked it). */
static size_t value_end(const char *s, size_t i, size_t n)
{
	if (s[i] == '"')
		return str_end(s, i, n);
	if (s[i] == '{' || s[i] == '[') {
		int depth = 0;
		for (; i < n; i++) {
			if (s[i] == '"') {
				i = str_end(s, i, n) - 1;
			} else if (s[i] == '{' || s[i] == '[') {
				depth++;
			} else if (s[i] == '}' || s[i] == ']') {
				if (--depth == 0)
					return i + 1;
			}
		}
		return n;
	}
	while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' &&
	       s[i] != '\n' && s[i] != '\r')
		i++;
	return i;
}

/* Byte span [*b, *e) of the value of the top-level key "model" written
 * literally. False when not found (e.g. the key is written with escapes). */
static bool model_span(const char *s, size_t n, size_t *b, size_t *e)
{
	size_t i = ws(s, 0, n);
	if (i >= n || s[i] != '{')
		return false;
	i++;
	for (;;) {
		i = ws(s, i, n);
		if (i >= n || s[i] != '"')
			return false;
		size_t ke = str_end(s, i, n);
		bool is_model = ke - i == 7 && !memcmp(s + i, "\"model\"", 7);
		i = ws(s, ke, n);
		if (i >= n || s[i] != ':')
			return false;
		i = ws(s, i + 1, n);
		size_t ve = value_end(s, i, n);
		if (is_model) {
			*b = i;
			*e = ve;
			return true;
		}
		i = ws(s, ve, n);
		if (i >= n || s[i] != ',')
			return false;
		i++;
	}
}

static void rewrite_model(const char *body, size_t len, json_t *j, const char *served,
			  struct gw_route *out)
{
	json_t *js = json_string(served);
	char *enc = json_dumps(js, JSON_ENCODE_ANY);
	json_decref(js);
	size_t b, e;
	if (model_span(body, len, &b, &e)) {
		size_t el = strlen(enc);
		out->body_len = b + el + (len - e);
		out->body = xcalloc(1, out->body_len + 1);
		memcpy(out->body, body, b);
		memcpy(out->body + b, enc, el);
		memcpy(out->body + b + el, body + e, len - e);
	} else {
		/* the key was written with escapes: re-encode, order kept (the
		 * body is valid: body.c or jansson said so) */
		json_t *t = j ? json_incref(j) : json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
		json_object_set_new(t, "model", json_string(served));
		out->body = t ? json_dumps(t, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		out->body_len = out->body ? strlen(out->body) : 0;
		json_decref(t);
	}
	free(enc);
}

const char *gw_endpoint_path(enum gw_endpoint ep)
{
	for (size_t i = 0; i < ARRAY_SIZE(endpoints); i++)
		if (endpoints[i].ep == ep)
			return endpoints[i].path;
	return "?";
}

/* 400: role r does not serve ep; name the role(s) that do. */
static int wrong_endpoint(const struct gw_config *c, enum role_id r, enum gw_endpoint ep,
			  bool defaulted, struct gw_route *out)
{
	json_t *by = json_array();
	_cleanup_free_ char *names = xstrdup("");
	bool engine = gw_endpoint_engine_checked(ep);
	for (int o = 0; o < ROLE__COUNT; o++) {
		bool here = c->roles[o].feasible || gw_role_proxy_peer(c, o);
		if (!serves(c, (enum role_id)o, ep) || (engine && !here))
			continue; /* route_not_served names the roles served by this box only */
		json_array_append_new(by, json_string(role_name((enum role_id)o)));
		char *n = xasprintf("%s%s'%s'%s", names, *names ? " or " : "", role_name((enum role_id)o),
				    c->roles[o].feasible || engine ? "" : " (infeasible here)");
		free(names);
		names = n;
	}
	const char *why = defaulted ? "a request without 'model' goes to the cortex; " : "";
	if (engine) {
		const struct gw_role *gr = &c->roles[r];
		out->extra = json_pack("{s:s, s:o}", "role", role_name(r), "served_by", by);
		return fail(out, 404, "invalid_request_error", "route_not_served",
			    xasprintf("%srole '%s' does not serve %s: its engine (%s%s) does not register "
				      "it for a %s model%s%s",
				      why, role_name(r), gw_endpoint_path(ep),
				      gr->vllm_version ? "vLLM " : "an image lobes has not recorded",
				      gr->vllm_version ? gr->vllm_version : "", lane_name(role_lane(r)),
				      *names ? "; use model " : "; no role on this box serves it", names));
	}
	out->extra = json_pack("{s:o}", "served_by", by);
	return fail(out, 400, "invalid_request_error", "wrong_endpoint",
		    xasprintf("%srole '%s' (%s) does not serve %s; use model %s", why, role_name(r),
			      lane_name(role_lane(r)), gw_endpoint_path(ep), names));
}

/* The role of model (NULL: the default) for ep, or an error in out. */
static int pick(const struct gw_config *c, enum gw_endpoint ep, const char *model,
		struct gw_route *out)
{
	int role = -1;
	if (!model) {
		role = default_role(ep);
	} else if ((role = role_from_name(model)) >= 0) {
		/* the role name is one of the engine's served names */
	} else {
		for (int r = 0; r < ROLE__COUNT && role < 0; r++)
			if (*c->roles[r].model && !strcmp(c->roles[r].model, model))
				role = r;
		for (size_t i = 0; i < c->n_aliases && role < 0; i++)
			if (!strcmp(c->aliases[i].name, model)) {
				role = (int)c->aliases[i].role;
				out->via_alias = true;
			}
	}
	if (role < 0) {
		out->extra = json_pack("{s:o}", "served", gw_served_names(c));
		return fail(out, 404, "invalid_request_error", "model_not_found",
			    xasprintf("the model '%.200s' does not exist on this box", model));
	}
	const struct gw_role *gr = &c->roles[role];
	if (!gr->feasible && gw_role_proxy_peer(c, role)) {
		out->proxied = true; /* peers.yaml: relayed to the peer's gateway */
	} else if (!gr->feasible) {
		if (gr->hosted_by)
			out->extra = json_pack("{s:s, s:s}", "role", role_name((enum role_id)role),
					       "hosted_by", gr->hosted_by);
		else
			out->extra = json_pack("{s:s}", "role", role_name((enum role_id)role));
		return fail(out, 404, "role_infeasible", "role_infeasible",
			  xasprintf("role '%s' is not served on this box: profile '%s' declares it infeasible%s%s",
				    role_name((enum role_id)role), c->profile,
				    gr->hosted_by ? "; it is hosted by " : "",
				    gr->hosted_by ? gr->hosted_by : ""));
	}
	if (!serves(c, (enum role_id)role, ep))
		return wrong_endpoint(c, (enum role_id)role, ep, model == NULL, out);
	out->role = role;
	return 0;
}

int gw_route_request(const struct gw_config *c, enum gw_endpoint ep, const char *body,
		     size_t len, struct gw_route *out)
{
	memset(out, 0, sizeof(*out));
	out->role = -1;
	if (!gw_endpoint_proxied(ep))
		return fail(out, 404, "invalid_request_error", "not_found", xstrdup("no such route"));
	/* one streaming pass (body.c); jansson's tree only where that pass is
	 * unsure, for its verdict and its error text */
	struct gw_body fast;
	json_t *j = NULL;
	const char *model = NULL;
	int rc = 0;
	if (gw_body_scan(body, len, &fast) == GW_BODY_OK) {
		out->stream = fast.stream;
		model = fast.model;
	} else {
		json_error_t je;
		j = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);
		if (!j || !json_is_object(j)) {
			rc = fail(out, 400, "invalid_request_error", "invalid_json",
				  j ? xstrdup("the request body is not a JSON object")
				    : xasprintf("the request body is not valid JSON: %s at line %d column %d",
						je.text, je.line, je.column));
			goto out;
		}
		out->stream = json_is_true(json_object_get(j, "stream"));
		json_t *jm = json_object_get(j, "model");
		if (jm && !json_is_null(jm) && !json_is_string(jm)) {
			rc = fail(out, 400, "invalid_request_error", "invalid_model",
				  xstrdup("'model' is not a string; expected a role name, a served model id or an alias"));
			goto out;
		}
		model = json_is_string(jm) ? json_string_value(jm) : NULL;
	}
	rc = pick(c, ep, model, out);
	if (rc < 0)
		goto out;
	int role = out->role;
	if (model && strcmp(model, role_name((enum role_id)role)) != 0)
		rewrite_model(body, len, j, role_name((enum role_id)role), out);
out:
	json_decref(j);
	gw_body_free(&fast);
	return rc;
}

char *gw_body_with_model(const char *body, size_t len, const char *model, size_t *out_len)
{
	json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	struct gw_route r = { 0 };
	rewrite_model(body, len, j, model, &r);
	json_decref(j);
	*out_len = r.body_len;
	return r.body;
}

int gw_route_model(const struct gw_config *c, enum gw_endpoint ep, const char *model,
		   struct gw_route *out)
{
	memset(out, 0, sizeof(*out));
	out->role = -1;
	if (!gw_endpoint_proxied(ep))
		return fail(out, 404, "invalid_request_error", "not_found", xstrdup("no such route"));
	return pick(c, ep, model, out);
}

void gw_route_free(struct gw_route *r)
{
	free(r->body);
	free(r->message);
	json_decref(r->extra);
	memset(r, 0, sizeof(*r));
	r->role = -1;
}
