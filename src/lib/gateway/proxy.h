/*
 * proxy.h — forwarding to a peer's gateway and the readiness of proxied
 * roles (proxy.c). Internal to the gateway (needs internal.h).
 */
#ifndef LOBES_GATEWAY_PROXY_H
#define LOBES_GATEWAY_PROXY_H

#include "internal.h"
#include "peers.h"

/* The peer's URL for path (caller frees). */
char *proxy_url(const struct gw_peer *p, const char *path);
/* Append the peer's Authorization and the hop header to h. */
struct curl_slist *proxy_headers(struct curl_slist *h, const struct gw_config *c,
				 const struct gw_peer *p);
/* The background poll of each proxied role's peer (/v1/models). */
int proxy_poll_start(struct gateway *g, struct err **err);
void proxy_poll_wake(struct gateway *g);
void proxy_poll_stop(struct gateway *g);
/* Mark proxied roles in a /capabilities body (proxied, hosted_by, ready and
 * model from the peer) and add the box's name; add ready proxied roles to a
 * /v1/models body. Both return their argument. */
json_t *proxy_caps_overlay(struct gateway *g, const struct gw_config *c, json_t *caps);
json_t *proxy_models_overlay(struct gateway *g, const struct gw_config *c, json_t *models);

/* A request whose `model` is the served checkpoint id a peer reported for a
 * proxied role (listed in this box's /v1/models) goes to that role: on a
 * model_not_found in rt, route it again with the role name as `model` and
 * return true (rt replaced, its body the rewritten request). */
bool proxy_route_by_peer_id(struct gateway *g, const struct gw_config *c, enum gw_endpoint ep,
			    const char *body, size_t len, struct gw_route *rt);
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
