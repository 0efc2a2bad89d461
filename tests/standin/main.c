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

/* One boot: the options, the checkpoint and what the phases compute. */
struct boot {
	struct opts o;
	struct ckpt c;
	const char *card, *version, *backend;
	bool thor, fp8, fp8_assert;
	double total, free0, requested, weights, scale;
	char *held_weights, *held_kv;
};

/* Before `serve`: the curl applet, --version, --help, other subcommands.
 * -1 to go on, else the exit code. */
static int front_door(int argc, char **argv, const char *version)
{
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	if (!strcmp(base, "curl"))
		return curl_main(argc, argv);
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
	return -1;
}

/* The serve flags, validated as vLLM's config classes do; the memory
 * scale. -1 to go on, else the exit code. */
static int parse_args(struct boot *b, int argc, char **argv)
{
	b->o.version = b->version;
	parse_serve(argc, argv, &b->o);
	if (!b->o.model)
		b->o.model = "Qwen/Qwen3-0.6B";
	if (!b->o.n_served)
		b->o.served[b->o.n_served++] = b->o.model;
	validate_serve(&b->o);
	if (!b->o.api_key && getenv("VLLM_API_KEY") && *getenv("VLLM_API_KEY"))
		b->o.api_key = getenv("VLLM_API_KEY");
	if (!(b->o.util > 0 && b->o.util <= 1)) {
		raw(true, "pydantic_core._pydantic_core.ValidationError: 1 validation error for CacheConfig");
		raw(true, "gpu_memory_utilization");
		raw(true, "  Input should be greater than 0 and less than or equal to 1 "
			  "[type=value_error, input_value=%g, input_type=float]", b->o.util);
		return 1;
	}
	const char *scale_env = getenv("STANDIN_MEM_SCALE");
	b->scale = 1.0;
	if (scale_env) {
		b->scale = strtod(scale_env, NULL);
		if (!(b->scale >= 0 && b->scale <= 1))
			b->scale = 1.0;
	}
	return -1;
}

/* The banner, the early bind, the checkpoint and the model config's lines.
 * -1 to go on, else the exit code. */
static int read_model(struct boot *b)
{
	struct opts *o = &b->o;
	struct ckpt *c = &b->c;
	vlog(LV_INFO, "api_server.py:1896", "vLLM API server version %s", b->version);
	vlog(LV_INFO, "api_server.py:1897",
	     "vllm-standin: a TEST DOUBLE of vLLM (no model runs), pretending card '%s' (%s)",
	     b->card, card_sm(b->card));
	vlog(LV_INFO, "utils.py:328", "non-default args: {%s}", o->nondefault);
	lint_environment(o->fail_env);
	b->thor = !strcmp(b->card, "thor");

	state.listen_fd = bind_early(o->host, o->port);

	read_checkpoint(o->model, c);
	vlog(LV_INFO, "model.py:547", "Resolved architecture: %s", c->arch);
	if (o->quant && *c->quant && strcmp(o->quant, c->quant) &&
	    !(strcmp(o->quant, "modelopt_fp4") == 0 && strcmp(c->quant, "modelopt") == 0)) {
		raw(true, "ValueError: Quantization method specified in the model config (%s) does "
			  "not match the quantization method specified in the `quantization` "
			  "argument (%s).", c->quant, o->quant);
		return 1;
	}
	if (o->max_model_len <= 0)
		o->max_model_len = c->max_pos > 0 ? c->max_pos : 8192;
	vlog(LV_INFO, "model.py:1510", "Using max model len %ld", o->max_model_len);
	b->fp8 = is_fp8(o->kv_dtype);
	if (b->fp8)
		vlog(LV_INFO, "cache.py:180",
		     "Using fp8 data type to store kv cache. It reduces the GPU memory footprint "
		     "and boosts the performance. Meanwhile, it may cause accuracy drop without a "
		     "proper scaling factor.");
	return -1;
}

