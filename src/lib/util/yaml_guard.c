/*
 * yaml_guard.c — refuse YAML input that lobes does not need and libfyaml
 * may not survive; see yaml_guard.h.
 *
 * Two passes over the bytes. The first checks the encoding: UTF-8, YAML
 * printable code points only. The second is a small scanner that knows
 * just enough YAML to tell where a node starts: it skips comments, quoted
 * scalars (which may span lines) and block scalars (`|`, `>`: every
 * following line indented deeper than the line of the indicator), follows
 * flow brackets, and tracks block indentation on a stack. A `&` or `*` at a
 * node start is an anchor or an alias; a `%` starting a line is a
 * directive. Both passes are linear in the input and allocate nothing.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "yaml_guard.h"

struct scan {
	const char *name, *t;
	size_t n;
	size_t i;    /* current offset */
	int line;    /* 1-based line of offset ls */
	size_t ls;   /* offset of the current line's first byte */
	struct err **err;
};

/* The column of offset off on the current line, in characters, 1-based. */
static int column(const struct scan *s, size_t off)
{
	int c = 1;
	for (size_t k = s->ls; k < off && k < s->n; k++)
		if (((unsigned char)s->t[k] & 0xC0) != 0x80)
			c++;
	return c;
}

__attribute__((format(printf, 3, 4))) static int refuse(const struct scan *s, size_t off,
							 const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(s->err, EXIT_CONFIG, "%s%s%d:%d: %s", s->name ? s->name : "", s->name ? ":" : "",
		       s->line, column(s, off), msg);
}

/* Step over the newline at s->i (which must be '\n'). */
static void newline(struct scan *s)
{
	s->i++;
	s->line++;
	s->ls = s->i;
}

const char *text_foreign_encoding(const char *text, size_t len)
{
	const unsigned char *b = (const unsigned char *)text;
	if (len >= 4 && b[0] == 0xFF && b[1] == 0xFE && !b[2] && !b[3])
		return "UTF-32LE";
	if (len >= 4 && !b[0] && !b[1] && b[2] == 0xFE && b[3] == 0xFF)
		return "UTF-32BE";
	if (len >= 2 && b[0] == 0xFF && b[1] == 0xFE)
		return "UTF-16LE";
	if (len >= 2 && b[0] == 0xFE && b[1] == 0xFF)
		return "UTF-16BE";
	if (len >= 4 && !b[0] && !b[1] && !b[2] && b[3])
		return "UTF-32BE";
	if (len >= 4 && b[0] && !b[1] && !b[2] && !b[3])
		return "UTF-32LE";
	if (len >= 2 && !b[0] && b[1])
		return "UTF-16BE";
	if (len >= 2 && b[0] && !b[1])
		return "UTF-16LE";
	return NULL;
}

/* Decode one UTF-8 sequence at b[0..left); the code point, or -1 when the
 * sequence is malformed (overlong, surrogate, past U+10FFFF, truncated). */
static int32_t utf8_next(const unsigned char *b, size_t left, size_t *used)
{
	unsigned char c = b[0];
	int32_t cp;
	size_t k;
	if (c < 0x80) {
		*used = 1;
		return c;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		cp = c & 0x1F;
		k = 1;
	} else if (c >= 0xE0 && c <= 0xEF) {
		cp = c & 0x0F;
		k = 2;
	} else if (c >= 0xF0 && c <= 0xF4) {
		cp = c & 0x07;
		k = 3;
	} else {
		return -1;
	}
	if (left < k + 1)
		return -1;
	for (size_t j = 1; j <= k; j++) {
		if ((b[j] & 0xC0) != 0x80)
			return -1;
		cp = (cp << 6) | (b[j] & 0x3F);
	}
	if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	*used = k + 1;
	return cp;
}

