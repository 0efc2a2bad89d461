/*
 * phase.c — where a vLLM run was when it failed (see triage.h, enum
 * triage_phase), read three ways, first answer wins (lc_tb_phase):
 *
 *   - a traceback's frames: the function names of vLLM's steps (load_model:
 *     load; profile_run: profile; capture_model: graph capture; a module's
 *     top level inside vllm/: pre-start, an import; the engine's
 *     configuration built from the arguments, config_frame: pre-start);
 *     functions that other steps call too (execute_model, step) only when
 *     nothing else names one;
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
	/* a request reached the engine or the HTTP server: it was up (V0's
	 * engine logs each request added, the API server each one received) */
	{ "Added request", PHASE_SERVING },
	{ "Received request", PHASE_SERVING },
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

/* What vLLM prints as it is imported, in every process it starts (the
 * platform it detected): pre-start when no other progress line comes
 * before the failure; a process started later (an engine core, a Ray
 * worker relayed late) prints it again after the steps the log has
 * already named, so any other progress line wins over it. */
static const char import_line[] = "Automatically detected platform";

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
 * the end; scanning back at most *budget bytes, which it uses up); an
 * import line seen on the way sets *imported. */
static enum triage_phase phase_scan(const char *lo, const char *p, size_t *budget, bool *imported)
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
		*imported |= memmem(ls, n < 4096 ? n : 4096, import_line, sizeof import_line - 1) != NULL;
		p = ls;
	}
	return PHASE_UNKNOWN;
}

/* A scan's phase, the import line standing in when nothing else named one. */
static enum triage_phase or_imported(enum triage_phase ph, bool imported)
{
	return ph == PHASE_UNKNOWN && imported ? PHASE_PRESTART : ph;
}

static enum triage_phase phase_back(const char *lo, const char *p, size_t *budget)
{
	bool imported = false;
	enum triage_phase ph = phase_scan(lo, p, budget, &imported);
	return or_imported(ph, imported);
}

/* The phase of the log at p (a line start in the slice starting at s). */
enum triage_phase lc_phase_at(struct triage *t, const char *s, const char *p)
{
	if (t->lc.phase_scans >= LC_PHASE_SCANS)
		return PHASE_UNKNOWN;
	t->lc.phase_scans++;
	size_t budget = LC_BACK;
	bool imported = false;
	enum triage_phase ph = phase_scan(s, p, &budget, &imported);
	if (ph == PHASE_UNKNOWN && budget && t->lc.tail_len)
		ph = phase_scan(t->lc.tail, t->lc.tail + t->lc.tail_len, &budget, &imported);
	return or_imported(ph, imported);
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
	{ "No module named", PHASE_PRESTART },
	/* an import of a name the installed vLLM lacks (a caller's module,
	 * vLLM's own): a failure inside a step names that step first */
	{ "cannot import name", PHASE_PRESTART },
	{ "nvidia-container-cli", PHASE_PRESTART },
	/* no platform: the configuration is built before any engine */
	{ "UnspecifiedPlatform", PHASE_PRESTART },
	{ "Failed to infer device type", PHASE_PRESTART },
	/* the configuration's checks of the arguments against the model */
	{ "must be divisible by tensor parallel size", PHASE_PRESTART },
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
	/* the engine's loop died under a running server */
	{ "Engine loop is not running", PHASE_SERVING },
	{ "Engine loop has died", PHASE_SERVING },
	{ "Background loop has errored", PHASE_SERVING },
	{ "EngineCore encountered an issue", PHASE_SERVING },
	{ "ncclCommWatchdog", PHASE_SERVING },
	{ "watchdog thread terminated", PHASE_SERVING },
};

/* Messages a failure can print in more than one phase: they name one
 * only when no progress line does (an argument the caller passes is
 * rejected before the engine starts when it goes to EngineArgs, later
 * when it goes to a server class built after the engine). */
static const struct phase_word weak_message_words[] = {
	{ "unexpected keyword argument", PHASE_PRESTART },
};

