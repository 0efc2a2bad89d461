/*
 * prom_text.c — a small, strict reader of the Prometheus text exposition
 * format 0.0.4 (engine_metrics.h), line by line:
 *
 *   # HELP NAME docstring            checked: NAME is a metric name
 *   # TYPE NAME counter|gauge|...    checked: NAME and the type
 *   # anything else                  a comment
 *   NAME[{L="V",...}] VALUE [TS]     a sample
 *
 * NAME is [a-zA-Z_:][a-zA-Z0-9_:]*, a label name [a-zA-Z_][a-zA-Z0-9_]*, a
 * label value a double-quoted string whose only escapes are \\, \" and \n;
 * a trailing comma inside the braces is allowed, as Prometheus allows it.
 * VALUE is a Go float (digits, sign, point, exponent) or NaN, +Inf, -Inf,
 * Inf; TS an integer of milliseconds. Tokens are separated by spaces or
 * tabs. A carriage return, a NUL, a hex float or anything unexpected is an
 * error with its line and column, so a reply that is not a metrics page
 * (an HTML error page, a truncated body) is never half-read as numbers.
 *
 * Each line is copied once into a scratch buffer and unescaped in place, so
 * the callback's strings cost no allocation of their own.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "engine_metrics.h"

struct cursor {
	char *p;        /* the line copy, NUL-terminated */
	char *line;     /* its start */
	unsigned no;    /* line number */
	const char *what;
};

static int fail(struct cursor *c, struct err **err, const char *expected)
{
	return err_set(err, EXIT_RUNTIME, "%s: line %u, column %zu: expected %s", c->what, c->no,
		       (size_t)(c->p - c->line) + 1, expected);
}

static bool name_start(int ch, bool colon)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
	       (colon && ch == ':');
}

static bool name_char(int ch, bool colon)
{
	return name_start(ch, colon) || (ch >= '0' && ch <= '9');
}

