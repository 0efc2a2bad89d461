/*
 * server.c — the HTTP front, the top layer of the gateway (internal.h has
 * the layers): one libmicrohttpd daemon per worker loop (worker.c: external
 * epoll mode, run by the loop that also runs the worker's engine side,
 * upstream.c), suspend/resume for everything that waits on an engine.
 * Every daemon listens on the same address and port (SO_REUSEPORT when
 * there is more than one); with port 0 the first picks the port and the
 * others bind that one.
 *
 * A request goes through, in this order:
 *   0. the framing of its body (intake.c): 400 invalid_framing, 501
 *      unsupported_transfer_encoding, answered at once (the connection
 *      then closes);
 *   1. endpoint and method: 404 not_found, 405 (+ Allow);
 *   2. the key, unless the route is keyless (/health, /capabilities; and
 *      /metrics, /status, /ui unless LOBES_GATEWAY_METRICS_AUTH=key): 401
 *      invalid_api_key + WWW-Authenticate;
 *   3. local endpoints (/health, /v1/models, /capabilities) are answered
 *      here, with the roles proxied to peers (proxy.c);
 *   4. the body cap: 413 request_too_large, from Content-Length before
 *      reading and while reading;
 *   5. routing (route.c; a checkpoint id a peer reported is routed by
 *      proxy.c): 400 invalid_json/invalid_model/wrong_endpoint, 404
 *      model_not_found/role_infeasible;
 *   6. a role proxied to a peer that came here through a proxy hop: 508
 *      proxy_loop;
 *   7. the pressure policy, for alias requests only: 429 server_busy +
 *      Retry-After: 5;
 *   8. the role's concurrency cap: 429 concurrency_limit + Retry-After: 1;
 *   9. the relay to the engine or the peer (relay.c: the upstream request,
 *      and the answer pulled from the relay buffer).
 *
 * Errors 1-2 and the local answers 3 are decided at the head and answered
 * once the body is in (read and dropped), so the connection stays open
 * (MHD 0.9.75 closes it after an answer queued from the head); 4 and the
 * buffer budget (503 server_busy) are answered at the head. Header and URL
 * size are bounded by MHD's per-connection memory (431/414 from MHD), idle
 * connections by MHD's connection timeout. Every request
 * ends in one JSON access line: id, method, path, role, status, bytes,
 * upstream ms (to the engine's head), total ms, outcome, and the trace id
 * of a client's traceparent (trace.c). No bodies, no keys.
 * This file also starts, reloads and drains the gateway: a drain quiesces
 * every daemon, lets the requests in flight on every worker finish within
 * drain_timeout_s, then cancels the rest. The per-role caps and the
 * connection limit hold across workers (shared atomic counters; each daemon
 * gets its share of max_connections).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "internal.h"

/* MHD's memory pool per connection: request line and headers, then the
 * write buffer of the response. MHD zeroes what it gives back, so the whole
 * pool is resident for every open connection: 16 KiB keeps 1,000 SSE
 * streams at 16 MB (32 KiB cost 32 MB) and still takes ~14 KiB of headers
 * (nginx's default is 8 KiB a header line); past it MHD answers 431/414. */
#define CONN_MEMORY (16 * 1024)

static void new_id(struct gateway *g, struct MHD_Connection *c, char *out, size_t n)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Request-Id");
	bool ok = h && *h && strlen(h) < n;
	for (const char *p = h; ok && *p; p++)
		ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		     *p == '-' || *p == '_' || *p == '.';
	if (ok) {
		snprintf(out, n, "%s", h);
		return;
	}
	unsigned long long k = __atomic_add_fetch(&g->counter, 1, __ATOMIC_RELAXED);
	snprintf(out, n, "gw-%08llx%08llx", g->seed & 0xffffffffull, k);
}

/* 503 server_busy: the buffer budget (max_buffered) is spent. */
static enum MHD_Result busy_error(struct req *q, struct MHD_Connection *c)
{
	_cleanup_free_ char *m = xasprintf(
		"the gateway holds %zu bytes of requests and answers in flight, its limit "
		"(LOBES_GATEWAY_MAX_BUFFERED_BYTES); retry later", q->cfg->max_buffered);
	const char *h[] = { "Retry-After", GW_RETRY_AFTER, NULL };
	return req_error(q, c, 503, "server_busy", "server_busy", m, NULL, h);
}

