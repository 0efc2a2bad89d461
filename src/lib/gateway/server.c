/*
 * server.c — the client side: libmicrohttpd with one internal epoll thread,
 * suspend/resume for everything that waits on an engine.
 *
 * A request goes through: endpoint and method (404/405), the key unless the
 * route is keyless (401 + WWW-Authenticate), the body cap (413, from
 * Content-Length before reading and while reading), routing (route.c), the
 * role's concurrency cap (429 + Retry-After), the pressure policy for alias
 * requests (429 server_busy), then a relay to the engine. While the relay
 * waits for the engine's head, the connection is suspended; at the head the
 * engine's status and content type go out with a response whose body is
 * pulled from the relay buffer (suspending again whenever it is empty), so
 * bytes leave in the order and chunks they arrived. An engine that fails
 * before its head is 503 backend_unavailable + Retry-After: 5; one that
 * stalls past the read timeout after its head ends the response (an SSE
 * stream gets a final error event first).
 *
 * Header and URL size are bounded by MHD's per-connection memory (431/414
 * from MHD), idle connections by MHD's connection timeout. Every request
 * ends in one JSON access line: id, method, path, role, status, bytes,
 * upstream ms (to the engine's head), total ms, outcome. No bodies, no keys.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "internal.h"
#include "proxy.h"

#define CONN_MEMORY (32 * 1024)
#define LOW_WATER (64 * 1024)
#define RETRY_AFTER "5"

enum req_state { R_READ, R_WAIT, R_RESP };

struct req {
	char id[48];
	double t0;
	struct gw_config *cfg;
	enum gw_endpoint ep;
	char method[8];
	char *path;
	struct buf body;
	bool too_big;
	int role;     /* counted in role_inflight when >= 0 */
	int log_role; /* the role named, for the access line */
	int status;
	size_t bytes;
	bool alias;
	struct relay *relay;
	enum req_state state;
	const char *outcome;
};

struct gw_config *gw_cfg_get(struct gateway *g)
{
	pthread_mutex_lock(&g->cfg_mu);
	struct gw_config *c = gw_config_ref(g->cfg);
	pthread_mutex_unlock(&g->cfg_mu);
	return c;
}

void gw_log_json(struct gateway *g, json_t *obj)
{
	if (!obj)
		return;
	char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(obj);
	if (s && g->log) {
		pthread_mutex_lock(&g->log_mu);
		g->log(g->log_ud, s);
		pthread_mutex_unlock(&g->log_mu);
	}
	free(s);
}

static enum MHD_Result queue(struct req *q, struct MHD_Connection *c, int status,
			     const char *body, const char *ctype, const char *const *hdrs)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", ctype);
	MHD_add_response_header(r, "X-Request-Id", q->id);
	for (; hdrs && *hdrs; hdrs += 2)
		MHD_add_response_header(r, hdrs[0], hdrs[1]);
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	q->status = status;
	q->bytes = strlen(body);
	q->state = R_RESP;
	return rc;
}

static enum MHD_Result queue_json(struct req *q, struct MHD_Connection *c, int status, json_t *o,
				  const char *const *hdrs)
{
	_cleanup_free_ char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return queue(q, c, status, s ? s : "{}", "application/json", hdrs);
}

static enum MHD_Result queue_error(struct req *q, struct MHD_Connection *c, int status,
				   const char *type, const char *code, const char *msg,
				   const json_t *extra, const char *const *hdrs)
{
	_cleanup_free_ char *s = gw_error_body(msg, type, code, extra);
	q->outcome = code;
	return queue(q, c, status, s ? s : "{\"error\":{}}", "application/json", hdrs);
}

static enum MHD_Result queue_proxy_err(struct req *q, struct MHD_Connection *c, struct proxy_err *e)
{
	const char *h[] = { "Retry-After", RETRY_AFTER, NULL };
	enum MHD_Result rc = queue_error(q, c, e->status, e->type, e->code, e->msg, e->extra,
					 e->status == 503 ? h : NULL);
	proxy_err_free(e);
	return rc;
}

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

