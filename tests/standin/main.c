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
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "standin.h"

#define GiB (1024.0 * 1024.0 * 1024.0)
#define PKG "/usr/local/lib/python3.12/dist-packages/vllm"


/* ---- time, signals, memory ------------------------------------------- */

static sigset_t stop_signals;
static struct standin state;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	return (end == v || *end || n < 0) ? def : n;
}

/* Parse a byte count with an optional K/M/G/T (binary) suffix; -1 if bad. */
static double parse_bytes(const char *v)
{
	char *end;
	double n = strtod(v, &end);

	if (end == v || n < 0)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K': n *= 1024.0; end++; break;
	case 'M': n *= 1048576.0; end++; break;
	case 'G': n *= GiB; end++; break;
	case 'T': n *= GiB * 1024.0; end++; break;
	default: break;
	}
	if (!strcasecmp(end, "iB") || !strcasecmp(end, "B"))
		end += strlen(end);
	return *end ? -1 : n;
}

/* SIGTERM/SIGINT stay blocked and are taken by sigtimedwait() in nap();
 * a handler (never run) keeps them from being ignored when the stand-in is
 * PID 1 in a container, where a default disposition drops them. */
static void on_stop_signal(int sig)
{
	(void)sig;
}

static void shutdown_and_exit(int code, bool serving)
{
	vlog(LV_INFO, "launcher.py:101", "Shutting down FastAPI HTTP server.");
	if (serving) {
		uvlog("Shutting down");
		uvlog("Waiting for application shutdown.");
		uvlog("Application shutdown complete.");
		uvlog("Finished server process [%d]", (int)getpid());
	}
	http_stop();
	exit(code);
}

/* Sleep ms milliseconds; SIGTERM/SIGINT meanwhile end the process (0). */
static void nap(long ms, bool serving)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms <= 0)
		return;
	while (true) {
		int sig = sigtimedwait(&stop_signals, NULL, &ts);
		if (sig > 0)
			shutdown_and_exit(0, serving);
		if (errno != EINTR)
			return;
	}
}

/* MemTotal or MemFree from /proc/meminfo in bytes; 0 if unreadable. */
static double meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	size_t klen = strlen(key);
	double v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtod(line + klen + 1, NULL) * 1024.0;
			break;
		}
	fclose(f);
	return v;
}

/* Allocate n bytes and write one byte in every page, so they are resident.
 * Returns NULL (nothing held) when n is 0 or the allocation fails. */
static char *hold(double n)
{
	size_t len = (size_t)n;
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	if (len == 0)
		return NULL;
	p = malloc(len);
	if (!p)
		return NULL;
	for (size_t i = 0; i < len; i += (size_t)page)
		p[i] = 1;
	p[len - 1] = 1;
	return p;
}

static void engine_failed(void)
{
	raw(true, "RuntimeError: Engine core initialization failed. See root cause above. "
		  "Failed core proc(s): {}");
	exit(1);
}

static void oom(double bytes)
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

/* True when the --speculative-config JSON (may be NULL) asks for MTP. */
static bool mtp(const char *speculative)
{
	json_t *j = speculative ? json_loads(speculative, 0, NULL) : NULL;
	const char *m = json_string_value(json_object_get(j, "method"));
	bool yes = m && strstr(m, "mtp");

	json_decref(j);
	return yes;
}

/* ---- boot ------------------------------------------------------------- */

/* Bind host:port now (vLLM binds before starting the engine), listen later. */
static int bind_early(const char *host, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof ss);
	if (!strcmp(host, "localhost"))
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		len = sizeof *in4;
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		len = sizeof *in6;
	} else {
		raw(true, "socket.gaierror: [Errno -2] Name or service not known: '%s'", host);
		exit(1);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0) {
		raw(true, "OSError: [Errno %d] %s", errno,
		    errno == EADDRINUSE ? "Address already in use" : strerror(errno));
		exit(1);
	}
	return fd;
}

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

/* The compute capability the card's GPU reports, as "sm_NNN". */
static const char *card_sm(const char *card)
{
	if (!strcmp(card, "spark"))
		return "sm_121";
	if (!strcmp(card, "thor"))
		return "sm_110";
	if (!strncmp(card, "orin", 4))
		return "sm_87";
	return "sm_90";
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

	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);
	signal(SIGTERM, on_stop_signal);
	signal(SIGINT, on_stop_signal);
	signal(SIGPIPE, SIG_IGN);

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

	state.fault = FAULT_NONE;
	if (thor) {
		bool triton = !strcmp(backend, "TRITON_ATTN");
		if (state.task == TASK_CLASSIFY && !o.eager)
			state.fault = FAULT_GRAPH_KILL;
		else if (state.task != TASK_GENERATE && !triton)
			state.fault = FAULT_POOLING_HANG;
		else if (state.task == TASK_GENERATE && strcasestr(o.model, "lfm2.5-1.2b"))
			state.fault = FAULT_CORRUPT_THEN_DIE;
		else if (state.task == TASK_GENERATE && mtp(o.speculative) &&
			 (strcasestr(o.model, "qwen3.8-27b") || strcasestr(o.model, "qwen3.6-27b") ||
			  strcasestr(o.model, "qwen3.6-35b")))
			state.fault = FAULT_MTP_NO_KERNEL;
	}
	/* The original Qwen3-Reranker checkpoint is a causal LM: served as a
	 * classifier without vLLM's documented overrides, its head is not the
	 * one it trained, on any card. */
	state.wrong_scores = state.task == TASK_CLASSIFY && ends_with(c.arch, "ForCausalLM") &&
			     !qwen3_reranker_overrides(o.hf_overrides);
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
	if (free0 < requested) {
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
			 free0 / GiB, total / GiB, o.util, requested / GiB);
		vtraceback("core.py:708", "EngineCore failed to start.", frames, msg);
		engine_failed();
	}

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
	if (fp8_assert) {
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
	free1 = fmin(meminfo("MemFree"), total);
	non_torch = (free0 - free1) - weights * scale;
	if (non_torch < 0)
		non_torch = 0;
	activation = requested / 20;
	kv = requested - weights - activation - non_torch;
	vlog(LV_INFO, "gpu_worker.py:298", "Available KV cache memory: %.2f GiB", kv / GiB);
	if (kv <= 0) {
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
