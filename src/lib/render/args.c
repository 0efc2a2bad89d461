/*
 * args.c — what one role runs, as data: its `vllm serve` arguments and its
 * environment, shared by the compose render (compose.c) and the Kubernetes
 * render (k8s.c) so both targets carry the same flags in the same order.
 *
 * No lobes placeholder reaches vLLM (docs/knowledge.md "What reaches
 * vLLM"): an argument carries a .env key only for knobs whose every valid
 * value is also a valid vLLM value (model, port, gpu_mem_util,
 * max_model_len, kv_cache_dtype); every other knob has a "no flag" word
 * (none, auto, false) and renders no argument at all when it has it.
 */
#include <string.h>

#include "../knowledge/knowledge.h"
#include "../util/cleanup.h"
#include "render_int.h"

const char *role_knob(const struct role_plan *rp, enum knob_id k)
{
	return rp->knobs[k].value ? rp->knobs[k].value : "";
}

bool role_knob_set(const struct role_plan *rp, enum knob_id k, const char *no_flag)
{
	const char *v = role_knob(rp, k);
	return *v && strcmp(v, no_flag) != 0;
}

void render_add_sq(struct buf *b, const char *s)
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

static void push(struct role_args *a, const char *prefix, char *key, const char *value)
{
	a->v = xrealloc(a->v, (a->n + 1) * sizeof(*a->v));
	a->v[a->n++] = (struct role_arg){ .prefix = prefix, .key = key, .value = xstrdup(value) };
}

/* A knob the operator may change in .env without `lobes init`. */
static void item(struct role_args *a, const char *prefix, const struct role_plan *rp, enum knob_id k)
{
	push(a, prefix, env_key(rp->role, knob_name(k)), role_knob(rp, k));
}

/* Written from the plan, never interpolated. */
static void lit(struct role_args *a, const char *prefix, const char *value)
{
	push(a, prefix, NULL, value ? value : "");
}

/* --served-model-name NAME...: "role" is the role name, "model" the
 * checkpoint id as .env has it (so both follow an edit of <ROLE>_MODEL). */
static void served_names(struct role_args *a, const struct role_plan *rp)
{
	const char *names = role_knob_set(rp, KNOB_SERVED_NAMES, "none") ? role_knob(rp, KNOB_SERVED_NAMES)
									 : "role";
	lit(a, "--served-model-name", "");
	_cleanup_free_ char *copy = xstrdup(names);
	char *save = NULL;
	for (char *n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		if (strcmp(n, "role") == 0)
			lit(a, "", role_name(rp->role));
		else if (strcmp(n, "model") == 0)
			item(a, "", rp, KNOB_MODEL);
		else
			lit(a, "", n);
	}
}

void role_args(const struct fleet_template *t, const struct role_plan *rp, struct role_args *a)
{
	memset(a, 0, sizeof(*a));
	enum role_id r = rp->role;
	item(a, "", rp, KNOB_MODEL);
	served_names(a, rp);
	lit(a, "--host=127.0.0.1", "");
	_cleanup_free_ char *port = xasprintf("%d", t->ports[r]);
	push(a, "--port=", env_key(r, "port"), port);
	item(a, "--gpu-memory-utilization=", rp, KNOB_GPU_MEM_UTIL);
	item(a, "--max-model-len=", rp, KNOB_MAX_MODEL_LEN);
	item(a, "--kv-cache-dtype=", rp, KNOB_KV_CACHE_DTYPE);
	if (role_knob_set(rp, KNOB_QUANTIZATION, "none"))
		lit(a, "--quantization=", role_knob(rp, KNOB_QUANTIZATION));
	if (role_knob_set(rp, KNOB_MAX_NUM_SEQS, "auto"))
		lit(a, "--max-num-seqs=", role_knob(rp, KNOB_MAX_NUM_SEQS));
	if (role_knob_set(rp, KNOB_ATTENTION_BACKEND, "auto")) {
		_cleanup_free_ char *j =
			xasprintf("{\"backend\": \"%s\"}", role_knob(rp, KNOB_ATTENTION_BACKEND));
		lit(a, "--attention-config=", j);
	}
	if (knob_is_true(&rp->knobs[KNOB_ENFORCE_EAGER]))
		lit(a, "--enforce-eager", "");
	if (role_knob_set(rp, KNOB_RUNNER, "auto"))
		lit(a, "--runner=", role_knob(rp, KNOB_RUNNER));
	if (role_knob_set(rp, KNOB_CONVERT, "auto"))
		lit(a, "--convert=", role_knob(rp, KNOB_CONVERT));
	if (knob_is_true(&rp->knobs[KNOB_TRUST_REMOTE_CODE]))
		lit(a, "--trust-remote-code", "");
	if (role_knob_set(rp, KNOB_HF_OVERRIDES, "none"))
		lit(a, "--hf-overrides=", role_knob(rp, KNOB_HF_OVERRIDES));
	if (role_knob_set(rp, KNOB_REASONING_PARSER, "none"))
		lit(a, "--reasoning-parser=", role_knob(rp, KNOB_REASONING_PARSER));
	if (role_knob_set(rp, KNOB_TOOL_CALL_PARSER, "none")) {
		lit(a, "--enable-auto-tool-choice", "");
		lit(a, "--tool-call-parser=", role_knob(rp, KNOB_TOOL_CALL_PARSER));
	}
	if (role_knob_set(rp, KNOB_ENABLE_PREFIX_CACHING, "auto"))
		lit(a, knob_is_true(&rp->knobs[KNOB_ENABLE_PREFIX_CACHING]) ? "--enable-prefix-caching"
									      : "--no-enable-prefix-caching",
		    "");
	if (role_knob_set(rp, KNOB_SPECULATIVE_CONFIG, "none"))
		lit(a, "--speculative-config=", role_knob(rp, KNOB_SPECULATIVE_CONFIG));
	if (knob_is_true(&rp->knobs[KNOB_ENABLE_LORA])) {
		lit(a, "--enable-lora", "");
		if (role_knob_set(rp, KNOB_MAX_LORAS, "auto"))
			lit(a, "--max-loras=", role_knob(rp, KNOB_MAX_LORAS));
		if (role_knob_set(rp, KNOB_MAX_LORA_RANK, "auto"))
			lit(a, "--max-lora-rank=", role_knob(rp, KNOB_MAX_LORA_RANK));
	}
}

void role_args_free(struct role_args *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].key);
		free(a->v[i].value);
	}
	free(a->v);
	memset(a, 0, sizeof(*a));
}

size_t role_env(const struct fleet_template *t, const struct role_plan *rp,
		struct role_envvar out[ROLE_ENV_MAX])
{
	size_t n = 0;
	out[n++] = (struct role_envvar){ "HF_HOME", t->hf_container, false };
	out[n++] = (struct role_envvar){ "HF_TOKEN", NULL, true };
	if (rp->reg && vllm_reg_has_env(rp->reg, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"))
		out[n++] = (struct role_envvar){ "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "0", false };
	return n;
}
