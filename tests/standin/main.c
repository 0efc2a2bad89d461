/*
 * main.c — vllm-standin: a TEST DOUBLE of `vllm serve` for lobes' tests.
 *
 * It is not vLLM and runs no model. It parses vLLM's serve flags (argparse
 * errors exit 2), lints VLLM_* variables against a registry like vLLM does,
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
 * launch failure, wrong rerank order in eager mode, LFM2.5-1.2B corruption).
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

extern char **environ;

static const char *prog = "vllm";

/* ---- command line ---------------------------------------------------- */

enum flag_id {
	F_MODEL, F_SERVED, F_HOST, F_PORT, F_UTIL, F_MAXLEN, F_KVDTYPE, F_QUANT, F_MAXSEQS,
	F_EAGER, F_NO_EAGER, F_ATTN_CONFIG, F_ATTN_BACKEND, F_RUNNER, F_CONVERT, F_API_KEY,
	F_FAIL_ENV, F_HELP, F_IGNORED_VALUE, F_IGNORED_BOOL,
};

struct flag {
	const char *name;
	bool takes_value;
	enum flag_id id;
};

/* vLLM's serve flags the stand-in understands. The F_IGNORED_* ones are
 * accepted because renders commonly pass them; they change nothing here. */
static const struct flag flags[] = {
	{ "--model", true, F_MODEL },
	{ "--served-model-name", true, F_SERVED },
	{ "--host", true, F_HOST },
	{ "--port", true, F_PORT },
	{ "--gpu-memory-utilization", true, F_UTIL },
	{ "--max-model-len", true, F_MAXLEN },
	{ "--kv-cache-dtype", true, F_KVDTYPE },
	{ "--quantization", true, F_QUANT },
	{ "-q", true, F_QUANT },
	{ "--max-num-seqs", true, F_MAXSEQS },
	{ "--enforce-eager", false, F_EAGER },
	{ "--no-enforce-eager", false, F_NO_EAGER },
	{ "--attention-config", true, F_ATTN_CONFIG },
	{ "--attention-backend", true, F_ATTN_BACKEND },
	{ "--runner", true, F_RUNNER },
	{ "--convert", true, F_CONVERT },
	{ "--api-key", true, F_API_KEY },
	{ "--fail-on-environ-validation", false, F_FAIL_ENV },
	{ "--help", false, F_HELP },
	{ "-h", false, F_HELP },
	{ "--trust-remote-code", false, F_IGNORED_BOOL },
	{ "--enable-prefix-caching", false, F_IGNORED_BOOL },
	{ "--no-enable-prefix-caching", false, F_IGNORED_BOOL },
	{ "--enable-auto-tool-choice", false, F_IGNORED_BOOL },
	{ "--disable-log-requests", false, F_IGNORED_BOOL },
	{ "--enable-log-requests", false, F_IGNORED_BOOL },
	{ "--disable-log-stats", false, F_IGNORED_BOOL },
	{ "--dtype", true, F_IGNORED_VALUE },
	{ "--max-num-batched-tokens", true, F_IGNORED_VALUE },
	{ "--tensor-parallel-size", true, F_IGNORED_VALUE },
	{ "-tp", true, F_IGNORED_VALUE },
	{ "--seed", true, F_IGNORED_VALUE },
	{ "--limit-mm-per-prompt", true, F_IGNORED_VALUE },
	{ "--tool-call-parser", true, F_IGNORED_VALUE },
	{ "--reasoning-parser", true, F_IGNORED_VALUE },
	{ "--chat-template", true, F_IGNORED_VALUE },
	{ "--default-chat-template-kwargs", true, F_IGNORED_VALUE },
	{ "--generation-config", true, F_IGNORED_VALUE },
	{ "--hf-overrides", true, F_IGNORED_VALUE },
	{ "--uvicorn-log-level", true, F_IGNORED_VALUE },
	{ "--load-format", true, F_IGNORED_VALUE },
	{ "--download-dir", true, F_IGNORED_VALUE },
	{ "--tokenizer", true, F_IGNORED_VALUE },
	{ "--revision", true, F_IGNORED_VALUE },
	{ "--mm-processor-kwargs", true, F_IGNORED_VALUE },
	{ "--compilation-config", true, F_IGNORED_VALUE },
	{ "--pooler-config", true, F_IGNORED_VALUE },
	{ "--max-logprobs", true, F_IGNORED_VALUE },
};

