/*
 * gateway.h — `lobes gateway`: one OpenAI-compatible endpoint per box in
 * front of the role engines (which listen on loopback only).
 *
 * Pieces, in layers that each call only down (internal.h lists them;
 * tools/check-calls.sh fails the tests on a call loop):
 *   config    settings and the live snapshot: config.c (the deploy dir and
 *             data/gateway/ as an immutable, reference-counted snapshot,
 *             swapped whole on reload), yaml.c, peers.c (peers.h),
 *             proxy_hop.c (a request to a peer), and the pure functions of
 *             a snapshot: route.c (endpoint, role, the `model` rewrite,
 *             errors in OpenAI's shape), caps.c (/capabilities, /v1/models
 *             and /health bodies), pressure.c (swap and iowait sampling,
 *             the shedding decision), fleet.c (the other boxes)
 *   log       log.c: access and event lines, the clock
 *   worker    worker.c: one loop, a thread running its own MHD daemon and,
 *             through the callbacks it is launched with, its engine side
 *   upstream  upstream.c: the engine client (a libcurl multi handle per
 *             worker): relays, background /health polls, client-disconnect
 *             watch
 *   relay     relay.c, answer.c: the upstream request, the answer pulled
 *             from the relay buffer, the answers the gateway gives itself
 *   proxy     proxy.c: the readiness of roles proxied to peers
 *   server    server.c: intake, auth, limits, local endpoints, dispatch;
 *             start, reload, drain
 *
 * N worker loops (LOBES_GATEWAY_WORKERS; default the online CPUs, at most
 * 8) listen on the same port (SO_REUSEPORT), and one thread serves each
 * connection wholly. A relayed response is pulled by MHD from a per-request
 * buffer that the same loop fills from the engine; when the buffer is empty
 * the connection is suspended and resumed on the next bytes, so each SSE
 * frame leaves as soon as it arrives. The library never prints: access and
 * event lines go to a callback as JSON text.
 */
#ifndef LOBES_GATEWAY_H
#define LOBES_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "../knowledge/knowledge.h"
#include "../util/err.h"

struct gw_role {
	bool feasible;
	int port;
	char *model;         /* <ROLE>_MODEL: the served checkpoint id ("" when unset) */
	long max_model_len;  /* 0: unknown */
	char *quantization;  /* "" when unset */
	char *image;         /* <ROLE>_IMAGE: the engine's image ref ("" when unset) */
	char *tool_parser;   /* NULL: none */
	char *reasoning_parser;
	char *hosted_by;     /* LOBES_GATEWAY_PEER_<ROLE>: a peer that serves it, or NULL */
	int max_inflight;    /* concurrent upstream requests before 429 */
	/* vroutes.c: the engine's vLLM, from its image (data/images/ → registry) */
	char *vllm_version;  /* "0.26.1rc1.dev942+g5a4c8d992"; NULL: image unset or unknown */
	char *vllm_registry; /* "5a4c8d992" (data/vllm/<registry>/routes.txt); NULL likewise */
	unsigned routes;     /* bit (1u << ep) per endpoint of GW_EP_TOKENIZE.. it serves */
};

struct gw_alias {
	char *name;
	enum role_id role;
	char *source; /* "data/gateway/aliases.yaml:3:3" or the operator file's position */
};

/* One snapshot of everything the gateway serves by. */
struct gw_config {
	int refs; /* gw_config_ref/unref; atomic */
	char *dir;
	char *profile, *card;
	char *bind;      /* LOBES_GATEWAY_BIND, default 127.0.0.1 */
	char *peer_ca_file; /* LOBES_GATEWAY_PEER_CA_FILE: CAs for https peers (NULL: the system's) */
	int port;        /* LOBES_GATEWAY_PORT, default 8000 */
	char *key;       /* the API key (NULL: none); never printed, never forwarded */
	char *key_source; /* "file /x/gateway.key" or ".env LOBES_GATEWAY_API_KEY" */
	size_t max_body;          /* bytes, 413 past it */
	size_t max_buffered;      /* bytes of request bodies and relay buffers, all
				   * connections together; 503 server_busy past it */
	int max_connections;      /* open client connections, all workers; past it refused */
	int max_conn_per_addr;    /* open client connections from one address */
	int header_timeout_s;     /* a new connection's first request head must be whole by then */
	int min_upload_rate;      /* bytes/s a request body must keep up (over 5 s windows) */
	int workers;              /* LOBES_GATEWAY_WORKERS 1-64; 0: online CPUs, at most 8 */
	int connect_timeout_s;    /* to an engine */
	int first_byte_timeout_s; /* an engine without its answer's head this long: 503 */
	int read_timeout_s;       /* an engine silent this long (after the head) ends the request */
	int request_timeout_s;    /* whole upstream request; 0 = none */
	int idle_timeout_s;       /* an idle client connection */
	int drain_timeout_s;      /* SIGTERM: in-flight requests get this long */
	int health_interval_ms, health_timeout_ms;
	double swap_max;          /* percent; >= 100 = off */
	double iowait_max;        /* percent; >= 100 = off */
	bool iowait_off_by_card;  /* the card's trait: iowait lies there */
	bool observe_keyed;       /* LOBES_GATEWAY_METRICS_AUTH=key: /metrics, /status, /ui need the key */
	struct gw_role roles[ROLE__COUNT];
	struct gw_alias *aliases;
	size_t n_aliases;
	struct gw_peers *peers; /* <dir>/peers.yaml (peers.h); NULL when absent */
	struct gw_keys *keys;   /* keys.yaml's keys and the default key (keys.h); NULL: none */
};

