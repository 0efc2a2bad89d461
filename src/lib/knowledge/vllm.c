/*
 * vllm.c — the recorded vLLM lists (see vllm.h): parsed from the embedded
 * data/vllm/<folder>/ files, and the one check of a rendered argument
 * against them. Value rules follow the kinds flags.txt records: bare
 * booleans take no value, int/float are numbers within no stated bound
 * beyond what flags.txt notes for the flags lobes renders, choice kinds
 * must be among choices.txt, json kinds must parse as a JSON object, and the
 * flags with their own value list (--quantization, --attention-config,
 * --tool-call-parser, --reasoning-parser) are checked against it.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "embedded.h"
#include "vllm.h"

static const char *file_text(const char *folder, const char *name);

const char *vllm_file_text(const char *folder, const char *name)
{
	return file_text(folder, name);
}

char **vllm_folders(void)
{
	char **v = NULL;
	for (size_t i = 0; i < embedded_files_count; i++) {
		const char *p = embedded_files[i].path;
		size_t n = strlen(p);
		if (strncmp(p, "data/vllm/", 10) != 0 || n < 20 || strcmp(p + n - 10, "/flags.txt") != 0)
			continue;
		_cleanup_free_ char *f = xasprintf("%.*s", (int)(n - 20), p + 10);
		if (!strchr(f, '/'))
			strv_push(&v, f);
	}
	return v ? v : xcalloc(1, sizeof(char *));
}

static const char *file_text(const char *folder, const char *name)
{
	_cleanup_free_ char *p = xasprintf("data/vllm/%s/%s", folder, name);
	for (size_t i = 0; i < embedded_files_count; i++)
		if (strcmp(embedded_files[i].path, p) == 0)
			return embedded_files[i].data;
	return NULL;
}

/* A list line's first word. */
static bool first_word(char *line)
{
	line[strcspn(line, " \t")] = '\0';
	return true;
}

char **vllm_list_parse(const char *text)
{
	return strv_lines(text, first_word);
}

/* flags.txt: FLAG <tab> KIND <tab> RANGE <tab> SOURCE. */
static void parse_flags(struct vllm_reg *r, const char *text)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (*l == '#' || !*l)
			continue;
		char *tab = strchr(l, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		char *kind = tab + 1;
		kind[strcspn(kind, "\t")] = '\0';
		strv_push(&r->flags, l);
		strv_push(&r->kinds, kind);
	}
}

/* choices.txt: FLAG <tab> space-separated values. */
static void parse_choices(struct vllm_reg *r, const char *text)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *save = NULL;
	size_t n = 0;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (*l == '#' || !*l)
			continue;
		char *tab = strchr(l, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		strv_push(&r->choice_flags, l);
		r->choices = xrealloc(r->choices, (n + 2) * sizeof(*r->choices));
		char **vals = NULL;
		char *s2 = NULL;
		for (char *w = strtok_r(tab + 1, " ", &s2); w; w = strtok_r(NULL, " ", &s2))
			strv_push(&vals, w);
		r->choices[n++] = vals ? vals : xcalloc(1, sizeof(char *));
		r->choices[n] = NULL;
	}
}

/* metrics.txt: FAMILY <tab> TYPE <tab> EXPOSED <tab> CONDITION <tab> SOURCE. */
static void parse_metrics(struct vllm_reg *r, const char *text)
{
	_cleanup_free_ char *copy = xstrdup(text ? text : "");
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(l, '\t');
		if (*l == '#' || !tab)
			continue;
		*tab = '\0';
		char *kind = tab + 1;
		kind[strcspn(kind, "\t")] = '\0';
		strv_push(&r->metrics, l);
		strv_push(&r->metric_kinds, kind);
	}
}

