/*
 * yaml.c — the one YAML document reader of the gateway's files (settings,
 * aliases, peers): below both config.c and peers.c, which each read their
 * file through it, so neither calls the other for it. One document per
 * file: a second one is an error at its position, never silently dropped.
 * Also where a node is written and the positioned error of peers.yaml and
 * keys.yaml ("NAME:L:C: what; expected ..."), shared by both readers.
 */
#include <libfyaml.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../util/cleanup.h"
#include "../util/yaml_doc.h"
#include "../util/yaml_scalar.h"
#include "gateway.h"

/* A syntax error is "NAME:L:C: invalid YAML: ..." (gateway.h). */
struct fy_document *gw_yaml_parse(const char *text, size_t len, const char *name,
				  struct err **err)
{
	struct fy_document *d = NULL;
	if (yaml_doc_parse(name, text, len, YAML_DOC_ONLY_ONE, "a mapping", &d, err) < 0)
		return NULL;
	if (!d)
		err_set(err, EXIT_CONFIG, "%s:1:1: invalid YAML: parse error; expected a mapping", name);
	return d;
}

/* 1-based line and column where n is written: a scalar's token, else a
 * collection's first entry, else 1:1. */
void gw_yaml_mark(struct fy_node *n, int *line, int *col)
{
	struct fy_token *t = n && fy_node_is_scalar(n) ? fy_node_get_scalar_token(n) : NULL;
	const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
	if (!m && n && (fy_node_is_mapping(n) || fy_node_is_sequence(n))) {
		/* a collection: where its first entry is written */
		void *it = NULL;
		struct fy_node *first = NULL;
		if (fy_node_is_mapping(n)) {
			struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
			first = p ? fy_node_pair_key(p) : NULL;
		} else {
			first = fy_node_sequence_iterate(n, &it);
		}
		if (first) {
			gw_yaml_mark(first, line, col);
			return;
		}
	}
	*line = m ? m->line + 1 : 1;
	*col = m ? m->column + 1 : 1;
}

int gw_yaml_err(const char *name, struct fy_node *n, struct err **err, const char *fmt, ...)
{
	int line, col;
	gw_yaml_mark(n, &line, &col);
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *m = NULL;
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	return err_set(err, EXIT_CONFIG, "%s:%d:%d: %s", name, line, col, m ? m : "invalid");
}

const char *gw_yaml_scalar(struct fy_node *n)
{
	return n && fy_node_is_scalar(n) ? yaml_scalar0(n, NULL) : NULL;
}
