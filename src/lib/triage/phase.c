/*
 * phase.c — where a vLLM run was when it failed (see triage.h, enum
 * triage_phase), read three ways, first answer wins (lc_tb_phase):
 *
 *   - a traceback's frames: the function names of vLLM's steps (load_model:
 *     load; profile_run: profile; capture_model: graph capture; a module's
 *     top level inside vllm/: pre-start, an import); functions that other
 *     steps call too (execute_model, step) only when nothing else names one;
 *   - the exception's message ("warming up sampler", "cannot open shared
 *     object file");
 *   - the last progress line before the failure (a backward scan of at most
 *     LC_BACK bytes, for the first LC_PHASE_SCANS events only: events are
 *     rare, and a pathological log cannot make the pass quadratic).
 *
 * Frames are parsed here too (lc_frame): the innermost one under a vllm/
 * directory is the one a report names.
 */
#include <stdlib.h>
#include <string.h>

#include "triage_int.h"
#include "../util/cleanup.h"

struct phase_word {
	const char *text;
	enum triage_phase phase;
};

/* Progress lines, latest phase first where one line could name two. */
static const struct phase_word phase_lines[] = {
	{ "Application startup complete", PHASE_SERVING },
	{ "Avg prompt throughput", PHASE_SERVING },
	{ "EngineCore encountered a fatal error", PHASE_SERVING },
	{ "Dumping scheduler output", PHASE_SERVING },
	{ "Processed prompts", PHASE_SERVING },
	{ "Uvicorn running on", PHASE_SERVING },
	{ "\"POST /v1/", PHASE_SERVING },
	{ "\"GET /v1/", PHASE_SERVING },
	{ "Started server process", PHASE_SERVING },
	{ "Starting vLLM API server", PHASE_SERVING },
	{ "Route: /", PHASE_SERVING },
	{ "init engine (profile", PHASE_SERVING },
	{ "Graph capturing finished", PHASE_WARMUP },
	{ "Capturing CUDA graph", PHASE_GRAPH },
	{ "Capturing cudagraphs", PHASE_GRAPH },
	{ "Capturing the model for CUDA graphs", PHASE_GRAPH },
	{ "CUDA graph capturing", PHASE_GRAPH },
	{ "arming up", PHASE_WARMUP },
	{ "warmup", PHASE_WARMUP },
	{ "Memory profiling takes", PHASE_PROFILE },
	{ "Dynamo bytecode transform", PHASE_PROFILE },
	{ "torch.compile takes", PHASE_PROFILE },
	{ "Compiling a graph", PHASE_PROFILE },
	{ "compiled graph", PHASE_PROFILE },
	{ "Available KV cache memory", PHASE_PROFILE },
	{ "GPU KV cache size", PHASE_PROFILE },
	{ "# GPU blocks", PHASE_PROFILE },
	{ "Maximum concurrency", PHASE_PROFILE },
	{ "Starting to load model", PHASE_LOAD },
	{ "Loading model weights", PHASE_LOAD },
	{ "checkpoint shards", PHASE_LOAD },
	{ "Loading weights", PHASE_LOAD },
	{ "Loading model", PHASE_LOAD },
	{ "Using model weights format", PHASE_LOAD },
	{ "Initializing an LLM engine", PHASE_LOAD },
	{ "Initializing a V1 LLM engine", PHASE_LOAD },
	{ "vLLM API server version", PHASE_LOAD },
	{ "non-default args", PHASE_LOAD },
	{ "world size", PHASE_LOAD },
	{ "world_size", PHASE_LOAD },
};

/* The phase a progress line names, or PHASE_UNKNOWN. */
static enum triage_phase line_phase(const char *ls, size_t n)
{
	if (n > 4096)
		n = 4096;
	for (size_t i = 0; i < ARRAY_SIZE(phase_lines); i++)
		if (memmem(ls, n, phase_lines[i].text, strlen(phase_lines[i].text)))
			return phase_lines[i].phase;
	return PHASE_UNKNOWN;
}

/* The phase the last progress line in [lo, p) names (p a line start or
 * the end; scanning back at most *budget bytes, which it uses up). */