int vllm_reg_load(struct vllm_reg *r, const char *folder, struct err **err)
{
	memset(r, 0, sizeof(*r));
	const char *flags = folder ? file_text(folder, "flags.txt") : NULL;
	if (!flags)
		return err_set(err, EXIT_CONFIG, "no recorded vLLM lists in data/vllm/%s/; expected one of "
				 "the shipped folders", folder ? folder : "(none)");
	r->folder = xstrdup(folder);
	r->provenance = xasprintf("%.*s", (int)strcspn(flags, "\n"), flags);
	parse_flags(r, flags);
	const char *ch = file_text(folder, "choices.txt");
	if (ch)
		parse_choices(r, ch);
	r->envs = vllm_list_parse(file_text(folder, "envs.txt"));
	r->tool_parsers = vllm_list_parse(file_text(folder, "tool-parsers.txt"));
	r->reasoning_parsers = vllm_list_parse(file_text(folder, "reasoning-parsers.txt"));
	r->attention_backends = vllm_list_parse(file_text(folder, "values-attention-backend.txt"));
	r->attention_config_keys = vllm_list_parse(file_text(folder, "values-attention-config-keys.txt"));
	r->quantizations = vllm_list_parse(file_text(folder, "values-quantization.txt"));
	parse_metrics(r, file_text(folder, "metrics.txt"));
	return 0;
}

void vllm_reg_free(struct vllm_reg *r)
{
	free(r->folder);
	free(r->provenance);
	strv_free(r->flags);
	strv_free(r->kinds);
	strv_free(r->envs);
	strv_free(r->tool_parsers);
	strv_free(r->reasoning_parsers);
	strv_free(r->choice_flags);
	for (size_t i = 0; r->choices && r->choices[i]; i++)
		strv_free(r->choices[i]);
	free(r->choices);
	strv_free(r->attention_backends);
	strv_free(r->attention_config_keys);
	strv_free(r->quantizations);
	strv_free(r->metrics);
	strv_free(r->metric_kinds);
	memset(r, 0, sizeof(*r));
}

const char *vllm_reg_flag_kind(const struct vllm_reg *r, const char *flag)
{
	for (size_t i = 0; r->flags && r->flags[i]; i++)
		if (strcmp(r->flags[i], flag) == 0)
			return r->kinds[i];
	return NULL;
}

bool vllm_reg_has_env(const struct vllm_reg *r, const char *name)
{
	return strv_has(r->envs, name);
}

bool vllm_reg_has_tool_parser(const struct vllm_reg *r, const char *name)
{
	return strv_has(r->tool_parsers, name);
}

bool vllm_reg_has_reasoning_parser(const struct vllm_reg *r, const char *name)
{
	return strv_has(r->reasoning_parsers, name);
}

const char *vllm_reg_metric_kind(const struct vllm_reg *r, const char *family)
{
	for (size_t i = 0; r->metrics && r->metrics[i]; i++)
		if (strcmp(r->metrics[i], family) == 0)
			return r->metric_kinds[i];
	return NULL;
}

static char **choices_of(const struct vllm_reg *r, const char *flag)
{
	for (size_t i = 0; r->choice_flags && r->choice_flags[i]; i++)
		if (strcmp(r->choice_flags[i], flag) == 0)
			return r->choices[i];
	return NULL;
}

static bool is_int(const char *s)
{
	char *end;
	errno = 0;
	(void)strtoll(s, &end, 10);
	return *s && !*end && !errno;
}

static bool is_number(const char *s)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	return *s && !*end && !errno && isfinite(d);
}

/* "1k", "32768", "1M" (human-readable int). */
static bool is_hrint(const char *s)
{
	size_t n = strspn(s, "0123456789");
	return n > 0 && (!s[n] || (strchr("kKmMgG", s[n]) && !s[n + 1]));
}

static char *list_words(char **v)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	for (char **x = v; x && *x; x++)
		buf_printf(&b, "%s%s", x == v ? "" : ", ", *x);
	return buf_take(&b);
}