static enum triage_phase message_phase(const char *msg, const struct phase_word *w, size_t n)
{
	for (size_t i = 0; msg && i < n; i++)
		if (strstr(msg, w[i].text))
			return w[i].phase;
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
	/* the warm-up's sampler and pooler runs, which V1's profile_run
	 * calls too: only when no frame names the step around them */
	{ "_dummy_sampler_run", PHASE_WARMUP, true },
	{ "_dummy_pooler_run", PHASE_WARMUP, true },
	{ "warming_up_model", PHASE_WARMUP, false },
	{ "_warmup", PHASE_WARMUP, false },
	{ "warmup_model", PHASE_WARMUP, false },
	{ "execute_model", PHASE_SERVING, true },
	{ "step", PHASE_SERVING, true },
	/* the engine's loops and the server's output paths run only once
	 * start-up is over (V1 busy loop and output handler, V0's engine loop,
	 * the multiprocessing client, the request streams) */
	{ "run_busy_loop", PHASE_SERVING, false },
	{ "_process_engine_step", PHASE_SERVING, false },
	{ "_process_input_queue", PHASE_SERVING, false },
	{ "run_engine_loop", PHASE_SERVING, false },
	{ "engine_step", PHASE_SERVING, false },
	{ "step_async", PHASE_SERVING, false },
	{ "execute_model_async", PHASE_SERVING, false },
	{ "get_output_async", PHASE_SERVING, false },
	{ "output_handler", PHASE_SERVING, false },
	{ "process_outputs_socket", PHASE_SERVING, false },
	{ "chat_completion_stream_generator", PHASE_SERVING, false },
	{ "completion_stream_generator", PHASE_SERVING, false },
	{ "chat_completion_full_generator", PHASE_SERVING, false },
	{ "completion_full_generator", PHASE_SERVING, false },
	{ "_process_request", PHASE_SERVING, false },
	{ "parse_args", PHASE_PRESTART, false },
	/* an HTTP request's path through the ASGI server and its middleware
	 * (uvicorn, starlette): only a running server takes requests */
	{ "run_asgi", PHASE_SERVING, false },
	{ "call_next", PHASE_SERVING, false },
	/* FastAPI calling a route's endpoint: a request, in any app */
	{ "run_endpoint_function", PHASE_SERVING, false },
	/* an application's import (Ray Serve's import_attr, importlib): before
	 * any engine, unless a frame or progress line names a later step (vLLM
	 * imports model code lazily while loading) */
	{ "import_module", PHASE_PRESTART, true },
	{ "import_attr", PHASE_PRESTART, true },
	/* importlib's own frames under any import statement */
	{ "_find_and_load", PHASE_PRESTART, true },
	/* the engine's configuration is built from the arguments before any
	 * engine process starts */
	{ "create_engine_config", PHASE_PRESTART, false },
	{ "create_engine_configs", PHASE_PRESTART, false },
	/* the argument parser built (every entry point adds EngineArgs' flags) */
	{ "add_cli_args", PHASE_PRESTART, false },
	{ "make_arg_parser", PHASE_PRESTART, false },
	{ "from_cli_args", PHASE_PRESTART, false },
	/* V0's engine placing its workers from the parallel configuration
	 * (from_engine_args, before the engine is built) */
	{ "initialize_cluster", PHASE_PRESTART, false },
	/* V0's engine constructor loads the tokenizer before any worker */
	{ "_init_tokenizer", PHASE_PRESTART, false },
	/* the sleep mode waking an engine up: it had started (an RL
	 * trainer's engine sleeps between rollouts) */
	{ "wake_up", PHASE_SERVING, false },
	/* a caller's steps that run on a built engine: a chat turn, an RL
	 * trainer's training step (its rollout generates) */
	{ "chat", PHASE_SERVING, true },
	{ "stream_chat", PHASE_SERVING, true },
	{ "training_step", PHASE_SERVING, true },
	{ "generate", PHASE_SERVING, true },
	{ "add_request", PHASE_SERVING, true },
	{ "_add_processed_request", PHASE_SERVING, true },
	{ "_run_engine", PHASE_SERVING, true },
	{ "get_output", PHASE_SERVING, true },
	{ "create_chat_completion", PHASE_SERVING, true },
	{ "create_completion", PHASE_SERVING, true },
};

/* Whether func[0, flen) is name (the first byte compared first: this runs
 * for every entry of funcs[] on every frame). */
static bool func_is(const char *func, size_t flen, const char *name)
{
	return flen && name[0] == func[0] && strlen(name) == flen && memcmp(func, name, flen) == 0;
}

