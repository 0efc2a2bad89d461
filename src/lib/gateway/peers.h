/*
 * peers.h — the other boxes of a fleet, as this box's gateway knows them.
 *
 * <deploy-dir>/peers.yaml (optional) names each peer (its gateway's origin
 * and a 0600 file holding the key THAT box accepts: keys are per pair, so
 * rotating one box's inbound key breaks only the links into it) and, per
 * role this box does not serve, whether the gateway refers clients to a
 * peer (404 role_infeasible + hosted_by) or proxies the request to it:
 *
 *   box: thor                  # this box's name (hop header, fleet table)
 *   peers:
 *     spark:
 *       origin: http://192.168.1.20:8001
 *       key_file: spark.key    # relative to the deploy dir, mode 0600
 *   roles:
 *     hand: {proxy: spark}
 *     senses: {refer: orin}
 *     cortex: {fallback: [{port: 8011}, spark]}
 *
 * `fallback:` (a role served here or proxied) is an ordered list of where
 * else the role is tried when its primary refuses the connection or answers
 * 5xx before its first byte: a peer's gateway (its same role, asked for
 * this role's checkpoint id so it never substitutes another model) or
 * another replica of the role's engine on this box ({port: N}, loopback).
 *
 * A feasible local role is never sent away: refer/proxy of one is a load
 * error with its position. A proxy hop carries GW_HOP_HEADER; a request
 * that already carries it is never proxied again (508 proxy_loop).
 */
#ifndef LOBES_GATEWAY_PEERS_H
#define LOBES_GATEWAY_PEERS_H

#include "gateway.h"

#define GW_HOP_HEADER "X-Lobes-Hop"

enum gw_peer_mode { GW_PEER_NONE, GW_PEER_REFER, GW_PEER_PROXY };

#define GW_FALLBACK_MAX 8

struct gw_fallback {
	int peer;     /* index in gw_peers.v; -1: a replica on this box */
	int port;     /* the replica's loopback port (peer -1) */
	char *source; /* "DIR/peers.yaml:L:C" of the entry */
};

struct gw_peer {
	char *name;
	char *origin;   /* scheme://host[:port], no trailing slash */
	char *key_file; /* NULL: none declared (referral only) */
	char *key;      /* never printed; NULL when no key_file */
	char *source;   /* "DIR/peers.yaml:L:C" of the entry */
};

struct gw_peers {
	char *path;
	char *box; /* this box's name: `box:`, default the profile */
	struct gw_peer *v;
	size_t n;
	struct {
		enum gw_peer_mode mode;
		int peer; /* index in v, -1 for none */
		char *source;
		struct gw_fallback fb[GW_FALLBACK_MAX]; /* in order */
		size_t n_fb;
	} role[ROLE__COUNT];
};

/* Parse peers YAML text (name: its path, for positions; dir: where relative
 * key files are) against the roles of c. Every error is EXIT_CONFIG
 * "NAME:L:C: what; expected what". Key files are read here. */
struct gw_peers *gw_peers_parse(const struct gw_config *c, const char *text, size_t len,
				const char *name, const char *dir, struct err **err);
void gw_peers_free(struct gw_peers *p);
/* Read <c->dir>/peers.yaml when it exists into c->peers and set hosted_by
 * of each referred or proxied role. 0 when absent. */
int gw_peers_load(struct gw_config *c, struct err **err);
/* The peer a role is proxied to (NULL: not proxied). */
const struct gw_peer *gw_role_proxy_peer(const struct gw_config *c, int role);
/* Role's fallbacks, in order (*n 0: none). */
const struct gw_fallback *gw_role_fallbacks(const struct gw_config *c, int role, size_t *n);
/* This box's name (for the hop header and the fleet table). */
const char *gw_box_name(const struct gw_config *c);

/* ---- the fleet (fleet.c) ---- */

/* GET url (bounded; with a bearer key when given; an https url verified
 * against ca_file when given, else the system's CAs). Returns the HTTP
 * status, 0 when there was no answer (*why says why); *out the JSON body or
 * NULL. */
long gw_http_get_json(const char *url, const char *bearer, const char *ca_file, int timeout_ms,
		      json_t **out, char *why, size_t whyn);
/* This box's gateway as a client on this box reaches it. */
char *gw_local_origin(const struct gw_config *c);
/* {boxes: [{name, origin, self, reachable, profile, card, error?}],
 *  roles: [{role, boxes: {NAME: {feasible, ready, proxied, hosted_by?,
 *  model?} | null}}]} from every box's /capabilities. */
json_t *gw_fleet(const struct gw_config *c, int timeout_ms);
/* Doctor's link checks: [{check: peer-reachable|peer-key|peer-proxy,
 * level: ok|warning|error, peer, message}]. */
json_t *gw_fleet_links(const struct gw_config *c, int timeout_ms);

/* http(s)://HOST[:PORT] of a peer's gateway, normalised (a lone "/" path
 * dropped); NULL when s has a user, a path, a query or a fragment, or
 * another scheme. */
char *gw_origin_normalise(const char *s);

#endif