/* Body of a relayed response, pulled by MHD. */
static ssize_t relay_read(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	struct req *q = cls;
	struct relay *r = q->relay;
	pthread_mutex_lock(&r->mu);
	if (r->client_gone || r->cancelled) {
		pthread_mutex_unlock(&r->mu);
		q->outcome = r->client_gone ? "client_closed" : "cancelled";
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	size_t avail = r->data.len - r->rd;
	if (avail) {
		size_t n = avail < max ? avail : max;
		memcpy(out, r->data.data + r->rd, n);
		r->rd += n;
		bool unpause = r->paused && r->data.len - r->rd < LOW_WATER;
		pthread_mutex_unlock(&r->mu);
		if (unpause)
			upstream_unpause(r->g, r);
		q->bytes += n;
		return (ssize_t)n;
	}
	if (r->done) {
		bool ok = r->result == CURLE_OK;
		if (!ok && r->stream && !r->err_event_sent && r->content_length < 0) {
			r->err_event_sent = true;
			const char *what = r->stalled ? "the engine sent nothing for the read timeout"
						      : "the engine's stream broke off";
			_cleanup_free_ char *e = gw_error_body(what, "backend_unavailable",
							       r->stalled ? "upstream_timeout"
									  : "upstream_error",
							       NULL);
			_cleanup_free_ char *ev = xasprintf("data: %s\n\n", e);
			size_t n = strlen(ev);
			pthread_mutex_unlock(&r->mu);
			q->outcome = r->stalled ? "upstream_timeout" : "upstream_error";
			if (n > max)
				return MHD_CONTENT_READER_END_WITH_ERROR;
			memcpy(out, ev, n);
			q->bytes += n;
			return (ssize_t)n;
		}
		pthread_mutex_unlock(&r->mu);
		if (ok)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!q->outcome)
			q->outcome = r->stalled ? "upstream_timeout" : "upstream_error";
		return r->err_event_sent ? MHD_CONTENT_READER_END_OF_STREAM
					 : MHD_CONTENT_READER_END_WITH_ERROR;
	}
	r->suspended = true;
	MHD_suspend_connection(r->conn);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* Answer from the relay's state, or suspend until it changes. */
static enum MHD_Result relay_respond(struct gateway *g, struct req *q, struct MHD_Connection *c)
{
	struct relay *r = q->relay;
	pthread_mutex_lock(&r->mu);
	if (r->client_gone) {
		pthread_mutex_unlock(&r->mu);
		q->outcome = "client_closed";
		return MHD_NO;
	}
	bool got_all = r->head && r->whole && (long long)r->data.len >= r->content_length;
	/* a peer's answer goes through the checks below (its 401 is not the caller's) */
	bool complete = got_all && !gw_role_proxy_peer(q->cfg, q->role);
	if (!r->done && (!r->head || (r->whole && !got_all))) {
		r->suspended = true;
		MHD_suspend_connection(c);
		pthread_mutex_unlock(&r->mu);
		return MHD_YES;
	}
	if (!r->head) {
		CURLcode res = r->result;
		bool stalled = r->stalled;
		_cleanup_free_ char *why = xstrdup(*r->errbuf ? r->errbuf : curl_easy_strerror(res));
		pthread_mutex_unlock(&r->mu);
		(void)g;
		struct proxy_err pe; /* peers.yaml: a proxied role names the peer */
		if (proxy_err_down(q->cfg, q->role, stalled ? "it sent nothing for the read timeout" : why, &pe))
			return queue_proxy_err(q, c, &pe);
		_cleanup_free_ char *m = xasprintf(
			"the engine of role '%s' (127.0.0.1:%d) is unavailable: %s",
			role_name((enum role_id)q->role), q->cfg->roles[q->role].port,
			stalled ? "it sent nothing for the read timeout" : why);
		json_t *extra = json_pack("{s:s}", "role", role_name((enum role_id)q->role));
		const char *h[] = { "Retry-After", RETRY_AFTER, NULL };
		enum MHD_Result rc = queue_error(q, c, 503, "backend_unavailable", "backend_unavailable",
						 m, extra, h);
		json_decref(extra);
		return rc;
	}
	if (complete) {
		/* the whole body is here: one buffer response */
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			r->data.len, r->data.data, MHD_RESPMEM_MUST_COPY);
		if (r->content_type)
			MHD_add_response_header(resp, "Content-Type", r->content_type);
		long st = r->status;
		q->bytes = r->data.len;
		r->rd = r->data.len;
		pthread_mutex_unlock(&r->mu);
		MHD_add_response_header(resp, "X-Request-Id", q->id);
		enum MHD_Result rc = MHD_queue_response(c, (unsigned)st, resp);
		MHD_destroy_response(resp);
		q->status = (int)st;
		q->state = R_RESP;
		return rc;
	}
	uint64_t size = r->content_length >= 0 ? (uint64_t)r->content_length : MHD_SIZE_UNKNOWN;
	long status = r->status;
	_cleanup_free_ char *ct = r->content_type ? xstrdup(r->content_type) : NULL;
	pthread_mutex_unlock(&r->mu);
	struct proxy_err pe; /* peers.yaml: a peer rejecting this box's key is not the caller's 401 */
	if (proxy_err_auth(q->cfg, q->role, status, &pe))
		return queue_proxy_err(q, c, &pe);
	bool peer = gw_role_proxy_peer(q->cfg, q->role) != NULL;
	struct MHD_Response *resp = MHD_create_response_from_callback(size, 4 * 1024, relay_read, q,
								      NULL);
	if (ct)
		MHD_add_response_header(resp, "Content-Type", ct);
	MHD_add_response_header(resp, "X-Request-Id", q->id);
	if (ct && !strncmp(ct, "text/event-stream", 17))
		MHD_add_response_header(resp, "Cache-Control", "no-cache");
	if (peer && (status == 503 || status == 429))
		MHD_add_response_header(resp, "Retry-After", RETRY_AFTER);
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	q->status = (int)status;
	q->state = R_RESP;
	return rc;
}

