/*
 * relay.h — one client request on a worker's loop, and its relay to an
 * engine or a peer (relay.c), with the answers the gateway queues itself
 * (answer.c). Internal to the gateway: the layer above the engine client
 * and below the peers' readiness (proxy.c) and the HTTP front (server.c).
 */
#ifndef LOBES_GATEWAY_RELAY_H
#define LOBES_GATEWAY_RELAY_H

#include "metrics.h"
#include "upstream.h"

struct gw_keyuse_ent;

#define GW_RETRY_AFTER "5" /* seconds, on 503 and on 429 server_busy */
#define GW_TRACEPARENT_MAX 128

enum req_state { R_READ, R_WAIT, R_RESP };

/* an error decided at the head, answered once the body is in (intake.c) */
enum req_early { EARLY_NONE, EARLY_NOT_FOUND, EARLY_METHOD, EARLY_AUTH };

struct req {
	struct upstream *up; /* the engine side of the worker that accepted it */
	char id[48];
	double t0;
	struct gw_config *cfg;
	enum gw_endpoint ep;
	char method[8];
	char *path;
	struct buf body;
	size_t received; /* body bytes read so far (all of them, kept or not) */
	double win_t;     /* the upload-rate window: when it began (ms), */
	size_t win_bytes; /* and received then (conns.c) */
	size_t charged; /* bytes of body's allocation charged to the buffer budget */
	bool too_big;
	bool busy;      /* the buffer budget was spent while the body came in */
	enum req_early early;
	int role;     /* counted in role_inflight when >= 0 */
	int log_role; /* the role named, for the access line */
	int status;
	size_t bytes;
	bool alias;
	struct relay *relay;
	enum req_state state;
	const char *outcome;
	double t_first;        /* the first body byte handed to MHD (0: none yet) */
	char traceparent[GW_TRACEPARENT_MAX]; /* the client's, when well formed; "" none */
	char *tracestate;      /* the client's, passed on with a traceparent */
	struct gw_usage usage; /* tokens of the engine's answer (metrics.h) */
	const struct gw_key *key;     /* the API key it carries (in cfg), NULL: none */
	struct gw_keyuse_ent *ku;     /* its use entry (keycheck.c), NULL: no keys */
	bool ku_held, key_denied;     /* holds an open slot of the key; 403 */
	bool stream;           /* "stream": true */
	/* failover.c: 0 the primary, k the role's k-th fallback (peers.yaml) */
	int target;
	char *fb_body;         /* the body kept for a fallback (NULL: the role has none) */
	size_t fb_len;
	char tried[384];       /* "BOX/ROLE: why; ..." of the targets that failed */
};

/* ---- answer.c: answers the gateway gives itself ---- */

/* Queue body as q's answer; hdrs: name, value pairs ending in NULL. */
enum MHD_Result req_answer(struct req *q, struct MHD_Connection *c, int status, const char *body,
			   const char *ctype, const char *const *hdrs);
/* Body bytes p[0..n) of a relayed answer go to the client: counted, timed
 * (the first) and scanned for the engine's usage. */
void req_sent(struct req *q, const char *p, size_t n);
/* The same with a JSON body (o is stolen). */
enum MHD_Result req_json(struct req *q, struct MHD_Connection *c, int status, json_t *o,
			 const char *const *hdrs);
/* Queue an OpenAI-shaped error answer for q. */
enum MHD_Result req_error(struct req *q, struct MHD_Connection *c, int status, const char *type,
			  const char *code, const char *msg, const json_t *extra,
			  const char *const *hdrs);
/* Queue a proxy error (config_int.h) and free it. */
enum MHD_Result req_proxy_err(struct req *q, struct MHD_Connection *c, struct proxy_err *e);

/* ---- trace.c: W3C trace context and the request id ---- */

/* A traceparent header value as W3C Trace Context defines it. */
bool gw_traceparent_ok(const char *h);
/* Keep the client's traceparent (and tracestate) when well formed. */
void req_trace_intake(struct req *q, struct MHD_Connection *c);
/* Append X-Request-Id and the trace headers for the engine or the peer. */
struct curl_slist *req_trace_headers(const struct req *q, struct curl_slist *h);
/* The same on an answer to the client. */
void req_trace_answer(const struct req *q, struct MHD_Response *r);
/* The trace id of the access line into id ("" when none); free what
 * intake kept. */
void req_trace_log(struct req *q, char id[33]);

/* ---- failover.c: the targets of a relay, in order ---- */

/* Is there a fallback left to try (and a body kept for it)? */
bool failover_left(const struct req *q);
/* Keep a copy of the body when q's role has fallbacks. */
void failover_keep(struct req *q, const char *body, size_t len);
/* The body for q->target (owned): a peer gets the checkpoint id as model. */
char *failover_body(const struct req *q, size_t *len);
/* The URL of q->target; *peer the peer it is at (NULL: this box). */
char *failover_url(const struct req *q, const struct gw_peer **peer);
/* BOX/ROLE, BOX/ROLE:PORT or PEER/ROLE of q->target. */
void failover_served_by(const struct req *q, char *out, size_t n);
/* Add X-Lobes-Served-By to a relayed answer. */
void failover_answer_header(const struct req *q, struct MHD_Response *r);
/* Note in q->tried that q->target failed (why). */
void failover_note(struct req *q, const char *why);

/* ---- relay.c ---- */

/* Build the upstream request of a routed request, hand it to the engine side
 * of the worker and answer (or suspend) from its state. */
enum MHD_Result relay_start(struct req *q, struct MHD_Connection *c, struct gw_route *rt);
/* Is role's engine known not ready (its last /health poll failed)? Then
 * answer 503 backend_unavailable with the reason and since when (*rc) and
 * return true; before the first poll or when ready, false. */
bool relay_known_down(struct req *q, struct MHD_Connection *c, struct upstream_shared *sh,
		      int role, enum MHD_Result *rc);
/* Answer from the relay's state, or suspend until it changes. */
enum MHD_Result relay_respond(struct req *q, struct MHD_Connection *c);

#endif
