/*
 * log.c — the access/event log and the clock of the gateway (log.h): a JSON
 * object becomes one compact line handed to the command's callback under a
 * mutex, so lines of different worker loops never interleave.
 */
#include <stdlib.h>
#include <time.h>

#include "log.h"

void gw_log_init(struct gw_log *l, gw_log_fn fn, void *ud)
{
	l->fn = fn;
	l->ud = ud;
	pthread_mutex_init(&l->mu, NULL);
}

void gw_log_destroy(struct gw_log *l)
{
	pthread_mutex_destroy(&l->mu);
}

void gw_log_json(struct gw_log *l, json_t *obj)
{
	if (!obj)
		return;
	char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(obj);
	if (s && l->fn) {
		pthread_mutex_lock(&l->mu);
		l->fn(l->ud, s);
		pthread_mutex_unlock(&l->mu);
	}
	free(s);
}

double gw_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
