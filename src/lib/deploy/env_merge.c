/*
 * env_merge.c — the .env init writes: the render, with what the operator
 * wrote in the old file kept (deploy_int.h).
 *
 * The render is the skeleton. Into it go, byte for byte:
 *   - the line of each key the operator edited (its value differs from
 *     what lobes last wrote), and the line of any key whose value is the
 *     render's but whose line is written differently (spacing, quotes, an
 *     inline comment): same meaning, the operator's form;
 *   - the edited keys the render does not have, appended under a header;
 *   - the operator's comment lines. A comment line of the old file that
 *     the render does not hold itself is the operator's; each block of
 *     them (with the blank lines between them, not around them) is kept
 *     before the key it stood before in the old file, or at the end when
 *     it stood after the last key or its key is no longer written.
 * So a second init with nothing new writes the same bytes again.
 */
#include <stdbool.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/strv.h"
#include "deploy_int.h"

#define OPERATOR_HEADER "# operator keys (kept by lobes init)"

/* A block of the operator's comment lines and the key it stood before
 * (NULL: after the last key). */
struct note {
	char *key;
	char *text; /* whole lines, each ending in '\n' */
	bool used;
};

struct notes {
	struct note *v;
	size_t n;
};

static bool blank(const char *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] != ' ' && l[i] != '\t' && l[i] != '\r')
			return false;
	return true;
}

static bool comment(const char *l, size_t n)
{
	size_t i = 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	return i < n && l[i] == '#';
}

/* Does text hold the line l (n bytes, no newline) as a whole line? */
static bool holds_line(const char *text, const char *l, size_t n)
{
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len == n && memcmp(p, l, n) == 0)
			return true;
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

struct line {
	const char *p;
	size_t n;
};

/* Close a block of non-assignment lines: the operator's comments in it
 * (those the render does not hold), blank lines trimmed at both ends; kept
 * when one comment remains. */
static void close_block(struct notes *ns, const char *rendered, const struct line *ls, size_t nl,
			const char *key)
{
	size_t first = nl, last = 0;
	_cleanup_free_ bool *mine = xcalloc(nl ? nl : 1, sizeof(*mine));
	for (size_t i = 0; i < nl; i++) {
		mine[i] = blank(ls[i].p, ls[i].n) ||
			  (comment(ls[i].p, ls[i].n) && !holds_line(rendered, ls[i].p, ls[i].n) &&
			   !(ls[i].n == strlen(OPERATOR_HEADER) &&
			     memcmp(ls[i].p, OPERATOR_HEADER, ls[i].n) == 0));
		if (mine[i] && !blank(ls[i].p, ls[i].n)) {
			if (first == nl)
				first = i;
			last = i;
		}
	}
	if (first == nl)
		return;
	struct buf b;
	buf_init(&b, 0);
	for (size_t i = first; i <= last; i++)
		if (mine[i]) {
			buf_add(&b, ls[i].p, ls[i].n);
			buf_adds(&b, "\n");
		}
	ns->v = xrealloc(ns->v, (ns->n + 1) * sizeof(*ns->v));
	ns->v[ns->n++] = (struct note){ key ? xstrdup(key) : NULL, buf_take(&b), false };
}

/* The operator's comment blocks of old_text, each with the key after it. */
static void collect_notes(struct notes *ns, const char *rendered, const char *old_text,
			  const struct env_file *old)
{
	struct line *ls = NULL;
	size_t nl = 0, cap = 0, next = 0;
	int lineno = 0;
	for (const char *p = old_text; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		lineno++;
		while (next < old->n && old->e[next].line < lineno)
			next++;
		if (next < old->n && old->e[next].line == lineno) {
			close_block(ns, rendered, ls, nl, old->e[next].key);
			nl = 0;
		} else if (blank(p, len) || comment(p, len)) {
			if (nl == cap)
				ls = xrealloc(ls, (cap = cap ? 2 * cap : 16) * sizeof(*ls));
			ls[nl++] = (struct line){ p, len };
		}
		p = eol ? eol + 1 : NULL;
	}
	close_block(ns, rendered, ls, nl, NULL);
	free(ls);
}

/* Append the unused notes that stood before key (NULL: every one left). */
static void put_notes(struct buf *b, struct notes *ns, const char *key)
{
	for (size_t i = 0; i < ns->n; i++) {
		struct note *n = &ns->v[i];
		if (n->used || (key && (!n->key || strcmp(n->key, key) != 0)))
			continue;
		buf_adds(b, n->text);
		n->used = true;
	}
}

char *env_merge(const char *rendered, const char *old_text, const struct env_file *old,
		char *const *edited, const struct env_file *renv)
{
	struct notes ns = { 0 };
	collect_notes(&ns, rendered, old_text, old);
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	const char *p = rendered;
	size_t ri = 0;
	for (int lineno = 1; *p; lineno++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		bool replaced = false;
		/* the key of this line as the parser read it (renv: the render
		 * parsed), so "  KEY=" or "export KEY=" is KEY, as compose reads it */
		while (ri < renv->n && renv->e[ri].line < lineno)
			ri++;
		if (ri < renv->n && renv->e[ri].line == lineno) {
			const char *key = renv->e[ri].key;
			const struct env_entry *e = env_entry_get(old, key);
			const char *now = env_get(renv, key);
			put_notes(&b, &ns, key);
			if (e && (strv_has(edited, key) || (now && strcmp(e->value, now) == 0))) {
				buf_printf(&b, "%s\n", e->raw);
				replaced = true;
			}
		}
		if (!replaced)
			buf_add(&b, p, n);
		p += n;
	}
	bool header = false;
	for (size_t i = 0; i < old->n; i++) {
		const char *key = old->e[i].key;
		if (!strv_has(edited, key) || env_get(renv, key))
			continue;
		if (env_entry_get(old, key) != &old->e[i])
			continue; /* only the last assignment */
		if (!header) {
			buf_adds(&b, "\n" OPERATOR_HEADER "\n");
			header = true;
		}
		put_notes(&b, &ns, key);
		buf_printf(&b, "%s\n", old->e[i].raw);
	}
	put_notes(&b, &ns, NULL);
	for (size_t i = 0; i < ns.n; i++) {
		free(ns.v[i].key);
		free(ns.v[i].text);
	}
	free(ns.v);
	return buf_take(&b);
}
