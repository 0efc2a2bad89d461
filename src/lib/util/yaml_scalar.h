/*
 * yaml_scalar.h — the text of a YAML scalar without libfyaml's text cache.
 *
 * fy_node_get_scalar()/fy_node_get_scalar0() format the text of a quoted
 * scalar through an atom iterator whose grown chunk array the Debian
 * libfyaml (0.7.12) never frees: a single-quoted scalar with runs of ''
 * escapes leaks on every read (found by `make fuzz`, see docs/fuzzing.md).
 * yaml_scalar0() reads the same text through the public token iterator,
 * which frees what it allocates, and keeps the copy as the node's meta
 * data: it is freed with the document, so callers use it exactly like
 * fy_node_get_scalar0() (borrowed, valid while the document lives).
 */
#ifndef LOBES_YAML_SCALAR_H
#define LOBES_YAML_SCALAR_H

#include <libfyaml.h>
#include <stddef.h>

/* The text of scalar node n (NUL-terminated; *len, when len is non-NULL,
 * gets its length), or NULL when n is NULL or not a scalar. Owned by n's
 * document. Every lobes loader reads scalars through this, never through
 * fy_node_get_scalar*(). */
const char *yaml_scalar0(struct fy_node *n, size_t *len);

#endif