/* The phase function func[0, flen) names, into *strong or *weak. */
static void func_phase(const char *func, size_t flen, int *strong, int *weak)
{
	/* a caller's generation step (`generate_sequences` of RL trainers'
	 * rollout workers, `generate_batch`): the engine was serving */
	if (flen > 9 && memcmp(func, "generate_", 9) == 0)
		*weak = (int)PHASE_SERVING;
	for (size_t i = 0; i < ARRAY_SIZE(funcs); i++) {
		if (!func_is(func, flen, funcs[i].func))
			continue;
		if (funcs[i].weak)
			*weak = (int)funcs[i].phase;
		else
			*strong = (int)funcs[i].phase;
	}
}

void lc_code_call(const char *m, size_t n, int *strong, int *weak)
{
	const char *par = memchr(m, '(', n < 512 ? n : 512);
	if (!par)
		return;
	const char *f = par;
	while (f > m && (f[-1] == '_' || (f[-1] >= 'a' && f[-1] <= 'z') || (f[-1] >= 'A' && f[-1] <= 'Z') ||
			 (f[-1] >= '0' && f[-1] <= '9')))
		f--;
	if (f < par)
		func_phase(f, (size_t)(par - f), strong, weak);
}

static const char *vllm_path(const char *path, size_t n)
{
	const char *best = NULL;
	for (const char *p = path; (p = memmem(p, (size_t)(path + n - p), "vllm/", 5)); p += 5)
		if (p == path || p[-1] == '/')
			best = p;
	return best;
}

/* Whether path[0, plen) holds needle, which starts with "vllm" (found by
 * memmem first), a '/' in needle matching either separator (a Windows
 * install prints backslashes). */
static bool path_has(const char *path, size_t plen, const char *needle)
{
	size_t n = strlen(needle);
	const char *e = path + plen;
	for (const char *p = path; (p = memmem(p, (size_t)(e - p), "vllm", 4)) && (size_t)(e - p) >= n; p++) {
		size_t j = 4;
		while (j < n && (p[j] == needle[j] || (needle[j] == '/' && p[j] == '\\')))
			j++;
		if (j == n)
			return true;
	}
	return false;
}

/* The engine's configuration built from the arguments and the model's
 * own config, before any engine or worker starts, in every era: EngineArgs
 * (vllm/engine/arg_utils.py: the flags, __post_init__, create_engine_config),
 * the config classes' constructors and checks (vllm/config.py, or the
 * vllm/config/ package since 0.10: __init__, __post_init__, verify_*), and
 * the model's config.json fetched (get_config in vllm/transformers_utils/). */
static bool config_frame(const char *path, size_t plen, const char *func, size_t flen)
{
	if (memmem(path, plen, "arg_utils.py", 12) && path_has(path, plen, "vllm/engine/arg_utils.py"))
		return true;
	if (func_is(func, flen, "get_config"))
		return path_has(path, plen, "vllm/transformers_utils/");
	if (!func_is(func, flen, "__init__") && !func_is(func, flen, "__post_init__") &&
	    !memmem(func, flen, "verify", 6))
		return false;
	return path_has(path, plen, "vllm/config.py") || path_has(path, plen, "vllm/config/");
}

/* A frame whose path is path[0, plen), its line line (0: not shown) and
 * its function func[0, flen): its phase, and *frame when under vllm/. */
static void frame_found(const char *path, size_t plen, long line, const char *func, size_t flen,
			char **frame, int *strong, int *weak, bool *request)
{
	func_phase(func, flen, strong, weak);
	if (config_frame(path, plen, func, flen))
		*strong = (int)PHASE_PRESTART;
	const char *v = vllm_path(path, plen), *q = path + plen;
	/* vLLM's own import failed; but an entry point's top level is the
	 * server run as a script (`python -m vllm.entrypoints.openai.api_server`
	 * calls uvloop.run(run_server()) there), not an import */
	if (v && func_is(func, flen, "<module>") &&
	    !memmem(v, (size_t)(q - v), "vllm/entrypoints/", 17))
		*strong = (int)PHASE_PRESTART;
	if (v && (memmem(v, (size_t)(q - v), "/serving", 8) || memmem(v, (size_t)(q - v), "serving.py", 10))) {
		if (request)
			*request = true;
		*strong = (int)PHASE_SERVING; /* a request handler: the server was up */
	}
	/* an HTTP request's own path through the ASGI server and Starlette
	 * (uvicorn's protocol handlers; the exception wrapper Starlette puts
	 * around http and websocket scopes only, not the lifespan's start-up):
	 * the server was up */
	if (memmem(path, plen, "/uvicorn/protocols/", 19) || memmem(path, plen, "starlette/_exception_handler.py", 31))
		*strong = (int)PHASE_SERVING;
	if (!v)
		return;
	free(*frame);
	*frame = line ? xasprintf("%.*s:%ld in %.*s", (int)(q - v), v, line, (int)flen, func)
		      : xasprintf("%.*s in %.*s", (int)(q - v), v, (int)flen, func);
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
	frame_found(path, (size_t)(q - path), strtol(ln + 7, NULL, 10), func, flen, frame, strong, weak,
		    request);
	return true;
}