/* Append a piece of the request body, charging its allocation to the
 * budget: past the body cap the request is too big, past the budget busy;
 * either way what was buffered is freed and the rest is discarded. */
static void body_add(struct gateway *g, struct req *q, const char *p, size_t n)
{
	if (q->too_big || q->busy)
		return;
	size_t grown = upstream_buf_grown(&q->body, n);
	if (q->body.len + n > q->cfg->max_body)
		q->too_big = true;
	else if (grown > q->body.alloc &&
		 !upstream_budget_take(&g->eng, grown - q->body.alloc, q->cfg->max_buffered))
		q->busy = true;
	else if (grown > q->body.alloc)
		q->charged += grown - q->body.alloc;
	if (q->too_big || q->busy) {
		buf_free(&q->body);
		upstream_budget_give(&g->eng, q->charged);
		q->charged = 0;
		return;
	}
	buf_add(&q->body, p, n);
}

/* A role known not ready (its engine's /health, or its peer's readiness
 * poll, failed last) is answered 503 at once with the reason instead of a
 * forward that would wait on a frozen engine; worker 0 is asked to poll
 * again (at most once a second) so a recovery is seen soon. */
static bool not_ready(struct gateway *g, struct req *q, struct MHD_Connection *c,
		      const struct gw_route *rt, enum MHD_Result *rc)
{
	const char *why;
	struct proxy_err pe;
	bool down;
	if (rt->proxied) {
		down = proxy_role_down(g->pp, rt->role, &why) &&
		       proxy_err_down(q->cfg, rt->role, why, &pe);
		if (down)
			*rc = req_proxy_err(q, c, &pe);
		return down;
	}
	size_t n_fb;
	gw_role_fallbacks(q->cfg, rt->role, &n_fb);
	if (n_fb && __atomic_load_n(&g->eng.health[rt->role], __ATOMIC_RELAXED) == HEALTH_NO_CONNECT)
		return false; /* refusing: the relay is refused at once and fails over (failover.c) */
	down = relay_known_down(q, c, &g->eng, rt->role, rc);
	long long now = (long long)gw_now_ms();
	if (down && now - __atomic_load_n(&g->eng.last_kick, __ATOMIC_RELAXED) > 1000) {
		__atomic_store_n(&g->eng.last_kick, now, __ATOMIC_RELAXED);
		upstream_poll_now(&g->lanes[0].up);
	}
	return down;
}

/* The whole body is in: route it and relay it, or answer the error. */
static enum MHD_Result dispatch(struct gateway *g, struct req *q, struct MHD_Connection *c)
{
	if (q->too_big) {
		_cleanup_free_ char *m = xasprintf("the request body is larger than %zu bytes",
						   q->cfg->max_body);
		return req_error(q, c, 413, "invalid_request_error", "request_too_large", m, NULL,
				 NULL);
	}
	if (q->busy)
		return busy_error(q, c);
	struct gw_route rt;
	bool form = gw_endpoint_multipart(q->ep); /* audio: the form's `model` (form.c) */
	if ((form ? gw_route_form(q, c, &rt)
		  : gw_route_request(q->cfg, q->ep, buf_str(&q->body), q->body.len, &rt)) < 0 &&
	    (form || !proxy_route_by_peer_id(g->pp, q->cfg, q->ep, buf_str(&q->body), q->body.len, &rt))) {
		enum MHD_Result rc = req_error(q, c, rt.status, rt.type, rt.code, rt.message, rt.extra,
					       NULL);
		const char *rn = rt.extra ? json_string_value(json_object_get(rt.extra, "role")) : NULL;
		q->log_role = rn ? role_from_name(rn) : -1;
		gw_route_free(&rt);
		return rc;
	}
	q->alias = rt.via_alias;
	const char *role = role_name((enum role_id)rt.role);
	struct proxy_err pe; /* peers.yaml: one proxy hop at most (508) */
	if (rt.proxied && proxy_err_loop(q->cfg, rt.role, gw_key_hop(q, c), &pe)) {
		q->log_role = rt.role;
		gw_route_free(&rt);
		return req_proxy_err(q, c, &pe);
	}
	q->log_role = rt.role; /* a request shed below is the role's too */
	if (rt.via_alias) {
		const char *why = NULL;
		double swap = __atomic_load_n(&g->eng.swap_x100, __ATOMIC_RELAXED) / 100.0;
		double io = __atomic_load_n(&g->eng.iowait_x100, __ATOMIC_RELAXED) / 100.0;
		if (gw_pressure_shed(q->cfg, swap, io, &why)) {
			_cleanup_free_ char *m = xasprintf(
				"the box is under pressure (%s %.0f%%): requests by alias are shed; "
				"retry later or name the role",
				why, !strcmp(why, "swap") ? swap : io);
			const char *h[] = { "Retry-After", GW_RETRY_AFTER, NULL };
			gw_route_free(&rt);
			return req_error(q, c, 429, "server_busy", "server_busy", m, NULL, h);
		}
	}
	q->log_role = rt.role;
	enum MHD_Result rc;
	if (!gw_key_admit(g, q, c, rt.role, &rc) || not_ready(g, q, c, &rt, &rc)) {
		gw_route_free(&rt);
		return rc;
	}
	int n = __atomic_add_fetch(&g->role_inflight[rt.role], 1, __ATOMIC_SEQ_CST);
	q->role = rt.role;
	if (n > q->cfg->roles[rt.role].max_inflight) {
		_cleanup_free_ char *m = xasprintf(
			"role '%s' has %d requests in flight, its limit; retry later", role,
			q->cfg->roles[rt.role].max_inflight);
		const char *h[] = { "Retry-After", "1", NULL };
		gw_route_free(&rt);
		return req_error(q, c, 429, "rate_limit_error", "concurrency_limit", m, NULL, h);
	}
	gw_metrics_relay_begin(g->metrics, rt.role, q->ep);
	rc = relay_start(q, c, &rt);
	gw_route_free(&rt);
	return rc;
}

