/*
 * compose.c — render the plan into docker-compose.yml, the GPU overlay and
 * .env (see render.h for the contract).
 *
 * Every knob flows from .env as ${KEY:-plan value}; a knob whose flag must
 * be absent (quantization none, attention auto, eager off, max_num_seqs
 * auto) renders no list item at all, so no stray argv token is left. Each
 * command item is single-quoted YAML; `$` in a value is doubled for compose
 * and `'` doubled for YAML. The attention backend is set only with
 * --attention-config (JSON); VLLM_ATTENTION_BACKEND is never written.
 */
#include <ctype.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "render.h"

char *env_key(enum role_id r, const char *suffix)
{
	char *k = xasprintf("%s_%s", role_name(r), suffix);
	for (char *p = k; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return k;
}

/* Append s as the inside of a YAML single-quoted scalar with compose's `$`
 * escaped. */
static void add_sq(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'')
			buf_adds(b, "''");
		else if (*s == '$')
			buf_adds(b, "$$");
		else
			buf_add(b, s, 1);
	}
}

/* "- '<prefix>${KEY:-value}<suffix>'" */
static void add_item(struct buf *b, const char *prefix, enum role_id r, enum knob_id k,
		     const char *value, const char *suffix)
{
	_cleanup_free_ char *key = env_key(r, knob_name(k));
	buf_adds(b, "      - '");
	add_sq(b, prefix);
	buf_printf(b, "${%s:-", key);
	add_sq(b, value);
	buf_adds(b, "}");
	add_sq(b, suffix);
	buf_adds(b, "'\n");
}

static const char *kv(const struct role_plan *rp, enum knob_id k)
{
	return rp->knobs[k].value ? rp->knobs[k].value : "";
}

static void render_service(struct buf *b, const struct plan *p, const struct fleet_template *t,
			   const struct role_plan *rp)
{
	enum role_id r = rp->role;
	const char *name = role_name(r);
	_cleanup_free_ char *image = fleet_template_image(t);
	_cleanup_free_ char *portkey = env_key(r, "port");
	buf_printf(b, "  %s:\n", name);
	buf_adds(b, "    image: '${LOBES_IMAGE:-");
	add_sq(b, image);
	buf_adds(b, "}'\n");
	buf_adds(b, "    network_mode: host\n    restart: unless-stopped\n");
	buf_adds(b, "    entrypoint: [\"vllm\", \"serve\"]\n    command:\n");
	add_item(b, "", r, KNOB_MODEL, kv(rp, KNOB_MODEL), "");
	buf_printf(b, "      - '--served-model-name=%s'\n", name);
	buf_adds(b, "      - '--host=127.0.0.1'\n");
	buf_printf(b, "      - '--port=${%s:-%d}'\n", portkey, t->ports[r]);
	add_item(b, "--gpu-memory-utilization=", r, KNOB_GPU_MEM_UTIL, kv(rp, KNOB_GPU_MEM_UTIL), "");
	add_item(b, "--max-model-len=", r, KNOB_MAX_MODEL_LEN, kv(rp, KNOB_MAX_MODEL_LEN), "");
	add_item(b, "--kv-cache-dtype=", r, KNOB_KV_CACHE_DTYPE, kv(rp, KNOB_KV_CACHE_DTYPE), "");
	const char *q = kv(rp, KNOB_QUANTIZATION);
	if (*q && strcmp(q, "none") != 0)
		add_item(b, "--quantization=", r, KNOB_QUANTIZATION, q, "");
	const char *seqs = kv(rp, KNOB_MAX_NUM_SEQS);
	if (*seqs && strcmp(seqs, "auto") != 0)
		add_item(b, "--max-num-seqs=", r, KNOB_MAX_NUM_SEQS, seqs, "");
	const char *ab = kv(rp, KNOB_ATTENTION_BACKEND);
	if (*ab && strcmp(ab, "auto") != 0)
		add_item(b, "--attention-config={\"backend\": \"", r, KNOB_ATTENTION_BACKEND, ab, "\"}");
	if (knob_is_true(&rp->knobs[KNOB_ENFORCE_EAGER]))
		buf_adds(b, "      - '--enforce-eager'\n");
	if (r == ROLE_EMBEDDER)
		buf_adds(b, "      - '--runner=pooling'\n      - '--convert=embed'\n");
	else if (r == ROLE_RERANKER)
		buf_adds(b, "      - '--runner=pooling'\n      - '--convert=classify'\n");
	buf_printf(b, "    environment:\n      HF_HOME: '%s'\n", t->hf_container);
	buf_adds(b, "    volumes:\n      - '${LOBES_HF_CACHE:-");
	add_sq(b, t->hf_host);
	buf_adds(b, "}:");
	add_sq(b, t->hf_container);
	buf_adds(b, "'\n");
	buf_printf(b, "    labels:\n      lobes.role: '%s'\n      lobes.profile: '%s'\n", name,
		   p->profile->name);
	buf_printf(b, "    healthcheck:\n"
		      "      test: [\"CMD\", \"curl\", \"-fsS\", \"http://127.0.0.1:${%s:-%d}/health\"]\n"
		      "      interval: %s\n      timeout: %s\n      retries: %d\n      start_period: %s\n",
		   portkey, t->ports[r], t->hc_interval, t->hc_timeout, t->hc_retries,
		   t->hc_start_period);
}

