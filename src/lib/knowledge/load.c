/*
 * load.c — reading knowledge files: the embedded data/ tree, then an
 * operator's directory, one YAML document per file.
 *
 * Parsing is in two layers. libfyaml builds a document tree (its diagnostics
 * are collected, never printed; duplicate keys are let through so that our
 * own check can name the key); then the per-kind parsers (card.c, trait.c,
 * profile.c) walk the tree strictly with the helpers here: every key must be
 * known, every value of the right type and range, and every error carries
 * the 1-based line:column of the node at fault.
 *
 * Origins: a shipped entry (embedded, or a non-operator directory) and an
 * operator entry may share a name — the operator one replaces the shipped
 * one whole. Two entries of one origin with one name are an error naming
 * both positions.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "parse.h"
#include "embedded.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/yaml_scalar.h"
#include "../util/yaml_guard.h"

/* ---- positions and messages ------------------------------------------ */

static void diag_discard(struct fy_diag *d, void *user, const char *buf, size_t len)
{
	(void)d;
	(void)user;
	(void)buf;
	(void)len;
}

static struct fy_diag *quiet_diag(void)
{
	struct fy_diag_cfg dc;
	fy_diag_cfg_default(&dc);
	dc.fp = NULL;
	dc.output_fn = diag_discard;
	dc.colorize = false;
	struct fy_diag *d = fy_diag_create(&dc);
	if (d)
		fy_diag_set_collect_errors(d, true);
	return d;
}

/* libfyaml exposes no start mark for a collection node; a node report on a
 * collecting diag carries it (1-based), so ask for one. */
static bool collection_pos(struct fy_node *n, int *line, int *col)
{
	struct fy_diag *d = quiet_diag();
	if (!d)
		return false;
	fy_diag_node_report(d, n, FYET_ERROR, "position");
	void *it = NULL;
	struct fy_diag_error *e = fy_diag_errors_iterate(d, &it);
	bool ok = e && e->line > 0 && e->column > 0;
	if (ok) {
		*line = e->line;
		*col = e->column;
	}
	fy_diag_destroy(d);
	return ok;
}

static bool mark_of(struct fy_node *n, int *line, int *col)
{
	if (!n)
		return false;
	if (fy_node_is_scalar(n)) {
		struct fy_token *t = fy_node_get_scalar_token(n);
		const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
		if (!m)
			return false;
		*line = m->line + 1;
		*col = m->column + 1;
		/* the token of a quoted scalar or an alias starts after its
		 * quote or '*'; point at the node as written */
		enum fy_node_style st = fy_node_get_style(n);
		if ((st == FYNS_SINGLE_QUOTED || st == FYNS_DOUBLE_QUOTED || st == FYNS_ALIAS) &&
		    *col > 1)
			(*col)--;
		return true;
	}
	if (collection_pos(n, line, col))
		return true;
	/* last resort: the first child */
	void *it = NULL;
	if (fy_node_is_mapping(n)) {
		struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
		return p && mark_of(fy_node_pair_key(p), line, col);
	}
	struct fy_node *c = fy_node_sequence_iterate(n, &it);
	return c && mark_of(c, line, col);
}

void node_pos(struct fy_node *n, struct fy_node *fallback, int *line, int *col)
{
	if (mark_of(n, line, col) || mark_of(fallback, line, col))
		return;
	*line = 1;
	*col = 1;
}

void pos_set(struct src_pos *p, const struct pctx *c, struct fy_node *n, struct fy_node *fallback)
{
	free(p->file);
	p->file = xstrdup(c->file);
	node_pos(n, fallback, &p->line, &p->col);
}

void pos_free(struct src_pos *p)
{
	free(p->file);
	p->file = NULL;
}

