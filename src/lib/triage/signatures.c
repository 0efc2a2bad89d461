/*
 * signatures.c — load and validate boot-log signature files (one guarded
 * libfyaml document each, through yaml_doc_parse: diagnostics collected,
 * never printed).
 *
 * Every check names the node it rejects as "file:line:col: what; expected
 * what". The checks: the document is a mapping of exactly `kind:
 * signatures` and `signatures:` (a sequence); each entry is a mapping of
 * known keys only, with id, severity, cause and remedy, and exactly one of
 * literal/regex; a regex must compile (the PCRE2 message and offset are in
 * the error); a capture must name a group of the regex; ids are unique per
 * origin. An operator file's signature replaces a shipped one of the same id.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <dirent.h>
#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "signatures.h"
#include "../knowledge/knowledge.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/yaml_doc.h"
#include "../util/yaml_scalar.h"
#include "vversion.h"

#define SIG_FILE_CAP ((size_t)4 << 20)

const char *sig_severity_name(enum sig_severity s)
{
	switch (s) {
	case SEV_FATAL: return "fatal";
	case SEV_WARNING: return "warning";
	default: return "info";
	}
}

static void sig_clear(struct signature *s)
{
	free(s->id);
	free(s->literal);
	free(s->regex);
	pcre2_code_free(s->code);
	free(s->cause);
	free(s->remedy);
	strv_free(s->traits);
	strv_free(s->captures);
	free(s->capture_groups);
	free(s->file);
	free(s->parent);
	free(s->family);
	strv_free(s->versions);
	strv_free(s->excerpts);
	memset(s, 0, sizeof(*s));
}

/* Drop what was derived from the signatures (they are about to change). */
static void sigset_uncache(struct sigset *set)
{
	if (set->cache && set->cache_free)
		set->cache_free(set->cache);
	set->cache = NULL;
	set->cache_free = NULL;
}

void sigset_free(struct sigset *set)
{
	if (!set)
		return;
	sigset_uncache(set);
	for (size_t i = 0; i < set->n; i++)
		sig_clear(&set->sigs[i]);
	free(set->sigs);
	set->sigs = NULL;
	set->n = 0;
}

const struct signature *sigset_find(const struct sigset *set, const char *id)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->sigs[i].id, id) == 0)
			return &set->sigs[i];
	return NULL;
}

/* --- positions and messages ------------------------------------------- */

struct pos {
	int line, col; /* 1-based; 0 = unknown */
};

/* Where a node starts: a scalar's token; a collection's first item (libfyaml
 * 0.7 has no start mark for collections); `dflt` when there is none. */
static struct pos node_pos(struct fy_node *n, struct pos dflt)
{
	struct pos p;
	return yaml_scalar_mark(yaml_first_scalar(n), &p.line, &p.col) ? p : dflt;
}

__attribute__((format(printf, 4, 5)))
static int fail_at(struct err **err, const char *file, struct pos p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	return err_set(err, EXIT_CONFIG, "%s:%d:%d: %s", file, p.line, p.col, msg);
}

/* --- field helpers ----------------------------------------------------- */

/* The scalar text of n (NUL-terminated, owned by the document), or NULL
 * with *err set when n is not a non-empty scalar. */
static const char *want_scalar(struct fy_node *n, const char *file, struct pos at,
			       const char *key, struct err **err)
{
	const char *s = n && fy_node_get_type(n) == FYNT_SCALAR ? yaml_scalar0(n, NULL) : NULL;
	if (!s || !*s) {
		fail_at(err, file, node_pos(n, at), "'%s' is empty or not a scalar; expected text", key);
		return NULL;
	}
	return s;
}

/* A scalar or a sequence of scalars as a strv (caller frees). */
static char **want_names(struct fy_node *n, const char *file, struct pos at, const char *key,
			 bool allow_scalar, struct err **err)
{
	if (allow_scalar && n && fy_node_get_type(n) == FYNT_SCALAR) {
		const char *s = want_scalar(n, file, at, key, err);
		if (!s)
			return NULL;
		char **v = xcalloc(2, sizeof(char *));
		v[0] = xstrdup(s);
		return v;
	}
	if (!n || fy_node_get_type(n) != FYNT_SEQUENCE || fy_node_sequence_item_count(n) < 1) {
		fail_at(err, file, node_pos(n, at), "'%s' is not %s; expected a list of names", key,
			allow_scalar ? "a name or a list" : "a list");
		return NULL;
	}
	size_t cnt = (size_t)fy_node_sequence_item_count(n), i = 0;
	_cleanup_strv_ char **v = xcalloc(cnt + 1, sizeof(char *));
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(n, &it))) {
		const char *s = want_scalar(item, file, at, key, err);
		if (!s)
			return NULL;
		v[i++] = xstrdup(s);
	}
	return TAKE_PTR(v);
}