static void header(struct buf *b, const char *file, const struct plan *p, const char *what)
{
	buf_printf(b, "# %s — rendered by lobes from profile '%s' (%s).\n", file, p->profile->name,
		   p->profile->status);
	buf_printf(b, "# %s\n", what);
}

static char *render_compose(const struct plan *p, const struct fleet_template *t)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	header(&b, "docker-compose.yml", p,
	       "Values live in .env; `lobes init --apply` re-renders this file around them.");
	buf_adds(&b, "# The GPU attachment is in docker-compose.gpu.yml (listed in .env COMPOSE_FILE).\n");
	bool any_infeasible = false;
	for (int r = 0; r < ROLE__COUNT; r++)
		if (!role_feasible(p, (enum role_id)r))
			any_infeasible = true;
	if (any_infeasible) {
		buf_adds(&b, "# Not rendered (not feasible with this profile):");
		for (int r = 0; r < ROLE__COUNT; r++)
			if (!role_feasible(p, (enum role_id)r))
				buf_printf(&b, " %s", role_name((enum role_id)r));
		buf_adds(&b, ".\n");
	}
	buf_adds(&b, "services:\n");
	for (int r = 0; r < ROLE__COUNT; r++)
		if (role_feasible(p, (enum role_id)r))
			render_service(&b, p, t, &p->roles[r]);
	return buf_take(&b);
}

static const char *gpu_attach(const struct plan *p)
{
	return p->card && p->card->gpu_attach ? p->card->gpu_attach : "reservation";
}

static char *render_gpu(const struct plan *p)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	const char *how = gpu_attach(p);
	header(&b, "docker-compose.gpu.yml", p, strcmp(how, "runtime") == 0
			   ? "GPU attachment for this card: the nvidia container runtime."
			   : "GPU attachment for this card: a compose device reservation.");
	buf_adds(&b, "services:\n");
	for (int r = 0; r < ROLE__COUNT; r++) {
		if (!role_feasible(p, (enum role_id)r))
			continue;
		buf_printf(&b, "  %s:\n", role_name((enum role_id)r));
		if (strcmp(how, "runtime") == 0)
			buf_adds(&b, "    runtime: nvidia\n");
		else
			buf_adds(&b, "    deploy:\n      resources:\n        reservations:\n"
				     "          devices:\n            - driver: nvidia\n"
				     "              count: all\n              capabilities: [gpu]\n");
	}
	return buf_take(&b);
}

