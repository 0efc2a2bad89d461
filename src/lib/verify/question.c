/*
 * question.c — load recorded questions strictly (libfyaml) and route
 * observations through them; see question.h.
 */
#include <dirent.h>
#include <libfyaml.h>
#include <string.h>

#include "../knowledge/knowledge.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/yaml_doc.h"
#include "../util/yaml_scalar.h"
#include "question.h"

struct qp {
	const char *file;
	struct err **err;
};

static int qerr(struct qp *c, struct fy_node *n, const char *fmt, const char *a, const char *b)
{
	int line = 1, col = 1;
	yaml_scalar_mark(yaml_first_scalar(n), &line, &col);
	_cleanup_free_ char *m = xasprintf(fmt, a ? a : "", b ? b : "");
	return err_set(c->err, EXIT_CONFIG, "%s:%d:%d: %s", c->file, line, col, m);
}

static char *scalar(struct fy_node *n)
{
	size_t len;
	const char *s = yaml_scalar0(n, &len);
	return xasprintf("%.*s", (int)len, s ? s : "");
}

/* Check every key of mapping m is in allowed; returns -1 on an unknown one. */
static int keys_ok(struct qp *c, struct fy_node *m, const char *where, const char *const *allowed)
{
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(m, &it))) {
		struct fy_node *k = fy_node_pair_key(p);
		_cleanup_free_ char *ks = fy_node_is_scalar(k) ? scalar(k) : xstrdup("?");
		bool hit = false;
		for (const char *const *a = allowed; *a; a++)
			hit = hit || strcmp(*a, ks) == 0;
		if (!hit)
			return qerr(c, k, "unknown key '%s' in %s; expected one of the documented keys", ks,
				    where);
	}
	return 0;
}

static int req_str(struct qp *c, struct fy_node *m, const char *key, const char *where, char **out)
{
	struct fy_node *v = fy_node_mapping_lookup_by_string(m, key, FY_NT);
	if (!v || !fy_node_is_scalar(v)) {
		_cleanup_free_ char *k = xasprintf("'%s'", key);
		return qerr(c, v ? v : m, "missing or non-scalar %s in %s; expected a string", k, where);
	}
	*out = scalar(v);
	if (!**out)
		return qerr(c, v, "empty %s in %s; expected a string", key, where);
	return 0;
}

static void question_free(struct question *q)
{
	free(q->id);
	free(q->title);
	free(q->role);
	free(q->undecided);
	free(q->file);
	free(q->experiment);
	for (size_t i = 0; i < q->n_evidence; i++) {
		free(q->evidence[i].kind);
		free(q->evidence[i].observation);
		free(q->evidence[i].date);
		free(q->evidence[i].ref);
	}
	free(q->evidence);
	for (size_t i = 0; i < q->n_routes; i++) {
		struct q_route *r = &q->routes[i];
		free(r->id);
		free(r->answer);
		free(r->action);
		for (size_t j = 0; j < r->n_when; j++) {
			free(r->when[j].obs);
			free(r->when[j].op);
			strv_free(r->when[j].values);
		}
		free(r->when);
	}
	free(q->routes);
	memset(q, 0, sizeof(*q));
}

/* The optional `evidence:` list: entries {kind: measured|declared,
 * observation, date?, ref?}. */
static int parse_evidence(struct qp *c, struct fy_node *root, struct question *q)
{
	static const char *const ekeys[] = { "kind", "observation", "date", "ref", NULL };
	struct fy_node *en = fy_node_mapping_lookup_by_string(root, "evidence", FY_NT);
	if (!en)
		return 0;
	if (!fy_node_is_sequence(en) || fy_node_sequence_item_count(en) < 1)
		return qerr(c, en, "'evidence' is not a list of entries%s%s; expected [{kind: measured|declared, "
			    "observation: ...}]", NULL, NULL);
	q->evidence = xcalloc((size_t)fy_node_sequence_item_count(en), sizeof(*q->evidence));
	void *it = NULL;
	struct fy_node *n;
	while ((n = fy_node_sequence_iterate(en, &it))) {
		struct q_evidence *ev = &q->evidence[q->n_evidence++];
		if (!fy_node_is_mapping(n))
			return qerr(c, n, "an evidence entry is not a mapping%s%s; expected {kind, observation}",
				    NULL, NULL);
		if (keys_ok(c, n, "an evidence entry", ekeys) < 0 ||
		    req_str(c, n, "kind", "an evidence entry", &ev->kind) < 0)
			return -1;
		if (strcmp(ev->kind, "measured") != 0 && strcmp(ev->kind, "declared") != 0)
			return qerr(c, fy_node_mapping_lookup_by_string(n, "kind", FY_NT),
				    "evidence kind '%s' is not known%s; expected measured or declared", ev->kind, NULL);
		if (req_str(c, n, "observation", "an evidence entry", &ev->observation) < 0)
			return -1;
		struct fy_node *d = fy_node_mapping_lookup_by_string(n, "date", FY_NT);
		struct fy_node *r = fy_node_mapping_lookup_by_string(n, "ref", FY_NT);
		if ((d && req_str(c, n, "date", "an evidence entry", &ev->date) < 0) ||
		    (r && req_str(c, n, "ref", "an evidence entry", &ev->ref) < 0))
			return -1;
	}
	return 0;
}

