/*
 * upstream.h — the engine client of one worker (upstream.c): its libcurl
 * multi handle, the transfers it carries (struct relay), the background
 * /health polls and pressure readings of worker 0. Internal to the
 * gateway: the layer above the worker loop and below the relay.
 *
 * A relay is owned by two references: the client side drops its one when
 * MHD reports the request completed; the upstream side when the transfer
 * has ended and left the multi handle. Both sides run on the relay's
 * worker; its mutex only matters at shutdown, when the daemons are stopped
 * from the caller's thread after the loops have ended. The engine side
 * tells the client side that the relay's state changed through r->wake,
 * which the client side sets (relay.c resumes its suspended connection).
 */
#ifndef LOBES_GATEWAY_UPSTREAM_H
#define LOBES_GATEWAY_UPSTREAM_H

#include <curl/curl.h>
#include <microhttpd.h>
#include <pthread.h>

#include "../util/buf.h"
#include "config_int.h"
#include "log.h"
#include "worker.h"

enum { XFER_RELAY = 1, XFER_HEALTH = 2 };
enum { HEALTH_UNKNOWN = 0, HEALTH_OK = 1, HEALTH_TIMEOUT = -1, HEALTH_NO_CONNECT = -2 };

/* the epoll tag of the client-disconnect set in the loop's set */
#define TAG_CLIENTS (1ull << 61)

struct upstream;

#define UPSTREAM_EASY_POOL 64

struct relay {
	int kind; /* XFER_RELAY: first, so CURLOPT_PRIVATE tells kinds apart */
	pthread_mutex_t mu;
	int refs;
	struct upstream *up; /* the engine side of the worker whose daemon holds conn */
	/* the state changed: resume the client side if it waits (set by the
	 * client side; called with mu held) */
	void (*wake)(struct relay *r);
	struct MHD_Connection *conn;
	int client_fd;
	char id[48];
	int role;
	bool stream;
	/* request, built by the client side, used by the engine side */
	CURL *easy;
	struct curl_slist *hdrs;
	char *url, *body;
	size_t body_len;
	int read_timeout_s, first_byte_timeout_s;
	/* state, under mu */
	bool suspended, detached, client_gone, head, done, stalled, paused, cancelled;
	long status;
	char *content_type;
	long long content_length; /* -1: unknown */
	CURLcode result;
	char errbuf[CURL_ERROR_SIZE];
	struct buf data;
	size_t rd;
	bool err_event_sent;
	bool whole;               /* small non-SSE body of known length: answer once complete */
	size_t max_buffered;      /* the budget (gw_config) this relay was started under */
	size_t charged;           /* bytes of data's allocation charged to the budget */
	/* engine side only */
	double t_start, t_head, t_last_rx, t_done; /* monotonic ms */
	unsigned slot, gen;
};

struct health_xfer {
	int kind; /* XFER_HEALTH */
	int role;
	CURL *easy;
	char *url;
};

/* What the engine sides of all workers share, with each other and with the
 * front (server.c keeps it in struct gateway). */
struct upstream_shared {
	struct gw_live *live;        /* the settings */
	struct gw_log *log;          /* health events */
	bool ready[ROLE__COUNT];     /* atomic; worker 0 polls them */
	/* what the last poll of each role said (worker 0 writes, all read; atomic):
	 * HEALTH_UNKNOWN before the first, else HEALTH_OK, HEALTH_TIMEOUT,
	 * HEALTH_NO_CONNECT or the HTTP status of a non-200 answer; and since
	 * when (wall clock, ms) it has not been ready */
	int health[ROLE__COUNT];
	long long down_since_ms[ROLE__COUNT];
	long long last_kick;         /* worker 0 was asked to poll again then (ms) */
	int swap_x100, iowait_x100;  /* atomic; -1 unknown; worker 0 reads them */
	long long buffered;          /* atomic: bytes allocated for request bodies and
				      * relay buffers, charged against max_buffered */
};

/* The buffer budget shared by all connections: take n bytes (false, and
 * nothing taken, when that would pass budget), give them back. */
bool upstream_budget_take(struct upstream_shared *sh, size_t n, size_t budget);
void upstream_budget_give(struct upstream_shared *sh, size_t n);
/* Is the budget spent (a new request would find no room)? */
bool upstream_budget_spent(struct upstream_shared *sh, size_t budget);
/* What a buf (util/buf.h) would allocate to hold len + n bytes: its
 * current allocation when they fit, else the next power-of-two step. */
size_t upstream_buf_grown(const struct buf *b, size_t n);

/* The engine side of one worker. */
struct upstream {
	struct worker *w; /* its loop */
	struct upstream_shared *sh;
	CURLM *multi;
	int epfd;    /* client sockets (EPOLLRDHUP): disconnect watch, in w->loop_fd */
	double timer_at; /* libcurl's timeout (monotonic ms), -1: none */
	pthread_mutex_t qmu;
	struct relay **q_new, **q_cancel, **q_unpause;
	size_t n_new, n_cancel, n_unpause, a_new, a_cancel, a_unpause;
	bool cancel_all;
	/* easy handles of ended relays, kept for the next ones (under qmu):
	 * curl_easy_init per request was a measured cost of the relay path */
	CURL *easy_pool[UPSTREAM_EASY_POOL];
	int n_easy_pool;
	/* active relays by slot (loop only) */
	struct relay **slots;
	unsigned *gens;
	size_t n_slots;
	size_t n_active;
	/* worker 0 only: the background /health poll and the pressure readings */
	struct health_xfer health[ROLE__COUNT];
	double next_health, next_pressure, next_stall_scan;
	struct gw_pressure pressure;
};

/* How long a second of the first-byte and read timeouts lasts, in ms (the
 * stall scan runs every quarter of it): 1000. The relay fuzz target
 * (tests/fuzz/fuzz_relay.c) shortens it so an engine's stall is judged
 * within one input's time. */
extern double upstream_second_ms;

/* What the loop runs (worker.h): ud is the struct upstream. */
extern const struct worker_ops upstream_loop_ops;

/* The multi handle and the disconnect watch, in w's epoll set (no thread). */
int upstream_init(struct upstream *u, struct worker *w, struct upstream_shared *sh,
		  struct err **err);
/* End what is left (the loop has stopped) and free it all. */
void upstream_free(struct upstream *u);
void upstream_submit(struct upstream *u, struct relay *r);
void upstream_cancel(struct upstream *u, struct relay *r);
void upstream_unpause(struct upstream *u, struct relay *r);
void upstream_cancel_all(struct upstream *u);
/* Poll the engines' /health at once (after a reload). */
void upstream_poll_now(struct upstream *u);
void relay_unref(struct relay *r);
/* An easy handle for a new relay (reset, from the pool or new), and one
 * given back by a relay that ended (out of the multi handle). */
CURL *upstream_easy_get(struct upstream *u);
void upstream_easy_put(struct upstream *u, CURL *e);

/* ---- health.c: worker 0's background readings (loop only) ---- */

/* Start a /health poll of each feasible role not being polled. */
void upstream_health_poll(struct upstream *u, double now);
/* A poll ended: set ready[] (a change is logged) and free the transfer. */
void upstream_health_done(struct upstream *u, struct health_xfer *h, CURLcode res);
/* Read swap and iowait into the shared readings. */
void upstream_pressure_tick(struct upstream *u);

#endif