static enum MHD_Result start_relay(struct gateway *g, struct req *q, struct MHD_Connection *c,
				   struct gw_route *rt)
{
	const struct gw_role *gr = &q->cfg->roles[rt->role];
	struct relay *r = xcalloc(1, sizeof(*r));
	r->kind = XFER_RELAY;
	pthread_mutex_init(&r->mu, NULL);
	r->refs = 2; /* client side + upstream side */
	r->g = g;
	r->conn = c;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	r->client_fd = ci ? ci->connect_fd : -1;
	snprintf(r->id, sizeof(r->id), "%s", q->id);
	r->role = rt->role;
	r->stream = rt->stream;
	r->content_length = -1;
	r->read_timeout_s = q->cfg->read_timeout_s;
	buf_init(&r->data, 0);
	if (rt->body) {
		r->body = TAKE_PTR(rt->body);
		r->body_len = rt->body_len;
	} else {
		r->body_len = q->body.len;
		r->body = buf_take(&q->body);
	}
	const struct gw_peer *peer = gw_role_proxy_peer(q->cfg, rt->role);
	r->url = peer ? proxy_url(peer, q->path) : xasprintf("http://127.0.0.1:%d%s", gr->port, q->path);
	if (peer)
		r->hdrs = proxy_headers(r->hdrs, q->cfg, peer); /* never the caller's key */
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	_cleanup_free_ char *ha = xasprintf("Accept: %s", accept && *accept ? accept : "*/*");
	_cleanup_free_ char *hid = xasprintf("X-Request-Id: %s", q->id);
	r->hdrs = curl_slist_append(r->hdrs, "Content-Type: application/json");
	r->hdrs = curl_slist_append(r->hdrs, ha);
	r->hdrs = curl_slist_append(r->hdrs, hid);
	r->hdrs = curl_slist_append(r->hdrs, "Expect:");
	CURL *e = r->easy = curl_easy_init();
	curl_easy_setopt(e, CURLOPT_URL, r->url);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->hdrs);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 8192L); /* per stream: 1,000 streams fit in little memory */
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, (long)q->cfg->connect_timeout_s);
	if (q->cfg->request_timeout_s)
		curl_easy_setopt(e, CURLOPT_TIMEOUT, (long)q->cfg->request_timeout_s);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http");
	q->relay = r;
	q->state = R_WAIT;
	upstream_submit(g, r);
	return relay_respond(g, q, c);
}

