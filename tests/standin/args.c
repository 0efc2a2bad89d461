/*
 * args.c — `vllm serve`'s command line for the stand-in (a test double).
 *
 * The flags are not a hand-kept subset: the stand-in carries vLLM's own
 * lists for each recorded version (the project's data/vllm/<commit>/, read
 * from vLLM's source; embedded at build time) and accepts exactly the options of
 * the version it reports (STANDIN_VERSION: 0.26.* → 5a4c8d992, else
 * 93d8f834d). Like argparse: an unknown option is "unrecognized arguments",
 * a bad value or choice names the flag, exit 2; `--flag=value` and
 * `--flag value`; `_` for `-` in a name; nargs '+' flags (served names, API
 * keys) take every value up to the next option; JSON config flags also take
 * `--flag.key value`. After parsing, vLLM's own checks: a tool or reasoning
 * parser not registered at that version is a KeyError (exit 1). Also here:
 * --help, and the VLLM_* lint against the version's env registry.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "standin.h"

extern char **environ;

#define EMBED(sym, path)                                                                   \
	__asm__(".section .rodata\n.global " #sym "\n.type " #sym ", @object\n" #sym ":\n"  \
		".incbin \"" path "\"\n.byte 0\n.previous\n");                               \
	extern const char sym[]
#define LISTS(c, v)                                                                        \
	EMBED(flags_##c, "data/vllm/" v "/flags.txt");                            \
	EMBED(choices_##c, "data/vllm/" v "/choices.txt");                        \
	EMBED(tools_##c, "data/vllm/" v "/tool-parsers.txt");                     \
	EMBED(reasoning_##c, "data/vllm/" v "/reasoning-parsers.txt");            \
	EMBED(envs_##c, "data/vllm/" v "/envs.txt");                              \
	EMBED(backends_##c, "data/vllm/" v "/values-attention-backend.txt");                \
	EMBED(metrics_##c, "data/vllm/" v "/metrics.txt")
LISTS(v23, "93d8f834d");
LISTS(v26, "5a4c8d992");

static const char *list_flags, *list_choices, *list_tools, *list_reasoning, *list_envs,
	*list_backends, *list_metrics;

void ref_select(const char *version)
{
	bool v26 = !strncmp(version, "0.26.", 5);

	list_flags = v26 ? flags_v26 : flags_v23;
	list_choices = v26 ? choices_v26 : choices_v23;
	list_tools = v26 ? tools_v26 : tools_v23;
	list_reasoning = v26 ? reasoning_v26 : reasoning_v23;
	list_envs = v26 ? envs_v26 : envs_v23;
	list_backends = v26 ? backends_v26 : backends_v23;
	list_metrics = v26 ? metrics_v26 : metrics_v23;
}

/* The line of list whose first tab- or newline-ended field is key (comment
 * lines skipped): a pointer to the byte after that field, or NULL. */
static const char *find_line(const char *list, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = list; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (*p == '#')
			continue;
		if (!strncmp(p, key, n) && (p[n] == '\t' || p[n] == '\n' || !p[n]))
			return p + n;
	}
	return NULL;
}

bool ref_has_env(const char *name) { return find_line(list_envs, name) != NULL; }
bool ref_has_tool_parser(const char *name) { return find_line(list_tools, name) != NULL; }
bool ref_has_reasoning_parser(const char *name) { return find_line(list_reasoning, name) != NULL; }
bool ref_has_backend(const char *name) { return find_line(list_backends, name) != NULL; }

bool ref_metric_kind(const char *family, char *out, size_t size)
{
	const char *p = find_line(list_metrics, family);

	if (!p || *p != '\t')
		return false;
	snprintf(out, size, "%.*s", (int)strcspn(p + 1, "\t\n"), p + 1);
	return true;
}