/* YAML 1.2 c-printable. */
static bool printable(int32_t cp)
{
	return cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
	       (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
	       (cp >= 0x10000 && cp <= 0x10FFFF);
}

static int check_encoding(struct scan *s)
{
	const char *enc = text_foreign_encoding(s->t, s->n);
	if (enc)
		return refuse(s, 0, "the text is %s; expected UTF-8 (convert it, e.g. iconv -f %s -t UTF-8)",
			      enc, enc);
	const unsigned char *b = (const unsigned char *)s->t;
	while (s->i < s->n) {
		size_t used = 0;
		int32_t cp = utf8_next(b + s->i, s->n - s->i, &used);
		if (cp < 0)
			return refuse(s, s->i, "invalid UTF-8 (byte 0x%02x); expected UTF-8 text", b[s->i]);
		if (cp == 0)
			return refuse(s, s->i, "a NUL byte; expected UTF-8 text");
		if (cp == 0xFEFF && s->i != 0)
			return refuse(s, s->i, "a byte order mark inside the text; expected one at the start "
					       "at most");
		if (!printable(cp) && cp != 0xFEFF)
			return refuse(s, s->i, "control character U+%04X; expected printable text",
				      (unsigned)cp);
		if (cp == '\n') {
			newline(s);
			continue;
		}
		s->i += used;
	}
	return 0;
}

static bool blank_at(const struct scan *s, size_t k)
{
	return k >= s->n || s->t[k] == ' ' || s->t[k] == '\t' || s->t[k] == '\n' || s->t[k] == '\r';
}

static bool flow_ind(char c)
{
	return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

/* Skip a quoted scalar starting at s->i (its quote); lines are counted. */
static int skip_quoted(struct scan *s)
{
	char q = s->t[s->i];
	size_t start = s->i, last_escape = (size_t)-1;
	int line = s->line;
	size_t ls = s->ls;
	s->i++;
	while (s->i < s->n) {
		char c = s->t[s->i];
		if (c == '\n') {
			newline(s);
			continue;
		}
		if (q == '"' && c == '\\' && s->i + 1 < s->n && s->t[s->i + 1] != '\n') {
			s->i += 2;
			continue;
		}
		if (c == q) {
			if (q == '\'' && s->i + 1 < s->n && s->t[s->i + 1] == '\'') {
				/* libfyaml 0.7.12 misreads (and leaks on) '' escapes in a row */
				if (s->i == last_escape)
					return refuse(s, s->i, "'' escapes in a row in a single-quoted string; "
							       "expected one at a time (write the value "
							       "double-quoted)");
				s->i += 2;
				last_escape = s->i;
				continue;
			}
			s->i++;
			return 0;
		}
		s->i++;
	}
	s->line = line;
	s->ls = ls;
	return refuse(s, start, "a quoted string that is never closed; expected a closing %c", q);
}

/* Length of the leading spaces of the line at s->ls, and whether the line
 * is blank or only a comment. */
static size_t line_indent(const struct scan *s, bool *empty)
{
	size_t k = s->ls;
	while (k < s->n && s->t[k] == ' ')
		k++;
	size_t j = k;
	while (j < s->n && (s->t[j] == ' ' || s->t[j] == '\t' || s->t[j] == '\r'))
		j++;
	*empty = j >= s->n || s->t[j] == '\n' || s->t[j] == '#';
	return k - s->ls;
}

static void skip_to_eol(struct scan *s)
{
	while (s->i < s->n && s->t[s->i] != '\n')
		s->i++;
}

/* Where check_structure is: the block indents open, flow depth, sequence
 * entries on this line, and whether a node or a plain scalar may start. */
struct shape {
	size_t ind[YAML_GUARD_MAX_DEPTH + 1];
	int nind, flow, entries;
	long block;  /* inside a block scalar: the indent of its indicator's line */
	bool tok;    /* at a position where a node may start */
	bool plain;  /* inside a plain scalar */
	size_t cur_indent;
};

/* At the start of a line: skip a block scalar's lines and empty ones, refuse
 * directives, track the indents (the nesting depth) and skip a document
 * marker. 1 when the line (or the marker) was consumed, 0 to scan on, -1
 * refused. */
static int at_line_start(struct scan *s, struct shape *g)
{
	bool empty;
	size_t indent = line_indent(s, &empty);
	if (g->block >= 0 && (empty || (long)indent > g->block)) {
		skip_to_eol(s);
		if (s->i < s->n)
			newline(s);
		return 1;
	}
	g->block = -1;
	if (empty && g->flow == 0) {
		skip_to_eol(s);
		if (s->i < s->n)
			newline(s);
		return 1;
	}
	if (s->t[s->i] == '%')
		return refuse(s, s->i, "a YAML directive; expected none (lobes files use no "
				       "%%YAML or %%TAG lines)");
	if (g->flow == 0) {
		while (g->nind > 0 && g->ind[g->nind - 1] > indent)
			g->nind--;
		if (g->nind == 0 || g->ind[g->nind - 1] < indent) {
			if (g->nind >= YAML_GUARD_MAX_DEPTH)
				return refuse(s, s->i + indent, "nesting deeper than %d "
					      "levels; expected a flatter document",
					      YAML_GUARD_MAX_DEPTH);
			g->ind[g->nind++] = indent;
		}
		g->tok = true;
		g->plain = false;
		g->entries = 0;
		g->cur_indent = indent;
	}
	if ((s->n - s->i >= 3) &&
	    (memcmp(s->t + s->i, "---", 3) == 0 || memcmp(s->t + s->i, "...", 3) == 0) &&
	    blank_at(s, s->i + 3)) {
		s->i += 3;
		g->tok = true;
		return 1;
	}
	return 0;
}

/* Where a node may start, at character c: refuse anchors, aliases, a '%'
 * and explicit keys; skip a tag, a quoted scalar or a block scalar's
 * indicator line; count a sequence entry. 1 when c was consumed, 0 to scan
 * on, -1 refused. */
static int at_node_start(struct scan *s, struct shape *g, char c)
{
	if (c == '&' || c == '*')
		return refuse(s, s->i, "a YAML %s ('%c'); expected plain data (lobes files "
				       "use no anchors or aliases; quote a value that "
				       "starts with '%c')",
			      c == '&' ? "anchor" : "alias", c, c);
	if (c == '%')
		return refuse(s, s->i, "'%%' starting a value; expected a quoted string");
	if (c == '!') { /* a tag: the node follows */
		while (!blank_at(s, s->i) && !(g->flow && flow_ind(s->t[s->i])))
			s->i++;
		return 1;
	}
	if (c == '\'' || c == '"') {
		if (skip_quoted(s) < 0)
			return -1;
		g->tok = false;
		return 1;
	}
	if ((c == '|' || c == '>') && g->flow == 0) {
		g->block = (long)g->cur_indent;
		skip_to_eol(s);
		return 1;
	}
	if (c == '?' && blank_at(s, s->i + 1)) /* libfyaml 0.7.12 crashes on some */
		return refuse(s, s->i, "an explicit mapping key ('? '); expected plain "
				       "'key: value' entries");
	if ((c == '-' || c == ':') && blank_at(s, s->i + 1)) {
		if (c == '-' && ++g->entries + g->nind > YAML_GUARD_MAX_DEPTH)
			return refuse(s, s->i, "nesting deeper than %d levels; expected a "
					       "flatter document", YAML_GUARD_MAX_DEPTH);
		s->i++;
		return 1;
	}
	return 0;
}

/* Flow collections' brackets, their commas and mapping colons: 1 when c
 * was one (consumed), 0 otherwise, -1 refused (too deep). */
static int at_indicator(struct scan *s, struct shape *g, char c)
{
	if (c == '[' || c == '{') {
		if (++g->flow + g->nind + g->entries > YAML_GUARD_MAX_DEPTH)
			return refuse(s, s->i, "nesting deeper than %d levels; expected a flatter "
					       "document", YAML_GUARD_MAX_DEPTH);
		g->tok = true;
	} else if (c == ']' || c == '}') {
		if (g->flow > 0)
			g->flow--;
		g->tok = false;
	} else if ((c == ',' && g->flow) || (c == ':' && (blank_at(s, s->i + 1) || g->flow))) {
		g->tok = true;
	} else {
		return 0;
	}
	s->i++;
	return 1;
}

static int check_structure(struct scan *s)
{
	struct shape g = { .block = -1, .tok = true };
	int r;
	s->i = 0;
	s->line = 1;
	s->ls = 0;
	if (s->n >= 3 && memcmp(s->t, "\xEF\xBB\xBF", 3) == 0)
		s->i = s->ls = 3;
	while (s->i < s->n) {
		if (s->i == s->ls && (r = at_line_start(s, &g)) != 0) {
			if (r < 0)
				return -1;
			continue;
		}
		char c = s->t[s->i];
		if (c == '\n') {
			g.plain = g.plain && g.flow > 0;
			newline(s);
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r') {
			s->i++;
			continue;
		}
		bool after_blank = s->i == s->ls || s->t[s->i - 1] == ' ' || s->t[s->i - 1] == '\t';
		if (c == '#' && after_blank) {
			skip_to_eol(s);
			continue;
		}
		if (g.plain) {
			if (c == ':' && (blank_at(s, s->i + 1) || (g.flow && flow_ind(s->t[s->i + 1])))) {
				g.plain = false;
				g.tok = true;
				s->i++;
				continue;
			}
			if (!(g.flow && flow_ind(c))) {
				s->i++;
				continue;
			}
			g.plain = false;
		}
		if ((g.tok && (r = at_node_start(s, &g, c)) != 0) || (r = at_indicator(s, &g, c)) != 0) {
			if (r < 0)
				return -1;
			continue;
		}
		if (g.tok) {
			g.plain = true;
			g.tok = false;
		}
		s->i++;
	}
	return 0;
}

int yaml_guard(const char *name, const char *text, size_t len, struct err **err)
{
	struct scan s = { .name = name, .t = text ? text : "", .n = text ? len : 0,
			  .line = 1, .err = err };
	if (s.n > YAML_GUARD_MAX_BYTES)
		return err_set(err, EXIT_CONFIG, "%s%s1:1: %zu bytes; expected at most %zu for a YAML file",
			       name ? name : "", name ? ":" : "", s.n, YAML_GUARD_MAX_BYTES);
	if (check_encoding(&s) < 0)
		return -1;
	return check_structure(&s);
}