/* The task, the attention backend vLLM would pick, and the card's faults. */
static void choose_backend(struct boot *b)
{
	const struct opts *o = &b->o;
	const struct ckpt *c = &b->c;
	state.task = resolve_task(o, c);
	b->backend = o->backend ? o->backend : "FLASH_ATTN";
	if (!o->backend && attention_env_honoured() && getenv("VLLM_ATTENTION_BACKEND") &&
	    ref_has_backend(getenv("VLLM_ATTENTION_BACKEND")))
		b->backend = getenv("VLLM_ATTENTION_BACKEND");
	if (c->gemma4 && c->head_dim > 0 && c->global_head_dim > 0 && c->head_dim != c->global_head_dim) {
		vlog(LV_WARNING, "gemma4.py:118",
		     "Gemma4 model has heterogeneous head dimensions (head_dim=%ld, "
		     "global_head_dim=%ld). FA4 not available, forcing TRITON_ATTN backend.",
		     c->head_dim, c->global_head_dim);
		b->backend = "TRITON_ATTN";
	}
	if (b->thor && state.task == TASK_GENERATE)
		b->backend = "TRITON_ATTN";  /* sm_110: generation always lands on Triton */

	state.fault = card_fault(b->thor, state.task, b->backend, o->eager, o->model, o->speculative);
	state.wrong_scores = wrong_scores(state.task, c->arch, o->hf_overrides);
	b->fp8_assert = b->thor && state.task == TASK_GENERATE && b->fp8 && !c->kv_scales &&
			!strcmp(b->backend, "TRITON_ATTN") && env_long("STANDIN_FP8_ASSERT", 1) != 0;

	vlog(LV_INFO, "core.py:77",
	     "Initializing a V1 LLM engine (v%s) with config: model='%s', "
	     "served_model_name=%s, quantization=%s, kv_cache_dtype=%s, max_seq_len=%ld, "
	     "enforce_eager=%s", b->version, o->model, o->served[0],
	     o->quant ? o->quant : (*c->quant ? c->quant : "None"), o->kv_dtype, o->max_model_len,
	     o->eager ? "True" : "False");
}

/* The free-memory gate at worker start, as vLLM does on unified memory,
 * then the weights (read, so the page cache grows, and held). -1 to go on,
 * else the exit code. */