int perr(const struct pctx *c, struct fy_node *n, struct fy_node *fallback, struct err **err,
	 const char *fmt, ...)
{
	int line, col;
	node_pos(n, fallback, &line, &col);
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *m = NULL;
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	return err_set(err, EXIT_CONFIG, "%s:%d:%d: %s", c->file, line, col, m ? m : "error");
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

size_t strv_len(char **v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
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

/* ---- shared sub-schemas ---------------------------------------------- */

static bool date_ok(const char *s)
{
	/* YYYY-MM-DD */
	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return false;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
			return false;
	int mo = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
	return mo >= 1 && mo <= 12 && d >= 1 && d <= 31;
}

void evidence_free(struct evidence *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++) {
		free(e[i].kind);
		free(e[i].date);
		free(e[i].box);
		free(e[i].image);
		free(e[i].observation);
		free(e[i].ref);
	}
	free(e);
}

static int evidence_one(const struct pctx *c, struct fy_node *m, struct fy_node *mkey,
			struct evidence *ev, struct err **err)
{
	static const char *const keys[] = { "kind", "date", "box", "image", "observation", "ref", NULL };
	static const char *const kinds[] = { "measured", "declared", NULL };
	const char *w = "an evidence entry";
	if (map_check(c, m, mkey, "evidence", w, "key", keys, err) < 0 ||
	    yenum(c, m, mkey, "kind", w, true, kinds, &ev->kind, err) < 0 ||
	    ystr(c, m, mkey, "date", w, false, "a date YYYY-MM-DD", &ev->date, err) < 0 ||
	    ystr(c, m, mkey, "box", w, false, "a box name", &ev->box, err) < 0 ||
	    ystr(c, m, mkey, "image", w, false, "an image reference", &ev->image, err) < 0 ||
	    ystr(c, m, mkey, "observation", w, true, "what was observed", &ev->observation, err) < 0 ||
	    ystr(c, m, mkey, "ref", w, false, "a reference", &ev->ref, err) < 0)
		return -1;
	if (ev->date && !date_ok(ev->date)) {
		struct yval v = map_find(m, "date");
		return perr(c, v.val, v.key, err, "date '%s' is not a date; expected YYYY-MM-DD", ev->date);
	}
	return 0;
}

int yevidence(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *where,
	      bool required, struct evidence **out, size_t *n, struct err **err)
{
	struct yval v = map_find(m, "evidence");
	*out = NULL;
	*n = 0;
	if (!v.val || v.val == v.key || ynull(v.val)) {
		if (!required)
			return 0;
		if (!v.key)
			return missing(c, m, mkey, "evidence", where, "a list of evidence entries", err);
		return perr(c, v.val, v.key, err, "'evidence' is empty; expected a list of evidence entries");
	}
	if (!fy_node_is_sequence(v.val))
		return perr(c, v.val, v.key, err, "'evidence' is %s; expected a list of evidence entries",
			    node_kind(v.val));
	int cnt = fy_node_sequence_item_count(v.val);
	if (cnt <= 0 && required)
		return perr(c, v.val, v.key, err,
			    "'evidence' is an empty list; expected at least one evidence entry");
	struct evidence *ev = xcalloc((size_t)(cnt > 0 ? cnt : 1), sizeof(*ev));
	void *it = NULL;
	struct fy_node *e;
	size_t i = 0;
	while ((e = fy_node_sequence_iterate(v.val, &it)) && i < (size_t)cnt) {
		if (evidence_one(c, e, v.key, &ev[i], err) < 0) {
			evidence_free(ev, i + 1);
			return -1;
		}
		i++;
	}
	*out = ev;
	*n = i;
	return 0;
}

char *knob_value(enum knob_id k, const char *v, char **why)
{
	char *out = NULL;
	const char *expect = "a valid value";
	if (knob_canon(k, v, &out, &expect) == 0)
		return out;
	free(out);
	*why = xasprintf("%s '%s' is invalid; expected %s", knob_name(k), v, expect);
	return NULL;
}

void role_spec_free(struct role_spec *rs)
{
	for (int k = 0; k < KNOB__COUNT; k++) {
		free(rs->knobs[k]);
		pos_free(&rs->knob_pos[k]);
	}
	memset(rs, 0, sizeof(*rs));
}

int yrole_knobs(const struct pctx *c, struct yval v, struct role_spec *rs, struct err **err)
{
	static const char *knobs[KNOB__COUNT + 1];
	for (int k = 0; k < KNOB__COUNT; k++)
		knobs[k] = knob_name(k);
	const char *role = yaml_scalar0(v.key, NULL);
	_cleanup_free_ char *where = xasprintf("role '%s'", role);
	if (v.val == v.key)
		return perr(c, v.key, NULL, err, "'%s' is empty; expected a mapping of knobs", role);
	if (map_check(c, v.val, v.key, role, where, "knob", knobs, err) < 0)
		return -1;
	rs->present = true;
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(v.val, &it))) {
		struct yval kv = { fy_node_pair_key(p), fy_node_pair_value(p) };
		const char *kname = yaml_scalar0(kv.key, NULL);
		int k = knob_from_name(kname);
		const char *s;
		if (ytext(c, kv, kname, &s, err) < 0)
			return -1;
		if (!s)
			return perr(c, kv.val, kv.key, err, "'%s' is empty; expected a value for the knob",
				    kname);
		_cleanup_free_ char *why = NULL;
		char *canon = knob_value((enum knob_id)k, s, &why);
		if (!canon)
			return perr(c, kv.val, kv.key, err, "%s", why);
		free(rs->knobs[k]);
		rs->knobs[k] = canon;
		pos_set(&rs->knob_pos[k], c, kv.val, kv.key);
	}
	return 0;
}