static enum triage_phase phase_back(const char *lo, const char *p, size_t *budget)
{
	while (p > lo && *budget) {
		const char *le = p;
		if (le[-1] == '\n')
			le--;
		const char *nl = le > lo ? memrchr(lo, '\n', (size_t)(le - lo)) : NULL;
		const char *ls = nl ? nl + 1 : lo;
		size_t n = (size_t)(le - ls);
		*budget = *budget > n + 1 ? *budget - n - 1 : 0;
		enum triage_phase ph = line_phase(ls, n);
		if (ph != PHASE_UNKNOWN)
			return ph;
		p = ls;
	}
	return PHASE_UNKNOWN;
}

/* The phase of the log at p (a line start in the slice starting at s). */
enum triage_phase lc_phase_at(struct triage *t, const char *s, const char *p)
{
	if (t->lc.phase_scans >= LC_PHASE_SCANS)
		return PHASE_UNKNOWN;
	t->lc.phase_scans++;
	size_t budget = LC_BACK;
	enum triage_phase ph = phase_back(s, p, &budget);
	if (ph == PHASE_UNKNOWN && budget && t->lc.tail_len)
		ph = phase_back(t->lc.tail, t->lc.tail + t->lc.tail_len, &budget);
	return ph;
}

/* What an exception's message says it was doing. */
static const struct phase_word message_words[] = {
	{ "arming up", PHASE_WARMUP },
	{ "warmup", PHASE_WARMUP },
	{ "CUDA graph", PHASE_GRAPH },
	{ "cudagraph", PHASE_GRAPH },
	{ "apturing", PHASE_GRAPH },
	{ "on startup is less than", PHASE_LOAD },
	{ "cannot open shared object file", PHASE_PRESTART },
	{ "undefined symbol", PHASE_PRESTART },
	{ "unexpected keyword argument", PHASE_PRESTART },
	{ "No module named", PHASE_PRESTART },
	{ "nvidia-container-cli", PHASE_PRESTART },
	{ "Error response from daemon", PHASE_PRESTART },
	{ "KV cache", PHASE_PROFILE },
	{ "cache blocks", PHASE_PROFILE },
	{ "max seq len", PHASE_PROFILE },
	{ "profil", PHASE_PROFILE },
	{ "model weights", PHASE_LOAD },
	{ "checkpoint", PHASE_LOAD },
	{ "safetensors", PHASE_LOAD },
	{ "unrecognized arguments", PHASE_PRESTART },
	{ "OCI runtime", PHASE_PRESTART },
	{ "exec format error", PHASE_PRESTART },
	{ "could not select device driver", PHASE_PRESTART },
	{ "/bin/vllm'", PHASE_PRESTART },
	{ "Watchdog caught collective operation timeout", PHASE_SERVING },
	{ "ncclCommWatchdog", PHASE_SERVING },
	{ "watchdog thread terminated", PHASE_SERVING },
};

enum triage_phase lc_message_phase(const char *msg)
{
	for (size_t i = 0; msg && i < ARRAY_SIZE(message_words); i++)
		if (strstr(msg, message_words[i].text))
			return message_words[i].phase;
	return PHASE_UNKNOWN;
}

struct func_phase {
	const char *func;
	enum triage_phase phase;
	bool weak; /* also called from another phase: only when nothing else names one */
};