static const char *const kv_dtypes[] = { "auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2",
					 "fp8_inc", "fp8_ds_mla", NULL };
static const char *const quant_methods[] = {
	"awq", "awq_marlin", "bitsandbytes", "compressed-tensors", "experts_int8", "fbgemm_fp8",
	"fp8", "gguf", "gptq", "gptq_marlin", "inc", "modelopt", "modelopt_fp4", "mxfp4",
	"torchao", NULL,
};
static const char *const backends[] = {
	"FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "FLEX_ATTENTION", "TREE_ATTN", "TORCH_SDPA",
	"XFORMERS", "FLASHMLA", "FLASH_ATTN_MLA", "CUTLASS_MLA", "TRITON_MLA", "FLASHINFER_MLA",
	"ROCM_ATTN", "ROCM_AITER_FA", "CPU_ATTN", NULL,
};
static const char *const runners[] = { "auto", "generate", "pooling", "draft", NULL };
static const char *const converts[] = { "auto", "none", "embed", "classify", "reward", NULL };

/* Names in vLLM's environment registry (vllm.envs.environment_variables),
 * a subset: anything else starting VLLM_ draws the unknown-variable warning.
 * VLLM_ATTENTION_BACKEND is deliberately absent: it is dead on the pinned
 * nightly (FACTS.md trait 4). */
static const char *const env_registry[] = {
	"VLLM_API_KEY", "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "VLLM_ALLOW_RUNTIME_LORA_UPDATING",
	"VLLM_ASSETS_CACHE", "VLLM_AUDIO_FETCH_TIMEOUT", "VLLM_CACHE_ROOT", "VLLM_CONFIG_ROOT",
	"VLLM_CONFIGURE_LOGGING", "VLLM_CPU_KVCACHE_SPACE", "VLLM_DEBUG_LOG_API_SERVER_RESPONSE",
	"VLLM_DISABLE_COMPILE_CACHE", "VLLM_DO_NOT_TRACK", "VLLM_DP_MASTER_IP",
	"VLLM_DP_MASTER_PORT", "VLLM_DP_RANK", "VLLM_DP_SIZE",
	"VLLM_ENABLE_V1_MULTIPROCESSING", "VLLM_ENGINE_ITERATION_TIMEOUT_S", "VLLM_HOST_IP",
	"VLLM_HTTP_TIMEOUT_KEEP_ALIVE", "VLLM_IMAGE_FETCH_TIMEOUT",
	"VLLM_KEEP_ALIVE_ON_ENGINE_DEATH", "VLLM_LOG_STATS_INTERVAL", "VLLM_LOGGING_CONFIG_PATH",
	"VLLM_LOGGING_LEVEL", "VLLM_LOGGING_PREFIX", "VLLM_LOGGING_STREAM", "VLLM_NCCL_SO_PATH",
	"VLLM_NO_USAGE_STATS", "VLLM_PLUGINS", "VLLM_PORT", "VLLM_RPC_TIMEOUT",
	"VLLM_SERVER_DEV_MODE", "VLLM_SLEEP_WHEN_IDLE", "VLLM_TARGET_DEVICE",
	"VLLM_TORCH_PROFILER_DIR", "VLLM_USAGE_SOURCE", "VLLM_USE_DEEP_GEMM",
	"VLLM_USE_FLASHINFER_SAMPLER", "VLLM_USE_MODELSCOPE", "VLLM_VIDEO_FETCH_TIMEOUT",
	"VLLM_WORKER_MULTIPROC_METHOD", NULL,
};

struct opts {
	const char *model, *served, *host, *kv_dtype, *quant, *backend, *runner, *convert;
	const char *api_key;
	int port;
	double util;
	long max_model_len, max_num_seqs;
	bool eager, fail_env;
	char nondefault[2048];
	size_t nd_len;
};