static bool ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* IPython 8's frame: `File ~/x/vllm/worker/worker.py:139, in
 * Worker.load_model(self)` — the path unquoted, its line after a colon,
 * the function qualified by its class. */
static bool ipy8_frame(const char *m, size_t n, char **frame, int *strong, int *weak)
{
	const char *p = m + 5, *e = m + n;
	if (n < 16 || memcmp(m, "File ", 5) != 0 || (*p != '/' && *p != '~' && *p != '<' && !ident_char(*p)))
		return false;
	const char *in = memmem(p, (size_t)(e - p), ", in ", 5);
	if (!in)
		return false;
	const char *c = in; /* the line number before `, in ` */
	while (c > p && c[-1] >= '0' && c[-1] <= '9')
		c--;
	if (c == in || c - p < 4 || c[-1] != ':' || memcmp(c - 4, ".py", 3) != 0)
		return false;
	const char *func = in + 5, *f = func;
	while (f < e && (ident_char(*f) || *f == '.' || *f == '<' || *f == '>'))
		f++;
	if (f >= e || *f != '(' || f == func)
		return false;
	const char *dot = memrchr(func, '.', (size_t)(f - func)); /* Class.method: the method */
	if (dot)
		func = dot + 1;
	frame_found(p, (size_t)(c - 1 - p), strtol(c, NULL, 10), func, (size_t)(f - func), frame, strong,
		    weak, NULL);
	return true;
}

bool lc_ipy_frame(const char *m, size_t n, char **frame, int *strong, int *weak)
{
	const char *p = m, *e = m + n;
	if (ipy8_frame(m, n, frame, strong, weak))
		return true;
	if (p < e && *p == '[')
		p++; /* Colab: a link `[path](url)` */
	if (p >= e || (*p != '/' && *p != '~' && *p != '<'))
		return false;
	const char *path = p;
	while (p < e && *p != ' ' && *p != ']')
		p++;
	size_t plen = (size_t)(p - path);
	if (plen < 4 || (memcmp(p - 3, ".py", 3) != 0 && path[0] != '<'))
		return false;
	if (p < e && *p == ']') {
		if (p + 1 >= e || p[1] != '(' || !(p = memchr(p, ')', (size_t)(e - p))))
			return false;
		p++;
	}
	if (e - p < 5 || memcmp(p, " in ", 4) != 0)
		return false;
	const char *func = p + 4, *f = func;
	while (f < e && (ident_char(*f) || *f == '<' || *f == '>' || *f == ' ' || *f == ':'))
		f++; /* `in inner(`, `in <cell line: 0>(` */
	if (f >= e || *f != '(' || f == func)
		return false;
	frame_found(path, plen, 0, func, (size_t)(f - func), frame, strong, weak, NULL);
	return true;
}

enum triage_phase lc_phase_back(const char *lo, const char *p)
{
	size_t budget = LC_BACK;
	return phase_back(lo, p, &budget);
}

enum triage_phase lc_tb_phase(int strong, const char *msg, enum triage_phase marker, int weak)
{
	if (strong)
		return (enum triage_phase)strong;
	enum triage_phase m = message_phase(msg, message_words, ARRAY_SIZE(message_words));
	if (m != PHASE_UNKNOWN)
		return m;
	if (marker != PHASE_UNKNOWN)
		return marker;
	m = message_phase(msg, weak_message_words, ARRAY_SIZE(weak_message_words));
	if (m != PHASE_UNKNOWN)
		return m;
	return (enum triage_phase)weak;
}