static bool valid_name(const char *s)
{
	if (!*s || *s == '-')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

static bool shipped_trait(const char *name)
{
	_cleanup_free_ char *path = xasprintf("data/traits/%s.yaml", name);
	for (size_t i = 0; i < embedded_files_count; i++)
		if (strcmp(embedded_files[i].path, path) == 0)
			return true;
	return false;
}

/* Compile s->regex into s->code and resolve the capture names. `at` is
 * where the pattern's text starts; exact: the text is the pattern byte for
 * byte on one line (so an error offset is a column). */
static int compile_regex(struct signature *s, const char *file, struct pos at, bool exact,
			 struct pos cap_at, struct err **err)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)s->regex, PCRE2_ZERO_TERMINATED, 0, &code, &off,
				       NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", code);
		/* point at the offending byte when the scalar is one line and
		 * its text is the pattern byte for byte */
		if (exact && off <= strlen(s->regex))
			at.col += (int)off;
		return fail_at(err, file, at,
			       "regex of '%s' does not compile: %s at offset %zu; expected a PCRE2 pattern",
			       s->id, (char *)msg, (size_t)off);
	}
	/* JIT where available; pcre2_match falls back to the interpreter. */
	(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	s->code = re;
	if (s->captures) {
		while (s->captures[s->n_captures])
			s->n_captures++;
		s->capture_groups = xcalloc(s->n_captures, sizeof(int));
		for (size_t i = 0; i < s->n_captures; i++) {
			int g = pcre2_substring_number_from_name(re, (PCRE2_SPTR)s->captures[i]);
			if (g < 0)
				return fail_at(err, file, cap_at,
					       "capture '%s' of '%s' is not a group of its regex; expected "
					       "a name of a (?<name>...) group", s->captures[i], s->id);
			s->capture_groups[i] = g;
		}
	}
	return 0;
}

static const char *const keys[] = {
	"id", "literal", "regex", "severity", "cause", "remedy", "trait", "captures", "generic",
	"parent", "family", "versions", "excerpts",
};

enum { K_ID, K_LITERAL, K_REGEX, K_SEVERITY, K_CAUSE, K_REMEDY, K_TRAIT, K_CAPTURES, K_GENERIC,
       K_PARENT, K_FAMILY, K_VERSIONS, K_EXCERPTS };

/* One signature mapping being parsed: its values and their keys' positions
 * (line 0 = key absent). */
struct sig_node {
	const char *file;
	struct pos here;
	struct fy_node *v[ARRAY_SIZE(keys)];
	struct pos kpos[ARRAY_SIZE(keys)];
};

/* Collect the keys of mapping m into *n; an unknown key is an error. */
static int read_keys(struct fy_node *m, struct sig_node *n, struct err **err)
{
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(m, &it))) {
		struct fy_node *k = fy_node_pair_key(p);
		const char *name = k && fy_node_get_type(k) == FYNT_SCALAR ? yaml_scalar0(k, NULL) : "";
		size_t i;
		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (strcmp(keys[i], name) == 0)
				break;
		if (i == ARRAY_SIZE(keys))
			return fail_at(err, n->file, node_pos(k, n->here),
				       "unknown key '%s' in a signature; expected one of id, literal, "
				       "regex, severity, cause, remedy, trait, captures, generic, parent, "
				       "family, versions, excerpts", name);
		n->v[i] = fy_node_pair_value(p);
		n->kpos[i] = node_pos(k, n->here);
	}
	static const int required[] = { K_ID, K_SEVERITY, K_CAUSE, K_REMEDY };
	for (size_t i = 0; i < ARRAY_SIZE(required); i++)
		if (!n->kpos[required[i]].line)
			return fail_at(err, n->file, n->here, "signature has no '%s'; expected id, severity, "
				       "cause, remedy and one of literal or regex", keys[required[i]]);
	return 0;
}

/* The scalar of key k (it must be present), or NULL with *err set. */
static const char *key_scalar(const struct sig_node *n, int k, struct err **err)
{
	return want_scalar(n->v[k], n->file, n->kpos[k], keys[k], err);
}