int yroles(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *where,
	   struct role_spec out[ROLE__COUNT], struct err **err)
{
	static const char *roles[ROLE__COUNT + 1];
	for (int r = 0; r < ROLE__COUNT; r++)
		roles[r] = role_name(r);
	struct yval v = map_find(m, "roles");
	if (!v.key)
		return missing(c, m, mkey, "roles", where, "a mapping of roles to knobs", err);
	if (v.val == v.key)
		return perr(c, v.key, NULL, err, "'roles' is empty; expected a mapping of roles to knobs");
	if (map_check(c, v.val, v.key, "roles", "'roles'", "role", roles, err) < 0)
		return -1;
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(v.val, &it))) {
		struct fy_node *k = fy_node_pair_key(p), *val = fy_node_pair_value(p);
		struct yval rv = { k, val ? val : k };
		if (ynull(val))
			rv.val = k;
		int r = role_from_name(yaml_scalar0(k, NULL));
		if (yrole_knobs(c, rv, &out[r], err) < 0)
			return -1;
	}
	return 0;
}

/* ---- the container ---------------------------------------------------- */

/* Add or replace an entry by name, following the origin rules. On success
 * *item is moved into the array (zeroed); on error it is left to the
 * caller. */
#define ADD_ITEM(k, arr, n, item, freefn, what, err)                                              \
	({                                                                                        \
		int _rc = 0;                                                                      \
		size_t _i;                                                                        \
		for (_i = 0; _i < (k)->n; _i++)                                                   \
			if (strcmp((k)->arr[_i].name, (item)->name) == 0)                          \
				break;                                                            \
		if (_i == (k)->n) {                                                               \
			(k)->arr = xrealloc((k)->arr, ((k)->n + 1) * sizeof(*(k)->arr));          \
			(k)->arr[(k)->n++] = *(item);                                             \
			memset((item), 0, sizeof(*(item)));                                       \
		} else if ((k)->arr[_i].from_operator == (item)->from_operator) {                 \
			_cleanup_free_ char *_first = src_pos_str(&(k)->arr[_i].pos);              \
			_rc = err_set(err, EXIT_CONFIG,                                           \
				      "%s:%d:%d: duplicate %s '%s', first defined at %s; expected "   \
				      "one file per name",                                        \
				      (item)->pos.file, (item)->pos.line, (item)->pos.col, what,  \
				      (item)->name, _first);                                      \
		} else if ((item)->from_operator) {                                               \
			freefn(&(k)->arr[_i]);                                                    \
			(k)->arr[_i] = *(item);                                                   \
			memset((item), 0, sizeof(*(item)));                                       \
		}                                                                                 \
		_rc;                                                                              \
	})

static void parser_destroy(struct fy_parser **p)
{
	if (*p)
		fy_parser_destroy(*p);
}

static void diag_destroy(struct fy_diag **d)
{
	if (*d)
		fy_diag_destroy(*d);
}

/* The first collected error as "FILE:L:C: invalid YAML: msg; expected ...". */
static int syntax_error(const struct pctx *c, struct fy_diag *d, struct err **err)
{
	void *it = NULL;
	struct fy_diag_error *e;
	while ((e = fy_diag_errors_iterate(d, &it)))
		if (e->type >= FYET_ERROR)
			return err_set(err, EXIT_CONFIG,
				       "%s:%d:%d: invalid YAML: %s; expected a well-formed YAML document",
				       c->file, e->line > 0 ? e->line : 1, e->column > 0 ? e->column : 1,
				       e->msg ? e->msg : "parse error");
	return 0;
}

