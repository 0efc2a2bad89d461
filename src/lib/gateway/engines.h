/*
 * engines.h — the engines' own figures for /status (engines.c): a thread
 * that scrapes each local role's engine /metrics every ENGINE_POLL_MS
 * through the runtime's scraper (runtime/engine_metrics.c) with the metric
 * names of the role's image (.env <ROLE>_IMAGE -> data/images/ -> data/
 * vllm/<folder>/metrics.txt), and keeps the last two samples per role for
 * rates. Internal to the gateway: the layer beside the peers' poll
 * (proxy.c), below the HTTP front.
 */
#ifndef LOBES_GATEWAY_ENGINES_H
#define LOBES_GATEWAY_ENGINES_H

#include "config_int.h"

#define ENGINE_POLL_MS 2000

struct engine_poll;

/* What /status shows of one engine. */
struct engine_view {
	bool have;         /* a scrape succeeded since the role was last down */
	double running, waiting, kv_usage;          /* NaN: not in the scrape */
	double prompt_tps, generation_tps, accept;  /* NaN until two scrapes */
	char folder[32];   /* data/vllm/<folder>/ the names came from */
	char error[160];   /* why there are no figures ("" when have) */
};

/* Start the thread (reads the settings from live). NULL with *err when it
 * cannot start. */
struct engine_poll *engine_poll_start(struct gw_live *live, struct err **err);
/* A copy of role r's view. */
void engine_poll_view(struct engine_poll *p, int r, struct engine_view *out);
/* Stop the thread and free p (NULL: nothing). */
void engine_poll_stop(struct engine_poll *p);

#endif
