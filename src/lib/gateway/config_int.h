/*
 * config_int.h — the gateway's lowest layer, inside the room: the live
 * snapshot every request and loop reads the settings from (config.c), and
 * the pure functions of a snapshot that shape a request proxied to a peer
 * and the answers about one (proxy_hop.c). Nothing here calls a file above.
 */
#ifndef LOBES_GATEWAY_CONFIG_INT_H
#define LOBES_GATEWAY_CONFIG_INT_H

#include <curl/curl.h>
#include <pthread.h>

#include "gateway.h"
#include "peers.h"

/* The snapshot in use: swapped whole on reload, read (referenced) by every
 * request and every loop. */
struct gw_live {
	pthread_mutex_t mu;
	struct gw_config *cfg;
};

/* Start with c (takes a reference). */
void gw_live_init(struct gw_live *l, struct gw_config *c);
/* The current snapshot, referenced (the caller unrefs). */
struct gw_config *gw_live_get(struct gw_live *l);
/* Serve by c from now on (takes a reference); returns the previous one,
 * whose reference passes to the caller. */
struct gw_config *gw_live_swap(struct gw_live *l, struct gw_config *c);
/* Drop the snapshot held. */
void gw_live_destroy(struct gw_live *l);

/* A file of data/ compiled into the binary ("data/gateway/ui.html"), or NULL. */
struct embedded_file;
const struct embedded_file *gw_embedded(const char *path);

/* ---- proxy_hop.c: a request to a peer, and the answers about one ---- */

/* The peer's URL for path (caller frees). */
char *proxy_url(const struct gw_peer *p, const char *path);
/* Append the peer's Authorization and the hop header to h. */
struct curl_slist *proxy_headers(struct curl_slist *h, const struct gw_config *c,
				 const struct gw_peer *p);
/* An answer for a proxied request that is not the peer's own: 508 proxy_loop
 * (the request already carries the hop header), 503 peer_unavailable (no
 * answer from the peer), 502 peer_auth_failed (the peer refused this box's
 * key). Each returns false when it does not apply; else fills e (free with
 * proxy_err_free). */
struct proxy_err {
	int status;
	const char *type, *code;
	char *msg;
	json_t *extra;
};
bool proxy_err_loop(const struct gw_config *c, int role, const char *hop, struct proxy_err *e);
bool proxy_err_down(const struct gw_config *c, int role, const char *why, struct proxy_err *e);
bool proxy_err_auth(const struct gw_config *c, int role, long status, struct proxy_err *e);
void proxy_err_free(struct proxy_err *e);

#endif
