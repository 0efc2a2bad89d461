/*
 * main.c — vllm-standin: a TEST DOUBLE of `vllm serve` for lobes' tests.
 *
 * It is not vLLM and runs no model. It parses vLLM's serve flags (args.c:
 * vLLM's own flag list of the reported version; argparse errors exit 2),
 * lints VLLM_* variables against that version's registry like vLLM does,
 * reads the checkpoint's config from the local Hugging Face cache (offline),
 * and walks vLLM's boot phases with vLLM's log lines:
 *
 *   bind port → free-memory gate → load weights (the files are read, so the
 *   page cache grows) → profile memory → allocate and touch the KV cache →
 *   warm up ("init engine ... took": the memory window closes) → API server
 *   start (STANDIN_API_MS) → listen ("Application startup complete.")
 *
 * Memory is judged the way vLLM judges it on a unified-memory box: the
 * device is STANDIN_DEVICE_BYTES (default MemTotal) and free memory is
 * /proc/meminfo MemFree, so a neighbour's page cache counts as used. The
 * bytes it really holds are the budget times STANDIN_MEM_SCALE (default 1);
 * the budget arithmetic and log lines use unscaled numbers.
 *
 * STANDIN_CARD names the card it pretends to run on; on "thor" (sm_110) it
 * reproduces the faults recorded there (pooling hang off TRITON_ATTN, fp8 KV
 * assert without checkpoint scales on the Triton path, reranker CUDA-graph
 * launch failure, LFM2.5-1.2B corruption, MTP on the GDN-hybrid Qwen line
 * dying at the first decode for want of an sm_110 kernel). On every card, the original
 * Qwen3-Reranker served as a classifier without vLLM's documented
 * --hf-overrides ranks wrongly (its classifier head is not the trained one).
 * Exit codes follow vLLM: 2 usage, 1 any engine failure, 0 clean shutdown.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "standin.h"

static struct standin state;

static bool is_fp8(const char *kv)
{
	return !strncmp(kv, "fp8", 3);
}

/* 1234567 → "1,234,567" into out[size]. */
static void commas(long long n, char *out, size_t size)
{
	char digits[32];
	int len = snprintf(digits, sizeof digits, "%lld", n < 0 ? -n : n);
	size_t o = 0;

	if (n < 0 && o + 1 < size)
		out[o++] = '-';
	for (int i = 0; i < len && o + 1 < size; i++) {
		out[o++] = digits[i];
		if ((len - i - 1) % 3 == 0 && i != len - 1 && o + 1 < size)
			out[o++] = ',';
	}
	out[o] = '\0';
}

static enum task resolve_task(const struct opts *o, const struct ckpt *c)
{
	if (!strcmp(o->convert, "embed"))
		return TASK_EMBED;
	if (!strcmp(o->convert, "classify"))
		return TASK_CLASSIFY;
	if (!strcmp(o->runner, "pooling") || !strcmp(o->runner, "auto")) {
		if (ends_with(c->arch, "ForSequenceClassification"))
			return TASK_CLASSIFY;
		if (!strcmp(o->runner, "pooling") || ends_with(c->arch, "Model"))
			return TASK_EMBED;
	}
	return TASK_GENERATE;
}