const char *question_thresholds(const struct question *q)
{
	for (size_t i = 0; i < q->n_evidence; i++)
		if (!strcmp(q->evidence[i].kind, "declared"))
			return "declared";
	return q->n_evidence ? "measured" : NULL;
}

json_t *question_evidence_json(const struct question *q)
{
	json_t *a = json_array();
	for (size_t i = 0; i < q->n_evidence; i++) {
		const struct q_evidence *ev = &q->evidence[i];
		json_array_append_new(a, json_pack("{s:s, s:s, s:s*, s:s*}", "kind", ev->kind, "observation",
						   ev->observation, "date", ev->date, "ref", ev->ref));
	}
	return a;
}

static bool num_op(const char *op)
{
	return !strcmp(op, "lt") || !strcmp(op, "le") || !strcmp(op, "gt") || !strcmp(op, "ge");
}

static int parse_cond(struct qp *c, struct fy_node *n, struct q_cond *out)
{
	static const char *const keys[] = { "obs", "eq", "ne", "in", "lt", "le", "gt", "ge", NULL };
	if (!fy_node_is_mapping(n))
		return qerr(c, n, "a condition is not a mapping%s%s; expected {obs: NAME, "
			    "eq|ne|in|lt|le|gt|ge: VALUE}", NULL, NULL);
	if (keys_ok(c, n, "a condition", keys) < 0 || req_str(c, n, "obs", "a condition", &out->obs) < 0)
		return -1;
	int ops = 0;
	for (const char *const *op = keys + 1; *op; op++)
		ops += fy_node_mapping_lookup_by_string(n, *op, FY_NT) != NULL;
	if (ops != 1)
		return qerr(c, n, "condition on '%s' has %s; expected exactly one of eq, ne, in, lt, le, gt, "
			    "ge", out->obs,
			    ops ? "several operators" : "no operator");
	for (const char *const *op = keys + 1; *op; op++) {
		struct fy_node *v = fy_node_mapping_lookup_by_string(n, *op, FY_NT);
		if (!v)
			continue;
		out->op = xstrdup(*op);
		size_t cnt = strcmp(*op, "in") == 0 && fy_node_is_sequence(v) ? (size_t)fy_node_sequence_item_count(v) : 1;
		if (strcmp(*op, "in") == 0 && !fy_node_is_sequence(v))
			return qerr(c, v, "'in' of '%s' is not a list%s; expected [VALUE, ...]", out->obs, NULL);
		if (strcmp(*op, "in") != 0 && !fy_node_is_scalar(v))
			return qerr(c, v, "'%s' of '%s' is not a scalar; expected a value", *op, out->obs);
		out->values = xcalloc(cnt + 1, sizeof(char *));
		double num;
		if (fy_node_is_scalar(v)) {
			out->values[0] = scalar(v);
			if (num_op(*op) && !str_to_double(out->values[0], &num))
				return qerr(c, v, "'%s' of '%s' is not a number; expected a number",
					    *op, out->obs);
		} else {
			void *it = NULL;
			struct fy_node *x;
			size_t i = 0;
			while ((x = fy_node_sequence_iterate(v, &it))) {
				if (!fy_node_is_scalar(x))
					return qerr(c, x, "an 'in' value of '%s' is not a scalar%s; expected a value",
						    out->obs, NULL);
				out->values[i++] = scalar(x);
			}
		}
	}
	return 0;
}