static enum MHD_Result local_answer(struct gateway *g, struct req *q, struct MHD_Connection *c)
{
	if (gw_endpoint_observe(q->ep)) /* /metrics, /status, /ui */
		return gw_observe_answer(g, q, c);
	bool ready[ROLE__COUNT];
	for (int i = 0; i < ROLE__COUNT; i++)
		ready[i] = __atomic_load_n(&g->eng.ready[i], __ATOMIC_RELAXED);
	if (q->ep == GW_EP_MODELS) /* with the roles proxied to peers (proxy.c) */
		return req_json(q, c, 200, proxy_models_overlay(g->pp, q->cfg, gw_models(q->cfg, ready)), NULL);
	if (q->ep == GW_EP_CAPABILITIES)
		return req_json(q, c, 200, proxy_caps_overlay(g->pp, q->cfg, gw_capabilities(q->cfg, ready)), NULL);
	int n = 0;
	for (int i = 0; i < ROLE__COUNT; i++)
		n += q->cfg->roles[i].feasible && ready[i];
	json_t *h = json_pack("{s:s, s:i, s:b}", "status", g->draining ? "draining" : "ok",
			      "roles_ready", n, "auth", gw_auth_required(q->cfg));
	gw_health_versions(h, q->cfg, g->metrics->version); /* clients detect skew (caps.c) */
	return req_json(q, c, 200, h, NULL);
}

/* The head of a new request: the framing, then the checks that need no
 * body. Errors that leave the connection usable are kept for the end of the
 * body (intake.c); only a framing error, a body past the cap or a spent
 * buffer budget is answered at once (MHD then closes the connection). */