static void usage_line(FILE *f)
{
	fprintf(f, "usage: %s serve [model_tag] [options]\n", prog);
}

/* argparse's failure: usage, "vllm serve: error: MSG", exit 2. */
static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	usage_line(stderr);
	fprintf(stderr, "%s serve: error: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void help(void)
{
	usage_line(stdout);
	printf("\n"
	       "vllm-standin is a TEST DOUBLE of `vllm serve`, built for lobes' tests. It is\n"
	       "not vLLM and runs no model: it prints vLLM's log lines, checks and holds\n"
	       "memory the way vLLM does on unified memory, serves vLLM's HTTP surface with\n"
	       "toy deterministic answers, and reproduces recorded faults on request.\n"
	       "\n"
	       "options (vLLM's names; both --flag=value and --flag value):\n"
	       "  --served-model-name NAME  --host ADDR (default 127.0.0.1)  --port N (8000)\n"
	       "  --gpu-memory-utilization F (0.9)  --max-model-len N  --max-num-seqs N\n"
	       "  --kv-cache-dtype {auto,bfloat16,fp8,fp8_e4m3,fp8_e5m2,...}  --quantization M\n"
	       "  --enforce-eager | --no-enforce-eager  --runner {auto,generate,pooling}\n"
	       "  --convert {auto,none,embed,classify}  --api-key KEY\n"
	       "  --attention-config JSON (e.g. '{\"backend\": \"TRITON_ATTN\"}')\n"
	       "  --attention-config.backend NAME  --attention-backend NAME\n"
	       "  --fail-on-environ-validation  (plus a few accepted-and-ignored vLLM flags)\n"
	       "\n"
	       "stand-in environment:\n"
	       "  STANDIN_CARD          card to pretend (spark, thor, orin, ...); thor faults\n"
	       "  STANDIN_DEVICE_BYTES  device size (default MemTotal); K/M/G/T suffixes\n"
	       "  STANDIN_MEM_SCALE     fraction of the budget really allocated (default 1)\n"
	       "  STANDIN_WEIGHT_BYTES  declared weight size (default: the files' size)\n"
	       "  STANDIN_LOAD_MS, STANDIN_PROFILE_MS, STANDIN_WARMUP_MS  phase durations\n"
	       "                        (ms; the load lasts at least LOAD_MS, longer if reading\n"
	       "                        the weight files takes longer)\n"
	       "  STANDIN_API_MS        ms between \"init engine ... took\" (memory window\n"
	       "                        closed) and listening, modelling the API server's\n"
	       "                        start (default 0)\n"
	       "  STANDIN_FP8_ASSERT=0  boot thor's fp8 scale-less config (the later observation)\n"
	       "  STANDIN_EMBED_DIM     embedding width (default: config hidden_size)\n"
	       "  STANDIN_VERSION       version to report\n"
	       "  STANDIN_ATTENTION_ENV=honoured  act as an older image that still honours\n"
	       "                        VLLM_ATTENTION_BACKEND (with its deprecation warning)\n"
	       "Hugging Face cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.\n");
}

static bool in_list(const char *v, const char *const list[])
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(v, list[i]))
			return true;
	return false;
}

static void __attribute__((noreturn)) choices_error(const char *flag, const char *v,
						    const char *const list[])
{
	char buf[1024];
	size_t used = 0;

	for (size_t i = 0; list[i] && used < sizeof buf; i++) {
		int n = snprintf(buf + used, sizeof buf - used, "%s%s", i ? ", " : "", list[i]);
		if (n > 0)
			used += (size_t)n;
	}
	usage_error("argument %s: invalid choice: '%s' (choose from %s)", flag, v, buf);
}

static long parse_int(const char *flag, const char *v, bool size_suffix)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (size_suffix && end != v && end[0] && !end[1]) {
		switch (*end) {
		case 'k': n *= 1000; end++; break;
		case 'K': n *= 1024; end++; break;
		case 'm': n *= 1000000; end++; break;
		case 'M': n *= 1048576; end++; break;
		default: break;
		}
	}
	if (errno || end == v || *end)
		usage_error("argument %s: invalid int value: '%s'", flag, v);
	return n;
}

