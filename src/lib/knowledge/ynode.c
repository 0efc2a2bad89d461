/*
 * ynode.c — the strict YAML walking helpers every knowledge parser uses
 * (declared in parse.h): positions kept with the entries (1-based
 * line:column, from yaml_node_pos), positioned error messages, and typed
 * access to mapping values — known keys only, no key twice, scalars,
 * enums, lists of distinct names — each failure naming the node at fault
 * and what was expected.
 */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "parse.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/yaml_doc.h"
#include "../util/yaml_scalar.h"

/* ---- positions and messages ------------------------------------------ */

void pos_set(struct src_pos *p, const struct pctx *c, struct fy_node *n, struct fy_node *fallback)
{
	free(p->file);
	p->file = xstrdup(c->file);
	yaml_node_pos(n, fallback, &p->line, &p->col);
}

void pos_free(struct src_pos *p)
{
	free(p->file);
	p->file = NULL;
}

/* "FILE:L:C: <message>" as a config error; -1. */
static int vat_err(const char *file, int line, int col, struct err **err, const char *fmt,
		   va_list ap)
{
	_cleanup_free_ char *m = NULL;
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	return err_set(err, EXIT_CONFIG, "%s:%d:%d: %s", file, line, col, m ? m : "error");
}

int perr(const struct pctx *c, struct fy_node *n, struct fy_node *fallback, struct err **err,
	 const char *fmt, ...)
{
	int line, col;
	yaml_node_pos(n, fallback, &line, &col);
	va_list ap;
	va_start(ap, fmt);
	int rc = vat_err(c->file, line, col, err, fmt, ap);
	va_end(ap);
	return rc;
}

int pos_err(const struct src_pos *p, struct err **err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* as src_pos_str() writes a position */
	int rc = vat_err(p && p->file ? p->file : "-", p ? p->line : 0, p ? p->col : 0, err, fmt, ap);
	va_end(ap);
	return rc;
}

static char *join(const char *const *words, const char *last_sep)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	for (size_t i = 0; words[i]; i++) {
		if (i)
			buf_adds(&b, words[i + 1] ? ", " : last_sep);
		buf_adds(&b, words[i]);
	}
	return buf_take(&b);
}

char *join_or(const char *const *words)
{
	return join(words, " or ");
}

char *join_comma(const char *const *words)
{
	return join(words, ", ");
}

/* ---- node access ------------------------------------------------------ */

bool ynull(struct fy_node *n)
{
	if (!n)
		return true;
	if (!fy_node_is_scalar(n) || fy_node_get_style(n) != FYNS_PLAIN)
		return false;
	if (fy_node_is_null(n))
		return true;
	const char *s = yaml_scalar0(n, NULL);
	return !s || !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

const char *node_kind(struct fy_node *n)
{
	if (ynull(n))
		return "empty";
	if (fy_node_is_mapping(n))
		return "a mapping";
	if (fy_node_is_sequence(n))
		return "a sequence";
	if (fy_node_is_alias(n))
		return "an alias";
	return "a scalar";
}

struct yval map_find(struct fy_node *m, const char *key)
{
	struct yval v = { NULL, NULL };
	void *it = NULL;
	struct fy_node_pair *p;
	if (!m || !fy_node_is_mapping(m))
		return v;
	while ((p = fy_node_mapping_iterate(m, &it))) {
		struct fy_node *k = fy_node_pair_key(p);
		const char *s = k && fy_node_is_scalar(k) ? yaml_scalar0(k, NULL) : NULL;
		if (s && strcmp(s, key) == 0) {
			v.key = k;
			v.val = fy_node_pair_value(p);
			/* an empty value still counts as present: give it a node
			 * identity through its key */
			if (!v.val)
				v.val = k;
			return v;
		}
	}
	return v;
}

int map_check(const struct pctx *c, struct fy_node *n, struct fy_node *nkey, const char *name,
	      const char *where, const char *noun, const char *const *keys, struct err **err)
{
	if (!n || !fy_node_is_mapping(n))
		return perr(c, n, nkey, err, "'%s' is %s; expected a mapping", name, node_kind(n));
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(n, &it))) {
		struct fy_node *k = fy_node_pair_key(p);
		if (!k || !fy_node_is_scalar(k) || fy_node_is_alias(k) || ynull(k))
			return perr(c, k, nkey, err, "a key in %s is %s; expected a plain key", where,
				    node_kind(k));
		const char *s = yaml_scalar0(k, NULL);
		bool known = false;
		for (size_t i = 0; keys[i]; i++)
			if (strcmp(keys[i], s) == 0)
				known = true;
		if (!known) {
			_cleanup_free_ char *list = join_comma(keys);
			return perr(c, k, nkey, err, "unknown %s '%s' in %s; expected one of %s", noun, s,
				    where, list);
		}
		void *it2 = NULL;
		struct fy_node_pair *q;
		while ((q = fy_node_mapping_iterate(n, &it2)) && q != p) {
			struct fy_node *k2 = fy_node_pair_key(q);
			if (strcmp(yaml_scalar0(k2, NULL), s) == 0)
				return perr(c, k, nkey, err, "duplicate %s '%s' in %s; expected each %s once",
					    noun, s, where, noun);
		}
	}
	return 0;
}

