/*
 * health.c — worker 0's background readings, on its engine side
 * (upstream.c runs them from the loop's turn): the /health poll of each
 * feasible role through the worker's libcurl multi handle (every
 * health_interval_ms, each bounded by health_timeout_ms), which sets the
 * shared ready[] and health[] every worker reads (a role known not ready is
 * answered 503 at once, server.c, instead of a forward that would hang on a
 * frozen engine), and the pressure readings (swap,
 * iowait) once a second. Split from upstream.c, which carries the relays.
 */
#include <time.h>

#include "upstream.h"

static size_t discard(char *p, size_t s, size_t n, void *ud)
{
	(void)p, (void)ud;
	return s * n;
}

void upstream_health_poll(struct upstream *u, double now)
{
	struct gw_config *c = gw_live_get(u->sh->live);
	for (int i = 0; i < ROLE__COUNT; i++) {
		struct health_xfer *h = &u->health[i];
		if (h->easy)
			continue;
		if (!c->roles[i].feasible) {
			__atomic_store_n(&u->sh->ready[i], false, __ATOMIC_RELAXED);
			continue;
		}
		h->kind = XFER_HEALTH;
		h->role = i;
		free(h->url);
		h->url = xasprintf("http://127.0.0.1:%d/health", c->roles[i].port);
		h->easy = curl_easy_init();
		curl_easy_setopt(h->easy, CURLOPT_URL, h->url);
		curl_easy_setopt(h->easy, CURLOPT_PRIVATE, h);
		curl_easy_setopt(h->easy, CURLOPT_TIMEOUT_MS, (long)c->health_timeout_ms);
		curl_easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h->easy, CURLOPT_NOPROXY, "*"); /* loopback: never a proxy */
		curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, discard);
		curl_multi_add_handle(u->multi, h->easy);
	}
	u->next_health = now + c->health_interval_ms;
	gw_config_unref(c);
}

void upstream_health_done(struct upstream *u, struct health_xfer *h, CURLcode res)
{
	long code = 0;
	curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &code);
	bool up = res == CURLE_OK && code == 200;
	int state = up ? HEALTH_OK
		    : res == CURLE_OK ? (int)code
		    : res == CURLE_OPERATION_TIMEDOUT ? HEALTH_TIMEOUT
						      : HEALTH_NO_CONNECT;
	int before = __atomic_exchange_n(&u->sh->health[h->role], state, __ATOMIC_RELAXED);
	if (!up && (before == HEALTH_OK || before == HEALTH_UNKNOWN)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		__atomic_store_n(&u->sh->down_since_ms[h->role],
				 (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, __ATOMIC_RELAXED);
	}
	bool was = __atomic_exchange_n(&u->sh->ready[h->role], up, __ATOMIC_RELAXED);
	curl_multi_remove_handle(u->multi, h->easy);
	curl_easy_cleanup(h->easy);
	h->easy = NULL;
	if (was != up)
		gw_log_json(u->sh->log, json_pack("{s:s, s:s, s:b}", "event", "health", "role",
					 role_name((enum role_id)h->role), "ready", up));
}

void upstream_pressure_tick(struct upstream *u)
{
	struct gw_pressure *p = &u->pressure;
	gw_pressure_sample(p);
	int s = p->swap_pct < 0 ? -1 : (int)(p->swap_pct * 100);
	int io = p->iowait_pct < 0 ? -1 : (int)(p->iowait_pct * 100);
	__atomic_store_n(&u->sh->swap_x100, s, __ATOMIC_RELAXED);
	__atomic_store_n(&u->sh->iowait_x100, io, __ATOMIC_RELAXED);
}