/* id, literal, severity, cause, remedy and generic. */
static int parse_core(const struct sig_node *n, bool from_operator, struct signature *s,
		      struct err **err)
{
	const char *file = n->file;
	struct pos here = n->here;
	const char *id = key_scalar(n, K_ID, err);
	if (!id)
		return -1;
	if (!valid_name(id))
		return fail_at(err, file, node_pos(n->v[K_ID], here),
			       "bad signature id '%s'; expected lower-case letters, digits and '-'", id);
	s->id = xstrdup(id);
	s->file = xstrdup(file);
	s->line = here.line;
	s->col = here.col;
	s->from_operator = from_operator;
	bool has_lit = n->kpos[K_LITERAL].line, has_re = n->kpos[K_REGEX].line;
	if (has_lit == has_re)
		return fail_at(err, file, here, "signature '%s' has %s; expected exactly one of "
			       "literal or regex", id, has_lit ? "both literal and regex" : "neither literal nor regex");
	if (has_lit) {
		const char *lit = key_scalar(n, K_LITERAL, err);
		if (!lit)
			return -1;
		if (strchr(lit, '\n'))
			return fail_at(err, file, node_pos(n->v[K_LITERAL], here),
				       "literal of '%s' spans lines; expected text within one log line", id);
		s->literal = xstrdup(lit);
		s->literal_len = strlen(lit);
	}
	const char *sev = key_scalar(n, K_SEVERITY, err);
	if (!sev)
		return -1;
	if (strcmp(sev, "fatal") == 0)
		s->severity = SEV_FATAL;
	else if (strcmp(sev, "warning") == 0)
		s->severity = SEV_WARNING;
	else if (strcmp(sev, "info") == 0)
		s->severity = SEV_INFO;
	else
		return fail_at(err, file, node_pos(n->v[K_SEVERITY], here),
			       "bad severity '%s' of '%s'; expected fatal, warning or info", sev, id);
	const char *cause = key_scalar(n, K_CAUSE, err);
	if (!cause)
		return -1;
	s->cause = xstrdup(cause);
	const char *remedy = key_scalar(n, K_REMEDY, err);
	if (!remedy)
		return -1;
	s->remedy = xstrdup(remedy);
	if (n->kpos[K_GENERIC].line) {
		const char *g = key_scalar(n, K_GENERIC, err);
		if (!g)
			return -1;
		if (strcmp(g, "true") != 0 && strcmp(g, "false") != 0)
			return fail_at(err, file, node_pos(n->v[K_GENERIC], here),
				       "bad generic '%s' of '%s'; expected true or false", g, id);
		s->generic = strcmp(g, "true") == 0;
		if (s->generic && s->severity != SEV_FATAL)
			return fail_at(err, file, node_pos(n->v[K_GENERIC], here),
				       "generic on the %s signature '%s'; expected it on fatal ones only",
				       sev, id);
	}
	return 0;
}

/* versions: each range must parse; an error points at the bad item. */
static int parse_versions(const struct sig_node *n, struct signature *s, struct err **err)
{
	struct fy_node *vn = n->v[K_VERSIONS];
	s->versions = want_names(vn, n->file, n->kpos[K_VERSIONS], "versions", true, err);
	if (!s->versions)
		return -1;
	for (char **r = s->versions; *r; r++) {
		int bad = 0;
		if (vrange_valid(*r, &bad))
			continue;
		struct pos vp = node_pos(vn, n->here);
		if (fy_node_get_type(vn) == FYNT_SEQUENCE) {
			void *vit = NULL;
			struct fy_node *item = NULL;
			for (char **q = s->versions; q <= r; q++)
				item = fy_node_sequence_iterate(vn, &vit);
			vp = node_pos(item, vp);
		}
		return fail_at(err, n->file, vp, "bad version range '%s' of '%s' at byte %d; "
			       "expected e.g. \">=0.11\", \"<0.11.1\" or \">=0.6,<0.11\"",
			       *r, s->id, bad + 1);
	}
	return 0;
}

