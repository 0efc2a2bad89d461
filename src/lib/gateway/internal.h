/*
 * internal.h — what the pieces of the gateway share: the gateway object, its
 * worker loops (worker.c), the relay of one proxied request, and the client
 * request that server.c and relay.c both handle.
 *
 * Each worker is one thread that runs its own MHD daemon (external epoll
 * mode) and its own libcurl multi handle; a request is handled wholly by the
 * worker whose daemon accepted it. What workers share lives in struct
 * gateway and is atomic or under a mutex: the config snapshot, the in-flight
 * counters, ready[] and the pressure readings (worker 0 polls them), the log.
 *
 * A relay is owned by two references: the client side drops its one when MHD
 * reports the request completed; the upstream side when the transfer has
 * ended and left the multi handle. Both sides run on the relay's worker; its
 * mutex only matters at shutdown, when the daemons are stopped from the
 * caller's thread after the loops have ended. A suspended connection is
 * resumed (relay_wake) only while the client side has not detached, so a
 * finished connection is never touched.
 */
#ifndef LOBES_GATEWAY_INTERNAL_H
#define LOBES_GATEWAY_INTERNAL_H

#include <curl/curl.h>
#include <microhttpd.h>
#include <pthread.h>

#include "../util/buf.h"
#include "config_int.h"
#include "log.h"

enum { XFER_RELAY = 1, XFER_HEALTH = 2 };

struct relay {
	int kind; /* XFER_RELAY: first, so CURLOPT_PRIVATE tells kinds apart */
	pthread_mutex_t mu;
	int refs;
	struct gateway *g;
	struct worker *w; /* the worker whose daemon holds conn */
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
	int read_timeout_s;
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

/* The engine side of one worker (upstream.c). */
struct upstream {
	CURLM *multi;
	int epfd;    /* client sockets (EPOLLRDHUP): disconnect watch */
	int loop_fd; /* what the loop waits on: engine sockets, wake_fd, epfd, MHD's epoll fd */
	int wake_fd; /* eventfd: another thread has queued work */
	double timer_at; /* libcurl's timeout (monotonic ms), -1: none */
	pthread_mutex_t qmu;
	struct relay **q_new, **q_cancel, **q_unpause;
	size_t n_new, n_cancel, n_unpause, a_new, a_cancel, a_unpause;
	bool stop, cancel_all;
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

/* One worker loop (worker.c): a thread, its daemon, its engine side. */
struct worker {
	struct gateway *g;
	int idx;
	struct MHD_Daemon *d;
	pthread_t th;
	pthread_t self; /* th, as the thread itself stores it (worker_on_loop) */
	bool running;  /* the thread has been started and not joined */
	bool mhd_kick; /* a connection was resumed: MHD_run is due (loop only) */
	pthread_mutex_t mu; /* quiesce hand-shake */
	pthread_cond_t cv;
	bool quiesce_req, quiesced;
	struct upstream up;
};

#define GW_WORKERS_MAX 64
#define GW_WORKERS_AUTO 8 /* the default: online CPUs, at most this */

struct gateway {
	struct worker *w;
	int n_workers;
	int port;
	struct gw_live live; /* the snapshot in use */
	struct gw_log log;
	int inflight;                   /* requests MHD holds, atomic */
	int role_inflight[ROLE__COUNT]; /* atomic */
	bool ready[ROLE__COUNT];        /* atomic */
	int swap_x100, iowait_x100;     /* atomic; -1 unknown */
	unsigned long long counter;     /* atomic */
	unsigned long long seed;
	bool draining;
	struct peer_poll *pp; /* proxy.c: readiness of roles proxied to peers */
};

/* ---- upstream.c: the engine side of a worker ---- */

/* The multi handle, the epoll sets and the wake eventfd (no thread). */
int upstream_init(struct worker *w, struct err **err);
/* End what is left (the loop has stopped) and free it all. */
void upstream_free(struct worker *w);
/* One turn of the loop before it waits: queued work, libcurl's timer,
 * finished transfers, worker 0's polls, the stall scan. Returns true when
 * the worker is to stop; *next: when the loop must turn again (ms). */
bool upstream_turn(struct worker *w, double *next);
/* An event of the loop's epoll set that is not MHD's. */
void upstream_event(struct worker *w, uint64_t tag, uint32_t events);
/* Collect finished transfers (after events were handed to libcurl). */
void upstream_finished(struct worker *w);
void upstream_submit(struct worker *w, struct relay *r);
void upstream_cancel(struct worker *w, struct relay *r);
void upstream_unpause(struct worker *w, struct relay *r);
void upstream_cancel_all(struct worker *w);
void upstream_request_stop(struct worker *w);
/* Wake the worker's loop (after queueing work or changing settings); a
 * no-op on the loop itself, which looks at its queues before it waits. */
void upstream_wake(struct worker *w);
void relay_unref(struct relay *r);
/* Resume the client side if it waits; call with r->mu held. */
void relay_wake(struct relay *r);

/* ---- worker.c: the loop ---- */

/* epoll tags of the loop's own fds; an engine socket is tagged by its fd */
#define TAG_WAKE (1ull << 62)
#define TAG_CLIENTS (1ull << 61)
#define TAG_MHD (1ull << 60)

/* Start w's thread (w->d and w->up are ready). */
int worker_launch(struct worker *w, struct err **err);
/* Is the caller w's loop thread? */
bool worker_on_loop(const struct worker *w);
/* Have w's daemon stop accepting (MHD_quiesce_daemon, on its loop); returns
 * once it has. */
void worker_quiesce(struct worker *w);
/* Stop and join w's thread. */
void worker_halt(struct worker *w);

/* ---- server.c <-> relay.c: one client request on the MHD thread ---- */

#define GW_RETRY_AFTER "5" /* seconds, on 503 and on 429 server_busy */

enum req_state { R_READ, R_WAIT, R_RESP };

struct req {
	struct worker *w;
	char id[48];
	double t0;
	struct gw_config *cfg;
	enum gw_endpoint ep;
	char method[8];
	char *path;
	struct buf body;
	bool too_big;
	int role;     /* counted in role_inflight when >= 0 */
	int log_role; /* the role named, for the access line */
	int status;
	size_t bytes;
	bool alias;
	struct relay *relay;
	enum req_state state;
	const char *outcome;
};

/* Queue an OpenAI-shaped error answer for q (server.c); hdrs: name, value
 * pairs ending in NULL. */
enum MHD_Result req_error(struct req *q, struct MHD_Connection *c, int status, const char *type,
			  const char *code, const char *msg, const json_t *extra,
			  const char *const *hdrs);
struct proxy_err;
/* Queue a proxy error (proxy.h) and free it (server.c). */
enum MHD_Result req_proxy_err(struct req *q, struct MHD_Connection *c, struct proxy_err *e);
/* Build the upstream request of a routed request, hand it to the engine side
 * of the worker and answer (or suspend) from its state (relay.c). */
enum MHD_Result relay_start(struct gateway *g, struct req *q, struct MHD_Connection *c,
			    struct gw_route *rt);
/* Answer from the relay's state, or suspend until it changes (relay.c). */
enum MHD_Result relay_respond(struct gateway *g, struct req *q, struct MHD_Connection *c);

#endif
