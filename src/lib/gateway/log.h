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

/* Monotonic milliseconds: the times of the access lines, the timers of the
 * loops. */
double gw_now_ms(void);

#endif