int question_add_yaml(struct question_set *s, const char *file, const char *text, size_t len,
		      struct err **err)
{
	struct qp c = { file, err };
	struct fy_document *fyd = NULL;
	if (yaml_doc_parse(file, text, len, 0, "a question document", &fyd, err) < 0)
		return -1;
	if (!fyd)
		return err_set(err, EXIT_CONFIG, "%s:1:1: not valid YAML; expected a question document", file);
	struct question q = { 0 };
	int rc = -1;
	struct fy_node *root = fy_document_root(fyd);
	static const char *const keys[] = { "kind", "id", "title", "role", "probe", "routes",
					    "undecided", "experiment", "evidence", NULL };
	static const char *const rkeys[] = { "id", "when", "answer", "action", NULL };
	if (!root || !fy_node_is_mapping(root)) {
		qerr(&c, root, "the document is not a mapping%s%s; expected a question", NULL, NULL);
		goto out;
	}
	char *kind = NULL;
	if (keys_ok(&c, root, "a question", keys) < 0 || req_str(&c, root, "kind", "a question", &kind) < 0) {
		free(kind);
		goto out;
	}
	if (strcmp(kind, "question") != 0) {
		qerr(&c, fy_node_mapping_lookup_by_string(root, "kind", FY_NT),
		     "kind '%s'%s; expected question", kind, NULL);
		free(kind);
		goto out;
	}
	free(kind);
	if (req_str(&c, root, "id", "a question", &q.id) < 0 ||
	    req_str(&c, root, "title", "a question", &q.title) < 0 ||
	    req_str(&c, root, "role", "a question", &q.role) < 0 ||
	    req_str(&c, root, "undecided", "a question", &q.undecided) < 0)
		goto out;
	if (parse_evidence(&c, root, &q) < 0)
		goto out;
	struct fy_node *xn = fy_node_mapping_lookup_by_string(root, "experiment", FY_NT);
	if (xn) {
		q.experiment = fy_node_is_scalar(xn) ? scalar(xn) : xstrdup("");
		if (strcmp(q.experiment, "kv-cache-dtype") != 0 &&
		    strcmp(q.experiment, "speculative-config") != 0) {
			qerr(&c, xn, "experiment '%s' is not known%s; expected kv-cache-dtype or "
			     "speculative-config", q.experiment, NULL);
			goto out;
		}
	}
	struct fy_node *pn = fy_node_mapping_lookup_by_string(root, "probe", FY_NT);
	if (pn) {
		_cleanup_free_ char *pv = fy_node_is_scalar(pn) ? scalar(pn) : xstrdup("");
		if (strcmp(pv, "true") != 0 && strcmp(pv, "false") != 0) {
			qerr(&c, pn, "probe '%s' is not a boolean%s; expected true or false", pv, NULL);
			goto out;
		}
		q.probe = strcmp(pv, "true") == 0;
	}
	struct fy_node *routes = fy_node_mapping_lookup_by_string(root, "routes", FY_NT);
	if (!routes || !fy_node_is_sequence(routes) || fy_node_sequence_item_count(routes) < 1) {
		qerr(&c, routes ? fy_node_mapping_lookup_key_by_string(root, "routes", FY_NT) : root, "'routes' is missing or empty%s%s; expected a list of routes",
		     NULL, NULL);
		goto out;
	}
	q.routes = xcalloc((size_t)fy_node_sequence_item_count(routes), sizeof(*q.routes));
	void *it = NULL;
	struct fy_node *rn;
	while ((rn = fy_node_sequence_iterate(routes, &it))) {
		struct q_route *r = &q.routes[q.n_routes++];
		if (!fy_node_is_mapping(rn)) {
			qerr(&c, rn, "a route is not a mapping%s%s; expected {id, when, answer, action}", NULL, NULL);
			goto out;
		}
		if (keys_ok(&c, rn, "a route", rkeys) < 0 || req_str(&c, rn, "id", "a route", &r->id) < 0 ||
		    req_str(&c, rn, "answer", "a route", &r->answer) < 0 ||
		    req_str(&c, rn, "action", "a route", &r->action) < 0)
			goto out;
		struct fy_node *w = fy_node_mapping_lookup_by_string(rn, "when", FY_NT);
		if (!w || !fy_node_is_sequence(w) || fy_node_sequence_item_count(w) < 1) {
			qerr(&c, w ? fy_node_mapping_lookup_key_by_string(rn, "when", FY_NT) : rn, "route '%s' has no conditions%s; expected a 'when' list", r->id, NULL);
			goto out;
		}
		r->when = xcalloc((size_t)fy_node_sequence_item_count(w), sizeof(*r->when));
		void *wit = NULL;
		struct fy_node *cn;
		while ((cn = fy_node_sequence_iterate(w, &wit)))
			if (parse_cond(&c, cn, &r->when[r->n_when++]) < 0)
				goto out;
	}
	q.file = xstrdup(file);
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->q[i].id, q.id) == 0) {
			question_free(&s->q[i]);
			s->q[i] = q;
			memset(&q, 0, sizeof(q));
			rc = 0;
			goto out;
		}
	s->q = xrealloc(s->q, (s->n + 1) * sizeof(*s->q));
	s->q[s->n++] = q;
	memset(&q, 0, sizeof(q));
	rc = 0;
