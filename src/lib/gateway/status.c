/*
 * status.c — GET /status: the fleet as the gateway sees it, as one JSON
 * object, for `lobes top`, the /ui page and an operator's curl. Keyless
 * like /metrics, or behind the key with LOBES_GATEWAY_METRICS_AUTH=key.
 * In the server layer: it reads the gateway object (internal.h), the
 * counters (metrics.h) and the box's memory through the runtime's reader,
 * the one the memory gate uses (runtime/memory.h).
 *
 *   gateway: version, start time, uptime, workers, draining, open requests,
 *            reloads, requests/s (over the last ~10 s; null until a
 *            /status a second or more earlier gives a base)
 *   box:     MemTotal, MemAvailable, MemFree (what vLLM's startup check
 *            and the memory gate read on a unified-memory box), SwapTotal,
 *            SwapFree in bytes; swap used and iowait in percent, the
 *            readings the pressure policy sheds by (null when unknown)
 *   roles:   per role: state (ready, down, infeasible, proxied), ready,
 *            feasible, port, model, hosted_by, requests in flight, and the
 *            gateway's requests/s and prompt/completion tokens/s for it
 *            (from the engines' usage objects); engine: the engine's own
 *            figures (running, waiting, KV-cache usage, tokens/s, MTP
 *            acceptance) from the last scrapes of its /metrics (engines.c),
 *            else null with engine_error saying why.
 */
#include <math.h>
#include <time.h>

#include "../runtime/runtime.h"
#include "../util/cleanup.h"
#include "internal.h"

static json_t *num(double v)
{
	return isnan(v) ? json_null() : json_real(round(v * 1000) / 1000);
}

static json_t *box(const struct gateway *g)
{
	static const char *const fields[][2] = {
		{ "MemTotal", "mem_total_bytes" },     { "MemAvailable", "mem_available_bytes" },
		{ "MemFree", "mem_free_bytes" },       { "SwapTotal", "swap_total_bytes" },
		{ "SwapFree", "swap_free_bytes" },
	};
	json_t *o = json_object();
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		uint64_t b;
		struct err *e = NULL;
		bool ok = meminfo_field(fields[i][0], &b, &e) == 0;
		err_free(e);
		json_object_set_new(o, fields[i][1], ok ? json_integer((json_int_t)b) : json_null());
	}
	int s = __atomic_load_n(&g->eng.swap_x100, __ATOMIC_RELAXED);
	int io = __atomic_load_n(&g->eng.iowait_x100, __ATOMIC_RELAXED);
	json_object_set_new(o, "swap_used_pct", s < 0 ? json_null() : json_real(s / 100.0));
	json_object_set_new(o, "iowait_pct", io < 0 ? json_null() : json_real(io / 100.0));
	return o;
}

/* The engine's own figures (engines.c), null when there are none; then
 * engine_error says why. */
static json_t *engine(struct gateway *g, int r)
{
	struct engine_view v;
	engine_poll_view(g->ep, r, &v);
	if (!v.have)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "running", num(v.running), "waiting",
			 num(v.waiting), "kv_usage", num(v.kv_usage), "prompt_tokens_per_s",
			 num(v.prompt_tps), "generation_tokens_per_s", num(v.generation_tps),
			 "mtp_accept", num(v.accept), "metric_names", v.folder);
}

static json_t *engine_error(struct gateway *g, int r)
{
	struct engine_view v;
	engine_poll_view(g->ep, r, &v);
	return !v.have && *v.error ? json_string(v.error) : json_null();
}

static const char *state_of(json_t *cap)
{
	if (json_is_true(json_object_get(cap, "proxied")))
		return "proxied";
	if (!json_is_true(json_object_get(cap, "feasible")))
		return "infeasible";
	return json_is_true(json_object_get(cap, "ready")) ? "ready" : "down";
}

static json_t *roles(struct gateway *g, const struct gw_config *c,
		     double rates[GW_M_ROLES + 1][GW_RATE__COUNT])
{
	bool ready[ROLE__COUNT];
	for (int i = 0; i < ROLE__COUNT; i++)
		ready[i] = __atomic_load_n(&g->eng.ready[i], __ATOMIC_RELAXED);
	json_t *caps = proxy_caps_overlay(g->pp, c, gw_capabilities(c, ready));
	json_t *out = json_array(), *list = json_object_get(caps, "roles");
	size_t i;
	json_t *cap;
	json_array_foreach(list, i, cap) {
		int r = role_from_name(json_string_value(json_object_get(cap, "role")));
		if (r < 0)
			continue;
		const struct gw_role *gr = &c->roles[r];
		long long inflight = 0;
		for (int e = 0; e < GW_M_ROUTES; e++)
			inflight += __atomic_load_n(&g->metrics->cell[r][e].inflight, __ATOMIC_RELAXED);
		json_t *o = json_pack("{s:s, s:s, s:O, s:O, s:s, s:I}", "role", role_name((enum role_id)r),
				      "state", state_of(cap), "ready", json_object_get(cap, "ready"),
				      "feasible", json_object_get(cap, "feasible"), "model", gr->model,
				      "in_flight", (json_int_t)inflight);
		json_object_set_new(o, "port", gr->feasible && gr->port ? json_integer(gr->port) : json_null());
		json_object_set_new(o, "hosted_by", gr->hosted_by ? json_string(gr->hosted_by) : json_null());
		json_object_set_new(o, "requests_per_s", num(rates[r][GW_RATE_REQ]));
		json_object_set_new(o, "prompt_tokens_per_s", num(rates[r][GW_RATE_PROMPT]));
		json_object_set_new(o, "completion_tokens_per_s", num(rates[r][GW_RATE_COMPLETION]));
		json_object_set_new(o, "engine", engine(g, r));
		json_object_set_new(o, "engine_error", engine_error(g, r));
		json_array_append_new(out, o);
	}
	json_decref(caps);
	return out;
}

json_t *gw_status_json(struct gateway *g, const struct gw_config *c)
{
	struct timespec mono, wall;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &wall);
	double rates[GW_M_ROLES + 1][GW_RATE__COUNT];
	gw_metrics_rates(g->metrics, (double)mono.tv_sec + mono.tv_nsec / 1e9, rates);
	double now = (double)wall.tv_sec + wall.tv_nsec / 1e9;
	const struct gw_metrics *m = g->metrics;
	json_t *gw = json_pack("{s:s, s:f, s:f, s:i, s:b, s:b, s:I, s:I}", "version",
			       m->version[0] ? m->version : "unknown", "start_time", m->start_s,
			       "uptime_s", round(now - m->start_s), "workers", g->n_workers,
			       "draining", g->draining, "auth", gw_auth_required(c), "open_requests",
			       (json_int_t)__atomic_load_n(&g->inflight, __ATOMIC_RELAXED),
			       "config_reloads",
			       (json_int_t)__atomic_load_n(&m->reloads, __ATOMIC_RELAXED));
	json_object_set_new(gw, "requests_per_s", num(rates[GW_M_ROLES][GW_RATE_REQ]));
	return json_pack("{s:s, s:s, s:f, s:o, s:o, s:o}", "profile", c->profile, "card", c->card,
			 "time", now, "gateway", gw, "box", box(g), "roles", roles(g, c, rates));
}
