/*
 * metrics.c — the gateway's counters (metrics.h): recording a relay's start
 * and a request's end with relaxed atomic adds into a fixed table, and the
 * usage scan that reads an engine's token counts from the bytes relayed.
 *
 * The table is allocated once per gateway; a request's end touches one
 * cell (its role and route): the status code, two histograms, bytes,
 * tokens and, when they apply, the 429 reason, the gateway's own error
 * code, the upstream error kind and a stream cancel. Readers (the
 * exposition) load each counter atomically; a scrape during traffic may see
 * one request's counters half added, never a torn integer.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "../util/cleanup.h"
#include "metrics.h"

const char *const gw_metrics_own_codes[] = {
	"not_found", "method_not_allowed", "invalid_api_key", "request_too_large",
	"invalid_json", "invalid_model", "wrong_endpoint", "model_not_found",
	"role_infeasible", "proxy_loop", "server_busy", "concurrency_limit",
	"backend_unavailable", "peer_unavailable", "peer_auth_failed", "role_not_allowed",
	"rate_limited", NULL,
};

/* upper bounds in seconds; suited to LLM latencies (a token, a long prompt,
 * a whole stream up to the 10-minute read timeout) */
static const unsigned long long bucket_us[GW_M_BUCKETS] = {
	5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000,
	5000000, 10000000, 30000000, 60000000, 120000000, 300000000, 600000000,
};

int gw_metrics_own_index(const char *code)
{
	for (int i = 0; code && gw_metrics_own_codes[i]; i++)
		if (!strcmp(code, gw_metrics_own_codes[i]))
			return i;
	return -1;
}

const char *gw_metrics_route_label(enum gw_endpoint ep)
{
	switch (ep) {
	case GW_EP_CHAT: return "/v1/chat/completions";
	case GW_EP_COMPLETIONS: return "/v1/completions";
	case GW_EP_EMBEDDINGS: return "/v1/embeddings";
	case GW_EP_RERANK: return "/v1/rerank";
	case GW_EP_SCORE: return "/v1/score";
	case GW_EP_TOKENIZE:
	case GW_EP_DETOKENIZE:
	case GW_EP_RESPONSES:
	case GW_EP_MESSAGES:
	case GW_EP_TRANSCRIPTIONS:
	case GW_EP_TRANSLATIONS:
	case GW_EP_POOLING:
	case GW_EP_CLASSIFY: return gw_endpoint_path(ep);
	case GW_EP_MODELS: return "/v1/models";
	case GW_EP_HEALTH: return "/health";
	case GW_EP_CAPABILITIES: return "/capabilities";
	case GW_EP_METRICS: return "/metrics";
	case GW_EP_STATUS: return "/status";
	case GW_EP_UI: return "/ui";
	default: return "other";
	}
}

const char *gw_metrics_role_label(int role)
{
	return role >= 0 && role < ROLE__COUNT ? role_name((enum role_id)role) : "none";
}

struct gw_metrics *gw_metrics_new(void)
{
	struct gw_metrics *m = xcalloc(1, sizeof(*m));
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	m->start_s = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	pthread_mutex_init(&m->ring.mu, NULL);
	return m;
}

void gw_metrics_free(struct gw_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->ring.mu);
	free(m);
}

static struct gw_mcell *cell(struct gw_metrics *m, int role, enum gw_endpoint ep)
{
	int r = role >= 0 && role < ROLE__COUNT ? role : GW_M_NONE;
	int e = (int)ep >= 0 && (int)ep < GW_M_ROUTES ? (int)ep : GW_EP_NONE;
	return &m->cell[r][e];
}

#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)

static void observe(struct gw_hist *h, double ms)
{
	unsigned long long us = ms > 0 ? (unsigned long long)(ms * 1000.0) : 0;
	int b = 0;
	while (b < GW_M_BUCKETS && us > bucket_us[b])
		b++;
	ADD(h->n[b], 1);
	ADD(h->sum_us, us);
}

void gw_metrics_relay_begin(struct gw_metrics *m, int role, enum gw_endpoint ep)
{
	ADD(cell(m, role, ep)->inflight, 1);
}

