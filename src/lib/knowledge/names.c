/*
 * names.c — the fixed vocabularies of the knowledge base: role, lane and
 * knob names, knob value validation and canonical forms, and small
 * formatting helpers (positions, evidence as JSON). What a valid knob
 * value is lives in knobcheck.c (knob_canon).
 */
#include <stdlib.h>
#include <string.h>

#include "knowledge.h"
#include "../util/cleanup.h"

static const char *const role_names[ROLE__COUNT] = {
	[ROLE_CORTEX] = "cortex",   [ROLE_SENSES] = "senses",     [ROLE_HAND] = "hand",
	[ROLE_EMBEDDER] = "embedder", [ROLE_RERANKER] = "reranker",
};

static const char *const lane_names[LANE__COUNT] = {
	[LANE_GENERATE] = "generate",
	[LANE_POOLING] = "pooling",
};

static const char *const knob_names[KNOB__COUNT] = {
	[KNOB_MODEL] = "model",
	[KNOB_FEASIBLE] = "feasible",
	[KNOB_GPU_MEM_UTIL] = "gpu_mem_util",
	[KNOB_MAX_MODEL_LEN] = "max_model_len",
	[KNOB_QUANTIZATION] = "quantization",
	[KNOB_KV_CACHE_DTYPE] = "kv_cache_dtype",
	[KNOB_ATTENTION_BACKEND] = "attention_backend",
	[KNOB_ENFORCE_EAGER] = "enforce_eager",
	[KNOB_MAX_NUM_SEQS] = "max_num_seqs",
	[KNOB_IMAGE] = "image",
	[KNOB_SERVED_NAMES] = "served_names",
	[KNOB_RUNNER] = "runner",
	[KNOB_CONVERT] = "convert",
	[KNOB_REASONING_PARSER] = "reasoning_parser",
	[KNOB_TOOL_CALL_PARSER] = "tool_call_parser",
	[KNOB_ENABLE_PREFIX_CACHING] = "enable_prefix_caching",
	[KNOB_SPECULATIVE_CONFIG] = "speculative_config",
	[KNOB_HF_OVERRIDES] = "hf_overrides",
	[KNOB_TRUST_REMOTE_CODE] = "trust_remote_code",
	[KNOB_ENABLE_LORA] = "enable_lora",
	[KNOB_MAX_LORAS] = "max_loras",
	[KNOB_MAX_LORA_RANK] = "max_lora_rank",
	[KNOB_LORA_DIR] = "lora_dir",
};

const char *role_name(enum role_id r)
{
	return (unsigned)r < ROLE__COUNT ? role_names[r] : "?";
}

int role_from_name(const char *s)
{
	for (int i = 0; s && i < ROLE__COUNT; i++)
		if (strcmp(s, role_names[i]) == 0)
			return i;
	return -1;
}

enum lane role_lane(enum role_id r)
{
	return r == ROLE_EMBEDDER || r == ROLE_RERANKER ? LANE_POOLING : LANE_GENERATE;
}

const char *lane_name(enum lane l)
{
	return (unsigned)l < LANE__COUNT ? lane_names[l] : "?";
}

const char *knob_name(enum knob_id k)
{
	return (unsigned)k < KNOB__COUNT ? knob_names[k] : "?";
}

int knob_from_name(const char *s)
{
	for (int i = 0; s && i < KNOB__COUNT; i++)
		if (strcmp(s, knob_names[i]) == 0)
			return i;
	return -1;
}

char *src_pos_str(const struct src_pos *p)
{
	return xasprintf("%s:%d:%d", p && p->file ? p->file : "-", p ? p->line : 0, p ? p->col : 0);
}

/* Evidence as a JSON object holding only the fields that are set; new
 * reference. */
json_t *evidence_json(const struct evidence *e)
{
	json_t *o = json_object();
	if (!e)
		return o;
	const struct {
		const char *k, *v;
	} f[] = {
		{ "kind", e->kind }, { "date", e->date }, { "box", e->box },
		{ "image", e->image }, { "observation", e->observation }, { "ref", e->ref },
	};
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		if (f[i].v)
			json_object_set_new(o, f[i].k, json_string(f[i].v));
	return o;
}
