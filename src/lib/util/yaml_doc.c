/*
 * yaml_doc.c — the one guarded, quiet libfyaml parse and node positions;
 * see yaml_doc.h.
 *
 * libfyaml's diagnostics go to an output function that drops them while
 * the diagnostic object keeps them as a list; the parse then reads that
 * list. The same collecting object gives a collection node its start mark,
 * which libfyaml exposes no other way; a scalar's comes from its token.
 */
#include <stdbool.h>

#include "yaml_doc.h"
#include "yaml_guard.h"

static void diag_discard(struct fy_diag *d, void *user, const char *buf, size_t len)
{
	(void)d;
	(void)user;
	(void)buf;
	(void)len;
}

/* A diagnostic object that collects errors and prints nothing. */
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

bool yaml_scalar_mark(struct fy_node *n, int *line, int *col)
{
	struct fy_token *t = n && fy_node_is_scalar(n) ? fy_node_get_scalar_token(n) : NULL;
	const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
	if (!m)
		return false;
	*line = m->line + 1;
	*col = m->column + 1;
	return true;
}

struct fy_node *yaml_first_scalar(struct fy_node *n)
{
	while (n && !fy_node_is_scalar(n)) {
		void *it = NULL;
		if (fy_node_is_mapping(n)) {
			struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
			n = p ? fy_node_pair_key(p) : NULL;
		} else {
			n = fy_node_sequence_iterate(n, &it);
		}
	}
	return n;
}

static bool mark_of(struct fy_node *n, int *line, int *col)
{
	if (!n)
		return false;
	if (fy_node_is_scalar(n)) {
		if (!yaml_scalar_mark(n, line, col))
			return false;
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

void yaml_node_pos(struct fy_node *n, struct fy_node *fallback, int *line, int *col)
{
	if (mark_of(n, line, col) || mark_of(fallback, line, col))
		return;
	*line = 1;
	*col = 1;
}

/* The first collected error as "NAME:L:C: invalid YAML: msg; expected ...". */
static int syntax_error(const char *name, const char *expect, struct fy_diag *d, struct err **err)
{
	void *it = NULL;
	struct fy_diag_error *e;
	while ((e = fy_diag_errors_iterate(d, &it)))
		if (e->type >= FYET_ERROR)
			return err_set(err, EXIT_CONFIG, "%s%s%d:%d: invalid YAML: %s%s%s",
				       name ? name : "", name ? ":" : "", e->line > 0 ? e->line : 1,
				       e->column > 0 ? e->column : 1, e->msg ? e->msg : "parse error",
				       expect ? "; expected " : "", expect ? expect : "");
	return 0;
}

int yaml_doc_parse(const char *name, const char *text, size_t len, unsigned flags,
		   const char *expect, struct fy_document **out, struct err **err)
{
	*out = NULL;
	if (!text)
		len = 0;
	if (yaml_guard(name, text, len, err) < 0)
		return -1;
	const char *who = name ? name : "YAML";
	struct fy_diag *d = quiet_diag();
	if (!d)
		return err_set(err, EXIT_INTERNAL, "%s: cannot create a YAML diagnostic object", who);
	struct fy_parse_cfg cfg = {
		.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG |
			 ((flags & YAML_DOC_DUPLICATE_KEYS) ? FYPCF_ALLOW_DUPLICATE_KEYS : 0),
		.diag = d,
	};
	int rc = -1;
	struct fy_document *doc = NULL;
	struct fy_parser *fyp = fy_parser_create(&cfg);
	if (!fyp) {
		err_set(err, EXIT_INTERNAL, "%s: cannot create a YAML parser", who);
		goto out;
	}
	if (fy_parser_set_string(fyp, text ? text : "", len) != 0) {
		err_set(err, EXIT_INTERNAL, "%s: cannot read the YAML text", who);
		goto out;
	}
	doc = fy_parse_load_document(fyp);
	if (doc && (flags & YAML_DOC_ONLY_ONE)) {
		struct fy_document *doc2 = fy_parse_load_document(fyp);
		if (doc2) {
			int line, col;
			yaml_node_pos(fy_document_root(doc2), NULL, &line, &col);
			fy_parse_document_destroy(fyp, doc2);
			err_set(err, EXIT_CONFIG,
				"%s%s%d:%d: a second YAML document; expected one document per file",
				name ? name : "", name ? ":" : "", line, col);
			goto out;
		}
	}
	if (syntax_error(name, expect, d, err) < 0)
		goto out;
	*out = doc;
	doc = NULL;
	rc = 0;
out:
	if (doc)
		fy_document_destroy(doc);
	if (fyp)
		fy_parser_destroy(fyp);
	fy_diag_destroy(d);
	return rc;
}