static char *render_env(const struct plan *p, const struct fleet_template *t)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	header(&b, ".env", p, "Edit values here; `lobes init` keeps your edits (unless --reset KEY).");
	buf_adds(&b, "# Mode 0600: secrets such as HF_TOKEN may be added here and are never printed.\n");
	_cleanup_free_ char *image = fleet_template_image(t);
	buf_adds(&b, "COMPOSE_FILE=docker-compose.yml:docker-compose.gpu.yml\n");
	buf_adds(&b, "COMPOSE_PROJECT_NAME=lobes\n");
	buf_printf(&b, "LOBES_PROFILE=%s\n", p->profile->name);
	buf_printf(&b, "LOBES_CARD=%s\n", p->card ? p->card->name : "unknown");
	buf_printf(&b, "LOBES_GPU_ATTACH=%s\n", gpu_attach(p));
	buf_printf(&b, "LOBES_IMAGE=%s\n", image);
	buf_printf(&b, "LOBES_VLLM_VERSION=%s\n", t->vllm_version);
	buf_printf(&b, "LOBES_HF_CACHE=%s\n", t->hf_host);
	buf_printf(&b, "LOBES_BRINGUP=%s\n", p->bringup.value ? p->bringup.value : "together");
	buf_adds(&b, "LOBES_ORDER=");
	for (size_t i = 0; i < p->n_order; i++)
		buf_printf(&b, "%s%s", i ? "," : "", role_name(p->order[i]));
	buf_adds(&b, "\n");
	for (int r = 0; r < ROLE__COUNT; r++) {
		const struct role_plan *rp = &p->roles[r];
		_cleanup_free_ char *fk = env_key((enum role_id)r, "feasible");
		if (!role_feasible(p, (enum role_id)r)) {
			buf_printf(&b, "\n# %s: not feasible with this profile\n%s=false\n",
				   role_name((enum role_id)r), fk);
			continue;
		}
		buf_printf(&b, "\n# %s\n%s=true\n", role_name((enum role_id)r), fk);
		_cleanup_free_ char *pk = env_key((enum role_id)r, "port");
		buf_printf(&b, "%s=%d\n", pk, t->ports[r]);
		for (int k = 0; k < KNOB__COUNT; k++) {
			if (k == KNOB_FEASIBLE)
				continue;
			_cleanup_free_ char *key = env_key((enum role_id)r, knob_name((enum knob_id)k));
			buf_printf(&b, "%s=%s\n", key, kv(rp, (enum knob_id)k));
		}
	}
	return buf_take(&b);
}

static void put(struct render_out *out, const char *name, char *data, mode_t mode)
{
	struct render_file *f = &out->files[out->n++];
	f->name = xstrdup(name);
	f->data = data;
	f->len = strlen(data);
	f->mode = mode;
}

int render_fleet(const struct plan *p, const struct fleet_template *t, struct render_out *out,
		 struct err **err)
{
	memset(out, 0, sizeof(*out));
	if (!p->profile)
		return err_set(err, EXIT_INTERNAL, "render: no profile in the plan");
	put(out, "docker-compose.yml", render_compose(p, t), 0644);
	put(out, "docker-compose.gpu.yml", render_gpu(p), 0644);
	put(out, ".env", render_env(p, t), 0600);
	return 0;
}

void render_out_free(struct render_out *out)
{
	for (size_t i = 0; i < out->n; i++) {
		free(out->files[i].name);
		free(out->files[i].data);
	}
	memset(out, 0, sizeof(*out));
}

const struct render_file *render_out_get(const struct render_out *out, const char *name)
{
	for (size_t i = 0; i < out->n; i++)
		if (strcmp(out->files[i].name, name) == 0)
			return &out->files[i];
	return NULL;
}

static const char *const contract[] = {
	"COMPOSE_FILE", "COMPOSE_PROJECT_NAME", "LOBES_PROFILE", "LOBES_CARD", "LOBES_GPU_ATTACH",
	"LOBES_IMAGE", "LOBES_VLLM_VERSION", "LOBES_HF_CACHE", "LOBES_BRINGUP", "LOBES_ORDER",
#define ROLE_KEYS(R)                                                                              \
	R "_FEASIBLE", R "_PORT", R "_MODEL", R "_GPU_MEM_UTIL", R "_MAX_MODEL_LEN",               \
		R "_QUANTIZATION", R "_KV_CACHE_DTYPE", R "_ATTENTION_BACKEND", R "_ENFORCE_EAGER", \
		R "_MAX_NUM_SEQS"
	ROLE_KEYS("CORTEX"), ROLE_KEYS("SENSES"), ROLE_KEYS("HAND"), ROLE_KEYS("EMBEDDER"),
	ROLE_KEYS("RERANKER"), NULL
#undef ROLE_KEYS
};

const char *const *env_contract_keys(void)
{
	return contract;
}

int env_key_is_secret(const char *key)
{
	return strstr(key, "TOKEN") || strstr(key, "API_KEY") || strstr(key, "SECRET") ||
	       strstr(key, "PASSWORD");
}