int main(int argc, char **argv)
{
	struct opts o = { .host = "127.0.0.1", .port = 8000, .util = 0.9, .max_model_len = -1,
			  .max_num_seqs = -1, .kv_dtype = "auto", .runner = "auto",
			  .convert = "auto" };
	struct ckpt c;
	const char *card = getenv("STANDIN_CARD") ? getenv("STANDIN_CARD") : "spark";
	const char *version = getenv("STANDIN_VERSION") ? getenv("STANDIN_VERSION")
							: STANDIN_DEFAULT_VERSION;
	const char *backend, *scale_env = getenv("STANDIN_MEM_SCALE");
	bool thor, fp8, fp8_assert;
	double total, free0, free1, requested, weights, activation, non_torch, kv, scale = 1.0;
	double t0, t_load;
	long per_token, tokens, block = 16;
	char tok[32], len_s[32];
	char *held_weights, *held_kv;
	int argi = 1;

	{
		const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
		if (!strcmp(base, "curl"))
			return curl_main(argc, argv);
	}
	log_init();
	if (argc > 1 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))) {
		printf("%s\n", version);
		return 0;
	}
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		help();
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "serve")) {
		fprintf(stderr, "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...\n"
				"vllm: error: argument subparser: invalid choice: '%s' (choose from "
				"'chat', 'complete', 'serve', 'bench', 'collect-env', 'run-batch')\n",
			argv[1]);
		return 2;
	}
	argi = 2;
	o.version = version;
	parse_serve(argc - argi, argv + argi, &o);
	if (!o.model)
		o.model = "Qwen/Qwen3-0.6B";
	if (!o.n_served)
		o.served[o.n_served++] = o.model;
	validate_serve(&o);
	if (!o.api_key && getenv("VLLM_API_KEY") && *getenv("VLLM_API_KEY"))
		o.api_key = getenv("VLLM_API_KEY");
	if (!(o.util > 0 && o.util <= 1)) {
		raw(true, "pydantic_core._pydantic_core.ValidationError: 1 validation error for CacheConfig");
		raw(true, "gpu_memory_utilization");
		raw(true, "  Input should be greater than 0 and less than or equal to 1 "
			  "[type=value_error, input_value=%g, input_type=float]", o.util);
		return 1;
	}
	if (scale_env) {
		scale = strtod(scale_env, NULL);
		if (!(scale >= 0 && scale <= 1))
			scale = 1.0;
	}

	signals_init();

	vlog(LV_INFO, "api_server.py:1896", "vLLM API server version %s", version);
	vlog(LV_INFO, "api_server.py:1897",
	     "vllm-standin: a TEST DOUBLE of vLLM (no model runs), pretending card '%s' (%s)",
	     card, card_sm(card));
	vlog(LV_INFO, "utils.py:328", "non-default args: {%s}", o.nondefault);
	lint_environment(o.fail_env);
	thor = !strcmp(card, "thor");

	state.listen_fd = bind_early(o.host, o.port);

	read_checkpoint(o.model, &c);
	vlog(LV_INFO, "model.py:547", "Resolved architecture: %s", c.arch);
	if (o.quant && *c.quant && strcmp(o.quant, c.quant) &&
	    !(strcmp(o.quant, "modelopt_fp4") == 0 && strcmp(c.quant, "modelopt") == 0)) {
		raw(true, "ValueError: Quantization method specified in the model config (%s) does "
			  "not match the quantization method specified in the `quantization` "
			  "argument (%s).", c.quant, o.quant);
		return 1;
	}
	if (o.max_model_len <= 0)
		o.max_model_len = c.max_pos > 0 ? c.max_pos : 8192;
	vlog(LV_INFO, "model.py:1510", "Using max model len %ld", o.max_model_len);
	fp8 = is_fp8(o.kv_dtype);
	if (fp8)
		vlog(LV_INFO, "cache.py:180",
		     "Using fp8 data type to store kv cache. It reduces the GPU memory footprint "
		     "and boosts the performance. Meanwhile, it may cause accuracy drop without a "
		     "proper scaling factor.");

	state.task = resolve_task(&o, &c);
	backend = o.backend ? o.backend : "FLASH_ATTN";
	if (!o.backend && attention_env_honoured() && getenv("VLLM_ATTENTION_BACKEND") &&
	    ref_has_backend(getenv("VLLM_ATTENTION_BACKEND")))
		backend = getenv("VLLM_ATTENTION_BACKEND");
	if (c.gemma4 && c.head_dim > 0 && c.global_head_dim > 0 && c.head_dim != c.global_head_dim) {
		vlog(LV_WARNING, "gemma4.py:118",
		     "Gemma4 model has heterogeneous head dimensions (head_dim=%ld, "
		     "global_head_dim=%ld). FA4 not available, forcing TRITON_ATTN backend.",
		     c.head_dim, c.global_head_dim);
		backend = "TRITON_ATTN";
	}
	if (thor && state.task == TASK_GENERATE)
		backend = "TRITON_ATTN";  /* sm_110: generation always lands on Triton */

	state.fault = card_fault(thor, state.task, backend, o.eager, o.model, o.speculative);
	state.wrong_scores = wrong_scores(state.task, c.arch, o.hf_overrides);
	fp8_assert = thor && state.task == TASK_GENERATE && fp8 && !c.kv_scales &&
		     !strcmp(backend, "TRITON_ATTN") && env_long("STANDIN_FP8_ASSERT", 1) != 0;

	vlog(LV_INFO, "core.py:77",
	     "Initializing a V1 LLM engine (v%s) with config: model='%s', "
	     "served_model_name=%s, quantization=%s, kv_cache_dtype=%s, max_seq_len=%ld, "
	     "enforce_eager=%s", version, o.model, o.served[0],
	     o.quant ? o.quant : (*c.quant ? c.quant : "None"), o.kv_dtype, o.max_model_len,
	     o.eager ? "True" : "False");

	/* Free-memory gate, at worker start, as vLLM does on unified memory. */
	if (getenv("STANDIN_DEVICE_BYTES")) {
		total = parse_bytes(getenv("STANDIN_DEVICE_BYTES"));
		if (total <= 0) {
			raw(true, "stand-in: STANDIN_DEVICE_BYTES='%s' is not a byte count",
			    getenv("STANDIN_DEVICE_BYTES"));
			return 1;
		}
	} else {
		total = meminfo("MemTotal");
	}
	free0 = fmin(meminfo("MemFree"), total);
	requested = o.util * total;
	if (free0 < requested)
		fail_free_memory(free0, total, o.util, requested);

	/* Weight load. */
	vlog(LV_INFO, "gpu_model_runner.py:2602", "Starting to load model %s...", o.model);
	vlog(LV_INFO, "cuda.py:372",
	     "Using %s attention backend out of potential backends: ['FLASH_ATTN', "
	     "'TRITON_ATTN', 'FLEX_ATTENTION']", backend);
	t0 = now_s();
	read_weights(&c);
	weights = c.weight_bytes;
	if (getenv("STANDIN_WEIGHT_BYTES") && parse_bytes(getenv("STANDIN_WEIGHT_BYTES")) >= 0)
		weights = parse_bytes(getenv("STANDIN_WEIGHT_BYTES"));
	held_weights = hold(weights * scale);
	if (!held_weights && weights * scale >= 1)
		oom(weights);
	t_load = now_s() - t0;
	if (t_load * 1000 < env_long("STANDIN_LOAD_MS", 300))
		nap(env_long("STANDIN_LOAD_MS", 300) - (long)(t_load * 1000), false);
	t_load = now_s() - t0;
	vlog(LV_INFO, "default_loader.py:267", "Loading weights took %.2f seconds", t_load);
	vlog(LV_INFO, "gpu_model_runner.py:2634", "Model loading took %.4f GiB memory and %.6f seconds",
	     weights / GiB, t_load);
	if (fp8 && !c.kv_scales) {
		vlog(LV_WARNING, "kv_cache.py:94",
		     "Checkpoint does not provide a q scaling factor. Setting it to k_scale. This "
		     "only matters for FP8 Attention backends (flash-attn or flashinfer).");
		vlog(LV_WARNING, "kv_cache.py:108",
		     "Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify "
		     "that k/v_scale scaling factors are properly set in the checkpoint.");
		vlog(LV_WARNING, "kv_cache.py:147",
		     "Using uncalibrated q_scale 1.0 and/or prob_scale 1.0 with fp8 attention. This "
		     "may cause accuracy issues.");
	}

	/* Memory profiling: a neighbour's growth meanwhile counts against us. */
	nap(env_long("STANDIN_PROFILE_MS", 300), false);
	if (fp8_assert)
		fail_fp8_assert();
	free1 = fmin(meminfo("MemFree"), total);
	non_torch = (free0 - free1) - weights * scale;
	if (non_torch < 0)
		non_torch = 0;
	activation = requested / 20;
	kv = requested - weights - activation - non_torch;
	vlog(LV_INFO, "gpu_worker.py:298", "Available KV cache memory: %.2f GiB", kv / GiB);
	if (kv <= 0)
		fail_no_cache_blocks();
	per_token = 2 * c.layers * c.kv_heads * c.head_dim * (fp8 ? 1 : 2);
	tokens = (long)(kv / per_token) / block * block;
	commas(tokens, tok, sizeof tok);
	commas(o.max_model_len, len_s, sizeof len_s);
	vlog(LV_INFO, "kv_cache_utils.py:1087", "GPU KV cache size: %s tokens", tok);
	vlog(LV_INFO, "kv_cache_utils.py:1091", "Maximum concurrency for %s tokens per request: %.2fx",
	     len_s, (double)tokens / (double)o.max_model_len);
	held_kv = hold(kv * scale);
	if (!held_kv && kv * scale >= 1)
		oom(kv);

	/* Warm-up. */
	t0 = now_s();
	if (o.eager) {
		vlog(LV_INFO, "gpu_model_runner.py:3410", "Skipping CUDA graph capture (enforce_eager=True).");
		nap(env_long("STANDIN_WARMUP_MS", 200), false);
	} else {
		nap(env_long("STANDIN_WARMUP_MS", 200), false);
		vlog(LV_INFO, "gpu_model_runner.py:3480",
		     "Graph capturing finished in %.0f secs, took 0.25 GiB", ceil(now_s() - t0));
	}
	vlog(LV_INFO, "core.py:218", "init engine (profile, create kv cache, warmup model) took %.2f seconds",
	     now_s() - t0);

	/* API server start: the memory window has closed, nothing more is
	 * allocated; /health answers only after this. */
	nap(env_long("STANDIN_API_MS", 0), false);

	/* Serve. */
	state.model = o.model;
	memcpy(state.served, o.served, sizeof state.served);
	state.n_served = o.n_served;
	state.served_name = o.served[0];
	state.tool_parser = o.tool_parser;
	state.auto_tool_choice = o.auto_tool_choice;
	state.reasoning_parser = o.reasoning_parser;
	state.thinks = state.task == TASK_GENERATE && (c.gemma4 || !strncmp(c.arch, "Qwen3", 5));
	state.thinks_by_default = !c.gemma4;
	state.token_ms = env_long("STANDIN_TOKEN_MS", 5);
	state.first_token_ms = env_long("STANDIN_FIRST_TOKEN_MS", 0);
	state.fail_every = env_long("STANDIN_503_EVERY", 0);
	state.drop_every = env_long("STANDIN_DROP_EVERY", 0);
	if (state.task == TASK_GENERATE && fp8 && !c.kv_scales)
		state.fp8_noise = env_double("STANDIN_FP8_NOISE", 0.1);
	state.host = o.host;
	state.port = o.port;
	state.api_key = o.api_key;
	state.version = version;
	state.max_model_len = o.max_model_len;
	state.embed_dim = c.hidden > 0 && c.hidden <= 8192 ? (size_t)c.hidden : 1024;
	if (env_long("STANDIN_EMBED_DIM", 0) > 0 && env_long("STANDIN_EMBED_DIM", 0) <= 8192)
		state.embed_dim = (size_t)env_long("STANDIN_EMBED_DIM", 0);
	vlog(LV_INFO, "api_server.py:1632", "Starting vLLM API server 0 on http://%s:%d", o.host, o.port);
	vlog(LV_INFO, "launcher.py:37", "Available routes are:");
	vlog(LV_INFO, "launcher.py:45", "Route: /health, Methods: GET");
	vlog(LV_INFO, "launcher.py:45", "Route: /version, Methods: GET");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/models, Methods: GET");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/chat/completions, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/completions, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/embeddings, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/rerank, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /rerank, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /v2/rerank, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /score, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/score, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /tokenize, Methods: POST");
	if (http_start(&state) < 0)
		return 1;
	uvlog("Started server process [%d]", (int)getpid());
	uvlog("Waiting for application startup.");
	uvlog("Application startup complete.");

	while (!state.dead)
		nap(100, true);
	nap(200, true);  /* let the failed request's 500 go out */
	vlog(LV_ERROR, "core_client.py:564", "Engine core proc EngineCore_DP0 died unexpectedly, "
					      "shutting down client.");
	free(held_weights);
	free(held_kv);
	shutdown_and_exit(1, true);
	return 1;
}
