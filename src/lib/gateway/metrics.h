/*
 * metrics.h — what the gateway counts (metrics.c) and how it is shown in
 * the Prometheus text format (metrics_expo.c). Internal to the gateway: a
 * layer just above the log, so the relay (the usage scan) and the HTTP
 * front (the observations, observe.c) both call down to it.
 *
 * Every counter is a plain integer changed with relaxed atomics: a request
 * costs a handful of atomic adds when it ends, no lock, no allocation. The
 * counters live in one fixed table indexed by role (the five roles and
 * "none") and route (the route table's endpoints and "other"), so the
 * series are bounded by the table whatever clients send: no model id, key
 * or path a client chose ever becomes a label. Status codes are counted
 * per code (100-599, anything else as 0 = "other").
 */
#ifndef LOBES_GATEWAY_METRICS_H
#define LOBES_GATEWAY_METRICS_H

#include <stdbool.h>
#include <pthread.h>
#include <stddef.h>

#include "gateway.h"

#define GW_M_ROLES (ROLE__COUNT + 1) /* the last: "none" (no role decided) */
#define GW_M_NONE ROLE__COUNT
#define GW_M_ROUTES GW_EP__COUNT     /* GW_EP_NONE: "other" */
#define GW_M_BUCKETS 16              /* 5 ms .. 10 min, and +Inf after them */
#define GW_M_CODES 500               /* 100..599 */

/* 429s by why: the role's in-flight cap, the box's pressure (alias
 * requests shed), anything else (an engine's or a peer's own 429). */
enum gw_throttle { GW_THR_CONCURRENCY, GW_THR_PRESSURE, GW_THR_RATE, GW_THR_KEY, GW_THR__COUNT };
/* An engine (or peer) that failed the relay: no connection, silent past the
 * read timeout, or broke off. */
enum gw_uperr { GW_UPERR_CONNECT, GW_UPERR_TIMEOUT, GW_UPERR_READ, GW_UPERR__COUNT };

struct gw_hist {
	unsigned long long n[GW_M_BUCKETS + 1]; /* per bucket, not cumulative */
	unsigned long long sum_us;
};

/* One role on one route. */
struct gw_mcell {
	unsigned long long seen; /* requests ended here: the cell is shown once > 0 */
	unsigned long long codes[GW_M_CODES + 1]; /* [0]: outside 100-599 */
	struct gw_hist dur, ttfb;
	long long inflight; /* relays running */
	unsigned long long req_bytes, resp_bytes, prompt_tokens, completion_tokens;
	unsigned long long stream_cancels;
	unsigned long long throttled[GW_THR__COUNT];
	unsigned long long upstream_err[GW_UPERR__COUNT];
	unsigned long long own[32]; /* the gateway's own error answers, by gw_metrics_own_codes[] */
};

/* Recent totals, for the rates /status shows: one sample a second at most,
 * taken when /status is read (metrics.c: gw_metrics_rates). */
#define GW_RATE_SLOTS 32
enum { GW_RATE_REQ, GW_RATE_PROMPT, GW_RATE_COMPLETION, GW_RATE__COUNT };
struct gw_rate_ring {
	pthread_mutex_t mu;
	int n, head;
	double t[GW_RATE_SLOTS];
	unsigned long long v[GW_RATE_SLOTS][GW_M_ROLES + 1][GW_RATE__COUNT]; /* [GW_M_ROLES]: all */
};

struct gw_metrics {
	struct gw_mcell cell[GW_M_ROLES][GW_M_ROUTES];
	char version[32];             /* the build's version (gateway_set_version) */
	double start_s;               /* wall clock, seconds since the epoch */
	unsigned long long reloads;   /* settings swapped in by a reload */
	unsigned long long done_total; /* every request ended (the gateway's req/s) */
	struct gw_rate_ring ring;
};

/* The codes of the answers the gateway gives itself (OpenAI's error.code),
 * NULL-terminated; the index is the one of gw_mcell.own. */
extern const char *const gw_metrics_own_codes[];
/* The index of code in gw_metrics_own_codes, -1 when it is not one. */
int gw_metrics_own_index(const char *code);
/* The label of a route: its path in the route table, "other" for GW_EP_NONE. */
const char *gw_metrics_route_label(enum gw_endpoint ep);
/* The label of a role index (0..GW_M_ROLES-1): the role's name or "none". */
const char *gw_metrics_role_label(int role);

/* What one ended request was, filled by the HTTP front (observe.c). */
struct gw_obs {
	int role; /* -1: none */
	enum gw_endpoint ep;
	int status;
	double total_ms, ttfb_ms; /* ttfb < 0: none sent */
	unsigned long long req_bytes, resp_bytes;
	long long prompt_tokens, completion_tokens;
	int own;      /* index in gw_metrics_own_codes, -1: not the gateway's own answer */
	int throttle; /* enum gw_throttle, -1: not a 429 */
	int uperr;    /* enum gw_uperr, -1: none */
	bool stream_cancel;
	bool relayed; /* it ran a relay (counted in inflight) */
};

struct gw_metrics *gw_metrics_new(void);
void gw_metrics_free(struct gw_metrics *m);
/* A relay starts / a request ends (hot path: atomics only). */
void gw_metrics_relay_begin(struct gw_metrics *m, int role, enum gw_endpoint ep);
void gw_metrics_record(struct gw_metrics *m, const struct gw_obs *o);
void gw_metrics_reloaded(struct gw_metrics *m);
/* Per second, per role ([GW_M_ROLES]: the whole gateway): requests ended,
 * prompt and completion tokens, over the last GW_RATE_WINDOW_S seconds
 * (from the oldest sample in it at least a second old to now; now_s
 * monotonic), or since the newest older sample when none is in it. NaN
 * until a sample a second old exists. Records a sample now (one a second
 * at most). */
#define GW_RATE_WINDOW_S 10.0
void gw_metrics_rates(struct gw_metrics *m, double now_s, double out[GW_M_ROLES + 1][GW_RATE__COUNT]);

/* ---- the usage scan: prompt and completion tokens of what the engine
 * sent, read from the `usage` object of its JSON answer or of the SSE
 * frames of a stream (the last one seen counts: with continuous usage each
 * frame carries the running total). The bytes are searched for the key
 * "usage"; its value is decoded by jansson, across chunk boundaries, from at
 * most GW_USAGE_MAX bytes. ---- */
#define GW_USAGE_MAX 1024
struct gw_usage {
	char tail[8];   /* the last bytes of the previous chunk (a key split in two) */
	size_t ntail;
	char *cap;      /* bytes after the key, while its value is incomplete */
	size_t ncap;
	bool capturing; /* the key was seen: bytes after it go to cap */
	long long prompt, completion; /* 0 until one is seen */
};
/* A zeroed struct gw_usage is ready; free what a capture left. */
void gw_usage_feed(struct gw_usage *u, const char *p, size_t n);
void gw_usage_free(struct gw_usage *u);

/* ---- metrics_expo.c: the exposition ---- */

/* What the counters do not hold: per role readiness and feasibility. */
struct gw_expo_state {
	bool ready[ROLE__COUNT], feasible[ROLE__COUNT];
	int workers;
	long long open_requests;
};
/* The Prometheus text format (version 0.0.4) of m and st; caller frees. */
char *gw_metrics_render(const struct gw_metrics *m, const struct gw_expo_state *st);
#define GW_METRICS_CTYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
