/*
 * render_int.h — the insides render/'s files share: what one role runs
 * (its vLLM argument list and environment) as data, so the compose render
 * and the Kubernetes render write the same flags in the same order from
 * one function (args.c) and differ only in how they spell them.
 */
#ifndef LOBES_RENDER_INT_H
#define LOBES_RENDER_INT_H

#include <libfyaml.h>
#include <stdbool.h>

#include "../knowledge/knowledge.h"
#include "../util/buf.h"
#include "render.h"

/* One `vllm serve` argument: prefix + value. key: the .env key the value
 * may be taken from at start (compose writes '${KEY:-value}'), NULL when
 * the value is written literally from the plan. */
struct role_arg {
	const char *prefix; /* static: "--max-model-len=", "" ... */
	char *key;          /* owned or NULL */
	char *value;        /* owned */
};

struct role_args {
	struct role_arg *v;
	size_t n;
};

/* The arguments of one feasible role, in the order compose has always
 * written them (model first, then names, host, port, budgets...). */
void role_args(const struct fleet_template *t, const struct role_plan *rp, struct role_args *out);
void role_args_free(struct role_args *a);

/* One environment variable of a role's engine. secret: the value is never
 * rendered (compose: from .env at start; Kubernetes: from a Secret). */
struct role_envvar {
	const char *name;
	const char *value; /* static or the template's; NULL for a secret */
	bool secret;
};

#define ROLE_ENV_MAX 4
/* The engine's environment; returns the count written to out. */
size_t role_env(const struct fleet_template *t, const struct role_plan *rp,
		struct role_envvar out[ROLE_ENV_MAX]);

/* The value a knob renders (empty when unset) and whether it renders a
 * flag (not empty and not its "no flag" word). */
const char *role_knob(const struct role_plan *rp, enum knob_id k);
bool role_knob_set(const struct role_plan *rp, enum knob_id k, const char *no_flag);

/* Append s as the inside of a YAML single-quoted scalar with `$` doubled:
 * compose and Kubernetes both read `$$` as a literal `$` (compose's
 * interpolation, the kubelet's $(VAR) expansion of command and args). */
void render_add_sq(struct buf *b, const char *s);

/* The scalar at path of a template document, copied; NULL with *err
 * ("FILE:L:C: 'path' missing or not a scalar") otherwise (template.c). */
char *template_scalar(struct fy_node *root, const char *path, const char *file, struct err **err);
/* The whole number at path, in lo..hi; -1 with "FILE:LINE:COL: 'PATH' is
 * 'V'; expected a whole number LO-HI" (EXIT_CONFIG) otherwise. */
int template_int(struct fy_node *root, const char *path, const char *file, long lo, long hi,
		 int *out, struct err **err);

/* A template document parsed strictly (a mapping at the top; errors
 * "FILE:L:C: ..."), its root in *root; NULL with *err otherwise. */
struct fy_document *template_doc(const char *name, const char *text, size_t len,
				 struct fy_node **root, struct err **err);
/* The embedded data file at path ("data/template/..."), or NULL with *err
 * (EXIT_INTERNAL). */
const struct embedded_file *template_embedded(const char *path, struct err **err);

/* The .env text of the compose render (compose.c): the Kubernetes render
 * hands the same text to each node's gateway. */
char *render_env_text(const struct plan *p, const struct fleet_template *t);

#endif
