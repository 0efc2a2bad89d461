/*
 * compose.c — render the plan into docker-compose.yml, the GPU overlay and
 * .env (see render.h for the contract).
 *
 * No lobes placeholder reaches vLLM (docs/knowledge.md "What reaches
 * vLLM"): only knobs whose every valid value is also a valid vLLM value
 * (image, model, port, gpu_mem_util, max_model_len, kv_cache_dtype) flow
 * from .env as ${KEY:-plan value}, where an empty value falls back to the
 * rendered one. Every other knob has a "no flag" word (none, auto, false)
 * and compose cannot drop a list item, so `lobes init` writes it literally
 * from the plan after checking it; a knob whose flag must be absent renders
 * no list item at all. Each command item is single-quoted YAML; `$` in a
 * value is doubled for compose and `'` doubled for YAML, so JSON values
 * (--speculative-config, --hf-overrides, --attention-config) survive
 * interpolation. VLLM_ATTENTION_BACKEND is never written.
 */
#include <ctype.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../knowledge/knowledge.h"
#include "../util/secret.h"
#include "render_int.h"

char *env_key(enum role_id r, const char *suffix)
{
	char *k = xasprintf("%s_%s", role_name(r), suffix);
	for (char *p = k; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return k;
}

static const char *kv(const struct role_plan *rp, enum knob_id k)
{
	return role_knob(rp, k);
}

static bool set(const struct role_plan *rp, enum knob_id k, const char *no_flag)
{
	return role_knob_set(rp, k, no_flag);
}

#define add_sq render_add_sq /* args.c */

/* The vLLM flags of one role (args.c): "- '<prefix>${KEY:-value}'" for a
 * knob the operator may change in .env without `lobes init` (an empty
 * value falls back to the rendered one), "- '<prefix><value>'" for one
 * written by `lobes init` from the plan, never interpolated. */
static void serve_flags(struct buf *b, const struct fleet_template *t, const struct role_plan *rp)
{
	struct role_args a;
	role_args(t, rp, &a);
	for (size_t i = 0; i < a.n; i++) {
		buf_adds(b, "      - '");
		add_sq(b, a.v[i].prefix);
		if (a.v[i].key) {
			buf_printf(b, "${%s:-", a.v[i].key);
			add_sq(b, a.v[i].value);
			buf_adds(b, "}");
		} else {
			add_sq(b, a.v[i].value);
		}
		buf_adds(b, "'\n");
	}
	role_args_free(&a);
}

static void render_service(struct buf *b, const struct plan *p, const struct fleet_template *t,
			   const struct role_plan *rp)
{
	enum role_id r = rp->role;
	const char *name = role_name(r);
	_cleanup_free_ char *portkey = env_key(r, "port");
	_cleanup_free_ char *imgkey = env_key(r, "image");
	buf_printf(b, "  %s:\n", name);
	buf_printf(b, "    image: '${%s:-", imgkey);
	add_sq(b, kv(rp, KNOB_IMAGE));
	buf_adds(b, "}'\n");
	buf_adds(b, "    network_mode: host\n    ipc: host\n");
	/* memlock unlimited, as the boxes run vLLM; LOBES_MEMLOCK (environment
	 * only, never .env) lowers it where the docker daemon may not raise it */
	buf_adds(b, "    ulimits:\n      memlock: '${LOBES_MEMLOCK:--1}'\n      stack: 67108864\n");
	buf_adds(b, "    restart: unless-stopped\n");
	buf_adds(b, "    entrypoint: [\"vllm\", \"serve\"]\n    command:\n");
	serve_flags(b, t, rp);
	struct role_envvar env[ROLE_ENV_MAX];
	size_t n_env = role_env(t, rp, env);
	buf_adds(b, "    environment:\n");
	for (size_t i = 0; i < n_env; i++)
		if (env[i].secret) /* from .env at start, never rendered */
			buf_printf(b, "      %s: '${%s:-}'\n", env[i].name, env[i].name);
		else
			buf_printf(b, "      %s: '%s'\n", env[i].name, env[i].value);
	buf_adds(b, "    volumes:\n      - '${LOBES_HF_CACHE:-");
	add_sq(b, t->hf_host);
	buf_adds(b, "}:");
	add_sq(b, t->hf_container);
	buf_adds(b, "'\n");
	if (knob_is_true(&rp->knobs[KNOB_ENABLE_LORA]) && set(rp, KNOB_LORA_DIR, "none")) {
		buf_adds(b, "      - '");
		add_sq(b, kv(rp, KNOB_LORA_DIR));
		buf_adds(b, ":/adapters:ro'\n");
	}
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

char *render_env_text(const struct plan *p, const struct fleet_template *t)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	header(&b, ".env", p, "Edit values here; `lobes init` keeps your edits (unless --reset KEY).");
	buf_adds(&b, "# Mode 0600: secrets such as HF_TOKEN may be added here and are never printed.\n");
	buf_adds(&b, "# Compose reads <ROLE>_IMAGE, _PORT, _MODEL, _GPU_MEM_UTIL, _MAX_MODEL_LEN and\n"
		     "# _KV_CACHE_DTYPE at every start; every other knob takes effect on\n"
		     "# `lobes init --apply`, which checks it first.\n");
	buf_adds(&b, "COMPOSE_FILE=docker-compose.yml:docker-compose.gpu.yml\n");
	buf_adds(&b, "COMPOSE_PROJECT_NAME=lobes\n");
	buf_printf(&b, "LOBES_PROFILE=%s\n", p->profile->name);
	buf_printf(&b, "LOBES_CARD=%s\n", p->card ? p->card->name : "unknown");
	buf_printf(&b, "LOBES_GPU_ATTACH=%s\n", gpu_attach(p));
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
			/* a parser key is absent when the role has none (.env contract) */
			if ((k == KNOB_TOOL_CALL_PARSER || k == KNOB_REASONING_PARSER) &&
			    !set(rp, (enum knob_id)k, "none"))
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
	put(out, ".env", render_env_text(p, t), 0600);
	/* the gateway's unit is the same on every box: the deploy dir is its
	 * instance name, the binary is found on systemd's search path */
	for (size_t i = 0; i < embedded_files_count; i++)
		if (strcmp(embedded_files[i].path, "data/template/" GATEWAY_UNIT) == 0) {
			put(out, GATEWAY_UNIT, xstrdup(embedded_files[i].data), 0644);
			return 0;
		}
	render_out_free(out);
	return err_set(err, EXIT_INTERNAL, "template 'data/template/" GATEWAY_UNIT "' is not embedded");
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
		R "_MAX_NUM_SEQS", R "_IMAGE", R "_SERVED_NAMES", R "_RUNNER", R "_CONVERT",        \
		R "_REASONING_PARSER", R "_TOOL_CALL_PARSER", R "_ENABLE_PREFIX_CACHING",           \
		R "_SPECULATIVE_CONFIG", R "_HF_OVERRIDES", R "_TRUST_REMOTE_CODE", R "_ENABLE_LORA", \
		R "_MAX_LORAS", R "_MAX_LORA_RANK", R "_LORA_DIR"
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
	return secret_name(key); /* the one rule (secret.h) */
}