/* "{ a,b,c }" of a one-name-per-line list, vLLM's KeyError format. */
static void names_of(const char *list, char *out, size_t size)
{
	size_t used = (size_t)snprintf(out, size, "{ ");

	for (const char *p = list; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		size_t n = strcspn(p, "\t\n");
		if (*p == '#' || !n)
			continue;
		if (used + n + 4 < size)
			used += (size_t)snprintf(out + used, size - used, "%s%.*s",
						 used > 2 ? "," : "", (int)n, p);
	}
	snprintf(out + used, size - used, " }");
}

void usage_line(FILE *f)
{
	fprintf(f, "usage: vllm serve [model_tag] [options]\n");
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	usage_line(stderr);
	fprintf(stderr, "vllm serve: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* argparse's choice check against choices.txt (values separated by spaces). */
static void check_choice(const char *flag, const char *v)
{
	const char *line = find_line(list_choices, flag), *p;
	char buf[2048];
	size_t used = 0, n, vn = strlen(v);

	if (!line)
		return;
	for (p = line + 1; *p && *p != '\n'; p += n + (p[n] == ' ')) {
		n = strcspn(p, " \n");
		if (n == vn && !strncmp(p, v, n))
			return;
		if (used + n + 5 < sizeof buf)
			used += (size_t)snprintf(buf + used, sizeof buf - used, "%s'%.*s'",
						 used ? ", " : "", (int)n, p);
	}
	usage_error("argument %s: invalid choice: '%s' (choose from %s)", flag, v, buf);
}

static long parse_int(const char *flag, const char *v, bool human)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (human && end != v && end[0] && !end[1]) {
		switch (*end) {
		case 'k': n *= 1000; end++; break;
		case 'K': n *= 1024; end++; break;
		case 'm': n *= 1000000; end++; break;
		case 'M': n *= 1048576; end++; break;
		case 'g': n *= 1000000000; end++; break;
		case 'G': n *= 1073741824; end++; break;
		default: break;
		}
	}
	if (errno || end == v || *end)
		usage_error("argument %s: invalid %s value: '%s'", flag,
			    human ? "human_readable_int" : "int", v);
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
	if (!ref_has_backend(v))
		usage_error("argument %s: invalid choice: '%s' (not an attention backend of vLLM %s)",
			    flag, v, o->version);
	o->backend = v;
}

/* A JSON config value: an object (json:Class kinds) or any JSON (json). */
static json_t *json_value(const char *flag, const char *kind, const char *v)
{
	json_t *j = json_loads(v, JSON_DECODE_ANY, NULL);

	if (!j || (kind[4] == ':' && !json_is_object(j))) {
		json_decref(j);
		if (kind[4] == ':')
			usage_error("argument %s: Value %s cannot be converted to <class "
				    "'vllm.config.%s'>.", flag, v, kind + 5);
		usage_error("argument %s: invalid loads value: '%s'", flag, v);
	}
	return j;
}

static bool is_option(const char *a)
{
	return a[0] == '-' && a[1] && !isdigit((unsigned char)a[1]);
}

/* Act on one recognised flag with its value(s). */
static void apply(struct opts *o, const char *name, const char *kind, char **vals, int nv)
{
	const char *v = nv ? vals[0] : NULL;

	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		help();
		exit(0);
	}
	if (!strcmp(kind, "list")) {
		/* a Python list: ['a', 'b'] */
		char list[1024];
		size_t used = 0;
		for (int i = 0; i < nv && used < sizeof list; i++)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s'%s'%s",
						 i ? ", " : "[", vals[i], i + 1 == nv ? "]" : "");
		note_arg(o, name + 2, list, false);
	} else {
		note_arg(o, name + (name[1] == '-' ? 2 : 1), v,
			 strcmp(kind, "int") && strcmp(kind, "float") && strncmp(kind, "hrint", 5));
	}
	if (!strncmp(kind, "choice", 6))
		check_choice(name, v);
	if (!strcmp(kind, "int"))
		(void)parse_int(name, v, false);
	if (!strcmp(kind, "hrint") || (!strcmp(kind, "hrint-or-auto") && strcmp(v, "auto")))
		(void)parse_int(name, v, true);
	if (!strcmp(kind, "float")) {
		char *end;
		(void)strtod(v, &end);
		if (end == v || *end)
			usage_error("argument %s: invalid float value: '%s'", name, v);
	}
	if (!strncmp(kind, "json", 4))
		json_decref(json_value(name, kind, v));

	if (!strcmp(name, "--model"))
		o->model = v;
	else if (!strcmp(name, "--served-model-name"))
		for (int i = 0; i < nv && o->n_served < MAX_SERVED; i++)
			o->served[o->n_served++] = vals[i];
	else if (!strcmp(name, "--host"))
		o->host = v;
	else if (!strcmp(name, "--port")) {
		o->port = (int)parse_int(name, v, false);
		if (o->port < 1 || o->port > 65535)
			usage_error("argument --port: %d is not a valid port", o->port);
	} else if (!strcmp(name, "--gpu-memory-utilization"))
		o->util = strtod(v, NULL);
	else if (!strcmp(name, "--max-model-len"))
		o->max_model_len = strcmp(v, "auto") ? parse_int(name, v, true) : -1;
	else if (!strcmp(name, "--max-num-seqs"))
		o->max_num_seqs = parse_int(name, v, false);
	else if (!strcmp(name, "--kv-cache-dtype"))
		o->kv_dtype = v;
	else if (!strcmp(name, "--quantization") || !strcmp(name, "-q"))
		o->quant = v;
	else if (!strcmp(name, "--enforce-eager"))
		o->eager = true;
	else if (!strcmp(name, "--no-enforce-eager"))
		o->eager = false;
	else if (!strcmp(name, "--attention-backend"))
		set_backend(o, name, v);
	else if (!strcmp(name, "--attention-config")) {
		json_t *j = json_value(name, kind, v);
		const char *b = json_string_value(json_object_get(j, "backend"));
		if (b)
			set_backend(o, "--attention-config.backend", strdup(b));
		json_decref(j);
	} else if (!strcmp(name, "--runner"))
		o->runner = v;
	else if (!strcmp(name, "--convert"))
		o->convert = v;
	else if (!strcmp(name, "--api-key"))
		o->api_key = v;
	else if (!strcmp(name, "--fail-on-environ-validation"))
		o->fail_env = true;
	else if (!strcmp(name, "--enable-auto-tool-choice"))
		o->auto_tool_choice = true;
	else if (!strcmp(name, "--tool-call-parser"))
		o->tool_parser = v;
	else if (!strcmp(name, "--reasoning-parser"))
		o->reasoning_parser = v;
	else if (!strcmp(name, "--hf-overrides"))
		o->hf_overrides = v;
	else if (!strcmp(name, "--speculative-config"))
		o->speculative = v;
}

