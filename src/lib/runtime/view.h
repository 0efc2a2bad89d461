/*
 * view.h — one look at the running fleet, as `lobes top` shows it: per
 * role its container's state, whether /health answers, and what its engine's
 * own /metrics says (requests running and waiting, KV-cache usage, token
 * rates, MTP acceptance); and the box's memory, swap and I/O pressure.
 *
 * A look is cheap and bounded (every HTTP call has a timeout); rates need
 * the look before it (view_sample's prev). Which metric names a role is
 * read with follows its image: the image's recorded vLLM version
 * (data/images/ → data/vllm/<folder>/metrics.txt); an image lobes has not
 * recorded is asked GET /version and matched to a recorded version of the
 * same minor release; failing both, the newest recorded list is assumed
 * (and said so). The library never prints.
 */
#ifndef LOBES_VIEW_H
#define LOBES_VIEW_H

#include <stdbool.h>
#include <time.h>
#include <jansson.h>

#include "../knowledge/knowledge.h"
#include "engine_metrics.h"
#include "fleet.h"
#include "memory.h"

struct view_role {
	enum role_id role;
	bool feasible;
	int port;
	char *model;         /* from the deploy dir's .env */
	bool have_container;
	char *state;         /* the container's state; "not running" without one */
	char *health;        /* docker's verdict ("none" without a healthcheck) */
	char *image;
	char *container;     /* its id ("" without one) */
	int restart_count, exit_code;
	bool oom_killed;
	bool ready;          /* running and GET /health answered 200 */
	char *folder;        /* data/vllm/<folder> the metric names come from; NULL: none */
	char *names_from;    /* "image", "version X" or "assumed" */
	bool scraped;        /* /metrics was read */
	char *scrape_error;  /* why not, when running */
	struct engine_sample sample;
	struct engine_rates rates;
	char *why;           /* a role that is not ready: the cause its log names (NULL: none) */
};

struct view {
	struct view_role roles[ROLE__COUNT];
	size_t n;            /* feasible roles, in the fleet's bring-up order */
	bool engine_ok;
	char *engine_error;
	bool box_ok;
	char *box_error;
	struct box_sample box;
	double iowait_pct;   /* since the previous look (since boot for the first); -1 unknown */
	time_t at;
};

/* Why a role is not ready, from its container's log (the last lines of
 * it): a malloc'd one-line cause, or NULL when the log names none. */
typedef char *(*view_explain_fn)(const char *log, void *ud);

/* Look at fleet f now. prev (may be NULL) is the look before, for rates.
 * explain (may be NULL) is asked about each feasible role that is not
 * ready and has a container. Failures to reach the docker engine, the box's
 * /proc or an engine are recorded in v (engine_error, box_error,
 * scrape_error), not returned: a look always completes. Free with
 * view_free. */
void view_sample(struct view *v, const struct fleet *f, const struct knowledge *k,
		 const struct view *prev, long timeout_ms, view_explain_fn explain, void *ud);
void view_free(struct view *v);

/* The look as JSON: {at, roles: [...], box: {...}, docker: {...}}; a figure
 * vLLM did not report (or a rate not yet known) is null. */
json_t *view_json(const struct view *v);

#endif