/* trait, parent, family and versions: what a signature is linked to. */
static int parse_links(const struct sig_node *n, bool from_operator, struct signature *s,
		       struct err **err)
{
	const char *file = n->file, *id = s->id;
	struct pos here = n->here;
	if (n->kpos[K_TRAIT].line) {
		s->traits = want_names(n->v[K_TRAIT], file, n->kpos[K_TRAIT], "trait", true, err);
		if (!s->traits)
			return -1;
		for (char **t = s->traits; *t; t++) {
			if (!valid_name(*t) || (!from_operator && !shipped_trait(*t)))
				return fail_at(err, file, node_pos(n->v[K_TRAIT], here),
					       "unknown trait '%s' in '%s'; expected a trait of data/traits/",
					       *t, id);
		}
	}
	if (n->kpos[K_PARENT].line) {
		const char *pa = key_scalar(n, K_PARENT, err);
		if (!pa)
			return -1;
		struct pos pp = node_pos(n->v[K_PARENT], here);
		if (!valid_name(pa) || strcmp(pa, id) == 0)
			return fail_at(err, file, pp, "bad parent '%s' of '%s'; expected the id of "
				       "another signature", pa, id);
		s->parent = xstrdup(pa);
		s->parent_line = pp.line;
		s->parent_col = pp.col;
	}
	if (n->kpos[K_FAMILY].line) {
		const char *fa = key_scalar(n, K_FAMILY, err);
		if (!fa)
			return -1;
		if (!valid_name(fa))
			return fail_at(err, file, node_pos(n->v[K_FAMILY], here), "bad family '%s' of '%s'; "
				       "expected lower-case letters, digits and '-'", fa, id);
		s->family = xstrdup(fa);
	}
	if (n->kpos[K_VERSIONS].line && parse_versions(n, s, err) < 0)
		return -1;
	if (n->kpos[K_EXCERPTS].line) {
		s->excerpts = want_names(n->v[K_EXCERPTS], file, n->kpos[K_EXCERPTS], "excerpts", true, err);
		if (!s->excerpts)
			return -1;
	}
	return 0;
}

/* captures and regex (compiled). */
static int parse_regex(const struct sig_node *n, struct signature *s, struct err **err)
{
	bool has_re = n->kpos[K_REGEX].line;
	if (n->kpos[K_CAPTURES].line) {
		if (!has_re)
			return fail_at(err, n->file, n->kpos[K_CAPTURES],
				       "captures on the literal signature '%s'; expected them with a regex", s->id);
		s->captures = want_names(n->v[K_CAPTURES], n->file, n->kpos[K_CAPTURES], "captures", false, err);
		if (!s->captures)
			return -1;
	}
	if (!has_re)
		return 0;
	const char *re = key_scalar(n, K_REGEX, err);
	if (!re)
		return -1;
	s->regex = xstrdup(re);
	enum fy_node_style st = fy_node_get_style(n->v[K_REGEX]);
	bool exact = !strchr(re, '\n') &&
		     (st == FYNS_PLAIN || (st == FYNS_SINGLE_QUOTED && !strchr(re, '\'')));
	return compile_regex(s, n->file, node_pos(n->v[K_REGEX], n->here), exact,
			     node_pos(n->v[K_CAPTURES], n->here), err);
}

/* Parse one signature mapping into *s (fields owned by s). */
static int parse_one(struct fy_node *m, const char *file, bool from_operator, struct pos at,
		     struct signature *s, struct err **err)
{
	if (!m || fy_node_get_type(m) != FYNT_MAPPING)
		return fail_at(err, file, node_pos(m, at),
			       "a signature is not a mapping; expected id, literal or regex, "
			       "severity, cause, remedy");
	struct sig_node n = { .file = file, .here = node_pos(m, at) };
	if (read_keys(m, &n, err) < 0 || parse_core(&n, from_operator, s, err) < 0 ||
	    parse_links(&n, from_operator, s, err) < 0 || parse_regex(&n, s, err) < 0)
		return -1;
	return 0;
}

/* Add s to set, taking its fields: a duplicate id of the same origin is an
 * error, an operator signature replaces a shipped one in place. */
static int add_sig(struct sigset *set, struct signature *s, struct err **err)
{
	sigset_uncache(set);
	for (size_t i = 0; i < set->n; i++) {
		struct signature *o = &set->sigs[i];
		if (strcmp(o->id, s->id) != 0)
			continue;
		if (o->from_operator == s->from_operator)
			return fail_at(err, s->file, (struct pos){ s->line, s->col },
				       "duplicate signature id '%s' (first at %s:%d:%d); expected "
				       "each id once", s->id, o->file, o->line, o->col);
		sig_clear(o);
		*o = *s;
		memset(s, 0, sizeof(*s));
		return 0;
	}
	set->sigs = xrealloc(set->sigs, (set->n + 1) * sizeof(*set->sigs));
	set->sigs[set->n++] = *s;
	memset(s, 0, sizeof(*s));
	return 0;
}

static void fy_document_destroyp(struct fy_document **d) { fy_document_destroy(*d); }