static int add_defaults(struct knowledge *k, const struct pctx *c, struct fy_node *root,
			struct err **err)
{
	struct role_spec tmp[ROLE__COUNT] = { 0 };
	struct src_pos pos = { 0 };
	int rc = defaults_parse(c, root, tmp, err);
	if (rc == 0)
		pos_set(&pos, c, root, NULL);
	if (rc == 0 && k->defaults_pos.file) {
		if (k->defaults_from_operator == c->operator) {
			_cleanup_free_ char *first = src_pos_str(&k->defaults_pos);
			rc = err_set(err, EXIT_CONFIG,
				     "%s:%d:%d: duplicate defaults, first defined at %s; expected one "
				     "defaults file",
				     pos.file, pos.line, pos.col, first);
		} else if (!c->operator) {
			rc = 1; /* the operator's defaults stay */
		}
	}
	if (rc == 0) {
		for (int r = 0; r < ROLE__COUNT; r++) {
			role_spec_free(&k->defaults[r]);
			k->defaults[r] = tmp[r];
		}
		pos_free(&k->defaults_pos);
		k->defaults_pos = pos;
		k->defaults_from_operator = c->operator;
		return 0;
	}
	for (int r = 0; r < ROLE__COUNT; r++)
		role_spec_free(&tmp[r]);
	pos_free(&pos);
	return rc < 0 ? -1 : 0;
}

/* Dispatch a root mapping on its `kind` and add the entry to k. */
static int add_root(struct knowledge *k, const struct pctx *c, struct fy_node *root,
		    struct err **err)
{
	bool operator = c->operator;
	int rc;
	static const char *const kinds[] = { "card", "trait", "profile", "image", "defaults", NULL };
	_cleanup_free_ char *kind = NULL;
	if (yenum(c, root, NULL, "kind", "the document", true, kinds, &kind, err) < 0)
		return -1;
	if (strcmp(kind, "card") == 0) {
		struct card it = { 0 };
		it.from_operator = operator;
		rc = card_parse(c, root, &it, err);
		if (rc == 0)
			rc = ADD_ITEM(k, cards, n_cards, &it, card_free, "card", err);
		card_free(&it);
	} else if (strcmp(kind, "trait") == 0) {
		struct trait it = { 0 };
		it.from_operator = operator;
		rc = trait_parse(c, root, &it, err);
		if (rc == 0)
			rc = ADD_ITEM(k, traits, n_traits, &it, trait_free, "trait", err);
		trait_free(&it);
	} else if (strcmp(kind, "profile") == 0) {
		struct profile it = { 0 };
		it.from_operator = operator;
		rc = profile_parse(c, root, &it, err);
		if (rc == 0)
			rc = ADD_ITEM(k, profiles, n_profiles, &it, profile_free, "profile", err);
		profile_free(&it);
	} else if (strcmp(kind, "image") == 0) {
		struct vimage it = { 0 };
		it.from_operator = operator;
		rc = image_parse(c, root, &it, err);
		if (rc == 0)
			rc = ADD_ITEM(k, images, n_images, &it, vimage_free, "image", err);
		vimage_free(&it);
	} else {
		rc = add_defaults(k, c, root, err);
	}
	return rc;
}

int knowledge_add_yaml(struct knowledge *k, const char *name, const char *text, size_t len,
		       bool operator, struct err **err)
{
	struct pctx c = { name, operator };
	if (yaml_guard(name, text, text ? len : 0, err) < 0)
		return -1;
	__attribute__((cleanup(diag_destroy))) struct fy_diag *d = quiet_diag();
	if (!d)
		return err_set(err, EXIT_INTERNAL, "%s: cannot create a YAML diagnostic object", name);
	struct fy_parse_cfg cfg = {
		.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_ALLOW_DUPLICATE_KEYS,
		.diag = d,
	};
	__attribute__((cleanup(parser_destroy))) struct fy_parser *fyp = fy_parser_create(&cfg);
	if (!fyp)
		return err_set(err, EXIT_INTERNAL, "%s: cannot create a YAML parser", name);
	if (fy_parser_set_string(fyp, text ? text : "", text ? len : 0) != 0)
		return err_set(err, EXIT_INTERNAL, "%s: cannot read the YAML text", name);
	struct fy_document *doc = fy_parse_load_document(fyp);
	if (!doc) {
		if (syntax_error(&c, d, err) < 0)
			return -1;
		return err_set(err, EXIT_CONFIG,
			       "%s:1:1: empty document; expected a mapping with a 'kind' key", name);
	}
	int rc = -1;
	struct fy_node *root = fy_document_root(doc);
	struct fy_document *doc2 = fy_parse_load_document(fyp);
	if (doc2) {
		perr(&c, fy_document_root(doc2), NULL, err,
		     "a second YAML document; expected one document per file");
		fy_parse_document_destroy(fyp, doc2);
		goto out;
	}
	if (syntax_error(&c, d, err) < 0)
		goto out;
	if (ynull(root)) {
		err_set(err, EXIT_CONFIG, "%s:1:1: empty document; expected a mapping with a 'kind' key",
			name);
		goto out;
	}
	if (!fy_node_is_mapping(root)) {
		perr(&c, root, NULL, err, "the document is %s; expected a mapping with a 'kind' key",
		     node_kind(root));
		goto out;
	}
	rc = add_root(k, &c, root, err);
out:
	fy_parse_document_destroy(fyp, doc);
	return rc;
}

