/*
 * caps.c — the gateway's own answers: /capabilities (every role, feasible or
 * not, with what it serves and whether it is ready) and /v1/models (ready
 * roles only, each under its role name and its served checkpoint id).
 * `ready` comes from the upstream thread's background /health poll.
 */
#include <string.h>

#include "gateway.h"

const char *gw_endpoint_path_of_role(enum role_id r)
{
	return r == ROLE_EMBEDDER ? "/v1/embeddings"
	       : r == ROLE_RERANKER ? "/v1/rerank"
				    : "/v1/chat/completions";
}

json_t *gw_capabilities(const struct gw_config *c, const bool ready[ROLE__COUNT])
{
	json_t *roles = json_array();
	for (int r = 0; r < ROLE__COUNT; r++) {
		const struct gw_role *g = &c->roles[r];
		const char *name = role_name((enum role_id)r);
		json_t *names = json_array();
		json_array_append_new(names, json_string(name));
		if (*g->model)
			json_array_append_new(names, json_string(g->model));
		json_t *o = json_pack("{s:s, s:s, s:o, s:s, s:s, s:b, s:b, s:b, s:b}", "role", name,
				      "model", g->model, "served_names", names, "endpoint",
				      gw_endpoint_path_of_role((enum role_id)r), "lane",
				      lane_name(role_lane((enum role_id)r)), "tools", g->tool_parser != NULL,
				      "reasoning", g->reasoning_parser != NULL, "feasible", g->feasible,
				      "ready", g->feasible && ready[r]);
		json_object_set_new(o, "context", g->max_model_len ? json_integer(g->max_model_len)
								   : json_null());
		json_object_set_new(o, "quant", *g->quantization ? json_string(g->quantization)
								 : json_null());
		if (g->tool_parser)
			json_object_set_new(o, "tool_call_parser", json_string(g->tool_parser));
		if (g->reasoning_parser)
			json_object_set_new(o, "reasoning_parser", json_string(g->reasoning_parser));
		json_t *routes = json_array(); /* the engine-checked routes it serves (vroutes.c) */
		for (int ep = GW_EP_TOKENIZE; ep <= GW_EP_CLASSIFY; ep++)
			if ((g->routes >> ep) & 1u)
				json_array_append_new(routes, json_string(gw_endpoint_path((enum gw_endpoint)ep)));
		json_object_set_new(o, "routes", routes);
		json_object_set_new(o, "vllm", g->vllm_version ? json_string(g->vllm_version) : json_null());
		if (g->feasible)
			json_object_set_new(o, "served_at", json_string("local"));
		else if (g->hosted_by)
			json_object_set_new(o, "hosted_by", json_string(g->hosted_by));
		json_array_append_new(roles, o);
	}
	return json_pack("{s:s, s:s, s:o}", "profile", c->profile, "card", c->card, "roles", roles);
}

static json_t *model_entry(const char *id, const char *role, const char *root)
{
	return json_pack("{s:s, s:s, s:i, s:s, s:s, s:s}", "id", id, "object", "model", "created", 0,
			 "owned_by", "lobes", "root", root, "role", role);
}

json_t *gw_models(const struct gw_config *c, const bool ready[ROLE__COUNT])
{
	json_t *data = json_array();
	for (int r = 0; r < ROLE__COUNT; r++) {
		const struct gw_role *g = &c->roles[r];
		if (!g->feasible || !ready[r])
			continue;
		const char *name = role_name((enum role_id)r);
		const char *root = *g->model ? g->model : name;
		json_array_append_new(data, model_entry(name, name, root));
		if (*g->model && strcmp(g->model, name) != 0)
			json_array_append_new(data, model_entry(g->model, name, root));
	}
	return json_pack("{s:s, s:o}", "object", "list", "data", data);
}

/* /health's versions: {version: lobes', roles: {ROLE: {vllm, registry}}} for
 * each role served here (vLLM null when its image is unset or unknown), so
 * a client sees a skew between boxes or roles. */
void gw_health_versions(json_t *h, const struct gw_config *c, const char *version)
{
	json_object_set_new(h, "version", json_string(version && *version ? version : "unknown"));
	json_t *roles = json_object();
	for (int r = 0; r < ROLE__COUNT; r++) {
		const struct gw_role *g = &c->roles[r];
		if (!g->feasible)
			continue;
		json_object_set_new(roles, role_name((enum role_id)r),
				    json_pack("{s:o, s:o}", "vllm",
					      g->vllm_version ? json_string(g->vllm_version) : json_null(),
					      "registry",
					      g->vllm_registry ? json_string(g->vllm_registry) : json_null()));
	}
	json_object_set_new(h, "roles", roles);
}
