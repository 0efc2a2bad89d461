/*
 * env.c — the deploy dir's .env: read the way compose reads it (the one
 * reader of every command: deploy_env_read). The merge that keeps the
 * operator's lines when init writes the file again is env_merge.c.
 *
 * Values follow compose (v2) dotenv rules: `KEY=value` (an optional
 * `export `), a double-quoted value with \n \r \t \\ \" escapes, a
 * single-quoted value taken literally, an unquoted value trimmed and cut at
 * a ` #` comment. Each entry keeps its whole source line (raw): a value an
 * operator edited is written back as the line they wrote — quotes, escapes
 * and comment included — never re-serialised from the parsed value, so
 * `"a b # c"` stays quoted and `"l1\nl2"` keeps its escape.
 *
 * What cannot round-trip is refused with a position and nothing is
 * written: a NUL byte, a UTF-16/32 file, a quoted value not closed on its
 * line (compose's multi-line values are not supported), text after a
 * closing quote that is not a comment.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/secret.h"
#include "../util/strv.h"
#include "../util/yaml_guard.h"
#include "deploy_int.h"

/* The semantic value of the text after '=' (v, n bytes); NULL with *col
 * (0-based offset in v) and *what set when it is malformed. */
static char *env_value(const char *v, size_t n, size_t *col, const char **what)
{
	size_t i = 0;
	while (i < n && (v[i] == ' ' || v[i] == '\t'))
		i++;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	if (i < n && (v[i] == '"' || v[i] == '\'')) {
		char q = v[i];
		size_t start = i++;
		bool closed = false;
		for (; i < n; i++) {
			if (v[i] == q) {
				closed = true;
				i++;
				break;
			}
			if (q == '"' && v[i] == '\\' && i + 1 < n) {
				char e = v[++i];
				char c = e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
				if (e != 'n' && e != 'r' && e != 't' && e != '\\' && e != '"')
					buf_add(&b, "\\", 1);
				buf_add(&b, &c, 1);
				continue;
			}
			buf_add(&b, v + i, 1);
		}
		if (!closed) {
			*col = start;
			*what = q == '"' ? "a double-quoted value not closed on its line; expected a closing \""
					 : "a single-quoted value not closed on its line; expected a closing '";
			return NULL;
		}
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == '\r'))
			i++;
		if (i < n && v[i] != '#') {
			*col = i;
			*what = "text after the closing quote; expected a comment (# ...) or the end of the line";
			return NULL;
		}
		return buf_take(&b);
	}
	size_t end = i;
	for (size_t k = i; k < n; k++) {
		if (v[k] == '#' && k > i && (v[k - 1] == ' ' || v[k - 1] == '\t'))
			break; /* an inline comment */
		end = k + 1;
	}
	while (end > i && isspace((unsigned char)v[end - 1]))
		end--;
	buf_add(&b, v + i, end - i);
	return buf_take(&b);
}

int env_parse_len(const char *text, size_t len, const char *name, struct env_file *out,
		  struct err **err)
{
	memset(out, 0, sizeof(*out));
	const char *enc = text_foreign_encoding(text, len);
	if (enc)
		return err_set(err, EXIT_CONFIG, "%s:1:1: the file is %s; expected UTF-8 text (convert it, "
				 "e.g. iconv -f %s -t UTF-8)", name, enc, enc);
	int line = 0;
	const char *p = text, *endp = text + len;
	while (p < endp) {
		line++;
		const char *nl = memchr(p, '\n', (size_t)(endp - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(endp - p);
		const char *nul = memchr(p, '\0', n);
		if (nul) {
			env_file_free(out);
			return err_set(err, EXIT_CONFIG, "%s:%d:%d: a NUL byte; expected text (the rest of the "
					 "line would be lost)", name, line, (int)(nul - p) + 1);
		}
		_cleanup_free_ char *l = xasprintf("%.*s", (int)n, p);
		const char *raw = p;
		p += n + (nl ? 1 : 0);
		char *s = l;
		while (*s == ' ' || *s == '\t')
			s++;
		char *t = s + strlen(s);
		while (t > s && isspace((unsigned char)t[-1]))
			t--;
		if (s == t || *s == '#')
			continue;
		if (str_starts_with(s, "export ") || str_starts_with(s, "export\t")) {
			s += 7;
			while (*s == ' ' || *s == '\t')
				s++;
		}
		char *eq = strchr(s, '=');
		bool key_ok = eq && eq != s;
		for (char *k = s; key_ok && k < eq; k++)
			if (!isalnum((unsigned char)*k) && *k != '_')
				key_ok = false;
		if (!key_ok) {
			*t = '\0';
			env_file_free(out);
			return err_set(err, EXIT_CONFIG, "%s:%d:%d: '%s' is not an assignment; expected KEY=VALUE",
				       name, line, (int)(s - l) + 1, s);
		}
		size_t col = 0;
		const char *what = NULL;
		char *v = env_value(eq + 1, strlen(eq + 1), &col, &what);
		if (!v) {
			env_file_free(out);
			return err_set(err, EXIT_CONFIG, "%s:%d:%zu: %s", name, line,
				       (size_t)(eq + 1 - l) + col + 1, what);
		}
		*eq = '\0';
		out->e = xrealloc(out->e, (out->n + 1) * sizeof(*out->e));
		out->e[out->n++] = (struct env_entry){ .key = xstrdup(s), .value = v,
						       .raw = xasprintf("%.*s", (int)n, raw), .line = line };
	}
	/* a secret's value is hidden in every output from here on (secret.h) */
	for (size_t i = 0; i < out->n; i++)
		secret_remember_named(out->e[i].key, out->e[i].value);
	return 0;
}

int env_parse(const char *text, const char *name, struct env_file *out, struct err **err)
{
	return env_parse_len(text, strlen(text), name, out, err);
}

int deploy_env_read(const char *dir, struct env_file *out, struct err **err)
{
	memset(out, 0, sizeof(*out));
	size_t len = 0;
	struct err *e = NULL;
	_cleanup_free_ char *text = deploy_read(dir, ".env", &len, &e);
	if (!text && !e)
		return 0;
	if (!text) {
		if (err)
			*err = e;
		else
			err_free(e);
		return -1;
	}
	_cleanup_free_ char *path = xasprintf("%s/.env", dir);
	return env_parse_len(text, len, path, out, err) < 0 ? -1 : 1;
}

const char *env_get(const struct env_file *f, const char *key)
{
	const struct env_entry *e = env_entry_get(f, key);
	return e ? e->value : NULL;
}

const struct env_entry *env_entry_get(const struct env_file *f, const char *key)
{
	const struct env_entry *v = NULL;
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->e[i].key, key) == 0)
			v = &f->e[i]; /* the last assignment wins, as in compose */
	return v;
}

void env_file_free(struct env_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->e[i].key);
		free(f->e[i].value);
		free(f->e[i].raw);
	}
	free(f->e);
	memset(f, 0, sizeof(*f));
}