void parse_serve(int argc, char **argv, struct opts *o)
{
	char unknown[1024] = "";
	size_t ulen = 0;

	ref_select(o->version);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq, *line, *dot = NULL;
		char name[128], kind[64];
		char *vals[MAX_SERVED + 1];
		int nv = 0;
		size_t nlen;

		if (!is_option(a)) {
			if (!o->model) {
				o->model = a;
				note_arg(o, "model_tag", a, true);
				continue;
			}
			goto unrecognised;
		}
		eq = strchr(a, '=');
		nlen = eq ? (size_t)(eq - a) : strlen(a);
		if (nlen >= sizeof name)
			goto unrecognised;
		memcpy(name, a, nlen);
		name[nlen] = '\0';
		if (name[1] == '-')
			for (size_t k = 2; k < nlen; k++)  /* vLLM accepts --max_model_len */
				if (name[k] == '_')
					name[k] = '-';
		line = find_line(list_flags, name);
		if (!line && name[1] == '-' && (dot = strchr(name, '.'))) {
			/* --json-flag.key value */
			char base[128];
			snprintf(base, sizeof base, "%.*s", (int)(dot - name), name);
			line = find_line(list_flags, base);
			if (!line || strncmp(line + 1, "json", 4))
				goto unrecognised;
		}
		if (!line)
			goto unrecognised;
		snprintf(kind, sizeof kind, "%.*s", (int)strcspn(line + 1, "\t\n"), line + 1);
		if (dot) {
			const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v)
				usage_error("argument %s: expected one argument", name);
			note_arg(o, name + 2, v, true);
			if (!strcmp(name, "--attention-config.backend"))
				set_backend(o, name, v);
			continue;
		}
		if (!strncmp(kind, "bool", 4) || !strcmp(kind, "store_true")) {
			if (eq)
				usage_error("argument %s: ignored explicit argument '%s'", name, eq + 1);
		} else if (!strcmp(kind, "list")) {
			if (eq)
				vals[nv++] = (char *)eq + 1;
			else
				while (i + 1 < argc && !is_option(argv[i + 1]) && nv < MAX_SERVED)
					vals[nv++] = argv[++i];
			if (!nv)
				usage_error("argument %s: expected at least one argument", name);
		} else if (!strcmp(kind, "optional-value")) {
			if (eq)
				vals[nv++] = (char *)eq + 1;
			else if (i + 1 < argc && !is_option(argv[i + 1]))
				vals[nv++] = argv[++i];
		} else {
			if (eq)
				vals[nv++] = (char *)eq + 1;
			else if (i + 1 < argc && !is_option(argv[i + 1]))
				vals[nv++] = argv[++i];
			else
				usage_error("argument %s: expected one argument", name);
		}
		apply(o, name, kind, vals, nv);
		continue;
