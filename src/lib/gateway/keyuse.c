/*
 * keyuse.c — each API key's limit window and counters (keyuse.h).
 *
 * One mutex guards the table and every window: a request takes it twice
 * (admit, done), for a few compares, and only when the gateway has keys.
 * The entries are allocated once and never freed before the gateway ends,
 * so a request may keep a pointer to its entry across a reload.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/err.h"
#include "keyuse.h"

void gw_window_init(struct gw_window *w)
{
	memset(w, 0, sizeof(*w));
	w->start_ms = -1;
}

static void roll(struct gw_window *w, double now)
{
	if (w->start_ms < 0 || now >= w->start_ms + GW_KEY_WINDOW_MS) {
		w->start_ms = now;
		w->requests = w->tokens = 0;
	}
}

static long left(long limit, long used)
{
	return limit <= 0 ? 0 : used >= limit ? 0 : limit - used;
}

enum gw_limit_hit gw_window_admit(struct gw_window *w, const struct gw_limits *l, double now,
				  struct gw_verdict *v)
{
	roll(w, now);
	memset(v, 0, sizeof(*v));
	v->req_limit = l->rpm;
	v->tok_limit = l->tpm;
	v->reset_ms = w->start_ms + GW_KEY_WINDOW_MS - now;
	double reset_s = ceil(v->reset_ms / 1000.0);
	if (l->concurrent > 0 && w->open >= l->concurrent) {
		v->hit = GW_LIM_CONCURRENT;
		v->retry_after_s = 1;
	} else if (l->rpm > 0 && w->requests >= l->rpm) {
		v->hit = GW_LIM_REQUESTS;
		v->retry_after_s = reset_s < 1 ? 1 : reset_s;
	} else if (l->tpm > 0 && w->tokens >= l->tpm) {
		v->hit = GW_LIM_TOKENS;
		v->retry_after_s = reset_s < 1 ? 1 : reset_s;
	} else {
		w->requests++;
		w->open++;
	}
	v->req_remaining = left(l->rpm, w->requests);
	v->tok_remaining = left(l->tpm, w->tokens);
	return v->hit;
}

void gw_window_release(struct gw_window *w)
{
	if (w->open > 0)
		w->open--;
}

void gw_window_tokens(struct gw_window *w, long tokens, double now)
{
	if (tokens <= 0)
		return;
	roll(w, now);
	w->tokens += tokens;
}

void gw_keyuse_init(struct gw_keyuse *u)
{
	memset(u, 0, sizeof(*u));
	pthread_mutex_init(&u->mu, NULL);
}

void gw_keyuse_destroy(struct gw_keyuse *u)
{
	for (int i = 0; i <= GW_KEYUSE_MAX; i++)
		free(u->v[i]);
	pthread_mutex_destroy(&u->mu);
}

static struct gw_keyuse_ent *ent_new(const char *name)
{
	struct gw_keyuse_ent *e = xcalloc(1, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	gw_window_init(&e->w);
	return e;
}

struct gw_keyuse_ent *gw_keyuse_get(struct gw_keyuse *u, const char *name)
{
	pthread_mutex_lock(&u->mu);
	struct gw_keyuse_ent *hit = NULL;
	for (int i = 0; i < u->n && !hit; i++)
		if (!strcmp(u->v[i]->name, name))
			hit = u->v[i];
	if (!hit && u->n < GW_KEYUSE_MAX)
		hit = u->v[u->n++] = ent_new(name);
	if (!hit) {
		if (!u->v[GW_KEYUSE_MAX])
			u->v[GW_KEYUSE_MAX] = ent_new("other");
		hit = u->v[GW_KEYUSE_MAX];
	}
	pthread_mutex_unlock(&u->mu);
	return hit;
}

enum gw_limit_hit gw_keyuse_admit(struct gw_keyuse *u, struct gw_keyuse_ent *e,
				  const struct gw_limits *l, double now, struct gw_verdict *v)
{
	pthread_mutex_lock(&u->mu);
	enum gw_limit_hit h = gw_window_admit(&e->w, l, now, v);
	if (h == GW_LIM_REQUESTS)
		e->throttled[GW_KU_THR_REQUESTS]++;
	else if (h == GW_LIM_TOKENS)
		e->throttled[GW_KU_THR_TOKENS]++;
	else if (h == GW_LIM_CONCURRENT)
		e->throttled[GW_KU_THR_CONCURRENT]++;
	pthread_mutex_unlock(&u->mu);
	return h;
}

void gw_keyuse_done(struct gw_keyuse *u, struct gw_keyuse_ent *e, bool held, bool denied,
		    long prompt, long completion, double now)
{
	pthread_mutex_lock(&u->mu);
	e->requests++;
	e->denied += denied;
	if (held)
		gw_window_release(&e->w);
	if (prompt > 0)
		e->prompt_tokens += (unsigned long long)prompt;
	if (completion > 0)
		e->completion_tokens += (unsigned long long)completion;
	gw_window_tokens(&e->w, (prompt > 0 ? prompt : 0) + (completion > 0 ? completion : 0), now);
	pthread_mutex_unlock(&u->mu);
}

#define P "lobes_gateway_key_"

static void family(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP " P "%s %s\n# TYPE " P "%s %s\n", name, help, name, type);
}

void gw_keyuse_render(struct gw_keyuse *u, struct buf *b)
{
	static const char *const thr[GW_KU_THR__COUNT] = { "requests", "tokens", "concurrent" };
	pthread_mutex_lock(&u->mu);
	int n = u->n;
	struct gw_keyuse_ent *all[GW_KEYUSE_MAX + 1];
	memcpy(all, u->v, sizeof(all[0]) * (size_t)n);
	if (u->v[GW_KEYUSE_MAX])
		all[n++] = u->v[GW_KEYUSE_MAX];
	family(b, "requests_total", "counter",
	       "Requests answered, by API key name (none: no key needed, unknown: no valid key).");
	for (int i = 0; i < n; i++)
		buf_printf(b, P "requests_total{key=\"%s\"} %llu\n", all[i]->name, all[i]->requests);
	family(b, "denied_total", "counter", "403 role_not_allowed answers, by API key name.");
	for (int i = 0; i < n; i++)
		buf_printf(b, P "denied_total{key=\"%s\"} %llu\n", all[i]->name, all[i]->denied);
	family(b, "throttled_total", "counter",
	       "429 rate_limited answers, by API key name and the limit reached.");
	for (int i = 0; i < n; i++)
		for (int t = 0; t < GW_KU_THR__COUNT; t++)
			buf_printf(b, P "throttled_total{key=\"%s\",limit=\"%s\"} %llu\n", all[i]->name,
				   thr[t], all[i]->throttled[t]);
	family(b, "tokens_total", "counter",
	       "Tokens of the engines' usage objects, by API key name and kind.");
	for (int i = 0; i < n; i++) {
		buf_printf(b, P "tokens_total{key=\"%s\",kind=\"prompt\"} %llu\n", all[i]->name,
			   all[i]->prompt_tokens);
		buf_printf(b, P "tokens_total{key=\"%s\",kind=\"completion\"} %llu\n", all[i]->name,
			   all[i]->completion_tokens);
	}
	family(b, "open_requests", "gauge", "Requests of the key being answered now (its concurrent count).");
	for (int i = 0; i < n; i++)
		buf_printf(b, P "open_requests{key=\"%s\"} %ld\n", all[i]->name, all[i]->w.open);
	pthread_mutex_unlock(&u->mu);
}
