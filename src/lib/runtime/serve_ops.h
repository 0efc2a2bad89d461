/*
 * serve_ops.h — the world bringup.c reaches through its ops, for real: the
 * compose CLI starts a role (the first one; it creates the rest of the plan
 * without starting them), the Engine API starts the later ones and gives
 * state, restarts and the boot log, /health on the role's port says ready,
 * MemFree is the free memory. `lobes serve` and the verify questions that
 * reboot one role (verify/experiment.c) share it; what happens is told to
 * the caller's event callback, which prints or records it.
 */
#ifndef LOBES_SERVE_OPS_H
#define LOBES_SERVE_OPS_H

#include "bringup.h"
#include "compose_cli.h"
#include "engine_api.h"
#include "fleet.h"

struct serve_rt {
	struct fleet *fleet;                   /* borrowed */
	struct compose compose;
	struct engine engine;
	const char *services[ROLE__COUNT + 1]; /* the plan's roles, NULL-terminated */
	bool created;                          /* compose has created their containers */
	void (*event)(void *cls, const struct bringup_event *ev); /* may be NULL */
	void *event_cls;
};

/* Open compose and the Engine API for fleet f (and ping the engine); the
 * caller has set services, event and event_cls. -1 with err (closed). */
int serve_rt_open(struct serve_rt *s, struct fleet *f, struct err **err);
void serve_rt_close(struct serve_rt *s);
/* The ops for bringup_run, s as their data. */
struct bringup_ops serve_rt_ops(struct serve_rt *s);
/* `compose stop ROLE` (the rest of the fleet untouched), bounded. */
int serve_rt_stop_role(struct serve_rt *s, enum role_id r, struct err **err);

#endif