int sigset_add_yaml(struct sigset *set, const char *file, const char *text, size_t len,
		    bool from_operator, struct err **err)
{
	__attribute__((cleanup(fy_document_destroyp))) struct fy_document *doc = NULL;
	if (yaml_doc_parse(file, text, len, 0, "valid YAML", &doc, err) < 0)
		return -1;
	if (!doc)
		return err_set(err, EXIT_CONFIG, "%s: not valid YAML", file);
	struct pos top = { 1, 1 };
	struct fy_node *root = fy_document_root(doc);
	if (!root || fy_node_get_type(root) != FYNT_MAPPING)
		return fail_at(err, file, node_pos(root, top),
			       "the document is not a mapping; expected kind: signatures and signatures:");
	struct fy_node *list = NULL;
	struct pos list_pos = top;
	bool kind_ok = false;
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(root, &it))) {
		struct fy_node *k = fy_node_pair_key(p), *v = fy_node_pair_value(p);
		const char *name = k && fy_node_get_type(k) == FYNT_SCALAR ? yaml_scalar0(k, NULL) : "";
		if (strcmp(name, "kind") == 0) {
			const char *kind = v && fy_node_get_type(v) == FYNT_SCALAR ? yaml_scalar0(v, NULL) : "";
			if (strcmp(kind, "signatures") != 0)
				return fail_at(err, file, node_pos(v, node_pos(k, top)),
					       "kind is '%s'; expected signatures", kind);
			kind_ok = true;
		} else if (strcmp(name, "signatures") == 0) {
			list = v;
			list_pos = node_pos(k, top);
		} else {
			return fail_at(err, file, node_pos(k, top),
				       "unknown key '%s'; expected kind or signatures", name);
		}
	}
	if (!kind_ok)
		return fail_at(err, file, node_pos(root, top), "no 'kind'; expected kind: signatures");
	if (!list || fy_node_get_type(list) != FYNT_SEQUENCE)
		return fail_at(err, file, node_pos(list, list_pos),
			       "'signatures' is missing or not a list; expected a list of signatures");
	it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(list, &it))) {
		struct signature s = { 0 };
		if (parse_one(item, file, from_operator, list_pos, &s, err) < 0 ||
		    add_sig(set, &s, err) < 0) {
			sig_clear(&s);
			return -1;
		}
	}
	return 0;
}

static int name_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

int sigset_link(const struct sigset *set, struct err **err)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct signature *s = &set->sigs[i];
		if (!s->parent)
			continue;
		const struct signature *p = s;
		size_t steps = 0;
		while (p->parent) {
			const struct signature *q = sigset_find(set, p->parent);
			if (!q)
				return fail_at(err, p->file, (struct pos){ p->parent_line, p->parent_col },
					       "unknown parent '%s' of '%s'; expected the id of a signature",
					       p->parent, p->id);
			if (++steps > set->n || q == s)
				return fail_at(err, s->file, (struct pos){ s->parent_line, s->parent_col },
					       "parent '%s' of '%s' leads back to '%s'; expected no cycle",
					       s->parent, s->id, s->id);
			p = q;
		}
	}
	return 0;
}

int sigset_load(struct sigset *set, const char *operator_dir, struct err **err)
{
	*set = (struct sigset){ 0 }; /* from nothing: callers may pass fresh stack */
	/* embedded_files is sorted by path (the build passes it sorted). */
	for (size_t i = 0; i < embedded_files_count; i++) {
		const struct embedded_file *f = &embedded_files[i];
		size_t n = strlen(f->path);
		if (!str_starts_with(f->path, "data/signatures/") || n < 5 ||
		    strcmp(f->path + n - 5, ".yaml") != 0)
			continue;
		if (sigset_add_yaml(set, f->path, f->data, f->len, false, err) < 0)
			return -1;
	}
	if (!operator_dir)
		return sigset_link(set, err);
	_cleanup_free_ char *dir = xasprintf("%s/signatures", operator_dir);
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, name_filter, alphasort);
	if (n < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return err_errno(err, EXIT_CONFIG, errno, "read directory '%s'", dir);
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		if (rc == 0) {
			_cleanup_free_ char *path = xasprintf("%s/%s", dir, ents[i]->d_name);
			size_t len = 0;
			_cleanup_free_ char *text = fs_read(path, SIG_FILE_CAP, &len, err);
			if (!text || sigset_add_yaml(set, path, text, len, true, err) < 0)
				rc = -1;
		}
		free(ents[i]);
	}
	free(ents);
	return rc < 0 ? rc : sigset_link(set, err);
}