static enum MHD_Result on_head(struct gateway *g, struct req *q, struct MHD_Connection *c,
			       const char *url, const char *method)
{
	bool answered;
	enum MHD_Result rc = intake_framing(q, c, &answered);
	if (answered)
		return rc;
	bool method_ok;
	q->ep = gw_endpoint_of(method, url, &method_ok);
	q->early = q->ep == GW_EP_NONE ? EARLY_NOT_FOUND : !method_ok ? EARLY_METHOD : EARLY_NONE;
	if (!q->early) /* the key: 401 kept for the end of the body (keycheck.c) */
		gw_key_intake(g, q, c, gw_endpoint_needs_key(q->cfg, q->ep));
	if (q->early || !gw_endpoint_proxied(q->ep))
		return MHD_YES;
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	if (cl && strtoull(cl, NULL, 10) > q->cfg->max_body) {
		q->too_big = true;
		return dispatch(g, q, c);
	}
	if (upstream_budget_spent(&g->eng, q->cfg->max_buffered))
		return busy_error(q, c);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	(void)version;
	struct gw_lane *l = cls;
	struct gateway *g = l->g;
	struct req *q = *con_cls;
	if (!q) {
		q = xcalloc(1, sizeof(*q));
		*con_cls = q;
		q->up = &l->up;
		__atomic_add_fetch(&g->inflight, 1, __ATOMIC_SEQ_CST);
		q->t0 = gw_now_ms();
		q->role = q->log_role = -1;
		q->cfg = gw_live_get(&g->live);
		new_id(g, c, q->id, sizeof(q->id));
		req_trace_intake(q, c);
		snprintf(q->method, sizeof(q->method), "%s", method);
		q->path = xasprintf("%.512s", url);
		buf_init(&q->body, q->cfg->max_body);
		q->win_t = q->t0;
		struct gw_conn *k = gw_conn_of(c);
		if (k)
			k->q = q;
		return on_head(g, q, c, url, method);
	}
	if (q->state == R_READ && *upload_size) {
		q->received += *upload_size;
		if (q->received > q->cfg->max_body) {
			/* only a chunked body gets here (a Content-Length past the
			 * cap was answered at the head): MHD 0.9.75 cannot answer
			 * while a body comes in, so the connection is closed */
			q->outcome = "request_too_large";
			return MHD_NO;
		}
		if (!q->early && gw_endpoint_proxied(q->ep))
			body_add(g, q, upload, *upload_size);
		*upload_size = 0; /* a body no route reads is dropped as it comes */
		return MHD_YES;
	}
	if (q->state == R_READ && q->early)
		return intake_answer_early(q, c);
	if (q->state == R_READ && !gw_endpoint_proxied(q->ep))
		return local_answer(g, q, c);
	if (q->state == R_READ)
		return dispatch(g, q, c);
	if (q->state == R_WAIT)
		return relay_respond(q, c);
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct gw_lane *l = cls;
	struct gateway *g = l->g;
	struct req *q = *con_cls;
	if (!q)
		return;
	*con_cls = NULL;
	gw_key_done(g, q);
	gw_observe_done(g, q, toe);
	struct gw_conn *k = gw_conn_of(c);
	if (k && k->q == q) { /* the wait for the next head begins */
		k->q = NULL;
		k->served = true;
		k->t_wait = gw_now_ms();
	}
	double up_ms = -1;
	if (q->relay) {
		struct relay *r = q->relay;
		pthread_mutex_lock(&r->mu);
		r->detached = true;
		bool active = !r->done;
		if (r->head)
			up_ms = r->t_head - r->t_start;
		pthread_mutex_unlock(&r->mu);
		if (active)
			upstream_cancel(&l->up, r);
		relay_unref(r);
	}
	if (q->role >= 0)
		__atomic_sub_fetch(&g->role_inflight[q->role], 1, __ATOMIC_SEQ_CST);
	const char *outcome = q->outcome ? q->outcome
			      : toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "ok"
			      : toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT ? "client_closed"
			      : toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED ? "idle_timeout"
			      : toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN ? "shutdown"
									: "error";
	char trace_id[33];
	req_trace_log(q, trace_id);
	struct gw_access a = {
		.id = q->id,
		.method = q->method,
		.path = q->path,
		.role = q->log_role >= 0 ? role_name((enum role_id)q->log_role) : "",
		.outcome = outcome,
		.trace_id = trace_id[0] ? trace_id : NULL,
		.status = q->status,
		.bytes = (long long)q->bytes,
		.upstream_ms = up_ms >= 0 ? (double)(long)(up_ms * 100) / 100 : -1,
		.total_ms = (double)(long)((gw_now_ms() - q->t0) * 100) / 100,
		.alias = q->alias,
		.key = q->ku ? q->ku->name : NULL, /* its name (none, unknown), never its value */
	};
	char by[160] = ""; /* who answered, and what failed before it (failover.c) */
	if (q->relay) {
		failover_served_by(q, by, sizeof(by));
		a.served_by = by;
		a.failed_over = *q->tried ? q->tried : NULL;
	}
	char *line = gw_access_format(&a);
	gw_log_text(&g->log, line);
	free(line);
	gw_config_unref(q->cfg);
	buf_free(&q->body);
	free(q->fb_body);
	upstream_budget_give(&g->eng, q->charged);
	free(q->path);
	free(q);
	__atomic_sub_fetch(&g->inflight, 1, __ATOMIC_SEQ_CST);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct gateway *g = cls;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	str_rstrip(msg);
	gw_log_json(&g->log, json_pack("{s:s, s:s}", "event", "mhd", "message", msg));
}