/* What the command line may override (NULL / 0: from the deploy dir). */
struct gw_overrides {
	const char *bind;
	int port;
	const char *key_file;
};

/* Read the deploy dir. Errors are EXIT_CONFIG with a position
 * ("DIR/.env:12: LOBES_GATEWAY_PORT 'x' ...; expected ..."). A bind beyond
 * loopback without a key, or a key file readable by others, is refused. */
struct gw_config *gw_config_load(const char *dir, const struct gw_overrides *o, struct err **err);
struct gw_config *gw_config_ref(struct gw_config *c);
void gw_config_unref(struct gw_config *c);
/* Parse alias YAML text (name: "data/gateway/aliases.yaml" or a path) into
 * c's alias list; a later definition of a name replaces the earlier one. */
/* One YAML document of a gateway file (settings, aliases, peers) through
 * yaml_guard; NULL with *err "NAME:L:C: invalid YAML: ..." on a syntax error.
 * The caller frees it with fy_document_destroy(). */
struct fy_document;
struct fy_node;
struct fy_document *gw_yaml_parse(const char *text, size_t len, const char *name,
				  struct err **err);
/* Where node n is written (1-based; a collection: its first entry; 1:1
 * when unknown); an EXIT_CONFIG error "NAME:L:C: <fmt>" at n (returns -1);
 * n's scalar text, or NULL when n is not a scalar. */