/* The whole body is in: route it and relay it, or answer the error. */
static enum MHD_Result dispatch(struct gateway *g, struct req *q, struct MHD_Connection *c)
{
	if (q->too_big) {
		_cleanup_free_ char *m = xasprintf("the request body is larger than %zu bytes",
						   q->cfg->max_body);
		return queue_error(q, c, 413, "invalid_request_error", "request_too_large", m, NULL,
				   NULL);
	}
	struct gw_route rt;
	if (gw_route_request(q->cfg, q->ep, buf_str(&q->body), q->body.len, &rt) < 0 &&
	    !proxy_route_by_peer_id(g, q->cfg, q->ep, buf_str(&q->body), q->body.len, &rt)) {
		enum MHD_Result rc = queue_error(q, c, rt.status, rt.type, rt.code, rt.message, rt.extra,
						 NULL);
		const char *rn = rt.extra ? json_string_value(json_object_get(rt.extra, "role")) : NULL;
		q->log_role = rn ? role_from_name(rn) : -1;
		gw_route_free(&rt);
		return rc;
	}
	q->alias = rt.via_alias;
	const char *role = role_name((enum role_id)rt.role);
	struct proxy_err pe; /* peers.yaml: one proxy hop at most (508) */
	if (rt.proxied && proxy_err_loop(q->cfg, rt.role,
					 MHD_lookup_connection_value(c, MHD_HEADER_KIND, GW_HOP_HEADER), &pe)) {
		q->log_role = rt.role;
		gw_route_free(&rt);
		return queue_proxy_err(q, c, &pe);
	}
	if (rt.via_alias) {
		const char *why = NULL;
		double swap = __atomic_load_n(&g->swap_x100, __ATOMIC_RELAXED) / 100.0;
		double io = __atomic_load_n(&g->iowait_x100, __ATOMIC_RELAXED) / 100.0;
		if (gw_pressure_shed(q->cfg, swap, io, &why)) {
			_cleanup_free_ char *m = xasprintf(
				"the box is under pressure (%s %.0f%%): requests by alias are shed; "
				"retry later or name the role",
				why, !strcmp(why, "swap") ? swap : io);
			const char *h[] = { "Retry-After", RETRY_AFTER, NULL };
			gw_route_free(&rt);
			return queue_error(q, c, 429, "server_busy", "server_busy", m, NULL, h);
		}
	}
	q->log_role = rt.role;
	int n = __atomic_add_fetch(&g->role_inflight[rt.role], 1, __ATOMIC_SEQ_CST);
	q->role = rt.role;
	if (n > q->cfg->roles[rt.role].max_inflight) {
		_cleanup_free_ char *m = xasprintf(
			"role '%s' has %d requests in flight, its limit; retry later", role,
			q->cfg->roles[rt.role].max_inflight);
		const char *h[] = { "Retry-After", "1", NULL };
		gw_route_free(&rt);
		return queue_error(q, c, 429, "rate_limit_error", "concurrency_limit", m, NULL, h);
	}
	enum MHD_Result rc = start_relay(g, q, c, &rt);
	gw_route_free(&rt);
	return rc;
}