static int load_weights(struct boot *b)
{
	if (getenv("STANDIN_DEVICE_BYTES")) {
		b->total = parse_bytes(getenv("STANDIN_DEVICE_BYTES"));
		if (b->total <= 0) {
			raw(true, "stand-in: STANDIN_DEVICE_BYTES='%s' is not a byte count",
			    getenv("STANDIN_DEVICE_BYTES"));
			return 1;
		}
	} else {
		b->total = meminfo("MemTotal");
	}
	b->free0 = fmin(meminfo("MemFree"), b->total);
	b->requested = b->o.util * b->total;
	if (b->free0 < b->requested)
		fail_free_memory(b->free0, b->total, b->o.util, b->requested);

	vlog(LV_INFO, "gpu_model_runner.py:2602", "Starting to load model %s...", b->o.model);
	vlog(LV_INFO, "cuda.py:372",
	     "Using %s attention backend out of potential backends: ['FLASH_ATTN', "
	     "'TRITON_ATTN', 'FLEX_ATTENTION']", b->backend);
	double t0 = now_s();
	read_weights(&b->c);
	b->weights = b->c.weight_bytes;
	if (getenv("STANDIN_WEIGHT_BYTES") && parse_bytes(getenv("STANDIN_WEIGHT_BYTES")) >= 0)
		b->weights = parse_bytes(getenv("STANDIN_WEIGHT_BYTES"));
	/* a checkpoint whose weights take the whole budget: memory profiling
	 * then leaves nothing for the KV cache (vLLM's "No available memory
	 * for the cache blocks"), as a too-big model does */
	if (getenv("STANDIN_FAIL_MODEL") && !strcmp(getenv("STANDIN_FAIL_MODEL"), b->o.model))
		b->weights = b->requested;
	b->held_weights = hold(b->weights * b->scale);
	if (!b->held_weights && b->weights * b->scale >= 1)
		oom(b->weights);
	double t_load = now_s() - t0;
	if (t_load * 1000 < env_long("STANDIN_LOAD_MS", 300))
		nap(env_long("STANDIN_LOAD_MS", 300) - (long)(t_load * 1000), false);
	t_load = now_s() - t0;
	vlog(LV_INFO, "default_loader.py:267", "Loading weights took %.2f seconds", t_load);
	vlog(LV_INFO, "gpu_model_runner.py:2634", "Model loading took %.4f GiB memory and %.6f seconds",
	     b->weights / GiB, t_load);
	if (b->fp8 && !b->c.kv_scales) {
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
	return -1;
}

/* Memory profiling (a neighbour's growth meanwhile counts against us),
 * then the KV cache: sized, logged, allocated and touched. */
static void allocate_kv_cache(struct boot *b)
{
	long block = 16;
	char tok[32], len_s[32];
	nap(env_long("STANDIN_PROFILE_MS", 300), false);
	if (b->fp8_assert)
		fail_fp8_assert();
	double free1 = fmin(meminfo("MemFree"), b->total);
	double non_torch = (b->free0 - free1) - b->weights * b->scale;
	if (non_torch < 0)
		non_torch = 0;
	double activation = b->requested / 20;
	double kv = b->requested - b->weights - activation - non_torch;
	vlog(LV_INFO, "gpu_worker.py:298", "Available KV cache memory: %.2f GiB", kv / GiB);
	if (kv <= 0)
		fail_no_cache_blocks();
	long per_token = 2 * b->c.layers * b->c.kv_heads * b->c.head_dim * (b->fp8 ? 1 : 2);
	long tokens = (long)(kv / per_token) / block * block;
	commas(tokens, tok, sizeof tok);
	commas(b->o.max_model_len, len_s, sizeof len_s);
	vlog(LV_INFO, "kv_cache_utils.py:1087", "GPU KV cache size: %s tokens", tok);
	vlog(LV_INFO, "kv_cache_utils.py:1091", "Maximum concurrency for %s tokens per request: %.2fx",
	     len_s, (double)tokens / (double)b->o.max_model_len);
	b->held_kv = hold(kv * b->scale);
	if (!b->held_kv && kv * b->scale >= 1)
		oom(kv);
}

/* Warm-up: CUDA graph capture, or its skip under --enforce-eager; the
 * memory window closes with "init engine ... took". */
static void warm_up(bool eager)
{
	double t0 = now_s();
	if (eager) {
		vlog(LV_INFO, "gpu_model_runner.py:3410", "Skipping CUDA graph capture (enforce_eager=True).");
		nap(env_long("STANDIN_WARMUP_MS", 200), false);
	} else {
		nap(env_long("STANDIN_WARMUP_MS", 200), false);
		vlog(LV_INFO, "gpu_model_runner.py:3480",
		     "Graph capturing finished in %.0f secs, took 0.25 GiB", ceil(now_s() - t0));
	}
	vlog(LV_INFO, "core.py:218", "init engine (profile, create kv cache, warmup model) took %.2f seconds",
	     now_s() - t0);
}

/* What the HTTP side serves with, from the options, the checkpoint and
 * the STANDIN_* numbers. */
static void serving_state(const struct boot *b)
{
	const struct opts *o = &b->o;
	const struct ckpt *c = &b->c;
	state.model = o->model;
	memcpy(state.served, o->served, sizeof state.served);
	state.n_served = o->n_served;
	state.served_name = o->served[0];
	state.tool_parser = o->tool_parser;
	state.auto_tool_choice = o->auto_tool_choice;
	state.reasoning_parser = o->reasoning_parser;
	state.thinks = state.task == TASK_GENERATE && (c->gemma4 || !strncmp(c->arch, "Qwen3", 5));
	state.thinks_by_default = !c->gemma4;
	state.token_ms = env_long("STANDIN_TOKEN_MS", 5);
	state.first_token_ms = env_long("STANDIN_FIRST_TOKEN_MS", 0);
	if (state.task == TASK_GENERATE)
		spec_setup(&state, o->speculative);  /* after token_ms: MTP shortens it */
	if (state.spec_k)
		vlog(LV_INFO, "metrics.c", "(standin: MTP k=%d, acceptance %.2f: token spacing %ld ms)",
		     state.spec_k, state.spec_accept, state.token_ms);
	state.fail_every = env_long("STANDIN_503_EVERY", 0);
	state.drop_every = env_long("STANDIN_DROP_EVERY", 0);
	if (state.task == TASK_GENERATE && b->fp8 && !c->kv_scales)
		state.fp8_noise = env_double("STANDIN_FP8_NOISE", 0.1);
	state.host = o->host;
	state.port = o->port;
	state.api_key = o->api_key;
	state.version = b->version;
	state.max_model_len = o->max_model_len;
	state.max_num_seqs = o->max_num_seqs > 0 ? o->max_num_seqs : 256;
	state.kv_tokens = env_long("STANDIN_KV_TOKENS", 65536);
	if (state.kv_tokens <= 0)
		state.kv_tokens = 65536;
	state.embed_dim = c->hidden > 0 && c->hidden <= 8192 ? (size_t)c->hidden : 1024;
	if (env_long("STANDIN_EMBED_DIM", 0) > 0 && env_long("STANDIN_EMBED_DIM", 0) <= 8192)
		state.embed_dim = (size_t)env_long("STANDIN_EMBED_DIM", 0);
}

static void log_routes(const char *host, int port)
{
	static const char *const routes[] = {
		"/health, Methods: GET",	    "/version, Methods: GET",
		"/v1/models, Methods: GET",	    "/v1/chat/completions, Methods: POST",
		"/v1/completions, Methods: POST",   "/v1/embeddings, Methods: POST",
		"/v1/rerank, Methods: POST",	    "/rerank, Methods: POST",
		"/v2/rerank, Methods: POST",	    "/score, Methods: POST",
		"/v1/score, Methods: POST",	    "/tokenize, Methods: POST",
	};
	vlog(LV_INFO, "api_server.py:1632", "Starting vLLM API server 0 on http://%s:%d", host, port);
	vlog(LV_INFO, "launcher.py:37", "Available routes are:");
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		vlog(LV_INFO, "launcher.py:45", "Route: %s", routes[i]);
}

int main(int argc, char **argv)
{
	struct boot b = { .o = { .host = "127.0.0.1", .port = 8000, .util = 0.9, .max_model_len = -1,
				 .max_num_seqs = -1, .kv_dtype = "auto", .runner = "auto",
				 .convert = "auto" } };
	b.card = getenv("STANDIN_CARD") ? getenv("STANDIN_CARD") : "spark";
	b.version = getenv("STANDIN_VERSION") ? getenv("STANDIN_VERSION") : STANDIN_DEFAULT_VERSION;
	int rc;
	if ((rc = front_door(argc, argv, b.version)) >= 0 || (rc = parse_args(&b, argc - 2, argv + 2)) >= 0)
		return rc;
	signals_init();
	if ((rc = read_model(&b)) >= 0)
		return rc;
	choose_backend(&b);
	if ((rc = load_weights(&b)) >= 0)
		return rc;
	allocate_kv_cache(&b);
	warm_up(b.o.eager);

	/* API server start: the memory window has closed, nothing more is
	 * allocated; /health answers only after this. */
	nap(env_long("STANDIN_API_MS", 0), false);

	serving_state(&b);
	log_routes(b.o.host, b.o.port);
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
	free(b.held_weights);
	free(b.held_kv);
	shutdown_and_exit(1, true);
	return 1;
}