int missing(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *key,
	    const char *where, const char *expect, struct err **err)
{
	return perr(c, m, mkey, err, "missing '%s' in %s; expected %s", key, where, expect);
}

int ytext(const struct pctx *c, struct yval v, const char *name, const char **out, struct err **err)
{
	*out = NULL;
	if (!v.val || v.val == v.key || ynull(v.val))
		return 0;
	if (fy_node_is_alias(v.val))
		return perr(c, v.val, v.key, err, "'%s' is an alias; expected a plain value", name);
	if (!fy_node_is_scalar(v.val))
		return perr(c, v.val, v.key, err, "'%s' is %s; expected a scalar", name, node_kind(v.val));
	*out = yaml_scalar0(v.val, NULL);
	return 0;
}

int ystr(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *key,
	 const char *where, bool required, const char *expect, char **out, struct err **err)
{
	struct yval v = map_find(m, key);
	const char *s;
	if (ytext(c, v, key, &s, err) < 0)
		return -1;
	if (!s || (!*s && required)) {
		if (!required)
			return 0;
		if (!v.key)
			return missing(c, m, mkey, key, where, expect, err);
		return perr(c, v.val, v.key, err, "'%s' is empty; expected %s", key, expect);
	}
	free(*out);
	*out = xstrdup(s);
	return 0;
}

int yenum(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *key,
	  const char *where, bool required, const char *const *allowed, char **out, struct err **err)
{
	_cleanup_free_ char *list = join_or(allowed);
	_cleanup_free_ char *s = NULL;
	if (ystr(c, m, mkey, key, where, required, list, &s, err) < 0)
		return -1;
	if (!s)
		return 0;
	for (size_t i = 0; allowed[i]; i++)
		if (strcmp(allowed[i], s) == 0) {
			free(*out);
			*out = TAKE_PTR(s);
			return 0;
		}
	struct yval v = map_find(m, key);
	return perr(c, v.val, v.key, err, "%s '%s' is unknown; expected %s", key, s, list);
}

int ystrv(const struct pctx *c, struct yval v, const char *name, bool allow_empty,
	  bool (*check)(const char *), const char *bad, const char *expect, char ***out,
	  struct src_pos **pos, struct err **err)
{
	*out = NULL;
	if (pos)
		*pos = NULL;
	if (!v.val || v.val == v.key || ynull(v.val))
		return 0;
	if (!fy_node_is_sequence(v.val))
		return perr(c, v.val, v.key, err, "'%s' is %s; expected a list", name, node_kind(v.val));
	int n = fy_node_sequence_item_count(v.val);
	if (n <= 0 && !allow_empty)
		return perr(c, v.val, v.key, err, "'%s' is an empty list; expected at least one entry", name);
	_cleanup_strv_ char **sv = xcalloc((size_t)(n > 0 ? n : 0) + 1, sizeof(char *));
	struct src_pos *ps = pos ? xcalloc((size_t)(n > 0 ? n : 0) + 1, sizeof(*ps)) : NULL;
	void *it = NULL;
	struct fy_node *e;
	int i = 0;
	int rc = 0;
	while ((e = fy_node_sequence_iterate(v.val, &it)) && i < n) {
		if (!fy_node_is_scalar(e) || fy_node_is_alias(e) || ynull(e)) {
			rc = perr(c, e, v.key, err, "an entry of '%s' is %s; expected %s", name,
				  node_kind(e), expect);
			break;
		}
		const char *s = yaml_scalar0(e, NULL);
		if (!*s || (check && !check(s))) {
			rc = perr(c, e, v.key, err, "%s '%s' in '%s'; expected %s", bad, s, name, expect);
			break;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(sv[j], s) == 0) {
				rc = perr(c, e, v.key, err, "'%s' lists '%s' twice; expected each entry once",
					  name, s);
				break;
			}
		if (rc < 0)
			break;
		sv[i] = xstrdup(s);
		if (ps)
			pos_set(&ps[i], c, e, v.key);
		i++;
	}
	if (rc < 0) {
		for (int j = 0; ps && j < i; j++)
			pos_free(&ps[j]);
		free(ps);
		return -1;
	}
	*out = TAKE_PTR(sv);
	if (pos)
		*pos = ps;
	return 0;
}

bool name_ok(const char *s)
{
	if (!s || !*s || strchr(s, '/') || strstr(s, ".."))
		return false;
	for (; *s; s++)
		if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s))
			return false;
	return true;
}

bool upper_name_ok(const char *s)
{
	if (!isupper((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isupper((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

int yhead(const struct pctx *c, struct fy_node *root, const char *kind, const char *where,
	  const char *const *keys, char **name, struct src_pos *pos, struct err **err)
{
	if (map_check(c, root, NULL, kind, where, "key", keys, err) < 0 ||
	    ystr(c, root, NULL, "name", where, true, NAME_EXPECT, name, err) < 0)
		return -1;
	struct yval nv = map_find(root, "name");
	if (!name_ok(*name))
		return perr(c, nv.val, nv.key, err, "name '%s' is invalid; expected %s", *name,
			    NAME_EXPECT);
	pos_set(pos, c, nv.val, nv.key);
	return 0;
}
