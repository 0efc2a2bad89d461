/*
 * keycheck.c — the HTTP front's use of the API keys (keys.h) and their
 * limits (keyuse.h): which key a request carries, whether its role is in
 * the key's allowlist, whether the key's limits admit it, its X-Lobes-Hop,
 * and what it used once it ends. In the server layer, beside server.c,
 * which calls these at the head, after routing, and at completion.
 *
 * Answers, in OpenAI's error shape:
 *   403 permission_error / role_not_allowed, naming the key and the roles
 *       it may use;
 *   429 rate_limit_error / rate_limited, with Retry-After (seconds) and
 *       x-ratelimit-limit-requests, -remaining-requests, -reset-requests
 *       and the -tokens variants of the key's limits (as OpenAI sends
 *       them; its clients read them).
 * Only requests routed to a role are limited and counted against a
 * window; the key's name, never its value, goes to the access line and to
 * /metrics.
 */
#include <math.h>
#include <string.h>

#include "../util/cleanup.h"
#include "internal.h"

void gw_key_intake(struct gateway *g, struct req *q, struct MHD_Connection *c, bool needs_key)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	q->key = gw_key_of(q->cfg, auth);
	if (needs_key && gw_auth_required(q->cfg) && !q->key)
		q->early = EARLY_AUTH;
	const char *label = q->key ? q->key->name : q->early == EARLY_AUTH ? "unknown" : "none";
	q->ku = gw_auth_required(q->cfg) ? gw_keyuse_get(&g->keyuse, label) : NULL;
}

const char *gw_key_hop(const struct req *q, struct MHD_Connection *c)
{
	if (!gw_key_hop_trusted(q->cfg, q->key))
		return NULL; /* stripped: only a peer's key may say it came through a hop */
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, GW_HOP_HEADER);
}

static void reset_text(char *out, size_t n, double ms)
{
	long s = (long)ceil(ms / 1000.0);
	if (s < 1)
		s = 1;
	if (s >= 60)
		snprintf(out, n, "%ldm%lds", s / 60, s % 60);
	else
		snprintf(out, n, "%lds", s);
}

static enum MHD_Result limited(struct req *q, struct MHD_Connection *c, const struct gw_verdict *v)
{
	static const char *const what[] = { "", "requests per minute", "tokens per minute",
					    "concurrent requests" };
	long lim = v->hit == GW_LIM_REQUESTS ? q->key->rpm
		   : v->hit == GW_LIM_TOKENS ? q->key->tpm : q->key->concurrent;
	char ra[24], rl[24], rr[24], rs[24], tl[24], tr[24];
	snprintf(ra, sizeof(ra), "%.0f", v->retry_after_s);
	snprintf(rl, sizeof(rl), "%ld", v->req_limit);
	snprintf(rr, sizeof(rr), "%ld", v->req_remaining);
	reset_text(rs, sizeof(rs), v->reset_ms);
	snprintf(tl, sizeof(tl), "%ld", v->tok_limit);
	snprintf(tr, sizeof(tr), "%ld", v->tok_remaining);
	const char *h[16] = { "Retry-After", ra };
	int n = 2;
	if (v->req_limit > 0) {
		const char *x[] = { "x-ratelimit-limit-requests", rl, "x-ratelimit-remaining-requests", rr,
				    "x-ratelimit-reset-requests", rs };
		memcpy(h + n, x, sizeof(x));
		n += 6;
	}
	if (v->tok_limit > 0) {
		const char *x[] = { "x-ratelimit-limit-tokens", tl, "x-ratelimit-remaining-tokens", tr,
				    "x-ratelimit-reset-tokens", rs };
		memcpy(h + n, x, sizeof(x));
		n += 6;
	}
	h[n] = NULL;
	_cleanup_free_ char *m = xasprintf(
		"API key '%s' is over its limit of %ld %s; retry after %s s", q->key->name, lim,
		what[v->hit], ra);
	q->outcome = "rate_limited";
	return req_error(q, c, 429, "rate_limit_error", "rate_limited", m, NULL, h);
}

bool gw_key_admit(struct gateway *g, struct req *q, struct MHD_Connection *c, int role,
		  enum MHD_Result *rc)
{
	const struct gw_key *k = q->key;
	if (!k)
		return true;
	if (!gw_key_allows(k, role)) {
		json_t *allowed = json_array();
		for (int r = 0; r < ROLE__COUNT; r++)
			if (k->roles & (1u << r))
				json_array_append_new(allowed, json_string(role_name((enum role_id)r)));
		json_t *extra = json_pack("{s:s, s:s, s:o}", "key", k->name, "role",
					  role_name((enum role_id)role), "allowed_roles", allowed);
		_cleanup_free_ char *m = xasprintf("API key '%s' may not use role '%s'", k->name,
						   role_name((enum role_id)role));
		q->key_denied = true;
		*rc = req_error(q, c, 403, "permission_error", "role_not_allowed", m, extra, NULL);
		json_decref(extra);
		return false;
	}
	struct gw_limits l = { .rpm = k->rpm, .tpm = k->tpm, .concurrent = k->concurrent };
	struct gw_verdict v;
	if (gw_keyuse_admit(&g->keyuse, q->ku, &l, gw_now_ms(), &v) != GW_LIM_OK) {
		*rc = limited(q, c, &v);
		return false;
	}
	q->ku_held = true;
	return true;
}

void gw_key_done(struct gateway *g, struct req *q)
{
	if (!q->ku)
		return;
	bool ok = q->status >= 200 && q->status < 300;
	gw_keyuse_done(&g->keyuse, q->ku, q->ku_held, q->key_denied, ok ? q->usage.prompt : 0,
		       ok ? q->usage.completion : 0, gw_now_ms());
}
