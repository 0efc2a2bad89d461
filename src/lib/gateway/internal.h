/*
 * internal.h — what the MHD thread (server.c, relay.c) and the curl multi
 * thread (upstream.c) share: the gateway object, the relay of one proxied
 * request, and the client request that server.c and relay.c both handle.
 *
 * A relay is owned by two references: the client side drops its one when MHD
 * reports the request completed; the upstream side when the transfer has
 * ended and left the multi handle. Its state is guarded by its mutex. The
 * upstream thread resumes a suspended connection (relay_wake) only while the
 * client side has not detached, so it never touches a finished connection.
 */
#ifndef LOBES_GATEWAY_INTERNAL_H
#define LOBES_GATEWAY_INTERNAL_H

#include <curl/curl.h>
#include <microhttpd.h>
#include <pthread.h>

#include "../util/buf.h"
#include "gateway.h"

enum { XFER_RELAY = 1, XFER_HEALTH = 2 };

struct relay {
	int kind; /* XFER_RELAY: first, so CURLOPT_PRIVATE tells kinds apart */
	pthread_mutex_t mu;
	int refs;
	struct gateway *g;
	struct MHD_Connection *conn;
	int client_fd;
	char id[48];
	int role;
	bool stream;
	/* request, built by the client side, used by the upstream thread */
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
	/* upstream thread only */
	double t_start, t_head, t_last_rx, t_done; /* monotonic ms */
	unsigned slot, gen;
};

struct health_xfer {
	int kind; /* XFER_HEALTH */
	int role;
	CURL *easy;
	char *url;
};

struct upstream {
	CURLM *multi;
	pthread_t th;
	bool started;
	int epfd;    /* client sockets (EPOLLRDHUP): disconnect watch */
	int loop_fd; /* what the thread waits on: engine sockets, wake_fd, epfd */
	int wake_fd; /* eventfd: the client side has queued work */
	double timer_at; /* libcurl's timeout (monotonic ms), -1: none */
	pthread_mutex_t qmu;
	struct relay **q_new, **q_cancel, **q_unpause;
	size_t n_new, n_cancel, n_unpause, a_new, a_cancel, a_unpause;
	bool stop, cancel_all;
	/* active relays by slot (upstream thread only) */
	struct relay **slots;
	unsigned *gens;
	size_t n_slots;
	size_t n_active;
	struct health_xfer health[ROLE__COUNT];
	double next_health, next_pressure, next_stall_scan;
	struct gw_pressure pressure;
};

struct gateway {
	struct MHD_Daemon *d;
	int port;
	pthread_mutex_t cfg_mu;
	struct gw_config *cfg;
	gw_log_fn log;
	void *log_ud;
	pthread_mutex_t log_mu;
	int inflight;                   /* requests MHD holds, atomic */
	int role_inflight[ROLE__COUNT]; /* atomic */
	bool ready[ROLE__COUNT];        /* atomic */
	int swap_x100, iowait_x100;     /* atomic; -1 unknown */
	unsigned long long counter;     /* atomic */
	unsigned long long seed;
	bool draining;
	struct upstream up;
	struct peer_poll *pp; /* proxy.c: readiness of roles proxied to peers */
};

double gw_now_ms(void);
/* Current snapshot, referenced (caller unrefs). */
struct gw_config *gw_cfg_get(struct gateway *g);
/* Emit one JSON line through the log callback (obj is stolen). */
void gw_log_json(struct gateway *g, json_t *obj);

int upstream_start(struct gateway *g, struct err **err);
void upstream_stop(struct gateway *g);
void upstream_submit(struct gateway *g, struct relay *r);
void upstream_cancel(struct gateway *g, struct relay *r);
void upstream_unpause(struct gateway *g, struct relay *r);
void upstream_cancel_all(struct gateway *g);
/* Wake the upstream thread (after queueing work or changing settings). */
void upstream_wake(struct gateway *g);
void relay_unref(struct relay *r);
/* Resume the client side if it waits; call with r->mu held. */
void relay_wake(struct relay *r);

/* ---- server.c <-> relay.c: one client request on the MHD thread ---- */

#define GW_RETRY_AFTER "5" /* seconds, on 503 and on 429 server_busy */

enum req_state { R_READ, R_WAIT, R_RESP };

struct req {
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
/* Build the upstream request of a routed request, hand it to the upstream
 * thread and answer (or suspend) from its state (relay.c). */
enum MHD_Result relay_start(struct gateway *g, struct req *q, struct MHD_Connection *c,
			    struct gw_route *rt);
/* Answer from the relay's state, or suspend until it changes (relay.c). */
enum MHD_Result relay_respond(struct gateway *g, struct req *q, struct MHD_Connection *c);

#endif