out:
	question_free(&q);
	fy_document_destroy(fyd);
	return rc;
}

int questions_load(struct question_set *s, const char *operator_dir, struct err **err)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < embedded_files_count; i++) {
		const struct embedded_file *f = &embedded_files[i];
		if (!str_starts_with(f->path, "data/questions/"))
			continue;
		if (question_add_yaml(s, f->path, f->data, f->len, err) < 0) {
			questions_free(s);
			return -1;
		}
	}
	if (!operator_dir)
		return 0;
	_cleanup_free_ char *qd = xasprintf("%s/questions", operator_dir);
	_cleanup_closedir_ DIR *d = opendir(qd);
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".yaml") != 0)
			continue;
		_cleanup_free_ char *p = xasprintf("%s/%s", qd, de->d_name);
		size_t len;
		_cleanup_free_ char *text = fs_read(p, 1 << 20, &len, err);
		if (!text || question_add_yaml(s, p, text, len, err) < 0) {
			questions_free(s);
			return -1;
		}
	}
	return 0;
}

const struct question *question_find(const struct question_set *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->q[i].id, id) == 0)
			return &s->q[i];
	return NULL;
}

void questions_free(struct question_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		question_free(&s->q[i]);
	free(s->q);
	memset(s, 0, sizeof(*s));
}

void obs_put(struct obs_set *o, const char *key, const char *value)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0) {
			free(o->values[i]);
			o->values[i] = value ? xstrdup(value) : NULL;
			return;
		}
	o->keys = xrealloc(o->keys, (o->n + 1) * sizeof(char *));
	o->values = xrealloc(o->values, (o->n + 1) * sizeof(char *));
	o->keys[o->n] = xstrdup(key);
	o->values[o->n++] = value ? xstrdup(value) : NULL;
}

const char *obs_get(const struct obs_set *o, const char *key, bool *known)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0) {
			*known = o->values[i] != NULL;
			return o->values[i];
		}
	*known = false;
	return NULL;
}

void obs_free(struct obs_set *o)
{
	for (size_t i = 0; i < o->n; i++) {
		free(o->keys[i]);
		free(o->values[i]);
	}
	free(o->keys);
	free(o->values);
	memset(o, 0, sizeof(*o));
}

/* 1 holds, 0 does not, -1 unknown (not observed, or not a number for a
 * numeric comparison). */
static int cond_eval(const struct q_cond *c, const struct obs_set *o, struct buf *d)
{
	bool known;
	const char *v = obs_get(o, c->obs, &known);
	int r;
	if (!known) {
		r = -1;
	} else if (num_op(c->op)) {
		double x, y;
		if (!str_to_double(v, &x) || !str_to_double(c->values[0], &y))
			r = -1; /* not a number: cannot be compared */
		else
			r = !strcmp(c->op, "lt") ? x < y : !strcmp(c->op, "le") ? x <= y
			  : !strcmp(c->op, "gt") ? x > y : x >= y;
	} else {
		bool hit = false;
		for (char **x = c->values; x && *x; x++)
			hit = hit || strcmp(*x, v) == 0;
		r = strcmp(c->op, "ne") == 0 ? !hit : hit;
	}
	buf_printf(d, "  %s = %s%s%s (%s", c->obs, known ? "\"" : "", known ? v : "unknown",
		   known ? "\"" : "", c->op);
	for (char **x = c->values; x && *x; x++)
		buf_printf(d, " \"%s\"", *x);
	buf_printf(d, "): %s\n", r == 1 ? "holds" : r == 0 ? "does not hold" : "unknown");
	return r;
}

const struct q_route *question_route(const struct question *q, const struct obs_set *o,
				     char **detail)
{
	_cleanup_buf_ struct buf all;
	buf_init(&all, 0);
	const struct q_route *chosen = NULL;
	for (size_t i = 0; i < q->n_routes && !chosen; i++) {
		const struct q_route *r = &q->routes[i];
		_cleanup_buf_ struct buf d;
		buf_init(&d, 0);
		bool holds = true;
		for (size_t j = 0; j < r->n_when; j++)
			if (cond_eval(&r->when[j], o, &d) != 1)
				holds = false;
		buf_printf(&all, "route %s: %s\n%s", r->id, holds ? "taken" : "not taken", buf_str(&d));
		if (holds)
			chosen = r;
	}
	*detail = buf_take(&all);
	return chosen;
}
