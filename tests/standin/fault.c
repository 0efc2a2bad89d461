/*
 * fault.c — how the stand-in fails, as vLLM does: the engine-core
 * tracebacks of the boot phases (free-memory gate, fp8 KV scale assert,
 * no room for cache blocks, CUDA out of memory), and which recorded fault
 * a request meets on the pretended card (the sm_110 faults of Thor; the
 * original Qwen3-Reranker without its overrides on any card).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "standin.h"

#define PKG "/usr/local/lib/python3.12/dist-packages/vllm"

void engine_failed(void)
{
	raw(true, "RuntimeError: Engine core initialization failed. See root cause above. "
		  "Failed core proc(s): {}");
	exit(1);
}

void oom(double bytes)
{
	static const char *const frames[] = {
		"  File \"" PKG "/v1/worker/gpu_model_runner.py\", line 3581, in initialize_kv_cache_tensors",
		"    tensor = torch.zeros(kv_cache_tensor.size, dtype=torch.int8, device=self.device)",
		NULL,
	};
	char msg[256];

	snprintf(msg, sizeof msg,
		 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB.",
		 bytes / GiB);
	vtraceback("core.py:708", "EngineCore failed to start.", frames, msg);
	engine_failed();
}

void fail_free_memory(double free0, double total, double util, double requested)
{
	static const char *const frames[] = {
		"  File \"" PKG "/v1/engine/core.py\", line 699, in run_engine_core",
		"    engine_core = EngineCoreProc(*args, **kwargs)",
		"  File \"" PKG "/v1/executor/abstract.py\", line 54, in __init__",
		"    self._init_executor()",
		"  File \"" PKG "/v1/worker/gpu_worker.py\", line 228, in init_device",
		"    self.requested_memory = request_memory(init_snapshot, self.cache_config)",
		"  File \"" PKG "/v1/worker/utils.py\", line 361, in request_memory",
		"    raise ValueError(",
		NULL,
	};
	char msg[512];
	snprintf(msg, sizeof msg,
		 "ValueError: Free memory on device cuda:0 (%.2f/%.2f GiB) on startup is less "
		 "than desired GPU memory utilization (%g, %.2f GiB). Decrease GPU memory "
		 "utilization or reduce GPU memory used by other processes.",
		 free0 / GiB, total / GiB, util, requested / GiB);
	vtraceback("core.py:708", "EngineCore failed to start.", frames, msg);
	engine_failed();
}

void fail_fp8_assert(void)
{
	static const char *const frames[] = {
		"  File \"" PKG "/v1/engine/core.py\", line 699, in run_engine_core",
		"    engine_core = EngineCoreProc(*args, **kwargs)",
		"  File \"" PKG "/v1/engine/core.py\", line 190, in _initialize_kv_caches",
		"    available_gpu_memory = self.model_executor.determine_available_memory()",
		"  File \"" PKG "/v1/worker/gpu_worker.py\", line 263, in determine_available_memory",
		"    self.model_runner.profile_run()",
		"  File \"" PKG "/v1/attention/backends/triton_attn.py\", line 312, in forward",
		"    assert layer.k_scale > 0.0",
		NULL,
	};
	vtraceback("core.py:708", "EngineCore failed to start.", frames, "AssertionError");
	engine_failed();
}

void fail_no_cache_blocks(void)
{
	static const char *const frames[] = {
		"  File \"" PKG "/v1/engine/core.py\", line 699, in run_engine_core",
		"    engine_core = EngineCoreProc(*args, **kwargs)",
		"  File \"" PKG "/v1/engine/core.py\", line 199, in _initialize_kv_caches",
		"    kv_cache_configs = get_kv_cache_configs(vllm_config, kv_cache_specs, available_gpu_memory)",
		"  File \"" PKG "/v1/core/kv_cache_utils.py\", line 688, in check_enough_kv_cache_memory",
		"    raise ValueError(",
		NULL,
	};
	vtraceback("core.py:708", "EngineCore failed to start.", frames,
		   "ValueError: No available memory for the cache blocks. Try increasing "
		   "`gpu_memory_utilization` when initializing the engine.");
	engine_failed();
}

/* True when hf_overrides (JSON text, may be NULL) holds what vLLM's docs
 * ask for to serve the original Qwen3-Reranker as a classifier:
 * architectures [Qwen3ForSequenceClassification], classifier_from_token
 * ["no", "yes"], is_original_qwen3_reranker true. */
static bool qwen3_reranker_overrides(const char *hf_overrides)
{
	json_t *j = hf_overrides ? json_loads(hf_overrides, 0, NULL) : NULL;
	json_t *tok = json_object_get(j, "classifier_from_token");
	bool ok = json_is_true(json_object_get(j, "is_original_qwen3_reranker")) &&
		  json_array_size(tok) == 2 &&
		  !strcmp(json_string_value(json_array_get(tok, 0)) ?: "", "no") &&
		  !strcmp(json_string_value(json_array_get(tok, 1)) ?: "", "yes") &&
		  !strcmp(json_string_value(json_array_get(json_object_get(j, "architectures"), 0)) ?: "",
			  "Qwen3ForSequenceClassification");

	json_decref(j);
	return ok;
}

enum fault card_fault(bool thor, enum task task, const char *backend, bool eager,
		      const char *model, const char *speculative)
{
	if (!thor)
		return FAULT_NONE;
	bool triton = !strcmp(backend, "TRITON_ATTN");
	if (task == TASK_CLASSIFY && !eager)
		return FAULT_GRAPH_KILL;
	if (task != TASK_GENERATE && !triton)
		return FAULT_POOLING_HANG;
	if (task == TASK_GENERATE && strcasestr(model, "lfm2.5-1.2b"))
		return FAULT_CORRUPT_THEN_DIE;
	if (task == TASK_GENERATE && spec_tokens(speculative) &&
	    (strcasestr(model, "qwen3.8-27b") || strcasestr(model, "qwen3.6-27b") ||
	     strcasestr(model, "qwen3.6-35b")))
		return FAULT_MTP_NO_KERNEL;
	return FAULT_NONE;
}

bool wrong_scores(enum task task, const char *arch, const char *hf_overrides)
{
	/* The original Qwen3-Reranker checkpoint is a causal LM: served as a
	 * classifier without vLLM's documented overrides, its head is not the
	 * one it trained, on any card. */
	return task == TASK_CLASSIFY && ends_with(arch, "ForCausalLM") &&
	       !qwen3_reranker_overrides(hf_overrides);
}

/* The compute capability the card's GPU reports, as "sm_NNN". */
const char *card_sm(const char *card)
{
	if (!strcmp(card, "spark"))
		return "sm_121";
	if (!strcmp(card, "thor"))
		return "sm_110";
	if (!strncmp(card, "orin", 4))
		return "sm_87";
	return "sm_90";
}