static void skip_blank(struct cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

/* A metric name (colon) or label name; NUL-terminates it only when term. */
static char *read_name(struct cursor *c, bool colon)
{
	if (!name_start((unsigned char)*c->p, colon))
		return NULL;
	char *s = c->p;
	while (name_char((unsigned char)*c->p, colon))
		c->p++;
	return s;
}

/* A quoted label value at c->p, unescaped in place; returns its start. */
static char *read_label_value(struct cursor *c, struct err **err)
{
	if (*c->p != '"') {
		fail(c, err, "'\"' opening a label value");
		return NULL;
	}
	char *out = ++c->p, *w = out;
	for (;;) {
		char ch = *c->p;
		if (!ch) {
			fail(c, err, "'\"' closing the label value");
			return NULL;
		}
		if (ch == '"')
			break;
		if (ch == '\\') {
			char e = c->p[1];
			if (e != '\\' && e != '"' && e != 'n') {
				c->p++;
				fail(c, err, "an escape \\\\, \\\" or \\n in a label value");
				return NULL;
			}
			*w++ = e == 'n' ? '\n' : e;
			c->p += 2;
			continue;
		}
		*w++ = ch;
		c->p++;
	}
	c->p++; /* the closing quote */
	*w = '\0';
	return out;
}

static int read_labels(struct cursor *c, struct prom_sample *s, struct err **err)
{
	c->p++; /* '{' */
	for (;;) {
		skip_blank(c);
		if (*c->p == '}') {
			c->p++;
			return 0;
		}
		if (s->n_labels == PROM_MAX_LABELS)
			return fail(c, err, "at most 32 labels");
		char *name = read_name(c, false);
		if (!name)
			return fail(c, err, "a label name or '}'");
		char *end = c->p;
		skip_blank(c);
		if (*c->p != '=')
			return fail(c, err, "'=' after the label name");
		*end = '\0';
		c->p++;
		skip_blank(c);
		char *val = read_label_value(c, err);
		if (!val)
			return -1;
		s->label[s->n_labels] = name;
		s->value[s->n_labels++] = val;
		skip_blank(c);
		if (*c->p == ',')
			c->p++;
		else if (*c->p != '}')
			return fail(c, err, "',' or '}' after a label value");
	}
}

/* The token at c->p up to a blank or the end, NUL-terminated. */
static char *token(struct cursor *c)
{
	char *s = c->p;
	while (*c->p && *c->p != ' ' && *c->p != '\t')
		c->p++;
	if (*c->p)
		*c->p++ = '\0';
	return s;
}

static bool parse_value(const char *t, double *v)
{
	if (!strcmp(t, "NaN")) {
		*v = NAN;
		return true;
	}
	if (!strcmp(t, "+Inf") || !strcmp(t, "Inf") || !strcmp(t, "-Inf")) {
		*v = *t == '-' ? -INFINITY : INFINITY;
		return true;
	}
	if (!*t || strspn(t, "0123456789+-.eE") != strlen(t) || !strpbrk(t, "0123456789"))
		return false;
	char *end;
	errno = 0;
	*v = strtod(t, &end);
	return !*end && errno != EINVAL;
}

static bool parse_ts(const char *t, long long *ts)
{
	const char *d = *t == '-' ? t + 1 : t;
	if (!*d || strspn(d, "0123456789") != strlen(d))
		return false;
	char *end;
	errno = 0;
	*ts = strtoll(t, &end, 10);
	return !*end && !errno;
}

static int sample_line(struct cursor *c, prom_sample_fn fn, void *ud, struct err **err)
{
	struct prom_sample s = { .line = c->no };
	char *name = read_name(c, true);
	if (!name)
		return fail(c, err, "a metric name, a comment or a blank line");
	char *end = c->p;
	if (*c->p == '{') {
		if (read_labels(c, &s, err) < 0)
			return -1;
	}
	if (*c->p != ' ' && *c->p != '\t')
		return fail(c, err, "a blank before the value");
	skip_blank(c);
	*end = '\0'; /* after the blanks: end may be the first of them */
	s.name = name;
	char *vstart = c->p;
	char *vt = token(c);
	if (!parse_value(vt, &s.v)) {
		c->p = vstart;
		return fail(c, err, "a number, NaN, +Inf or -Inf");
	}
	skip_blank(c);
	if (*c->p) {
		char *tstart = c->p;
		char *tt = token(c);
		if (!parse_ts(tt, &s.ts)) {
			c->p = tstart;
			return fail(c, err, "a timestamp (integer milliseconds) or the end of the line");
		}
		s.has_ts = true;
		skip_blank(c);
		if (*c->p)
			return fail(c, err, "the end of the line after the timestamp");
	}
	return fn(ud, &s, err);
}

static int comment_line(struct cursor *c, struct err **err)
{
	c->p++; /* '#' */
	skip_blank(c);
	bool kw = c->p[0] && c->p[1] && c->p[2] && c->p[3] && strchr(" \t", c->p[4]);
	bool help = kw && strncmp(c->p, "HELP", 4) == 0;
	bool type = kw && strncmp(c->p, "TYPE", 4) == 0;
	if (!help && !type)
		return 0; /* a plain comment */
	c->p += 4;
	skip_blank(c);
	if (!read_name(c, true))
		return fail(c, err, help ? "a metric name after # HELP" : "a metric name after # TYPE");
	if (help)
		return 0; /* the docstring may hold anything */
	if (*c->p != ' ' && *c->p != '\t')
		return fail(c, err, "a blank and a type after the metric name");
	skip_blank(c);
	char *tstart = c->p;
	char *t = token(c);
	static const char *const types[] = { "counter", "gauge", "histogram", "summary", "untyped" };
	bool known = false;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		known |= strcmp(t, types[i]) == 0;
	skip_blank(c);
	if (!known || *c->p) {
		c->p = tstart;
		return fail(c, err, "counter, gauge, histogram, summary or untyped");
	}
	return 0;
}

int prom_parse(const char *what, const char *text, size_t len, prom_sample_fn fn, void *ud,
	       struct err **err)
{
	if (memchr(text, '\0', len))
		return err_set(err, EXIT_RUNTIME, "%s: a NUL byte at offset %zu: not a metrics page",
			       what, (size_t)((const char *)memchr(text, '\0', len) - text));
	int n = 0;
	unsigned no = 0;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - (text + off)) : len - off;
		no++;
		_cleanup_free_ char *copy = xasprintf("%.*s", (int)ll, text + off);
		struct cursor c = { copy, copy, no, what };
		off += ll + (nl ? 1 : 0);
		char *cr = strchr(copy, '\r');
		if (cr) {
			c.p = cr;
			return fail(&c, err, "a line end without a carriage return");
		}
		skip_blank(&c);
		if (!*c.p)
			continue;
		bool comment = *c.p == '#';
		if ((comment ? comment_line(&c, err) : sample_line(&c, fn, ud, err)) < 0)
			return -1;
		n += !comment;
	}
	return n;
}
