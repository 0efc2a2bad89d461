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
 * /v1/models body. */
void proxy_caps_overlay(struct gateway *g, const struct gw_config *c, json_t *caps);
void proxy_models_overlay(struct gateway *g, const struct gw_config *c, json_t *models);

#endif
