/*
 * keyuse.h — what each API key has used (keyuse.c): its limit windows and
 * its counters for /metrics. In the metrics layer (it calls only util);
 * the HTTP front (server.c, keycheck.c) admits, releases and counts.
 *
 * The state lives in the gateway, not in the settings snapshot, and is
 * found by the key's name, so a reload (SIGHUP) or `lobes keys rotate`
 * keeps a key's window and its open requests. Entries are made for names
 * of keys.yaml (and the fixed "default", "none", "unknown") and never
 * dropped: at most GW_KEYUSE_MAX, past which names share "other". So the
 * `key` label of /metrics has a bounded set of values, none a client chose.
 *
 * The limiter (pure, unit-tested with a given clock): a window of 60 s
 * begins at the first request after the previous one ended; in it at most
 * rpm requests are admitted, and none once tpm tokens (counted from the
 * engines' usage when each answer ends) are used; at most `concurrent`
 * requests are open at once, each released when its request ends, however
 * it ends (answered, failed, cancelled by the client).
 */
#ifndef LOBES_GATEWAY_KEYUSE_H
#define LOBES_GATEWAY_KEYUSE_H

#include <pthread.h>
#include <stdbool.h>

#include "../util/buf.h"

#define GW_KEY_WINDOW_MS 60000.0
#define GW_KEYUSE_MAX 1024

struct gw_limits {
	long rpm, tpm, concurrent; /* 0: no limit */
};

struct gw_window {
	double start_ms; /* < 0: none open */
	long requests, tokens;
	long open; /* requests admitted and not yet released */
};

enum gw_limit_hit { GW_LIM_OK, GW_LIM_REQUESTS, GW_LIM_TOKENS, GW_LIM_CONCURRENT };

/* What a client is told (x-ratelimit-* headers, Retry-After). */
struct gw_verdict {
	enum gw_limit_hit hit;
	long req_limit, req_remaining; /* limit 0: none */
	long tok_limit, tok_remaining;
	double reset_ms;     /* until the window ends */
	double retry_after_s;
};

/* Admit one request at now (ms) under l: GW_LIM_OK takes a request of the
 * window and an open slot (release it with gw_window_release); else nothing
 * is taken and v says which limit and when to retry. */
enum gw_limit_hit gw_window_admit(struct gw_window *w, const struct gw_limits *l, double now,
				  struct gw_verdict *v);
void gw_window_release(struct gw_window *w);
/* Charge tokens used by an answer that ended at now. */
void gw_window_tokens(struct gw_window *w, long tokens, double now);
void gw_window_init(struct gw_window *w);

enum { GW_KU_THR_REQUESTS, GW_KU_THR_TOKENS, GW_KU_THR_CONCURRENT, GW_KU_THR__COUNT };

struct gw_keyuse_ent {
	char name[72];
	struct gw_window w;
	unsigned long long requests, denied, throttled[GW_KU_THR__COUNT];
	unsigned long long prompt_tokens, completion_tokens;
};

struct gw_keyuse {
	pthread_mutex_t mu;
	struct gw_keyuse_ent *v[GW_KEYUSE_MAX + 1]; /* the last: "other" */
	int n;
};

void gw_keyuse_init(struct gw_keyuse *u);
void gw_keyuse_destroy(struct gw_keyuse *u);
/* The entry of name (made on first use; "other" past the cap). */
struct gw_keyuse_ent *gw_keyuse_get(struct gw_keyuse *u, const char *name);
/* Under u's lock: admit (counting a throttle), release, charge. */
enum gw_limit_hit gw_keyuse_admit(struct gw_keyuse *u, struct gw_keyuse_ent *e,
				  const struct gw_limits *l, double now, struct gw_verdict *v);
/* One request ended: count it; release its slot when held; its tokens. */
void gw_keyuse_done(struct gw_keyuse *u, struct gw_keyuse_ent *e, bool held, bool denied,
		    long prompt, long completion, double now);
/* The lobes_gateway_key_* families (Prometheus text) appended to b. */
void gw_keyuse_render(struct gw_keyuse *u, struct buf *b);

#endif
