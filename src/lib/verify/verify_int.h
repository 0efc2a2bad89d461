/*
 * verify_int.h — what the experiments of verify/ share and nobody else
 * includes: one boot of the role through bring-up's memory gate, its
 * container's args, and the speculative-config experiment (experiment_spec.c)
 * beside the kv-cache-dtype one (experiment.c).
 */
#ifndef LOBES_VERIFY_INT_H
#define LOBES_VERIFY_INT_H

#include <jansson.h>
#include <stdint.h>

#include "../runtime/runtime.h"
#include "../util/buf.h"
#include "evidence.h"

/* One experiment on one role. */
struct xp {
	struct serve_rt s;
	enum role_id r;
	uint64_t budget;               /* the role's memory budget at the gate */
	const struct verify_opts *o;
};

/* Stop the role and bring it up alone through the memory gate; what: the
 * setting, for the error. *ready_ms: how long it took. */
int xp_boot(struct xp *x, const char *what, long long *ready_ms, struct err **err);
/* The role's container's args now (strv, caller frees), or NULL with err. */
char **xp_args(struct xp *x, struct err **err);
/* The value of --flag=V or --flag V in args, or NULL. */
const char *xp_flag(char *const *args, const char *flag);

/* The speculative-config experiment (experiment_spec.c); mine: the
 * operator's effective value ("none" or the JSON). */
int xp_spec(struct xp *x, const char *mine, json_t *rec, struct obs_set *obs, struct err **err);
/* Its part of a record's text form. */
void xp_spec_text(struct buf *b, const json_t *experiment);

#endif