/* Record "'key': value" for the non-default args line (dashes become
 * underscores, as in vLLM's dataclass field names). */
static void note_arg(struct opts *o, const char *key, const char *value, bool quote)
{
	char field[128];
	int n;

	snprintf(field, sizeof field, "%s", key);
	for (char *p = field; *p; p++)
		if (*p == '-' || *p == '.')
			*p = '_';
	n = snprintf(o->nondefault + o->nd_len, sizeof o->nondefault - o->nd_len,
		     "%s'%s': %s%s%s", o->nd_len ? ", " : "", field, quote && value ? "'" : "",
		     value ? value : "True", quote && value ? "'" : "");
	if (n > 0 && o->nd_len + (size_t)n < sizeof o->nondefault)
		o->nd_len += (size_t)n;
}

static void set_backend(struct opts *o, const char *flag, const char *v)
{
	if (!in_list(v, backends))
		choices_error(flag, v, backends);
	o->backend = v;
}

/* --attention-config JSON: an object whose "backend" names a backend. The
 * string is kept alive by argv; the parsed JSON is freed here. */
static void attention_config(struct opts *o, const char *v)
{
	json_error_t jerr;
	json_t *j = json_loads(v, 0, &jerr);
	const char *b;

	if (!json_is_object(j))
		usage_error("argument --attention-config: Value %s cannot be converted to "
			    "<class 'vllm.config.attention.AttentionConfig'>.", v);
	b = json_string_value(json_object_get(j, "backend"));
	if (b) {
		if (!in_list(b, backends))
			choices_error("--attention-config.backend", b, backends);
		for (size_t i = 0; backends[i]; i++)
			if (!strcmp(b, backends[i]))
				o->backend = backends[i];
	}
	json_decref(j);
}

