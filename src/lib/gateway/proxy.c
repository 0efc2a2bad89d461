/*
 * proxy.c — the gateway side of peers.yaml: a request for a role proxied
 * to a peer goes to the peer's gateway through the ordinary relay (relay.c,
 * upstream.c, so streams are relayed frame by frame) with the URL and
 * headers of proxy_hop.c; this file keeps what the proxied roles look like
 * from here. It calls only down (the settings, the log) and is called by
 * the HTTP front (server.c).
 *
 * Readiness of proxied roles: one background thread asks each peer that
 * serves a proxied role for its own /v1/models (with the key, bounded by
 * health_timeout_ms, every health_interval_ms). The role is ready when the
 * peer lists it, and the peer's served checkpoint id (the `root` of its
 * entry) is what /capabilities and /v1/models show for it here, with
 * `proxied: true` and `hosted_by`. A peer that rejects the key, or is down,
 * makes its roles not ready and is logged once per change.
 */
#include <curl/curl.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "proxy.h"

#define MODELS_CAP (1u << 20)
#define ID_MAX 256

struct peer_poll {
	struct gw_live *live;
	struct gw_log *log;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	bool ready[ROLE__COUNT];
	char id[ROLE__COUNT][ID_MAX];
	long last_status[ROLE__COUNT]; /* for change logging; -1 before the first */
};

static size_t collect(char *p, size_t s, size_t n, void *ud)
{
	return buf_add(ud, p, s * n) < 0 ? 0 : s * n;
}

static int abort_if_stopping(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	struct peer_poll *pp = ud;
	return __atomic_load_n(&pp->stop, __ATOMIC_RELAXED);
}

/* GET origin/v1/models with the peer's key. Returns the HTTP status (0: no
 * answer) and the parsed body in *out (NULL when not JSON). */
static long fetch_models(struct peer_poll *pp, const struct gw_config *c, const struct gw_peer *p,
			 json_t **out)
{
	*out = NULL;
	struct buf b;
	buf_init(&b, MODELS_CAP);
	_cleanup_free_ char *url = proxy_url(p, "/v1/models");
	struct curl_slist *h = proxy_headers(NULL, c, p);
	CURL *e = curl_easy_init();
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->health_timeout_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)c->health_timeout_ms);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, abort_if_stopping);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, pp);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->peer_ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, c->peer_ca_file);
	long code = 0;
	if (curl_easy_perform(e) == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(e);
	curl_slist_free_all(h);
	if (code == 200)
		*out = json_loadb(buf_str(&b), b.len, 0, NULL);
	buf_free(&b);
	return code;
}

/* The peer's entry for role: ready and its served checkpoint id. */
static bool models_has(json_t *models, const char *role, char *id, size_t idn)
{
	json_t *data = json_object_get(models, "data"), *m;
	size_t i;
	json_array_foreach(data, i, m) {
		const char *mid = json_string_value(json_object_get(m, "id"));
		if (!mid || strcmp(mid, role) != 0)
			continue;
		const char *root = json_string_value(json_object_get(m, "root"));
		snprintf(id, idn, "%s", root && *root ? root : mid);
		return true;
	}
	return false;
}

