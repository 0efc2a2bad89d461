/*
 * failover.c — where a relay goes, in order: the role's primary (its engine
 * on this box, or the peer it is proxied to), then the `fallback:` list of
 * peers.yaml (peers.h). relay.c asks here for a target's URL, body and
 * name, and moves to the next target ONLY when the current one refused the
 * connection or answered 5xx before its first byte reached the client:
 *   - a timeout (connect, first byte) is not a refusal: a frozen target is
 *     answered 503 within that bound, never retried (the request may be
 *     running there);
 *   - once a byte went to the client nothing is replayed: a stream that
 *     breaks ends with an error event (relay.c), never a second stream;
 *   - a different model is never substituted: a peer is asked for this
 *     role's checkpoint id (its `<ROLE>_MODEL`), so a peer serving another
 *     checkpoint answers 404 model_not_found instead of a silent
 *     downgrade; a replica on this box is the role's own engine on another
 *     port and gets the body as the primary does.
 * Every relayed answer carries X-Lobes-Served-By: BOX/ROLE for this box's
 * engine, BOX/ROLE:PORT for a replica, PEER/ROLE for a peer.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "relay.h"

#define SERVED_BY_HEADER "X-Lobes-Served-By"

/* The fallback q->target stands for (NULL: the primary). */
static const struct gw_fallback *target_fb(const struct req *q)
{
	size_t n;
	const struct gw_fallback *fb = gw_role_fallbacks(q->cfg, q->role, &n);
	return q->target > 0 && (size_t)q->target <= n ? &fb[q->target - 1] : NULL;
}

bool failover_left(const struct req *q)
{
	size_t n;
	gw_role_fallbacks(q->cfg, q->role, &n);
	return q->fb_body && (size_t)q->target < n;
}

void failover_keep(struct req *q, const char *body, size_t len)
{
	size_t n;
	gw_role_fallbacks(q->cfg, q->role, &n);
	if (!n)
		return;
	q->fb_body = xcalloc(1, len + 1);
	memcpy(q->fb_body, body, len);
	q->fb_body[len] = '\0';
	q->fb_len = len;
}

char *failover_body(const struct req *q, size_t *len)
{
	const struct gw_fallback *f = target_fb(q);
	const char *model = q->cfg->roles[q->role].model;
	if (f && f->peer >= 0 && !gw_endpoint_multipart(q->ep)) {
		/* the checkpoint id, not the role name: the peer serves that or says so */
		char *b = gw_body_with_model(q->fb_body, q->fb_len,
					     *model ? model : role_name((enum role_id)q->role), len);
		if (b)
			return b;
	}
	*len = q->fb_len;
	char *b = xcalloc(1, q->fb_len + 1);
	memcpy(b, q->fb_body, q->fb_len);
	b[q->fb_len] = '\0';
	return b;
}

char *failover_url(const struct req *q, const struct gw_peer **peer)
{
	const struct gw_fallback *f = target_fb(q);
	if (!f) {
		*peer = gw_role_proxy_peer(q->cfg, q->role);
		return *peer ? proxy_url(*peer, q->path)
			     : xasprintf("http://127.0.0.1:%d%s", q->cfg->roles[q->role].port, q->path);
	}
	*peer = f->peer >= 0 ? &q->cfg->peers->v[f->peer] : NULL;
	return *peer ? proxy_url(*peer, q->path) : xasprintf("http://127.0.0.1:%d%s", f->port, q->path);
}

void failover_served_by(const struct req *q, char *out, size_t n)
{
	const char *role = role_name((enum role_id)q->role);
	const struct gw_fallback *f = target_fb(q);
	const struct gw_peer *p = f ? (f->peer >= 0 ? &q->cfg->peers->v[f->peer] : NULL)
				    : gw_role_proxy_peer(q->cfg, q->role);
	if (p)
		snprintf(out, n, "%s/%s", p->name, role);
	else if (f)
		snprintf(out, n, "%s/%s:%d", gw_box_name(q->cfg), role, f->port);
	else
		snprintf(out, n, "%s/%s", gw_box_name(q->cfg), role);
}

void failover_answer_header(const struct req *q, struct MHD_Response *r)
{
	char by[160];
	failover_served_by(q, by, sizeof(by));
	MHD_add_response_header(r, SERVED_BY_HEADER, by);
}

void failover_note(struct req *q, const char *why)
{
	char by[160];
	failover_served_by(q, by, sizeof(by));
	size_t used = strlen(q->tried);
	snprintf(q->tried + used, sizeof(q->tried) - used, "%s%s: %s", used ? "; " : "", by, why);
}