static const struct func_phase funcs[] = {
	{ "load_model", PHASE_LOAD, false },
	{ "load_weights", PHASE_LOAD, false },
	{ "_load_weights", PHASE_LOAD, false },
	{ "get_model", PHASE_LOAD, false },
	{ "initialize_model", PHASE_LOAD, false },
	{ "_initialize_model", PHASE_LOAD, false },
	{ "weight_loader", PHASE_LOAD, false },
	{ "process_weights_after_loading", PHASE_LOAD, false },
	{ "safetensors_weights_iterator", PHASE_LOAD, false },
	{ "download_weights_from_hf", PHASE_LOAD, false },
	{ "profile_run", PHASE_PROFILE, false },
	{ "get_dummy_processor_inputs", PHASE_PROFILE, false },
	{ "_get_dummy_mm_inputs", PHASE_PROFILE, false },
	{ "get_dummy_data", PHASE_PROFILE, false },
	{ "dummy_data_for_profiling", PHASE_PROFILE, false },
	{ "get_max_tokens_per_item", PHASE_PROFILE, false },
	{ "determine_available_memory", PHASE_PROFILE, false },
	{ "determine_num_available_blocks", PHASE_PROFILE, false },
	{ "get_kv_cache_config", PHASE_PROFILE, false },
	{ "get_kv_cache_configs", PHASE_PROFILE, false },
	{ "check_enough_kv_cache_memory", PHASE_PROFILE, false },
	{ "_check_enough_kv_cache_memory", PHASE_PROFILE, false },
	{ "raise_if_cache_size_invalid", PHASE_PROFILE, false },
	{ "_initialize_kv_caches", PHASE_PROFILE, true },
	{ "initialize_cache", PHASE_PROFILE, true },
	{ "capture_model", PHASE_GRAPH, false },
	{ "_capture_cudagraphs", PHASE_GRAPH, false },
	{ "capture", PHASE_GRAPH, false },
	{ "compile_or_warm_up_model", PHASE_WARMUP, false },
	{ "_dummy_sampler_run", PHASE_WARMUP, false },
	{ "_dummy_pooler_run", PHASE_WARMUP, false },
	{ "warming_up_model", PHASE_WARMUP, false },
	{ "_warmup", PHASE_WARMUP, false },
	{ "warmup_model", PHASE_WARMUP, false },
	{ "execute_model", PHASE_SERVING, true },
	{ "step", PHASE_SERVING, true },
	{ "run_busy_loop", PHASE_SERVING, true },
	{ "_process_engine_step", PHASE_SERVING, true },
	{ "parse_args", PHASE_PRESTART, false },
	{ "generate", PHASE_SERVING, true },
	{ "add_request", PHASE_SERVING, true },
	{ "_run_engine", PHASE_SERVING, true },
	{ "engine_step", PHASE_SERVING, true },
	{ "get_output", PHASE_SERVING, true },
	{ "create_chat_completion", PHASE_SERVING, true },
	{ "create_completion", PHASE_SERVING, true },
};

static const char *vllm_path(const char *path, size_t n)
{
	const char *best = NULL;
	for (const char *p = path; (p = memmem(p, (size_t)(path + n - p), "vllm/", 5)); p += 5)
		if (p == path || p[-1] == '/')
			best = p;
	return best;
}

bool lc_frame(const char *m, size_t n, char **frame, int *strong, int *weak, bool *request)
{
	const char *p = m, *e = m + n;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	if (e - p < 8 || memcmp(p, "File \"", 6) != 0)
		return false;
	const char *path = p + 6, *q = memchr(path, '"', (size_t)(e - path));
	if (!q)
		return false;
	const char *ln = memmem(q, (size_t)(e - q), ", line ", 7);
	const char *in = ln ? memmem(ln, (size_t)(e - ln), " in ", 4) : NULL; /* `, in f` or faulthandler's ` in f` */
	if (!in)
		return false;
	const char *func = in + 4;
	size_t flen = (size_t)(e - func);
	while (flen && (func[flen - 1] == ' ' || func[flen - 1] == '\r'))
		flen--;
	for (size_t i = 0; i < ARRAY_SIZE(funcs); i++) {
		if (strlen(funcs[i].func) != flen || memcmp(funcs[i].func, func, flen) != 0)
			continue;
		if (funcs[i].weak)
			*weak = (int)funcs[i].phase;
		else
			*strong = (int)funcs[i].phase;
	}
	const char *v = vllm_path(path, (size_t)(q - path));
	if (v && flen == 8 && memcmp(func, "<module>", 8) == 0)
		*strong = (int)PHASE_PRESTART; /* vLLM's own import failed */
	if (v && request && (memmem(v, (size_t)(q - v), "/serving", 8) || memmem(v, (size_t)(q - v), "serving.py", 10)))
		*request = true;
	if (v) {
		free(*frame);
		*frame = xasprintf("%.*s:%d in %.*s", (int)(q - v), v, (int)strtol(ln + 7, NULL, 10),
				   (int)flen, func);
	}
	return true;
}

enum triage_phase lc_phase_back(const char *lo, const char *p)
{
	size_t budget = LC_BACK;
	return phase_back(lo, p, &budget);
}

enum triage_phase lc_tb_phase(int strong, enum triage_phase message, enum triage_phase marker, int weak)
{
	if (strong)
		return (enum triage_phase)strong;
	if (message != PHASE_UNKNOWN)
		return message;
	if (marker != PHASE_UNKNOWN)
		return marker;
	return (enum triage_phase)weak;
}
