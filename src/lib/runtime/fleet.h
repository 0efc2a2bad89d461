/*
 * fleet.h — the deployed fleet as the deploy dir's .env describes it (the
 * deployed truth, operator edits included): profile, bring-up mode and
 * order, and per role whether it is feasible, its port, model and budget.
 * Also the two live looks serve needs: a role's boot-log phase and /health.
 */
#ifndef LOBES_FLEET_H
#define LOBES_FLEET_H

#include <stdbool.h>

#include "../knowledge/knowledge.h"
#include "../util/err.h"

struct fleet_role {
	bool feasible;
	int port;
	double util;
	char *model;
};

struct fleet {
	char *dir;
	char *profile, *card, *bringup, *project;
	enum role_id order[ROLE__COUNT];
	size_t n_order;
	struct fleet_role roles[ROLE__COUNT];
};

/* Read <dir>/.env. A missing .env is EXIT_CONFIG "no deployment in 'DIR':
 * run lobes init --apply". */
int fleet_load(struct fleet *f, const char *dir, struct err **err);
void fleet_free(struct fleet *f);

/* What a boot log says about start-up, from vLLM's progress lines. */
struct log_phase {
	const char *phase;  /* "starting", "loading weights", "profiling memory",
			     * "allocating KV cache", "warming up", "starting API server", "ready" */
	bool window_closed; /* the engine's memory-profiling window is over */
	bool startup_complete;
};
void log_phase_scan(const char *log, struct log_phase *p);

/* GET http://127.0.0.1:PORT/health; the HTTP status, 0 when nothing answered. */
int http_health(int port, int timeout_ms);

/* The URL at which a server bound to BIND:PORT is reached from this box:
 * a wildcard bind ("0.0.0.0", "", NULL) is asked on 127.0.0.1, "::" on
 * [::1], an IPv6 literal in brackets, anything else as it is. path starts
 * with '/'. Caller frees. */
char *http_url_for_bind(const char *bind, int port, const char *path);

/* http_health, asked where a server bound to BIND listens. */
int http_health_at(const char *bind, int port, int timeout_ms);

#endif