void gw_yaml_mark(struct fy_node *n, int *line, int *col);
int gw_yaml_err(const char *name, struct fy_node *n, struct err **err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const char *gw_yaml_scalar(struct fy_node *n);

int gw_aliases_parse(struct gw_config *c, const char *text, size_t len, const char *name,
		     struct err **err);
bool gw_bind_is_loopback(const char *bind);

/* ---- routing (route.c): pure functions of (config, request) ---- */

enum gw_endpoint {
	GW_EP_NONE,
	GW_EP_CHAT,
	GW_EP_COMPLETIONS,
	GW_EP_EMBEDDINGS,
	GW_EP_RERANK,
	GW_EP_SCORE,
	/* the routes whose engine support is read from data/vllm/<registry>/routes.txt
	 * (vroutes.c): 404 route_not_served where the role's engine lacks one */
	GW_EP_TOKENIZE,
	GW_EP_DETOKENIZE,
	GW_EP_RESPONSES,
	GW_EP_MESSAGES,
	GW_EP_TRANSCRIPTIONS, /* multipart/form-data: routed on the form's `model` */
	GW_EP_TRANSLATIONS,
	GW_EP_POOLING,
	GW_EP_CLASSIFY,
	GW_EP_MODELS,
	GW_EP_HEALTH,
	GW_EP_CAPABILITIES,
	GW_EP_METRICS, /* the gateway's own: keyless unless LOBES_GATEWAY_METRICS_AUTH=key */
	GW_EP_STATUS,
	GW_EP_UI,
	GW_EP__COUNT
};

/* The endpoint of path; *method_ok false when it exists with another
 * method (405). GW_EP_NONE: unknown path (404). */
enum gw_endpoint gw_endpoint_of(const char *method, const char *path, bool *method_ok);
bool gw_endpoint_keyless(enum gw_endpoint ep);
/* The gateway's own views (/metrics, /status, /ui): keyless unless the
 * settings ask for the key (LOBES_GATEWAY_METRICS_AUTH=key). */
bool gw_endpoint_observe(enum gw_endpoint ep);
bool gw_endpoint_needs_key(const struct gw_config *c, enum gw_endpoint ep);
bool gw_endpoint_proxied(enum gw_endpoint ep);

struct gw_route {
	int role;           /* enum role_id, -1 on error */
	bool stream;        /* "stream": true */
	bool via_alias;     /* the model was an alias (pressure sheds these) */
	bool proxied;       /* the role is proxied to a peer (peers.h) */
	char *body;         /* rewritten body (owned), NULL: relay the original */
	size_t body_len;
	/* error (status != 0): an OpenAI-shaped body is built from these */
	int status;
	const char *type, *code;
	char *message;      /* owned */
	json_t *extra;      /* owned: more members of "error" (hosted_by, served…) */
};

/* Decide where a POST to ep with body goes. Returns 0 with out->role set, or
 * -1 with out->status etc. set (400, 404). Never touches the network. */
int gw_route_request(const struct gw_config *c, enum gw_endpoint ep, const char *body,
		     size_t len, struct gw_route *out);
/* The same for a body that is not JSON (multipart audio): the role of model
 * (NULL: the default), no rewrite. */
int gw_route_model(const struct gw_config *c, enum gw_endpoint ep, const char *model,
		   struct gw_route *out);
void gw_route_free(struct gw_route *r);

/* What routing reads of a body (body.c): its top-level `model` (NULL when
 * absent or null) and `stream`. */
struct gw_body {
	char *model; /* owned */
	bool stream; /* "stream": true */
};
enum gw_body_verdict {
	GW_BODY_OK,     /* valid as jansson would have it: *out is the body's */
	GW_BODY_UNSURE, /* jansson decides (invalid, a duplicate key, a model
			 * that is not a string, an input the two read apart) */
};
/* One streaming pass over the body, no tree built. */
enum gw_body_verdict gw_body_scan(const char *body, size_t len, struct gw_body *out);
void gw_body_free(struct gw_body *b);
/* body (a JSON object) with its top-level model set to model, byte for byte
 * otherwise (caller frees); NULL when body is not a JSON object. */
char *gw_body_with_model(const char *body, size_t len, const char *model, size_t *out_len);
/* Is ep one of the routes checked against the engine's routes.txt? */
bool gw_endpoint_engine_checked(enum gw_endpoint ep);
/* Is ep's body multipart/form-data (audio)? */
bool gw_endpoint_multipart(enum gw_endpoint ep);
/* The request path of ep in the route table ("?" for none). */
const char *gw_endpoint_path(enum gw_endpoint ep);

/* ---- the engines' vLLM (vroutes.c) ---- */

/* Set each role's vllm_version, vllm_registry and routes from its image
 * (<ROLE>_IMAGE through data/images/ and the operator's files). A role
 * whose image is unset or unknown serves what its lane serves in the newest
 * recorded vLLM, with no version. Never fails: the knowledge not loading
 * leaves every role unknown. */
void gw_vllm_resolve(struct gw_config *c);
/* Which routes role r's engine serves, from routes.txt text (tests). */
unsigned gw_vllm_routes_of(enum role_id r, const char *routes_txt);
/* {"error":{"message","type","code","param":null,...extra}} as text (caller frees). */
char *gw_error_body(const char *message, const char *type, const char *code, const json_t *extra);
/* The served names of every feasible role, for model_not_found. */
json_t *gw_served_names(const struct gw_config *c);

/* ---- pressure (pressure.c) ---- */

struct gw_pressure {
	double swap_pct, iowait_pct; /* < 0: unknown */
	unsigned long long last_total, last_iowait;
};
/* Sample /proc/meminfo and /proc/stat (under LOBES_SYSROOT). iowait is the
 * share of CPU time since the previous sample. */
void gw_pressure_sample(struct gw_pressure *p);
/* True when alias requests are to be shed; *why names the reading. */
bool gw_pressure_shed(const struct gw_config *c, double swap_pct, double iowait_pct,
		      const char **why);

/* ---- the server ---- */

typedef void (*gw_log_fn)(void *ud, const char *json_line);

struct gateway;

/* Start listening on cfg->bind:cfg->port and serving (takes a reference to
 * cfg). EXIT_RUNTIME when the port cannot be bound. */
struct gateway *gateway_start(struct gw_config *cfg, gw_log_fn log, void *log_ud, struct err **err);
/* Serve by a new snapshot from now on (in-flight requests finish on the old
 * one). bind/port changes need a restart: logged, not applied. */
void gateway_reload(struct gateway *g, struct gw_config *cfg);
/* Stop accepting: returns once every worker has closed its listening socket
 * (a connection made after this returns is refused), so "draining" can be
 * said truthfully after it. In-flight requests go on. Safe to call twice. */
void gateway_quiesce(struct gateway *g);
/* Stop accepting (gateway_quiesce, if not done yet), give in-flight requests
 * up to cfg->drain_timeout_s, cancel the rest, stop. Returns the number of
 * requests cancelled. */
int gateway_drain_and_stop(struct gateway *g);
/* How many worker loops c asks for: LOBES_GATEWAY_WORKERS, else the online
 * CPUs (at most 8). */
int gw_worker_count(const struct gw_config *c);
/* The build's version, for /metrics and /status (the library does not know it). */
void gateway_set_version(struct gateway *g, const char *version);
/* The port actually bound (useful with port 0). */
int gateway_port(const struct gateway *g);

/* JSON bodies (caps.c); ready[] from the background poll. */
json_t *gw_capabilities(const struct gw_config *c, const bool ready[ROLE__COUNT]);
json_t *gw_models(const struct gw_config *c, const bool ready[ROLE__COUNT]);
const char *gw_endpoint_path_of_role(enum role_id r);
/* Add /health's versions to h: the build's and each served role's vLLM. */
void gw_health_versions(json_t *h, const struct gw_config *c, const char *version);


/* The room's other public pieces: include this header, not them. */
#include "peers.h"
#include "keys.h"
#endif