static int bad(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(char **why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	*why = xvasprintf(fmt, ap);
	va_end(ap);
	return -1;
}

static int check_attention_config(const struct vllm_reg *r, json_t *j, char **why)
{
	const char *key;
	json_t *v;
	json_object_foreach(j, key, v) {
		if (!strv_has(r->attention_config_keys, key)) {
			_cleanup_free_ char *keys = list_words(r->attention_config_keys);
			return bad(why, "--attention-config key '%s' is not accepted by vLLM %s (AttentionConfig "
				   "refuses unknown keys); expected one of %s", key, r->folder, keys);
		}
		if (strcmp(key, "backend") == 0) {
			const char *b = json_string_value(v);
			if (!b || (strcasecmp(b, "auto") != 0 && !strv_has(r->attention_backends, b)))
				return bad(why, "--attention-config backend '%s' is not a backend of vLLM %s",
					   b ? b : "(not a string)", r->folder);
		}
	}
	return 0;
}

int vllm_reg_check_arg(const struct vllm_reg *r, const char *flag, const char *value, char **why)
{
	*why = NULL;
	const char *kind = vllm_reg_flag_kind(r, flag);
	if (!kind)
		return bad(why, "vLLM %s has no flag %s (not in data/vllm/%s/flags.txt)", r->folder, flag,
			   r->folder);
	bool bare = strcmp(kind, "bool") == 0 || strcmp(kind, "bool-neg") == 0 ||
		    strcmp(kind, "store_true") == 0;
	if (bare)
		return value ? bad(why, "%s takes no value in vLLM %s (got '%s')", flag, r->folder, value) : 0;
	if (!value)
		return strcmp(kind, "optional-value") == 0
			       ? 0
			       : bad(why, "%s needs a value (%s) in vLLM %s", flag, kind, r->folder);
	if (!*value)
		return bad(why, "%s is given an empty value; expected %s", flag, kind);
	if (strcmp(kind, "int") == 0 && !is_int(value))
		return bad(why, "%s='%s' is not an integer", flag, value);
	if (strcmp(kind, "float") == 0 && !is_number(value))
		return bad(why, "%s='%s' is not a number", flag, value);
	if (strcmp(kind, "hrint") == 0 && !is_hrint(value))
		return bad(why, "%s='%s' is not an integer (1k style allowed)", flag, value);
	if (strcmp(kind, "hrint-or-auto") == 0 && !is_hrint(value) && strcmp(value, "auto") != 0 &&
	    strcmp(value, "-1") != 0)
		return bad(why, "%s='%s' is not an integer or auto", flag, value);
	if (strcmp(flag, "--gpu-memory-utilization") == 0) {
		double d = strtod(value, NULL);
		if (!(d > 0 && d <= 1))
			return bad(why, "%s='%s' is outside (0,1]", flag, value);
	}
	if (str_starts_with(kind, "choice-")) {
		char **c = choices_of(r, flag);
		if (c && !strv_has(c, value)) {
			_cleanup_free_ char *w = list_words(c);
			return bad(why, "%s='%s' is not accepted by vLLM %s; expected one of %s", flag, value,
				   r->folder, w);
		}
	}
	if (str_starts_with(kind, "json")) {
		json_error_t je;
		json_auto_t *j = json_loads(value, JSON_REJECT_DUPLICATES, &je);
		if (!j || !json_is_object(j))
			return bad(why, "%s='%s' is not a JSON object (%s at column %d)", flag, value,
				   j ? "not an object" : je.text, je.column);
		if (strcmp(flag, "--attention-config") == 0)
			return check_attention_config(r, j, why);
	}
	if (strcmp(flag, "--quantization") == 0 && !strv_has(r->quantizations, value))
		return bad(why, "--quantization='%s' is not a quantization method of vLLM %s", value,
			   r->folder);
	if (strcmp(flag, "--tool-call-parser") == 0 && !strv_has(r->tool_parsers, value)) {
		_cleanup_free_ char *w = list_words(r->tool_parsers);
		return bad(why, "tool parser '%s' is not registered in vLLM %s; expected one of %s", value,
			   r->folder, w);
	}
	if (strcmp(flag, "--reasoning-parser") == 0 && !strv_has(r->reasoning_parsers, value)) {
		_cleanup_free_ char *w = list_words(r->reasoning_parsers);
		return bad(why, "reasoning parser '%s' is not registered in vLLM %s; expected one of %s",
			   value, r->folder, w);
	}
	return 0;
}