/* ---- files and directories ------------------------------------------- */

static bool yaml_name(const char *n)
{
	size_t l = strlen(n);
	return n[0] != '.' && ((l > 5 && strcmp(n + l - 5, ".yaml") == 0) ||
			       (l > 4 && strcmp(n + l - 4, ".yml") == 0));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_file(struct knowledge *k, const char *path, bool operator, struct err **err)
{
	size_t len = 0;
	_cleanup_free_ char *text = fs_read(path, 1 << 20, &len, err);
	if (!text)
		return -1;
	return knowledge_add_yaml(k, path, text, len, operator, err);
}

/* Load every *.yaml / *.yml directly in dir, in name order. A missing dir
 * is fine when missing_ok; something other than a directory is an error. */
static int load_files_in(struct knowledge *k, const char *dir, bool operator, bool missing_ok,
			 struct err **err)
{
	struct stat st;
	if (stat(dir, &st) < 0) {
		if (errno == ENOENT && missing_ok)
			return 0;
		return err_errno(err, EXIT_CONFIG, errno, "open directory '%s'", dir);
	}
	if (!S_ISDIR(st.st_mode))
		return err_set(err, EXIT_CONFIG, "'%s' is not a directory; expected a directory of YAML files",
			       dir);
	_cleanup_closedir_ DIR *d = opendir(dir);
	if (!d)
		return err_errno(err, EXIT_CONFIG, errno, "open directory '%s'", dir);
	_cleanup_strv_ char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!yaml_name(de->d_name))
			continue;
		names = xrealloc(names, (n + 2) * sizeof(*names));
		names[n++] = xstrdup(de->d_name);
		names[n] = NULL;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, names[i]);
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			return err_set(err, EXIT_CONFIG, "'%s' is a directory; expected a YAML file", p);
		if (load_file(k, p, operator, err) < 0)
			return -1;
	}
	return 0;
}

int knowledge_load_dir(struct knowledge *k, const char *dir, bool operator, struct err **err)
{
	static const char *const subs[] = { "cards", "traits", "profiles", "images" };
	if (!fs_is_dir(dir)) {
		if (fs_exists(dir))
			return err_set(err, EXIT_CONFIG,
				       "'%s' is not a directory; expected a directory of YAML files", dir);
		return err_set(err, EXIT_CONFIG, "knowledge directory '%s' does not exist", dir);
	}
	if (operator && load_files_in(k, dir, operator, false, err) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, subs[i]);
		if (load_files_in(k, p, operator, true, err) < 0)
			return -1;
	}
	_cleanup_free_ char *t = xasprintf("%s/template/defaults.yaml", dir);
	if (fs_exists(t) && load_file(k, t, operator, err) < 0)
		return -1;
	return 0;
}

