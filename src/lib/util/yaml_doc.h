/*
 * yaml_doc.h — one YAML document out of a text, the way every lobes loader
 * reads one, and where a node of it stands.
 *
 * yaml_doc_parse() runs yaml_guard() first, then libfyaml with a diagnostic
 * object that collects its errors and prints nothing (libfyaml's own
 * printing never reaches the terminal); the first error becomes the
 * message, positioned "NAME:LINE:COLUMN" (1-based).
 */
#ifndef LOBES_YAML_DOC_H
#define LOBES_YAML_DOC_H

#include <libfyaml.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"

enum yaml_doc_flags {
	/* let duplicate keys through: the caller's own check names the key */
	YAML_DOC_DUPLICATE_KEYS = 1 << 0,
	/* a second document in the text is an error ("a second YAML
	 * document; expected one document per file", at its position) */
	YAML_DOC_ONLY_ONE = 1 << 1,
};

/* Parse the first document of text (len bytes; NULL reads as empty).
 * 0 with *out the document (the caller fy_document_destroy()s it), or
 * NULL when the text holds no document (empty, comments only). -1 with
 * *err: the guard's refusal, or EXIT_CONFIG "NAME:L:C: invalid YAML:
 * <libfyaml's message>; expected <expect>" ("L:C: ..." when name is NULL,
 * without "; expected ..." when expect is NULL), or EXIT_INTERNAL when
 * libfyaml cannot start. */
int yaml_doc_parse(const char *name, const char *text, size_t len, unsigned flags,
		   const char *expect, struct fy_document **out, struct err **err);

/* 1-based start of scalar n's token as libfyaml marks it (a quoted
 * scalar's after its opening quote); false when n is NULL, not a scalar or
 * carries no mark. */
bool yaml_scalar_mark(struct fy_node *n, int *line, int *col);
/* n when it is a scalar; else, recursively, the first key of a mapping or
 * the first item of a sequence; NULL for NULL or an empty collection. */
struct fy_node *yaml_first_scalar(struct fy_node *n);

/* 1-based line and column of node n as written (a quoted scalar at its
 * opening quote, an alias at its '*', a collection at its start); when n
 * gives none, fallback's; else 1:1. */
void yaml_node_pos(struct fy_node *n, struct fy_node *fallback, int *line, int *col);

#endif
