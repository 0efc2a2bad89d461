/*
 * log.h — the gateway's access and event log, and its clock (log.c).
 * Internal to the gateway; the second layer from the bottom (above the
 * settings, below the worker loops): every layer above writes its lines
 * here, and the library never prints — each line goes to the callback the
 * command gave gateway_start, as one JSON text, one caller at a time.
 */
#ifndef LOBES_GATEWAY_LOG_H
#define LOBES_GATEWAY_LOG_H

#include <pthread.h>

#include "gateway.h"

struct gw_log {
	gw_log_fn fn; /* NULL: lines are dropped */
	void *ud;
	pthread_mutex_t mu;
};

void gw_log_init(struct gw_log *l, gw_log_fn fn, void *ud);
void gw_log_destroy(struct gw_log *l);
/* Emit one JSON line through the callback (obj is stolen; NULL is ignored). */
void gw_log_json(struct gw_log *l, json_t *obj);

/* One access line (server.c writes one per request). A NULL string is
 * written as "" (the role of an unrouted request); upstream_ms < 0 is
 * null; alias false, key NULL, served_by, failed_over and trace_id NULL
 * leave their keys out. */
struct gw_access {
	const char *id, *method, *path, *role, *outcome, *trace_id;
	const char *key; /* the API key's name; NULL leaves it out */
	const char *served_by;   /* a relayed request: who answered (failover.c) */
	const char *failed_over; /* the targets that failed before it, and why */
	int status;
	long long bytes;
	double upstream_ms, total_ms;
	bool alias;
};
/* The line as text, byte for byte what json_dumps(JSON_COMPACT |
 * JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) makes of the same object
 * (keys id, method, path, role, status, bytes, outcome, upstream_ms,
 * total_ms[, alias][, key][, served_by][, failed_over][, trace_id]), without building it: the line is written
 * for every request, and building and dumping the object was a tenth of
 * the gateway's instructions per relayed request. A string that is not
 * valid UTF-8 has those bytes as '?' (jansson refused the whole line). */
char *gw_access_format(const struct gw_access *a);
/* Emit one line of text through the callback (not taken). */
void gw_log_text(struct gw_log *l, const char *line);

/* Monotonic milliseconds: the times of the access lines, the timers of the
 * loops. */
double gw_now_ms(void);

#endif