static void poll_once(struct peer_poll *pp, const struct gw_config *c)
{
	if (!c->peers)
		return;
	for (size_t pi = 0; pi < c->peers->n; pi++) {
		const struct gw_peer *p = &c->peers->v[pi];
		bool wanted = false;
		for (int r = 0; r < ROLE__COUNT; r++)
			wanted |= gw_role_proxy_peer(c, r) == p;
		if (!wanted)
			continue;
		json_t *models = NULL;
		long code = fetch_models(pp, c, p, &models);
		for (int r = 0; r < ROLE__COUNT; r++) {
			if (gw_role_proxy_peer(c, r) != p)
				continue;
			char id[ID_MAX] = "";
			bool up = models && models_has(models, role_name((enum role_id)r), id, sizeof(id));
			pthread_mutex_lock(&pp->mu);
			bool was = pp->ready[r];
			long last = pp->last_status[r];
			pp->ready[r] = up;
			pp->last_status[r] = code;
			if (up)
				snprintf(pp->id[r], ID_MAX, "%s", id);
			pthread_mutex_unlock(&pp->mu);
			if (was != up || last != code)
				gw_log_json(pp->log, json_pack("{s:s, s:s, s:s, s:b, s:i, s:s}", "event", "peer-health",
							 "role", role_name((enum role_id)r), "peer", p->name,
							 "ready", up, "status", (int)code, "why",
							 code == 0     ? "no answer"
							 : code == 401 ? "the peer rejects this box's key"
							 : code != 200 ? "unexpected status"
							 : up          ? "listed"
								       : "not listed by the peer"));
		}
		json_decref(models);
	}
	/* roles no longer proxied (after a reload) are not ready */
	pthread_mutex_lock(&pp->mu);
	for (int r = 0; r < ROLE__COUNT; r++)
		if (!gw_role_proxy_peer(c, r))
			pp->ready[r] = false;
	pthread_mutex_unlock(&pp->mu);
}

bool proxy_role_down(struct peer_poll *pp, int role, const char **why)
{
	if (!pp || role < 0 || role >= ROLE__COUNT)
		return false;
	pthread_mutex_lock(&pp->mu);
	/* only a peer that did not answer at all: one that answers gives its
	 * own answer through the relay (its 404 role_infeasible, 508 loop,
	 * 503; a rejected key is 502 peer_auth_failed) */
	bool down = !pp->ready[role] && pp->last_status[role] == 0;
	pthread_mutex_unlock(&pp->mu);
	if (down)
		*why = "it did not answer its last readiness poll (its /v1/models)";
	return down;
}

static void *poll_main(void *arg)
{
	struct peer_poll *pp = arg;
	for (;;) {
		struct gw_config *c = gw_live_get(pp->live);
		poll_once(pp, c);
		int interval = c->health_interval_ms;
		gw_config_unref(c);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += interval / 1000;
		ts.tv_nsec += (long)(interval % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&pp->mu);
		if (!pp->stop)
			pthread_cond_timedwait(&pp->cv, &pp->mu, &ts);
		bool stop = pp->stop;
		pthread_mutex_unlock(&pp->mu);
		if (stop)
			return NULL;
	}
}

struct peer_poll *proxy_poll_start(struct gw_live *live, struct gw_log *log, struct err **err)
{
	struct peer_poll *pp = xcalloc(1, sizeof(*pp));
	pp->live = live;
	pp->log = log;
	pthread_mutex_init(&pp->mu, NULL);
	pthread_cond_init(&pp->cv, NULL);
	for (int r = 0; r < ROLE__COUNT; r++)
		pp->last_status[r] = -1;
	if (pthread_create(&pp->th, NULL, poll_main, pp) != 0) {
		free(pp);
		err_set(err, EXIT_RUNTIME, "cannot start the peer poll thread");
		return NULL;
	}
	return pp;
}

void proxy_poll_wake(struct peer_poll *pp)
{
	if (!pp)
		return;
	pthread_mutex_lock(&pp->mu);
	pthread_cond_signal(&pp->cv);
	pthread_mutex_unlock(&pp->mu);
}

void proxy_poll_stop(struct peer_poll *pp)
{
	if (!pp)
		return;
	pthread_mutex_lock(&pp->mu);
	__atomic_store_n(&pp->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&pp->cv);
	pthread_mutex_unlock(&pp->mu);
	pthread_join(pp->th, NULL);
	pthread_mutex_destroy(&pp->mu);
	pthread_cond_destroy(&pp->cv);
	free(pp);
}