static enum MHD_Result local_answer(struct gateway *g, struct req *q, struct MHD_Connection *c)
{
	bool ready[ROLE__COUNT];
	for (int i = 0; i < ROLE__COUNT; i++)
		ready[i] = __atomic_load_n(&g->ready[i], __ATOMIC_RELAXED);
	if (q->ep == GW_EP_MODELS) /* with the roles proxied to peers (proxy.c) */
		return queue_json(q, c, 200, proxy_models_overlay(g, q->cfg, gw_models(q->cfg, ready)), NULL);
	if (q->ep == GW_EP_CAPABILITIES)
		return queue_json(q, c, 200, proxy_caps_overlay(g, q->cfg, gw_capabilities(q->cfg, ready)), NULL);
	int n = 0;
	for (int i = 0; i < ROLE__COUNT; i++)
		n += q->cfg->roles[i].feasible && ready[i];
	return queue_json(q, c, 200,
			  json_pack("{s:s, s:i, s:b}", "status", g->draining ? "draining" : "ok",
				    "roles_ready", n, "auth", q->cfg->key != NULL),
			  NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	(void)version;
	struct gateway *g = cls;
	struct req *q = *con_cls;
	if (!q) {
		q = xcalloc(1, sizeof(*q));
		*con_cls = q;
		__atomic_add_fetch(&g->inflight, 1, __ATOMIC_SEQ_CST);
		q->t0 = gw_now_ms();
		q->role = q->log_role = -1;
		q->cfg = gw_cfg_get(g);
		new_id(g, c, q->id, sizeof(q->id));
		snprintf(q->method, sizeof(q->method), "%s", method);
		q->path = xasprintf("%.512s", url);
		buf_init(&q->body, q->cfg->max_body);
		bool method_ok;
		q->ep = gw_endpoint_of(method, url, &method_ok);
		if (q->ep == GW_EP_NONE)
			return queue_error(q, c, 404, "invalid_request_error", "not_found",
					   "no such route", NULL, NULL);
		if (!method_ok) {
			const char *h[] = { "Allow", gw_endpoint_proxied(q->ep) ? "POST" : "GET, HEAD",
					    NULL };
			return queue_error(q, c, 405, "invalid_request_error", "method_not_allowed",
					   "method not allowed on this route", NULL, h);
		}
		if (!gw_endpoint_keyless(q->ep) &&
		    !gw_auth_ok(q->cfg, MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								    "Authorization"))) {
			const char *h[] = { "WWW-Authenticate", "Bearer", NULL };
			return queue_error(q, c, 401, "invalid_request_error", "invalid_api_key",
					   "invalid or missing API key (Authorization: Bearer KEY)",
					   NULL, h);
		}
		if (!gw_endpoint_proxied(q->ep))
			return local_answer(g, q, c);
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
		if (cl && strtoull(cl, NULL, 10) > q->cfg->max_body) {
			q->too_big = true;
			return dispatch(g, q, c);
		}
		return MHD_YES;
	}
	if (q->state == R_READ && *upload_size) {
		if (!q->too_big && buf_add(&q->body, upload, *upload_size) < 0) {
			q->too_big = true;
			buf_free(&q->body);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (q->state == R_READ)
		return dispatch(g, q, c);
	if (q->state == R_WAIT)
		return relay_respond(g, q, c);
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)c;
	struct gateway *g = cls;
	struct req *q = *con_cls;
	if (!q)
		return;
	*con_cls = NULL;
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
			upstream_cancel(g, r);
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
	json_t *line = json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:s}", "id", q->id, "method",
				 q->method, "path", q->path ? q->path : "", "role",
				 q->log_role >= 0 ? role_name((enum role_id)q->log_role) : "", "status",
				 q->status, "bytes", (json_int_t)q->bytes, "outcome", outcome);
	json_object_set_new(line, "upstream_ms", up_ms >= 0 ? json_real((double)(long)(up_ms * 100) / 100)
							    : json_null());
	json_object_set_new(line, "total_ms", json_real((double)(long)((gw_now_ms() - q->t0) * 100) / 100));
	if (q->alias)
		json_object_set_new(line, "alias", json_true());
	gw_log_json(g, line);
	gw_config_unref(q->cfg);
	buf_free(&q->body);
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
	gw_log_json(g, json_pack("{s:s, s:s}", "event", "mhd", "message", msg));
}