static bool embedded_knowledge(const char *p)
{
	if (strcmp(p, "data/template/defaults.yaml") == 0)
		return true;
	const char *const dirs[] = { "data/cards/", "data/traits/", "data/profiles/", "data/images/" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (str_starts_with(p, dirs[i]) && !strchr(p + strlen(dirs[i]), '/'))
			return yaml_name(p + strlen(dirs[i]));
	return false;
}

int knowledge_load(struct knowledge *k, const char *operator_dir, struct err **err)
{
	for (size_t i = 0; i < embedded_files_count; i++) {
		const struct embedded_file *f = &embedded_files[i];
		if (!embedded_knowledge(f->path))
			continue;
		if (knowledge_add_yaml(k, f->path, f->data, f->len, false, err) < 0)
			goto fail;
	}
	if (operator_dir && *operator_dir) {
		struct stat st;
		if (stat(operator_dir, &st) == 0) {
			if (!S_ISDIR(st.st_mode)) {
				err_set(err, EXIT_CONFIG,
					"operator directory '%s' is not a directory; expected a directory of "
					"YAML files",
					operator_dir);
				goto fail;
			}
			if (knowledge_load_dir(k, operator_dir, true, err) < 0)
				goto fail;
		} else if (errno != ENOENT) {
			err_errno(err, EXIT_CONFIG, errno, "operator directory '%s'", operator_dir);
			goto fail;
		}
	}
	if (knowledge_check(k, err) < 0)
		goto fail;
	return 0;
fail:
	knowledge_free(k);
	return -1;
}

/* ---- cross-checks, lookups, free ------------------------------------- */

static int pos_err(const struct src_pos *p, struct err **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int pos_err(const struct src_pos *p, struct err **err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *m = NULL;
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	_cleanup_free_ char *where = src_pos_str(p);
	return err_set(err, EXIT_CONFIG, "%s: %s", where, m ? m : "error");
}

int knowledge_check(const struct knowledge *k, struct err **err)
{
	for (size_t i = 0; i < k->n_cards; i++) {
		const struct card *c = &k->cards[i];
		if (c->profile && !knowledge_profile(k, c->profile))
			return pos_err(c->profile_pos.file ? &c->profile_pos : &c->pos, err,
				       "card '%s' names unknown profile '%s'; expected the name of a profile",
				       c->name, c->profile);
	}
	for (size_t i = 0; i < k->n_traits; i++) {
		const struct trait *t = &k->traits[i];
		for (size_t j = 0; t->overrides && t->overrides[j]; j++)
			if (!knowledge_trait(k, t->overrides[j]))
				return pos_err(t->overrides_pos ? &t->overrides_pos[j] : &t->pos, err,
					       "trait '%s' overrides unknown trait '%s'; expected the name "
					       "of a trait",
					       t->name, t->overrides[j]);
	}
	for (size_t i = 0; i < k->n_profiles; i++) {
		const struct profile *p = &k->profiles[i];
		if (p->card && strcmp(p->card, "any") != 0 && !knowledge_card(k, p->card))
			return pos_err(p->card_pos.file ? &p->card_pos : &p->pos, err,
				       "profile '%s' names unknown card '%s'; expected the name of a card "
				       "or any",
				       p->name, p->card);
		for (size_t j = 0; p->traits && p->traits[j]; j++)
			if (!knowledge_trait(k, p->traits[j]))
				return pos_err(p->traits_pos ? &p->traits_pos[j] : &p->pos, err,
					       "profile '%s' lists unknown trait '%s'; expected the name "
					       "of a trait",
					       p->name, p->traits[j]);
		unsigned seen = 0;
		for (size_t j = 0; p->order && p->order[j]; j++) {
			const struct src_pos *at = p->order_pos ? &p->order_pos[j] : &p->pos;
			int r = role_from_name(p->order[j]);
			if (r < 0)
				return pos_err(at, err,
					       "profile '%s' orders unknown role '%s'; expected one of "
					       "cortex, senses, hand, embedder, reranker",
					       p->name, p->order[j]);
			if (seen & (1u << r))
				return pos_err(at, err,
					       "profile '%s' orders role '%s' twice; expected each role "
					       "once",
					       p->name, p->order[j]);
			seen |= 1u << r;
		}
	}
	return knowledge_check_serving(k, err);
}

const struct card *knowledge_card(const struct knowledge *k, const char *name)
{
	for (size_t i = 0; k && name && i < k->n_cards; i++)
		if (strcmp(k->cards[i].name, name) == 0)
			return &k->cards[i];
	return NULL;
}

const struct trait *knowledge_trait(const struct knowledge *k, const char *name)
{
	for (size_t i = 0; k && name && i < k->n_traits; i++)
		if (strcmp(k->traits[i].name, name) == 0)
			return &k->traits[i];
	return NULL;
}

const struct profile *knowledge_profile(const struct knowledge *k, const char *name)
{
	for (size_t i = 0; k && name && i < k->n_profiles; i++)
		if (strcmp(k->profiles[i].name, name) == 0)
			return &k->profiles[i];
	return NULL;
}

void knowledge_free(struct knowledge *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n_cards; i++)
		card_free(&k->cards[i]);
	free(k->cards);
	for (size_t i = 0; i < k->n_traits; i++)
		trait_free(&k->traits[i]);
	free(k->traits);
	for (size_t i = 0; i < k->n_profiles; i++)
		profile_free(&k->profiles[i]);
	free(k->profiles);
	for (size_t i = 0; i < k->n_images; i++)
		vimage_free(&k->images[i]);
	free(k->images);
	for (int r = 0; r < ROLE__COUNT; r++)
		role_spec_free(&k->defaults[r]);
	pos_free(&k->defaults_pos);
	memset(k, 0, sizeof(*k));
}