/* Parse `serve` arguments (argv after "serve") into o; exits 2 on misuse. */
static void parse_serve(int argc, char **argv, struct opts *o)
{
	char unknown[1024] = "";
	size_t ulen = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		char name[128];
		const char *eq, *value = NULL;
		const struct flag *f = NULL;
		size_t nlen;

		if (a[0] != '-' || !a[1] || isdigit((unsigned char)a[1])) {
			if (!o->model) {
				o->model = a;
				note_arg(o, "model_tag", a, true);
			} else {
				int n = snprintf(unknown + ulen, sizeof unknown - ulen, "%s%s",
						 ulen ? " " : "", a);
				if (n > 0 && ulen + (size_t)n < sizeof unknown)
					ulen += (size_t)n;
			}
			continue;
		}
		eq = strchr(a, '=');
		nlen = eq ? (size_t)(eq - a) : strlen(a);
		if (nlen >= sizeof name)
			nlen = sizeof name - 1;
		memcpy(name, a, nlen);
		name[nlen] = '\0';
		for (size_t k = 2; k < nlen; k++)  /* vLLM accepts --max_model_len */
			if (name[k] == '_')
				name[k] = '-';
		if (eq)
			value = eq + 1;

		if (!strncmp(name, "--attention-config.", 19)) {
			if (!value && i + 1 < argc)
				value = argv[++i];
			if (!value)
				usage_error("argument %s: expected one argument", name);
			if (strcmp(name + 19, "backend"))
				usage_error("argument --attention-config: unknown field '%s'",
					    name + 19);
			set_backend(o, name, value);
			note_arg(o, "attention_config.backend", value, true);
			continue;
		}
		for (size_t k = 0; k < sizeof flags / sizeof *flags; k++)
			if (!strcmp(flags[k].name, name))
				f = &flags[k];
		if (!f) {
			int n = snprintf(unknown + ulen, sizeof unknown - ulen, "%s%s",
					 ulen ? " " : "", a);
			if (n > 0 && ulen + (size_t)n < sizeof unknown)
				ulen += (size_t)n;
			continue;
		}
		if (f->takes_value && !value) {
			if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] &&
					      !isdigit((unsigned char)argv[i + 1][1])))
				usage_error("argument %s: expected one argument", name);
			value = argv[++i];
		} else if (!f->takes_value && value) {
			usage_error("argument %s: ignored explicit argument '%s'", name, value);
		}
		if (f->id != F_HELP && f->id != F_IGNORED_VALUE && f->id != F_IGNORED_BOOL)
			note_arg(o, name + (name[1] == '-' ? 2 : 1), value,
				 f->id != F_PORT && f->id != F_UTIL && f->id != F_MAXLEN &&
					 f->id != F_MAXSEQS);
		switch (f->id) {
		case F_MODEL: o->model = value; break;
		case F_SERVED: o->served = value; break;
		case F_HOST: o->host = value; break;
		case F_PORT:
			o->port = (int)parse_int(name, value, false);
			if (o->port < 1 || o->port > 65535)
				usage_error("argument --port: %d is not a valid port", o->port);
			break;
		case F_UTIL: {
			char *end;
			o->util = strtod(value, &end);
			if (end == value || *end)
				usage_error("argument %s: invalid float value: '%s'", name, value);
			break;
		}
		case F_MAXLEN: o->max_model_len = parse_int(name, value, true); break;
		case F_MAXSEQS: o->max_num_seqs = parse_int(name, value, false); break;
		case F_KVDTYPE:
			if (!in_list(value, kv_dtypes))
				choices_error(name, value, kv_dtypes);
			o->kv_dtype = value;
			break;
		case F_QUANT:
			if (!in_list(value, quant_methods))
				choices_error(name, value, quant_methods);
			o->quant = value;
			break;
		case F_EAGER: o->eager = true; break;
		case F_NO_EAGER: o->eager = false; break;
		case F_ATTN_CONFIG: attention_config(o, value); break;
		case F_ATTN_BACKEND: set_backend(o, name, value); break;
		case F_RUNNER:
			if (!in_list(value, runners))
				choices_error(name, value, runners);
			o->runner = value;
			break;
		case F_CONVERT:
			if (!in_list(value, converts))
				choices_error(name, value, converts);
			o->convert = value;
			break;
		case F_API_KEY: o->api_key = value; break;
		case F_FAIL_ENV: o->fail_env = true; break;
		case F_HELP: help(); exit(0);
		case F_IGNORED_VALUE:
		case F_IGNORED_BOOL: break;
		}
	}
	if (ulen)
		usage_error("unrecognized arguments: %s", unknown);
}

/* ---- time, signals, memory ------------------------------------------- */

static sigset_t stop_signals;
static struct standin S;

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

/* ---- Hugging Face cache ---------------------------------------------- */

struct ckpt {
	char *dir;               /* snapshot directory */
	json_t *config;          /* config.json */
	const char *arch;
	char quant[64];          /* checkpoint quantization method, "" = none */
	bool kv_scales;          /* the checkpoint ships KV scales */
	long head_dim, global_head_dim, layers, kv_heads, hidden, max_pos;
	bool gemma4;
	char **weights;          /* NULL-terminated weight file paths */
	double weight_bytes;
};

