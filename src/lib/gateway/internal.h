/*
 * internal.h — the HTTP front's view of the gateway (server.c): the gateway
 * object and its lanes. Internal to the gateway, and its top layer; the
 * layers below, lowest first, each calling only down:
 *
 *   config    config.c yaml.c peers.c proxy_hop.c route.c caps.c pressure.c
 *             fleet.c vroutes.c — the settings and the live snapshot
 *             (config_int.h)
 *   log       log.c — the access/event log and the clock (log.h)
 *   worker    worker.c — the event loop (worker.h)
 *   upstream  upstream.c — the engine client (upstream.h)
 *   relay     answer.c relay.c failover.c — one client request and its relay
 *             to its targets in order (relay.h)
 *   proxy     proxy.c — the readiness of roles proxied to peers (proxy.h)
 *   server    server.c intake.c conns.c form.c — the HTTP front: intake (framing,
 *             early errors), connection limits and deadlines, checks, local
 *             answers; start, reload, drain; observe.c — what it counts
 *             (metrics.c, metrics_expo.c, a layer above the log) and its
 *             own views
 *
 * A lower layer tells a higher one something only through what the higher
 * one registered: the loop runs the engine side through worker_ops, the
 * engine side wakes the client side through a relay's wake.
 * tools/check-calls.sh fails the build's tests on any call loop.
 *
 * Each worker is one thread that runs its own MHD daemon (external epoll
 * mode) and its own libcurl multi handle; a request is handled wholly by the
 * worker whose daemon accepted it. What workers share lives in struct
 * gateway and is atomic or under a mutex: the config snapshot, the in-flight
 * counters, ready[] and the pressure readings (worker 0 polls them), the log.
 */
#ifndef LOBES_GATEWAY_INTERNAL_H
#define LOBES_GATEWAY_INTERNAL_H

#include "engines.h"
#include "proxy.h"
#include "conns.h"
#include "intake.h"
#include "relay.h"
#include "keyuse.h"

/* One worker: its loop, its engine side, and the gateway they serve (the
 * MHD callbacks' closure). */
struct gw_lane {
	struct gateway *g;
	struct worker loop;
	struct upstream up;
	struct gw_conn_list conns; /* its open client connections (conns.c) */
	double next_scan;          /* their deadlines are checked then (ms) */
	double refused_logged;     /* when refusals were last logged (ms) */
	int refused;               /* connections refused since */
	const char *refused_why;
};

#define GW_WORKERS_MAX 64
#define GW_WORKERS_AUTO 8 /* the default: online CPUs, at most this */

struct gateway {
	struct gw_lane *lanes;
	int n_workers;
	int port;
	struct gw_live live; /* the snapshot in use */
	struct gw_log log;
	struct upstream_shared eng;     /* ready[], pressure readings */
	int inflight;                   /* requests MHD holds, atomic */
	int role_inflight[ROLE__COUNT]; /* atomic */
	unsigned long long counter;     /* atomic */
	unsigned long long seed;
	bool draining;
	struct peer_poll *pp; /* proxy.c: readiness of roles proxied to peers */
	struct gw_metrics *metrics; /* metrics.h: counted by observe.c */
	struct gw_conn_table conns; /* open connections per client address (conns.c) */
	struct engine_poll *ep;     /* engines.c: the engines' own /metrics, for /status */
	struct gw_keyuse keyuse;    /* keyuse.h: each API key's windows and counts */
};

/* ---- keycheck.c: the API keys of requests (keys.h, keyuse.h) ---- */

/* At the head: the key q carries (q->key) and its use entry; no valid key
 * where one is needed sets q->early = EARLY_AUTH. */
void gw_key_intake(struct gateway *g, struct req *q, struct MHD_Connection *c, bool needs_key);
/* The X-Lobes-Hop of q when its key may say it (a peer's), else NULL. */
const char *gw_key_hop(const struct req *q, struct MHD_Connection *c);
/* After routing to role: 403 role_not_allowed or 429 rate_limited (*rc,
 * false); true when admitted (an open slot taken, released by gw_key_done). */
bool gw_key_admit(struct gateway *g, struct req *q, struct MHD_Connection *c, int role,
		  enum MHD_Result *rc);
/* q ended: count it for its key, release its slot, charge its tokens. */
void gw_key_done(struct gateway *g, struct req *q);

/* ---- observe.c: the server layer's observations (metrics.h) ---- */

/* q has ended (MHD's completion): count it. Frees q's usage scan. */
void gw_observe_done(struct gateway *g, struct req *q, enum MHD_RequestTerminationCode toe);
/* status.c: the /status body (a new reference). */
json_t *gw_status_json(struct gateway *g, const struct gw_config *c);
/* Answer /metrics, /status or /ui. */
enum MHD_Result gw_observe_answer(struct gateway *g, struct req *q, struct MHD_Connection *c);

/* ---- form.c: the route of a multipart/form-data body (its `model` field) ---- */

int gw_route_form(struct req *q, struct MHD_Connection *c, struct gw_route *rt);

/* ---- conns.c: the connection callbacks of a lane (cls/ud: the lane) ---- */

/* MHD's accept policy: refuse past the connection or per-address limit. */
enum MHD_Result gw_conn_accept(void *cls, const struct sockaddr *sa, socklen_t len);
/* MHD's connection start/close: the lane's list and the shared counts. */
void gw_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		    enum MHD_ConnectionNotificationCode toe);
/* The record of c (NULL before its start). */
struct gw_conn *gw_conn_of(struct MHD_Connection *c);
/* The loop's front timer: the deadlines of the lane's connections. */
double gw_conn_timers(void *ud, double now);

#endif
