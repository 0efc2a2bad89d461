/*
 * proxy_hop.c — what a request proxied to a peer carries, and the answers
 * the gateway gives itself about a peer (config_int.h). Pure functions of
 * the snapshot: they sit in the settings layer so that the relay, which
 * builds the request, and proxy.c, above it, both call down to them.
 *
 * A proxied request goes to the peer's gateway (its origin + the request's
 * path) with `Authorization: Bearer <the key that peer accepts>` — never the
 * caller's own (the relay builds its headers afresh) — and GW_HOP_HEADER:
 * <this box>, so the peer never proxies it again.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "config_int.h"

static bool perr(const struct gw_peer *p, int role, int status, const char *type,
		 const char *code, char *msg, struct proxy_err *e)
{
	e->status = status;
	e->type = type;
	e->code = code;
	e->msg = msg;
	e->extra = json_pack("{s:s, s:s, s:s}", "role", role_name((enum role_id)role), "peer", p->name,
			     "hosted_by", p->origin);
	return true;
}

bool proxy_err_loop(const struct gw_config *c, int role, const char *hop, struct proxy_err *e)
{
	const struct gw_peer *p = gw_role_proxy_peer(c, role);
	if (!p || !hop)
		return false;
	perr(p, role, 508, "proxy_loop", "proxy_loop",
	     xasprintf("role '%s' came here through a proxy hop from box '%.64s' and would be proxied "
		       "again to peer '%s' (%s): the boxes proxy it to each other; fix peers.yaml",
		       role_name((enum role_id)role), hop, p->name, p->origin),
	     e);
	json_object_set_new(e->extra, "from", json_string(hop));
	return true;
}

bool proxy_err_down(const struct gw_config *c, int role, const char *why, struct proxy_err *e)
{
	const struct gw_peer *p = gw_role_proxy_peer(c, role);
	return p && perr(p, role, 503, "backend_unavailable", "peer_unavailable",
			 xasprintf("peer '%s' (%s), which serves role '%s' for this box, is unavailable: %s",
				   p->name, p->origin, role_name((enum role_id)role), why),
			 e);
}

bool proxy_err_auth(const struct gw_config *c, int role, long status, struct proxy_err *e)
{
	const struct gw_peer *p = gw_role_proxy_peer(c, role);
	return p && (status == 401 || status == 403) &&
	       perr(p, role, 502, "backend_unavailable", "peer_auth_failed",
		    xasprintf("peer '%s' (%s) rejected this box's key for it (HTTP %ld): the key in '%s' "
			      "is not the one that peer accepts",
			      p->name, p->origin, status, p->key_file),
		    e);
}

void proxy_err_free(struct proxy_err *e)
{
	free(e->msg);
	json_decref(e->extra);
}

char *proxy_url(const struct gw_peer *p, const char *path)
{
	return xasprintf("%s%s", p->origin, path);
}

struct curl_slist *proxy_headers(struct curl_slist *h, const struct gw_config *c,
				 const struct gw_peer *p)
{
	_cleanup_free_ char *auth = xasprintf("Authorization: Bearer %s", p->key);
	_cleanup_free_ char *hop = xasprintf("%s: %s", GW_HOP_HEADER, gw_box_name(c));
	h = curl_slist_append(h, auth);
	explicit_bzero(auth, strlen(auth));
	return curl_slist_append(h, hop);
}