int gw_worker_count(const struct gw_config *cfg)
{
	if (cfg->workers > 0)
		return cfg->workers > GW_WORKERS_MAX ? GW_WORKERS_MAX : cfg->workers;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > GW_WORKERS_AUTO ? GW_WORKERS_AUTO : (int)n;
}

static void set_port(struct sockaddr_storage *sa, int port)
{
	if (sa->ss_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
}

/* With SO_REUSEPORT a port held by another SO_REUSEPORT socket of this user
 * would be shared, not refused: check first that nothing listens on it. */
static bool port_free(const struct sockaddr_storage *sa, socklen_t len)
{
	int s = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return true; /* MHD will say what is wrong */
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->ss_family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	bool ok = bind(s, (const struct sockaddr *)sa, len) == 0 || errno != EADDRINUSE;
	close(s);
	return ok;
}

static struct MHD_Daemon *start_daemon(struct gw_lane *l, const struct gw_config *cfg,
				       const struct sockaddr_storage *sa, bool reuse)
{
	/* the connection limits are the gateway's (gw_conn_accept: refused,
	 * never backlogged); MHD's own is above any value of the setting, so
	 * the daemon never stops accepting */
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
			 (sa->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	return MHD_start_daemon(flags, 0, gw_conn_accept, l, on_request, l,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l->g, MHD_OPTION_SOCK_ADDR,
				(const struct sockaddr *)sa, MHD_OPTION_LISTENING_ADDRESS_REUSE,
				(unsigned)(reuse ? 1 : 0), MHD_OPTION_CONNECTION_LIMIT, 65536u + 64u,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, l,
				MHD_OPTION_NOTIFY_CONNECTION, gw_conn_notify, l,
				MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
}

/* Stop the loops, then the daemons (whose last callbacks run here), then
 * the engine sides and the loops' fds. */
static void stop_workers(struct gateway *g)
{
	for (int i = 0; i < g->n_workers; i++)
		worker_halt(&g->lanes[i].loop);
	for (int i = 0; i < g->n_workers; i++)
		if (g->lanes[i].loop.d) {
			MHD_stop_daemon(g->lanes[i].loop.d);
			g->lanes[i].loop.d = NULL;
		}
	for (int i = 0; i < g->n_workers; i++) {
		upstream_free(&g->lanes[i].up);
		worker_free(&g->lanes[i].loop);
	}
	free(g->lanes);
	g->lanes = NULL;
}

struct gateway *gateway_start(struct gw_config *cfg, gw_log_fn log, void *log_ud, struct err **err)
{
	worker_buffers_mapped();
	struct gateway *g = xcalloc(1, sizeof(*g));
	gw_live_init(&g->live, cfg);
	gw_log_init(&g->log, log, log_ud);
	g->seed = ((unsigned long long)getpid() << 16) ^ (unsigned long long)gw_now_ms();
	g->eng.live = &g->live;
	g->eng.log = &g->log;
	g->eng.swap_x100 = g->eng.iowait_x100 = -1;
	g->metrics = gw_metrics_new();
	gw_keyuse_init(&g->keyuse);
	conn_table_init(&g->conns);
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char port[16];
	snprintf(port, sizeof(port), "%d", cfg->port);
	int gai = getaddrinfo(cfg->bind, port, &hints, &ai);
	if (gai != 0 || !ai) {
		err_set(err, EXIT_CONFIG, "cannot use bind address '%s': %s", cfg->bind, gai_strerror(gai));
		goto fail;
	}
	struct sockaddr_storage sa = { 0 };
	socklen_t sa_len = ai->ai_addrlen <= sizeof(sa) ? ai->ai_addrlen : sizeof(sa);
	memcpy(&sa, ai->ai_addr, sa_len);
	freeaddrinfo(ai);
	g->n_workers = gw_worker_count(cfg);
	g->lanes = xcalloc((size_t)g->n_workers, sizeof(*g->lanes));
	bool reuse = g->n_workers > 1;
	if (reuse && cfg->port != 0 && !port_free(&sa, sa_len)) {
		err_set(err, EXIT_RUNTIME, "cannot listen on %s:%d (in use, or not an address of this host)",
			cfg->bind, cfg->port);
		goto fail;
	}
	for (int i = 0; i < g->n_workers; i++) {
		struct gw_lane *l = &g->lanes[i];
		struct worker *w = &l->loop;
		l->g = g;
		if (worker_init(w, i, err) < 0 || upstream_init(&l->up, w, &g->eng, err) < 0)
			goto fail;
		w->d = start_daemon(l, cfg, &sa, reuse);
		if (!w->d) {
			err_set(err, EXIT_RUNTIME,
				"cannot listen on %s:%d (in use, or not an address of this host)",
				cfg->bind, i ? g->port : cfg->port);
			goto fail;
		}
		if (i == 0) { /* with port 0, the others bind the one the first got */
			const union MHD_DaemonInfo *di =
				MHD_get_daemon_info(w->d, MHD_DAEMON_INFO_BIND_PORT);
			g->port = di && di->port ? di->port : cfg->port;
			set_port(&sa, g->port);
		}
		w->front = gw_conn_timers;
		w->front_ud = l;
		if (worker_launch(w, &upstream_loop_ops, &l->up, err) < 0)
			goto fail;
	}
	if (!(g->pp = proxy_poll_start(&g->live, &g->log, err)))
		goto fail;
	if (!(g->ep = engine_poll_start(&g->live, err)))
		goto fail;
	return g;
fail:
	if (g->lanes)
		stop_workers(g);
	conn_table_destroy(&g->conns);
	proxy_poll_stop(g->pp);
	gw_live_destroy(&g->live);
	gw_log_destroy(&g->log);
	gw_metrics_free(g->metrics);
	gw_keyuse_destroy(&g->keyuse);
	free(g);
	return NULL;
}

int gateway_port(const struct gateway *g)
{
	return g->port;
}

void gateway_reload(struct gateway *g, struct gw_config *cfg)
{
	struct gw_config *old = gw_live_swap(&g->live, cfg);
	if (strcmp(old->bind, cfg->bind) != 0 || (cfg->port && old->port != cfg->port))
		gw_log_json(&g->log, json_pack("{s:s, s:s}", "event", "reload-warning", "message",
					 "bind address or port changed: restart the gateway to apply"));
	if (gw_worker_count(cfg) != g->n_workers)
		gw_log_json(&g->log, json_pack("{s:s, s:s}", "event", "reload-warning", "message",
					 "LOBES_GATEWAY_WORKERS changed: restart the gateway to apply"));
	gw_config_unref(old);
	gw_metrics_reloaded(g->metrics);
	/* re-poll health at once (worker 0 polls): roles and ports may have changed */
	upstream_poll_now(&g->lanes[0].up);
	proxy_poll_wake(g->pp);
}

void gateway_quiesce(struct gateway *g)
{
	g->draining = true;
	for (int i = 0; i < g->n_workers; i++)
		worker_quiesce(&g->lanes[i].loop);
}

int gateway_drain_and_stop(struct gateway *g)
{
	gateway_quiesce(g);
	struct gw_config *c = gw_live_get(&g->live);
	double deadline = gw_now_ms() + c->drain_timeout_s * 1000.0;
	gw_config_unref(c);
	int left;
	while ((left = __atomic_load_n(&g->inflight, __ATOMIC_SEQ_CST)) > 0 && gw_now_ms() < deadline)
		usleep(20 * 1000);
	int cancelled = left;
	if (left > 0) {
		for (int i = 0; i < g->n_workers; i++)
			upstream_cancel_all(&g->lanes[i].up);
		double d2 = gw_now_ms() + 2000;
		while (__atomic_load_n(&g->inflight, __ATOMIC_SEQ_CST) > 0 && gw_now_ms() < d2)
			usleep(20 * 1000);
	}
	stop_workers(g);
	proxy_poll_stop(g->pp);
	g->pp = NULL;
	conn_table_destroy(&g->conns);
	engine_poll_stop(g->ep);
	g->ep = NULL;
	gw_live_destroy(&g->live);
	gw_log_destroy(&g->log);
	gw_metrics_free(g->metrics);
	gw_keyuse_destroy(&g->keyuse);
	free(g);
	return cancelled;
}