void gw_metrics_record(struct gw_metrics *m, const struct gw_obs *o)
{
	struct gw_mcell *c = cell(m, o->role, o->ep);
	if (o->relayed)
		ADD(c->inflight, -1);
	ADD(c->codes[o->status >= 100 && o->status <= 599 ? o->status - 99 : 0], 1);
	observe(&c->dur, o->total_ms);
	if (o->ttfb_ms >= 0)
		observe(&c->ttfb, o->ttfb_ms);
	ADD(c->req_bytes, o->req_bytes);
	ADD(c->resp_bytes, o->resp_bytes);
	if (o->prompt_tokens > 0)
		ADD(c->prompt_tokens, (unsigned long long)o->prompt_tokens);
	if (o->completion_tokens > 0)
		ADD(c->completion_tokens, (unsigned long long)o->completion_tokens);
	if (o->own >= 0 && o->own < (int)ARRAY_SIZE(c->own))
		ADD(c->own[o->own], 1);
	if (o->throttle >= 0 && o->throttle < GW_THR__COUNT)
		ADD(c->throttled[o->throttle], 1);
	if (o->uperr >= 0 && o->uperr < GW_UPERR__COUNT)
		ADD(c->upstream_err[o->uperr], 1);
	if (o->stream_cancel)
		ADD(c->stream_cancels, 1);
	/* last: a reader that sees the cell seen sees the rest (release) */
	__atomic_add_fetch(&c->seen, 1, __ATOMIC_RELEASE);
	ADD(m->done_total, 1);
}

void gw_metrics_reloaded(struct gw_metrics *m)
{
	ADD(m->reloads, 1);
}

static void totals(struct gw_metrics *m, unsigned long long v[GW_M_ROLES + 1][GW_RATE__COUNT])
{
	memset(v, 0, sizeof(unsigned long long) * (GW_M_ROLES + 1) * GW_RATE__COUNT);
	for (int r = 0; r < GW_M_ROLES; r++)
		for (int e = 0; e < GW_M_ROUTES; e++) {
			struct gw_mcell *c = &m->cell[r][e];
			unsigned long long x[GW_RATE__COUNT] = {
				__atomic_load_n(&c->seen, __ATOMIC_RELAXED),
				__atomic_load_n(&c->prompt_tokens, __ATOMIC_RELAXED),
				__atomic_load_n(&c->completion_tokens, __ATOMIC_RELAXED),
			};
			for (int k = 0; k < GW_RATE__COUNT; k++) {
				v[r][k] += x[k];
				v[GW_M_ROLES][k] += x[k];
			}
		}
}

void gw_metrics_rates(struct gw_metrics *m, double now_s, double out[GW_M_ROLES + 1][GW_RATE__COUNT])
{
	unsigned long long cur[GW_M_ROLES + 1][GW_RATE__COUNT];
	totals(m, cur);
	struct gw_rate_ring *g = &m->ring;
	pthread_mutex_lock(&g->mu);
	/* the oldest sample inside the window at least a second old; when
	 * /status is read less often, the newest one past it */
	int best = -1;
	for (int i = 0; i < g->n; i++) {
		int k = (g->head - 1 - i + GW_RATE_SLOTS) % GW_RATE_SLOTS;
		double age = now_s - g->t[k];
		if (age > GW_RATE_WINDOW_S && best >= 0)
			break;
		if (age >= 1.0)
			best = k;
		if (age > GW_RATE_WINDOW_S)
			break;
	}
	for (int r = 0; r <= GW_M_ROLES; r++)
		for (int k = 0; k < GW_RATE__COUNT; k++)
			out[r][k] = best < 0 ? NAN
					     : (double)(cur[r][k] - g->v[best][r][k]) / (now_s - g->t[best]);
	int last = (g->head - 1 + GW_RATE_SLOTS) % GW_RATE_SLOTS;
	if (!g->n || now_s - g->t[last] >= 1.0) {
		g->t[g->head] = now_s;
		memcpy(g->v[g->head], cur, sizeof(cur));
		g->head = (g->head + 1) % GW_RATE_SLOTS;
		if (g->n < GW_RATE_SLOTS)
			g->n++;
	}
	pthread_mutex_unlock(&g->mu);
}

/* ---- the usage scan ---- */

#define KEY "\"usage\""
#define KEYLEN (sizeof(KEY) - 1)

void gw_usage_free(struct gw_usage *u)
{
	free(u->cap);
	u->cap = NULL;
	u->ncap = 0;
}

static long long tok(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) && json_integer_value(v) >= 0 ? (long long)json_integer_value(v) : -1;
}