struct gateway *gateway_start(struct gw_config *cfg, gw_log_fn log, void *log_ud, struct err **err)
{
	struct gateway *g = xcalloc(1, sizeof(*g));
	pthread_mutex_init(&g->cfg_mu, NULL);
	pthread_mutex_init(&g->log_mu, NULL);
	g->cfg = gw_config_ref(cfg);
	g->log = log;
	g->log_ud = log_ud;
	g->seed = ((unsigned long long)getpid() << 16) ^ (unsigned long long)gw_now_ms();
	g->swap_x100 = g->iowait_x100 = -1;
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char port[16];
	snprintf(port, sizeof(port), "%d", cfg->port);
	int gai = getaddrinfo(cfg->bind, port, &hints, &ai);
	if (gai != 0 || !ai) {
		err_set(err, EXIT_CONFIG, "cannot use bind address '%s': %s", cfg->bind, gai_strerror(gai));
		goto fail;
	}
	if (upstream_start(g, err) < 0) {
		freeaddrinfo(ai);
		goto fail;
	}
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_USE_ITC | MHD_USE_ERROR_LOG | (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	g->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, g, MHD_OPTION_EXTERNAL_LOGGER,
				mhd_log, g, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, g,
				MHD_OPTION_LISTEN_BACKLOG_SIZE,
				1024u, MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!g->d) {
		upstream_stop(g);
		err_set(err, EXIT_RUNTIME, "cannot listen on %s:%d (in use, or not an address of this host)",
			cfg->bind, cfg->port);
		goto fail;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(g->d, MHD_DAEMON_INFO_BIND_PORT);
	g->port = di ? di->port : cfg->port;
	if (proxy_poll_start(g, err) < 0) {
		MHD_stop_daemon(g->d);
		upstream_stop(g);
		goto fail;
	}
	return g;
fail:
	gw_config_unref(g->cfg);
	pthread_mutex_destroy(&g->cfg_mu);
	pthread_mutex_destroy(&g->log_mu);
	free(g);
	return NULL;
}

int gateway_port(const struct gateway *g)
{
	return g->port;
}

void gateway_reload(struct gateway *g, struct gw_config *cfg)
{
	pthread_mutex_lock(&g->cfg_mu);
	struct gw_config *old = g->cfg;
	g->cfg = gw_config_ref(cfg);
	pthread_mutex_unlock(&g->cfg_mu);
	if (strcmp(old->bind, cfg->bind) != 0 || (cfg->port && old->port != cfg->port))
		gw_log_json(g, json_pack("{s:s, s:s}", "event", "reload-warning", "message",
					 "bind address or port changed: restart the gateway to apply"));
	gw_config_unref(old);
	/* re-poll health at once: roles and ports may have changed */
	g->up.next_health = 0;
	curl_multi_wakeup(g->up.multi);
	proxy_poll_wake(g);
}

int gateway_drain_and_stop(struct gateway *g)
{
	g->draining = true;
	MHD_socket ls = MHD_quiesce_daemon(g->d);
	if (ls != MHD_INVALID_SOCKET)
		close(ls);
	struct gw_config *c = gw_cfg_get(g);
	double deadline = gw_now_ms() + c->drain_timeout_s * 1000.0;
	gw_config_unref(c);
	int left;
	while ((left = __atomic_load_n(&g->inflight, __ATOMIC_SEQ_CST)) > 0 && gw_now_ms() < deadline)
		usleep(20 * 1000);
	int cancelled = left;
	if (left > 0) {
		upstream_cancel_all(g);
		double d2 = gw_now_ms() + 2000;
		while (__atomic_load_n(&g->inflight, __ATOMIC_SEQ_CST) > 0 && gw_now_ms() < d2)
			usleep(20 * 1000);
	}
	MHD_stop_daemon(g->d);
	proxy_poll_stop(g);
	upstream_stop(g);
	gw_config_unref(g->cfg);
	pthread_mutex_destroy(&g->cfg_mu);
	pthread_mutex_destroy(&g->log_mu);
	free(g);
	return cancelled;
}
