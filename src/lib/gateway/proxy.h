/*
 * proxy.h — the readiness of the roles proxied to peers, and what this box
 * shows of them (proxy.c). Internal to the gateway: the layer above the
 * relay and below the HTTP front; the request to a peer itself is shaped by
 * proxy_hop.c (config_int.h).
 */
#ifndef LOBES_GATEWAY_PROXY_H
#define LOBES_GATEWAY_PROXY_H

#include "config_int.h"
#include "log.h"

struct peer_poll;

/* The background poll of each proxied role's peer (/v1/models), reading
 * the settings from live and logging a change of a peer's state to log.
 * NULL with *err when its thread cannot start. */
struct peer_poll *proxy_poll_start(struct gw_live *live, struct gw_log *log, struct err **err);
/* Poll again now (after a reload). NULL: nothing. */
void proxy_poll_wake(struct peer_poll *pp);
/* Stop the thread and free pp (NULL: nothing). */
void proxy_poll_stop(struct peer_poll *pp);
/* Mark proxied roles in a /capabilities body (proxied, hosted_by, ready and
 * model from the peer) and add the box's name; add ready proxied roles to a
 * /v1/models body. Both return their argument. */
json_t *proxy_caps_overlay(struct peer_poll *pp, const struct gw_config *c, json_t *caps);
json_t *proxy_models_overlay(struct peer_poll *pp, const struct gw_config *c, json_t *models);

/* Is a proxied role known not ready because its peer did not answer its
 * last readiness poll (unreachable, frozen, an untrusted certificate)? *why
 * says so. A peer that answers is asked: its own answer is relayed. */
bool proxy_role_down(struct peer_poll *pp, int role, const char **why);

/* A request whose `model` is the served checkpoint id a peer reported for a
 * proxied role (listed in this box's /v1/models) goes to that role: on a
 * model_not_found in rt, route it again with the role name as `model` and
 * return true (rt replaced, its body the rewritten request). */
bool proxy_route_by_peer_id(struct peer_poll *pp, const struct gw_config *c, enum gw_endpoint ep,
			    const char *body, size_t len, struct gw_route *rt);

#endif