static char *xasprintf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf_(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *hub_dir(void)
{
	const char *v;

	if ((v = getenv("HF_HUB_CACHE")) && *v)
		return xasprintf_("%s", v);
	if ((v = getenv("HF_HOME")) && *v)
		return xasprintf_("%s/hub", v);
	if ((v = getenv("XDG_CACHE_HOME")) && *v)
		return xasprintf_("%s/huggingface/hub", v);
	return xasprintf_("%s/.cache/huggingface/hub", getenv("HOME") ? getenv("HOME") : "/root");
}

/* The snapshot directory for model (a local directory or a cached repo id):
 * refs/main's revision, else the first snapshot by name; NULL if none. */
static char *snapshot_dir(const char *model)
{
	char *hub, *repo, *path, *ref;
	char rev[128] = "";
	FILE *f;
	DIR *d;
	struct dirent *e;

	if (is_dir(model)) {
		path = xasprintf_("%s/config.json", model);
		if (access(path, R_OK) == 0) {
			free(path);
			return xasprintf_("%s", model);
		}
		free(path);
	}
	{
		/* "org/name" → "models--org--name" */
		char flat[512];
		size_t n = 0;

		for (const char *m = model; *m && n + 3 < sizeof flat; m++) {
			if (*m == '/') {
				flat[n++] = '-';
				flat[n++] = '-';
			} else {
				flat[n++] = *m;
			}
		}
		flat[n] = '\0';
		hub = hub_dir();
		repo = xasprintf_("%s/models--%s", hub, flat);
		free(hub);
	}
	ref = xasprintf_("%s/refs/main", repo);
	if ((f = fopen(ref, "r"))) {
		if (fgets(rev, sizeof rev, f))
			rev[strcspn(rev, "\r\n ")] = '\0';
		fclose(f);
	}
	free(ref);
	path = NULL;
	if (*rev) {
		path = xasprintf_("%s/snapshots/%s", repo, rev);
		if (!is_dir(path)) {
			free(path);
			path = NULL;
		}
	}
	if (!path) {
		char *snaps = xasprintf_("%s/snapshots", repo);
		char best[256] = "";
		if ((d = opendir(snaps))) {
			while ((e = readdir(d)))
				if (e->d_name[0] != '.' && (!*best || strcmp(e->d_name, best) < 0))
					snprintf(best, sizeof best, "%s", e->d_name);
			closedir(d);
		}
		if (*best)
			path = xasprintf_("%s/%s", snaps, best);
		free(snaps);
	}
	free(repo);
	return path;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* A config field from the top level, else from text_config; -1 if absent. */
static long cfg_int(json_t *cfg, const char *key)
{
	json_t *v = json_object_get(cfg, key);

	if (!json_is_integer(v))
		v = json_object_get(json_object_get(cfg, "text_config"), key);
	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

static const char *cfg_str(json_t *cfg, const char *key)
{
	const char *s = json_string_value(json_object_get(cfg, key));

	return s ? s : json_string_value(json_object_get(json_object_get(cfg, "text_config"), key));
}

/* Read the checkpoint for model; exits 1 with vLLM's error if absent. */
static void read_checkpoint(const char *model, struct ckpt *c)
{
	json_t *qc, *hq;
	char *path;
	DIR *d;
	struct dirent *e;
	size_t n = 0;
	const char *mt;

	memset(c, 0, sizeof *c);
	c->dir = snapshot_dir(model);
	path = c->dir ? xasprintf_("%s/config.json", c->dir) : NULL;
	c->config = path ? json_load_file(path, 0, NULL) : NULL;
	free(path);
	if (!json_is_object(c->config)) {
		raw(true, "ValueError: Invalid repository ID or local directory specified: '%s'.", model);
		raw(true, "Please verify the following requirements:");
		raw(true, "1. Provide a valid Hugging Face repository ID.");
		raw(true, "2. Specify a local directory that contains a recognized configuration file.");
		raw(true, "   - For Hugging Face models: ensure the presence of a 'config.json'.");
		raw(true, "   - For Mistral models: ensure the presence of a 'params.json'.");
		exit(1);
	}
	c->arch = json_string_value(json_array_get(json_object_get(c->config, "architectures"), 0));
	if (!c->arch)
		c->arch = "Qwen3ForCausalLM";
	qc = json_object_get(c->config, "quantization_config");
	if (json_is_object(qc)) {
		const char *m = json_string_value(json_object_get(qc, "quant_method"));
		snprintf(c->quant, sizeof c->quant, "%s", m ? m : "");
		if (json_is_object(json_object_get(qc, "kv_cache_scheme")))
			c->kv_scales = true;
		if (json_is_string(json_object_get(qc, "kv_cache_quant_algo")))
			c->kv_scales = true;
	}
	path = xasprintf_("%s/hf_quant_config.json", c->dir);
	hq = json_load_file(path, 0, NULL);
	free(path);
	if (json_is_object(hq)) {
		json_t *q = json_object_get(hq, "quantization");
		if (json_is_string(json_object_get(q, "kv_cache_quant_algo")))
			c->kv_scales = true;
		if (!*c->quant)
			snprintf(c->quant, sizeof c->quant, "modelopt");
	}
	json_decref(hq);
	c->head_dim = cfg_int(c->config, "head_dim");
	c->global_head_dim = cfg_int(c->config, "global_head_dim");
	c->layers = cfg_int(c->config, "num_hidden_layers");
	c->kv_heads = cfg_int(c->config, "num_key_value_heads");
	c->hidden = cfg_int(c->config, "hidden_size");
	c->max_pos = cfg_int(c->config, "max_position_embeddings");
	mt = cfg_str(c->config, "model_type");
	c->gemma4 = mt && !strncmp(mt, "gemma4", 6);
	if (c->layers <= 0)
		c->layers = 28;
	if (c->kv_heads <= 0)
		c->kv_heads = 8;
	if (c->head_dim <= 0) {
		long heads = cfg_int(c->config, "num_attention_heads");
		c->head_dim = (c->hidden > 0 && heads > 0) ? c->hidden / heads : 128;
	}

	c->weights = calloc(1, sizeof *c->weights);
	if ((d = opendir(c->dir))) {
		while ((e = readdir(d))) {
			struct stat st;
			char *p;
			if (!ends_with(e->d_name, ".safetensors") && !ends_with(e->d_name, ".bin"))
				continue;
			p = xasprintf_("%s/%s", c->dir, e->d_name);
			if (stat(p, &st) || !S_ISREG(st.st_mode)) {
				free(p);
				continue;
			}
			c->weights = realloc(c->weights, (n + 2) * sizeof *c->weights);
			c->weights[n++] = p;
			c->weights[n] = NULL;
			c->weight_bytes += (double)st.st_size;
		}
		closedir(d);
	}
	qsort(c->weights, n, sizeof *c->weights, cmp_str);
	if (!n) {
		raw(true, "RuntimeError: Cannot find any model weights with `%s`", model);
		exit(1);
	}
}

/* Read every weight file to the end (the page cache grows like vLLM's). */
static void read_weights(const struct ckpt *c)
{
	static char buf[1 << 20];

	for (size_t i = 0; c->weights[i]; i++) {
		int fd = open(c->weights[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while (read(fd, buf, sizeof buf) > 0)
			;
		close(fd);
	}
}

/* ---- boot ------------------------------------------------------------- */

/* STANDIN_ATTENTION_ENV=honoured pretends to be an image whose registry still
 * has VLLM_ATTENTION_BACKEND (the seed's "env live" route). */
static bool attention_env_honoured(void)
{
	const char *v = getenv("STANDIN_ATTENTION_ENV");
	return v && !strcmp(v, "honoured");
}

static void lint_environment(bool fail)
{
	for (char **e = environ; *e; e++) {
		char name[256];
		size_t len = strcspn(*e, "=");

		if (strncmp(*e, "VLLM_", 5) || len >= sizeof name)
			continue;
		memcpy(name, *e, len);
		name[len] = '\0';
		if (in_list(name, env_registry))
			continue;
		if (!strcmp(name, "VLLM_ATTENTION_BACKEND") && attention_env_honoured()) {
			/* an older image (around v0.13): honoured, with a deprecation warning */
			vlog(LV_WARNING, "envs.py:1710",
			     "Using VLLM_ATTENTION_BACKEND environment variable is deprecated and will be "
			     "removed in v0.14.0 or v1.0.0, whichever is soonest. Please use "
			     "--attention-config.backend command line argument or "
			     "AttentionConfig(backend=...) config field instead.");
			continue;
		}
		if (fail) {
			raw(true, "ValueError: Unknown vLLM environment variable detected: %s", name);
			exit(1);
		}
		vlog(LV_WARNING, "envs.py:1754", "Unknown vLLM environment variable detected: %s",
		     name);
	}
}

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
	parse_serve(argc - argi, argv + argi, &o);
	if (!o.model)
		o.model = "Qwen/Qwen3-0.6B";
	if (!o.served)
		o.served = o.model;
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

	S.listen_fd = bind_early(o.host, o.port);

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

	S.task = resolve_task(&o, &c);
	backend = o.backend ? o.backend : "FLASH_ATTN";
	if (!o.backend && attention_env_honoured() && getenv("VLLM_ATTENTION_BACKEND") &&
	    in_list(getenv("VLLM_ATTENTION_BACKEND"), backends))
		backend = getenv("VLLM_ATTENTION_BACKEND");
	if (c.gemma4 && c.head_dim > 0 && c.global_head_dim > 0 && c.head_dim != c.global_head_dim) {
		vlog(LV_WARNING, "gemma4.py:118",
		     "Gemma4 model has heterogeneous head dimensions (head_dim=%ld, "
		     "global_head_dim=%ld). FA4 not available, forcing TRITON_ATTN backend.",
		     c.head_dim, c.global_head_dim);
		backend = "TRITON_ATTN";
	}
	if (thor && S.task == TASK_GENERATE)
		backend = "TRITON_ATTN";  /* sm_110: generation always lands on Triton */

	S.fault = FAULT_NONE;
	if (thor) {
		bool triton = !strcmp(backend, "TRITON_ATTN");
		if (S.task == TASK_CLASSIFY && !o.eager)
			S.fault = FAULT_GRAPH_KILL;
		else if (S.task != TASK_GENERATE && !triton)
			S.fault = FAULT_POOLING_HANG;
		else if (S.task == TASK_CLASSIFY)
			S.fault = FAULT_WRONG_ORDER;
		else if (S.task == TASK_GENERATE && strcasestr(o.model, "lfm2.5-1.2b"))
			S.fault = FAULT_CORRUPT_THEN_DIE;
	}
	fp8_assert = thor && S.task == TASK_GENERATE && fp8 && !c.kv_scales &&
		     !strcmp(backend, "TRITON_ATTN") && env_long("STANDIN_FP8_ASSERT", 1) != 0;

	vlog(LV_INFO, "core.py:77",
	     "Initializing a V1 LLM engine (v%s) with config: model='%s', "
	     "served_model_name=%s, quantization=%s, kv_cache_dtype=%s, max_seq_len=%ld, "
	     "enforce_eager=%s", version, o.model, o.served,
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
	S.model = o.model;
	S.served_name = o.served;
	S.host = o.host;
	S.port = o.port;
	S.api_key = o.api_key;
	S.version = version;
	S.max_model_len = o.max_model_len;
	S.embed_dim = c.hidden > 0 && c.hidden <= 8192 ? (size_t)c.hidden : 1024;
	if (env_long("STANDIN_EMBED_DIM", 0) > 0 && env_long("STANDIN_EMBED_DIM", 0) <= 8192)
		S.embed_dim = (size_t)env_long("STANDIN_EMBED_DIM", 0);
	vlog(LV_INFO, "api_server.py:1632", "Starting vLLM API server 0 on http://%s:%d", o.host, o.port);
	vlog(LV_INFO, "launcher.py:37", "Available routes are:");
	vlog(LV_INFO, "launcher.py:45", "Route: /health, Methods: GET");
	vlog(LV_INFO, "launcher.py:45", "Route: /version, Methods: GET");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/models, Methods: GET");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/chat/completions, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/embeddings, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /v1/rerank, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /rerank, Methods: POST");
	vlog(LV_INFO, "launcher.py:45", "Route: /v2/rerank, Methods: POST");
	if (http_start(&S) < 0)
		return 1;
	uvlog("Started server process [%d]", (int)getpid());
	uvlog("Waiting for application startup.");
	uvlog("Application startup complete.");

	while (!S.dead)
		nap(100, true);
	nap(200, true);  /* let the failed request's 500 go out */
	vlog(LV_ERROR, "core_client.py:564", "Engine core proc EngineCore_DP0 died unexpectedly, "
					      "shutting down client.");
	free(held_weights);
	free(held_kv);
	shutdown_and_exit(1, true);
	return 1;
}