/* Try to decode the captured value. Returns the bytes of cap it used up
 * (the rest is scanned again), or 0 while it is incomplete. */
static size_t try_value(struct gw_usage *u)
{
	size_t i = 0;
	while (i < u->ncap && strchr(" \t\r\n", u->cap[i]))
		i++;
	if (i == u->ncap)
		return 0;
	if (u->cap[i] != ':')
		return i ? i : 1; /* "usage" was a value, not a key */
	i++;
	while (i < u->ncap && strchr(" \t\r\n", u->cap[i]))
		i++;
	if (i == u->ncap)
		return 0;
	if (u->cap[i] != '{')
		return i; /* null or not an object */
	json_error_t e;
	json_t *v = json_loadb(u->cap + i, u->ncap - i, JSON_DISABLE_EOF_CHECK, &e);
	if (!v) /* cut short (also inside a literal: "nu"): wait for more */
		return json_error_code(&e) == json_error_premature_end_of_input ||
				       (size_t)e.position + 5 >= u->ncap - i
			       ? 0
			       : i + 1;
	long long p = tok(v, "prompt_tokens"), c = tok(v, "completion_tokens");
	if (p >= 0) { /* the last one seen wins; embeddings have prompt tokens only */
		u->prompt = p;
		u->completion = c >= 0 ? c : 0;
	}
	json_decref(v);
	return i + (size_t)e.position;
}

/* Where the bytes after the first key in p begin (SIZE_MAX: none). */
static size_t find_key(const char *p, size_t n)
{
	const char *k = memmem(p, n, KEY, KEYLEN);
	for (; k; k = memmem(k + 1, n - (size_t)(k + 1 - p), KEY, KEYLEN))
		if (k == p || k[-1] != '\\') /* \"usage\" is text inside a string */
			return (size_t)(k - p) + KEYLEN;
	return SIZE_MAX;
}

/* Keep the last bytes of what was scanned, for a key split at the end. */
static void keep_tail(struct gw_usage *u, const char *p, size_t n)
{
	char w[2 * KEYLEN];
	if (n >= KEYLEN - 1) {
		memcpy(u->tail, p + n - (KEYLEN - 1), KEYLEN - 1);
		u->ntail = KEYLEN - 1;
		return;
	}
	memcpy(w, u->tail, u->ntail);
	memcpy(w + u->ntail, p, n);
	size_t nw = u->ntail + n, keep = nw < KEYLEN - 1 ? nw : KEYLEN - 1;
	memcpy(u->tail, w + nw - keep, keep);
	u->ntail = keep;
}

/* The bytes after a key: decode the value once complete. Returns how many
 * of p[0..n) it consumed (the rest is scanned for the next key). */
static size_t capture(struct gw_usage *u, const char *p, size_t n)
{
	if (!u->cap)
		u->cap = xcalloc(1, GW_USAGE_MAX);
	size_t old = u->ncap, room = GW_USAGE_MAX - old, take = n < room ? n : room;
	memcpy(u->cap + old, p, take);
	u->ncap += take;
	size_t used = try_value(u);
	if (!used && u->ncap < GW_USAGE_MAX)
		return take; /* incomplete: wait for more (take == n here) */
	u->ncap = 0; /* done with this value */
	if (!used) /* too long to be a usage object: give it up */
		return take;
	/* the value ended in the bytes just added (it was incomplete before) */
	return used > old ? used - old : 0;
}

void gw_usage_feed(struct gw_usage *u, const char *p, size_t n)
{
	while (n) {
		if (u->capturing) {
			size_t c = capture(u, p, n);
			if (u->ncap)
				return;
			u->capturing = false;
			u->ntail = 0;
			p += c;
			n -= c;
			continue;
		}
		size_t at = SIZE_MAX;
		if (u->ntail) { /* a key split between the previous bytes and these */
			char w[2 * KEYLEN];
			size_t h = n < KEYLEN - 1 ? n : KEYLEN - 1, t = u->ntail;
			memcpy(w, u->tail, t);
			memcpy(w + t, p, h);
			size_t a = find_key(w, t + h);
			if (a != SIZE_MAX && a > t)
				at = a - t;
		}
		if (at == SIZE_MAX)
			at = find_key(p, n);
		if (at == SIZE_MAX) {
			keep_tail(u, p, n);
			return;
		}
		u->capturing = true;
		u->ncap = 0;
		p += at;
		n -= at;
	}
}
