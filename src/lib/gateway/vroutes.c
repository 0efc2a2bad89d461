/*
 * vroutes.c — which vLLM each role's engine runs and which of the
 * engine-checked routes (/tokenize, /v1/responses, audio, /pooling, ...)
 * it serves, so the gateway answers 404 route_not_served itself, naming
 * the roles that do serve the route, instead of forwarding to an engine
 * that would answer FastAPI's bare 404.
 *
 * The engine's vLLM comes from its image: <ROLE>_IMAGE looked up in the
 * knowledge (data/images/ and the operator's files) names the vLLM version
 * and its registry folder, whose routes.txt (tools/vllm-routes.py, read from
 * that vLLM's source) lists every route with the task it needs. A role
 * serves a route when the route's task is one of the role's:
 *   generate lane (cortex, senses, hand)  generate, transcription
 *   embedder (runner pooling, convert embed)    embed, score, pooling
 *   reranker (runner pooling, convert classify) classify, score, pooling
 * plus the routes registered always (/tokenize, /detokenize). vLLM itself
 * registers audio routes only for a model with the transcription task; the
 * gateway cannot know a checkpoint's tasks, so a generate engine whose
 * model has none answers its own 404 through the relay.
 * A role whose image is unset or not in the knowledge gets the routes that
 * every recorded vLLM serves for its tasks, and no version (/health says
 * null: skew cannot be judged).
 */
#include <string.h>

#include "../knowledge/knowledge.h"
#include "../util/cleanup.h"
#include "../util/strv.h"
#include "gateway.h"

static const char *const tasks_generate[] = { "generate", "transcription", NULL };
static const char *const tasks_embedder[] = { "embed", "score", "pooling", NULL };
static const char *const tasks_reranker[] = { "classify", "score", "pooling", NULL };

static const char *const *tasks_of(enum role_id r)
{
	if (r == ROLE_EMBEDDER)
		return tasks_embedder;
	if (r == ROLE_RERANKER)
		return tasks_reranker;
	return tasks_generate;
}

/* Does a TASK column ("always", "score", "embed|classify") name one of ts? */
static bool task_matches(const char *col, size_t n, const char *const *ts)
{
	if (n == 6 && !memcmp(col, "always", 6))
		return true;
	while (n) {
		size_t k = 0;
		while (k < n && col[k] != '|')
			k++;
		for (size_t i = 0; ts[i]; i++)
			if (strlen(ts[i]) == k && !memcmp(col, ts[i], k))
				return true;
		col += k < n ? k + 1 : k;
		n -= k < n ? k + 1 : k;
	}
	return false;
}

unsigned gw_vllm_routes_of(enum role_id r, const char *txt)
{
	unsigned bits = 0;
	const char *const *ts = tasks_of(r);
	for (const char *l = txt ? txt : ""; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		const char *t1 = memchr(l, '\t', len);
		const char *t2 = t1 ? memchr(t1 + 1, '\t', len - (size_t)(t1 + 1 - l)) : NULL;
		const char *t3 = t2 ? memchr(t2 + 1, '\t', len - (size_t)(t2 + 1 - l)) : NULL;
		if (*l != '#' && t3) {
			_cleanup_free_ char *path = xasprintf("%.*s", (int)(t1 - l), l);
			bool post = (size_t)(t2 - t1 - 1) == 4 && !memcmp(t1 + 1, "POST", 4);
			for (int ep = GW_EP_TOKENIZE; ep <= GW_EP_CLASSIFY; ep++)
				if (post && !strcmp(path, gw_endpoint_path((enum gw_endpoint)ep)) &&
				    task_matches(t2 + 1, (size_t)(t3 - t2 - 1), ts))
					bits |= 1u << ep;
		}
		l += len + (e ? 1 : 0);
	}
	return bits;
}

void gw_vllm_resolve(struct gw_config *c)
{
	struct knowledge k = { 0 };
	struct err *e = NULL;
	bool loaded = knowledge_load(&k, c->dir, &e) == 0;
	err_free(e);
	char **folders = vllm_folders();
	for (int r = 0; r < ROLE__COUNT; r++) {
		struct gw_role *gr = &c->roles[r];
		const struct vimage *vi = loaded && gr->image && *gr->image
						  ? knowledge_image(&k, gr->image) : NULL;
		const char *txt = vi ? vllm_file_text(vi->registry, "routes.txt") : NULL;
		if (vi) {
			gr->vllm_version = xstrdup(vi->vllm_version);
			gr->vllm_registry = xstrdup(vi->registry);
		}
		if (txt) {
			gr->routes = gw_vllm_routes_of((enum role_id)r, txt);
			continue;
		}
		/* unknown: what every recorded vLLM serves for the role's tasks */
		gr->routes = ~0u;
		for (size_t i = 0; folders[i]; i++) {
			const char *t = vllm_file_text(folders[i], "routes.txt");
			if (t)
				gr->routes &= gw_vllm_routes_of((enum role_id)r, t);
		}
		if (gr->routes == ~0u)
			gr->routes = 0;
	}
	strv_free(folders);
	if (loaded)
		knowledge_free(&k);
}