unrecognised:
		{
			int n = snprintf(unknown + ulen, sizeof unknown - ulen, "%s%s", ulen ? " " : "", a);
			if (n > 0 && ulen + (size_t)n < sizeof unknown)
				ulen += (size_t)n;
		}
	}
	if (ulen)
		usage_error("unrecognized arguments: %s", unknown);
}

/* vLLM's checks of the parsed serve arguments (validate_parsed_serve_args):
 * a parser the version does not register is a KeyError, exit 1. */
void validate_serve(const struct opts *o)
{
	char names[4096];

	if (o->auto_tool_choice && (!o->tool_parser || !ref_has_tool_parser(o->tool_parser))) {
		names_of(list_tools, names, sizeof names);
		raw(true, "KeyError: 'invalid tool call parser: %s (chose from %s)'",
		    o->tool_parser ? o->tool_parser : "None", names);
		exit(1);
	}
	if (o->reasoning_parser && !ref_has_reasoning_parser(o->reasoning_parser)) {
		names_of(list_reasoning, names, sizeof names);
		raw(true, "KeyError: 'invalid reasoning parser: %s (chose from %s)'",
		    o->reasoning_parser, names);
		exit(1);
	}
}

void help(void)
{
	usage_line(stdout);
	printf("\n"
	       "vllm-standin is a TEST DOUBLE of `vllm serve`, built for lobes' tests. It is\n"
	       "not vLLM and runs no model: it prints vLLM's log lines, checks and holds\n"
	       "memory the way vLLM does on unified memory, serves vLLM's HTTP surface with\n"
	       "toy deterministic answers, and reproduces recorded faults on request.\n"
	       "\n"
	       "options (vLLM's names; both --flag=value and --flag value):\n"
	       "  every option of `vllm serve` at the reported version (vLLM's own flag list,\n"
	       "  data/vllm/<commit>/flags.txt); unknown ones exit 2. Acted on:\n"
	       "  --served-model-name NAME... (the first names answers)  --host  --port\n"
	       "  --gpu-memory-utilization  --max-model-len  --max-num-seqs  --kv-cache-dtype\n"
	       "  --quantization  --enforce-eager  --runner  --convert  --api-key\n"
	       "  --attention-config JSON | --attention-config.backend NAME  --attention-backend\n"
	       "  --enable-auto-tool-choice --tool-call-parser P  --reasoning-parser P\n"
	       "  --hf-overrides JSON  --fail-on-environ-validation\n"
	       "\n"
	       "stand-in environment:\n"
	       "  STANDIN_CARD          card to pretend (spark, thor, orin, ...); thor faults\n"
	       "  STANDIN_DEVICE_BYTES  device size (default MemTotal); K/M/G/T suffixes\n"
	       "  STANDIN_MEM_SCALE     fraction of the budget really allocated (default 1)\n"
	       "  STANDIN_WEIGHT_BYTES  declared weight size (default: the files' size)\n"
	       "  STANDIN_FAIL_MODEL    a model id whose weights take the whole budget: its\n"
	       "                        boot fails with \"No available memory for the cache\n"
	       "                        blocks\" (a switch to a checkpoint that cannot boot)\n"
	       "  STANDIN_LOAD_MS, STANDIN_PROFILE_MS, STANDIN_WARMUP_MS  phase durations\n"
	       "                        (ms; the load lasts at least LOAD_MS, longer if reading\n"
	       "                        the weight files takes longer)\n"
	       "  STANDIN_API_MS        ms between \"init engine ... took\" (memory window\n"
	       "                        closed) and listening, modelling the API server's\n"
	       "                        start (default 0)\n"
	       "  STANDIN_FP8_ASSERT=0  boot thor's fp8 scale-less config (the later observation)\n"
	       "  STANDIN_EMBED_DIM     embedding width (default: config hidden_size)\n"
	       "  STANDIN_VERSION       version to report (0.26.* takes vLLM 0.26.1rc1.dev942's\n"
	       "                        flag, parser and env lists; else 0.23.1rc1.dev672's)\n"
	       "  STANDIN_TOKEN_MS      ms between streamed tokens (default 5)\n"
	       "  STANDIN_MTP_ACCEPT    with an MTP --speculative-config (k speculative tokens):\n"
	       "                        share of draft tokens accepted (default 0.7); a decode\n"
	       "                        step yields 1+k*A tokens, so STANDIN_TOKEN_MS is divided\n"
	       "                        by 1+k*A; GET /metrics counts drafts at that rate\n"
	       "  STANDIN_MTP_DRIFT     fault: with MTP, the share of prompts whose answer\n"
	       "                        changes (\"Perhaps \" in front; default 0: lossless)\n"
	       "  STANDIN_FIRST_TOKEN_MS  ms before a stream's first frame, the prefill (default 0)\n"
	       "  STANDIN_503_EVERY     answer every Nth generate request 503 (default 0: never)\n"
	       "  STANDIN_DROP_EVERY    drop the connection of every Nth stream after its first\n"
	       "                        two frames (default 0: never)\n"
	       "  STANDIN_FP8_NOISE     with --kv-cache-dtype fp8* on a checkpoint without KV\n"
	       "                        scales: every logit of prompt_logprobs moves by a\n"
	       "                        deterministic amount in [-N, N] nats (default 0.1), so\n"
	       "                        each log-probability by at most 2N; 0 = none\n"
	       "  STANDIN_ATTENTION_ENV=honoured  act as an older image that still honours\n"
	       "                        VLLM_ATTENTION_BACKEND (with its deprecation warning)\n"
	       "Hugging Face cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.\n");
}

/* STANDIN_ATTENTION_ENV=honoured pretends to be an image whose registry still
 * has VLLM_ATTENTION_BACKEND (the seed's "env live" route). */
bool attention_env_honoured(void)
{
	const char *v = getenv("STANDIN_ATTENTION_ENV");
	return v && !strcmp(v, "honoured");
}

void lint_environment(bool fail)
{
	for (char **e = environ; *e; e++) {
		char name[256];
		size_t len = strcspn(*e, "=");

		if (strncmp(*e, "VLLM_", 5) || len >= sizeof name)
			continue;
		memcpy(name, *e, len);
		name[len] = '\0';
		if (ref_has_env(name))
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