/* Snapshot of the proxied roles' state. */
static void snapshot(struct peer_poll *pp, bool ready[ROLE__COUNT], char id[ROLE__COUNT][ID_MAX])
{
	memset(ready, 0, sizeof(bool) * ROLE__COUNT);
	memset(id, 0, ROLE__COUNT * ID_MAX);
	if (!pp)
		return;
	pthread_mutex_lock(&pp->mu);
	memcpy(ready, pp->ready, sizeof(pp->ready));
	memcpy(id, pp->id, sizeof(pp->id));
	pthread_mutex_unlock(&pp->mu);
}

json_t *proxy_caps_overlay(struct peer_poll *pp, const struct gw_config *c, json_t *caps)
{
	bool ready[ROLE__COUNT];
	char id[ROLE__COUNT][ID_MAX];
	snapshot(pp, ready, id);
	json_object_set_new(caps, "box", json_string(gw_box_name(c)));
	json_t *roles = json_object_get(caps, "roles"), *o;
	size_t i;
	json_array_foreach(roles, i, o) {
		int r = role_from_name(json_string_value(json_object_get(o, "role")));
		const struct gw_peer *p = gw_role_proxy_peer(c, r);
		if (r < 0 || !c->peers || c->peers->role[r].mode == GW_PEER_NONE)
			continue;
		json_object_set_new(o, "hosted_by_box",
				    json_string(c->peers->v[c->peers->role[r].peer].name));
		if (!p) {
			json_object_set_new(o, "proxied", json_false());
			continue;
		}
		json_object_set_new(o, "proxied", json_true());
		json_object_set_new(o, "ready", json_boolean(ready[r]));
		if (*id[r]) {
			json_object_set_new(o, "model", json_string(id[r]));
			json_t *names = json_pack("[s]", role_name((enum role_id)r));
			if (strcmp(id[r], role_name((enum role_id)r)) != 0)
				json_array_append_new(names, json_string(id[r]));
			json_object_set_new(o, "served_names", names);
		}
	}
	return caps;
}

json_t *proxy_models_overlay(struct peer_poll *pp, const struct gw_config *c, json_t *models)
{
	bool ready[ROLE__COUNT];
	char id[ROLE__COUNT][ID_MAX];
	snapshot(pp, ready, id);
	json_t *data = json_object_get(models, "data");
	for (int r = 0; r < ROLE__COUNT; r++) {
		const struct gw_peer *p = gw_role_proxy_peer(c, r);
		if (!p || !ready[r])
			continue;
		const char *name = role_name((enum role_id)r);
		const char *root = *id[r] ? id[r] : name;
		for (int k = 0; k < 2; k++) {
			const char *mid = k ? root : name;
			if (k && !strcmp(root, name))
				break;
			json_array_append_new(data, json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:b, s:s}", "id", mid,
							      "object", "model", "created", 0, "owned_by",
							      "lobes", "root", root, "role", name, "proxied",
							      true, "hosted_by", p->origin));
		}
	}
	return models;
}

bool proxy_route_by_peer_id(struct peer_poll *pp, const struct gw_config *c, enum gw_endpoint ep,
			    const char *body, size_t len, struct gw_route *rt)
{
	if (rt->status != 404 || !rt->code || strcmp(rt->code, "model_not_found") != 0)
		return false;
	bool ready[ROLE__COUNT];
	char id[ROLE__COUNT][ID_MAX];
	snapshot(pp, ready, id);
	json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	const char *model = json_string_value(json_object_get(j, "model"));
	int role = -1;
	for (int r = 0; model && r < ROLE__COUNT && role < 0; r++)
		if (gw_role_proxy_peer(c, r) && *id[r] && !strcmp(id[r], model))
			role = r;
	if (role < 0) {
		json_decref(j);
		return false;
	}
	json_object_set_new(j, "model", json_string(role_name((enum role_id)role)));
	char *nb = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	struct gw_route again = { 0 };
	if (!nb || gw_route_request(c, ep, nb, strlen(nb), &again) < 0) {
		gw_route_free(&again);
		free(nb);
		return false;
	}
	gw_route_free(rt);
	*rt = again;
	free(rt->body);
	rt->body = nb;
	rt->body_len = strlen(nb);
	return true;
}
