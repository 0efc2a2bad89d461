/*
 * relay.c — the relay half of the client side (a worker's loop): from a
 * routed request to the engine's answer on the client connection.
 *
 * relay_start builds the upstream request (the engine's URL or a peer's, the
 * headers a client may pass on — Accept, the request id and the trace
 * context (trace.c), never the caller's key — and the libcurl easy handle with its limits) and hands it
 * to the engine side of the same worker (upstream.c). While the relay waits
 * for the engine's head, the connection is suspended; when the relay's state
 * changes, upstream.c calls the relay's wake (relay_wake, below), which
 * resumes it. At the head, relay_respond answers with the engine's status
 * and content type:
 *   - a small non-SSE body of known length is answered in one buffer once
 *     it is all in (one wake-up);
 *   - anything else gets a response whose body relay_read pulls from the
 *     relay buffer, suspending again whenever it is empty, so bytes leave in
 *     the order and chunks they arrived (each SSE frame at once). Reading the
 *     buffer below LOW_WATER unpauses a transfer paused for back-pressure.
 * An engine that fails before its head is 503 backend_unavailable +
 * Retry-After; one that stalls past the read timeout after its head ends the
 * response (an SSE stream gets a final error event first). A role proxied
 * to a peer is relayed the same way, to the peer's URL with the headers of
 * proxy_hop.c, and a peer's failure is answered as the peer's
 * (503 peer_unavailable, 502 peer_auth_failed).
 */
#include <string.h>
#include <time.h>

#include "../util/cleanup.h"
#include "relay.h"

#define LOW_WATER (64 * 1024)
/* MHD gives every callback response a buffer of its block size. A body of
 * unknown length goes out chunked through the connection's own buffer (the
 * block is then only used for an HTTP/1.0 client), so a stream keeps its
 * block small: 1,000 streams cost 0.25 MB, not 4 MB. A large body of known
 * length (embeddings) is copied through the block: a bigger one means fewer
 * calls. */
#define STREAM_BLOCK 256
#define KNOWN_BLOCK (16 * 1024)

/* The engine side changed r's state (r->mu held): resume the client side
 * if it waits, unless it has detached (a finished connection is never
 * touched). */
static void relay_wake(struct relay *r)
{
	if (r->suspended && !r->detached) {
		r->suspended = false;
		MHD_resume_connection(r->conn);
		/* MHD in external mode has no wake-up channel: the loop runs it */
		worker_kick(r->up->w);
	}
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
			upstream_unpause(r->up, r);
		req_sent(q, out, n);
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

bool relay_known_down(struct req *q, struct MHD_Connection *c, struct upstream_shared *sh,
		      int role, enum MHD_Result *rc)
{
	int st = __atomic_load_n(&sh->health[role], __ATOMIC_RELAXED);
	if (st == HEALTH_UNKNOWN || st == HEALTH_OK)
		return false;
	long long since = __atomic_load_n(&sh->down_since_ms[role], __ATOMIC_RELAXED);
	time_t t = (time_t)(since / 1000);
	struct tm tm;
	char when[32] = "";
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	_cleanup_free_ char *why =
		st == HEALTH_TIMEOUT ? xasprintf("its /health did not answer within %d ms (frozen or "
						 "overloaded)", q->cfg->health_timeout_ms)
		: st == HEALTH_NO_CONNECT ? xstrdup("its /health could not be reached (down)")
					  : xasprintf("its /health answered HTTP %d", st);
	const char *name = role_name((enum role_id)role);
	_cleanup_free_ char *m = xasprintf("the engine of role '%s' (127.0.0.1:%d) is not ready since %s: %s",
					   name, q->cfg->roles[role].port, when, why);
	json_t *extra = json_pack("{s:s, s:s}", "role", name, "not_ready_since", when);
	const char *h[] = { "Retry-After", GW_RETRY_AFTER, NULL };
	*rc = req_error(q, c, 503, "backend_unavailable", "backend_unavailable", m, extra, h);
	json_decref(extra);
	return true;
}

static bool failover_next(struct req *q, struct MHD_Connection *c, const char *why,
			  enum MHD_Result *rc);

/* Answer from the relay's state, or suspend until it changes. */
enum MHD_Result relay_respond(struct req *q, struct MHD_Connection *c)
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
	/* a 5xx head with a fallback left: wait for its end, then try the next */
	bool again = r->head && r->status >= 500 && failover_left(q);
	if (!r->done && (!r->head || again || (r->whole && !got_all))) {
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
		enum MHD_Result frc; /* refused: the next fallback (a timeout is not retried) */
		if (res == CURLE_COULDNT_CONNECT && failover_next(q, c, why, &frc))
			return frc;
		struct proxy_err pe; /* peers.yaml: a proxied role names the peer */
		_cleanup_free_ char *fb = xasprintf("it sent no answer within the first-byte timeout "
						    "(%d s, LOBES_GATEWAY_FIRST_BYTE_TIMEOUT)",
						    q->cfg->first_byte_timeout_s);
		if (!q->target && proxy_err_down(q->cfg, q->role, stalled ? fb : why, &pe))
			return req_proxy_err(q, c, &pe);
		char by[160];
		failover_served_by(q, by, sizeof(by));
		_cleanup_free_ char *m = q->target
			? xasprintf("role '%s' is unavailable: %s; %s: %s", role_name((enum role_id)q->role),
				    q->tried, by, stalled ? fb : why)
			: xasprintf("the engine of role '%s' (127.0.0.1:%d) is unavailable: %s",
				    role_name((enum role_id)q->role), q->cfg->roles[q->role].port,
				    stalled ? fb : why);
		json_t *extra = json_pack("{s:s}", "role", role_name((enum role_id)q->role));
		const char *h[] = { "Retry-After", GW_RETRY_AFTER, NULL };
		enum MHD_Result rc = req_error(q, c, 503, "backend_unavailable", "backend_unavailable",
					       m, extra, h);
		json_decref(extra);
		return rc;
	}
	if (again) { /* r->done: nothing of it reached the client */
		long st = r->status;
		pthread_mutex_unlock(&r->mu);
		char why[32];
		snprintf(why, sizeof(why), "HTTP %ld", st);
		enum MHD_Result frc;
		if (failover_next(q, c, why, &frc))
			return frc;
		pthread_mutex_lock(&r->mu);
	}
	if (complete) {
		/* the whole body is here: one buffer response */
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			r->data.len, r->data.data, MHD_RESPMEM_MUST_COPY);
		if (r->content_type)
			MHD_add_response_header(resp, "Content-Type", r->content_type);
		long st = r->status;
		req_sent(q, r->data.data, r->data.len);
		r->rd = r->data.len;
		pthread_mutex_unlock(&r->mu);
		req_trace_answer(q, resp);
		failover_answer_header(q, resp);
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
		return req_proxy_err(q, c, &pe);
	bool peer = gw_role_proxy_peer(q->cfg, q->role) != NULL;
	struct MHD_Response *resp = MHD_create_response_from_callback(
		size, r->content_length >= 0 ? KNOWN_BLOCK : STREAM_BLOCK, relay_read, q, NULL);
	if (ct)
		MHD_add_response_header(resp, "Content-Type", ct);
	req_trace_answer(q, resp);
	failover_answer_header(q, resp);
	if (ct && !strncmp(ct, "text/event-stream", 17))
		MHD_add_response_header(resp, "Cache-Control", "no-cache");
	if (peer && (status == 503 || status == 429))
		MHD_add_response_header(resp, "Retry-After", GW_RETRY_AFTER);
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	q->status = (int)status;
	q->state = R_RESP;
	return rc;
}

/* Start the relay of q to q->target with body (taken; charged: its bytes
 * charged to the buffer budget) and answer or suspend from its state. */
static enum MHD_Result relay_launch(struct req *q, struct MHD_Connection *c, char *body, size_t len,
				    size_t charged)
{
	struct relay *r = xcalloc(1, sizeof(*r));
	r->kind = XFER_RELAY;
	pthread_mutex_init(&r->mu, NULL);
	r->refs = 2; /* client side + upstream side */
	r->up = q->up;
	r->wake = relay_wake;
	r->conn = c;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	r->client_fd = ci ? ci->connect_fd : -1;
	snprintf(r->id, sizeof(r->id), "%s", q->id);
	r->role = q->role;
	r->stream = q->stream;
	r->content_length = -1;
	r->read_timeout_s = q->cfg->read_timeout_s;
	r->first_byte_timeout_s = q->cfg->first_byte_timeout_s;
	buf_init(&r->data, 0);
	r->max_buffered = q->cfg->max_buffered;
	r->body = body;
	r->body_len = len;
	r->charged = charged; /* the relay gives it back when freed */
	const struct gw_peer *peer;
	r->url = failover_url(q, &peer); /* the primary, or the fallback tried now */
	if (peer)
		r->hdrs = proxy_headers(r->hdrs, q->cfg, peer); /* never the caller's key */
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	_cleanup_free_ char *ha = xasprintf("Accept: %s", accept && *accept ? accept : "*/*");
	const char *ct = gw_endpoint_multipart(q->ep) /* audio: the form's own boundary */
				 ? MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type") : NULL;
	_cleanup_free_ char *hct = xasprintf("Content-Type: %s", ct ? ct : "application/json");
	r->hdrs = curl_slist_append(r->hdrs, hct);
	r->hdrs = curl_slist_append(r->hdrs, ha);
	r->hdrs = req_trace_headers(q, r->hdrs); /* X-Request-Id, traceparent, tracestate */
	r->hdrs = curl_slist_append(r->hdrs, "Expect:");
	CURL *e = r->easy = upstream_easy_get(q->up);
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
	/* a peer may be https (verified against the system's CAs or
	 * LOBES_GATEWAY_PEER_CA_FILE); an engine on this box is http */
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, peer ? "http,https" : "http");
	/* an engine on loopback is never reached through a proxy: libcurl
	 * then skips the proxy variables of the environment (five getenv
	 * calls a request) and an http_proxy meant for the outside world
	 * cannot catch the engine's traffic */
	if (!peer)
		curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	if (peer && q->cfg->peer_ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, q->cfg->peer_ca_file);
	q->relay = r;
	q->state = R_WAIT;
	upstream_submit(q->up, r);
	return relay_respond(q, c);
}

enum MHD_Result relay_start(struct req *q, struct MHD_Connection *c, struct gw_route *rt)
{
	q->stream = rt->stream;
	size_t charged = 0, len;
	char *body;
	if (rt->body) {
		body = TAKE_PTR(rt->body);
		len = rt->body_len;
	} else {
		len = q->body.len;
		body = buf_take(&q->body);
		charged = q->charged;
		q->charged = 0;
	}
	failover_keep(q, body, len); /* a copy, when the role has fallbacks */
	return relay_launch(q, c, body, len, charged);
}

/* q's target failed before a byte reached the client (why): drop its ended
 * relay and start the next fallback. False when none is left. */
static bool failover_next(struct req *q, struct MHD_Connection *c, const char *why,
			  enum MHD_Result *rc)
{
	if (!failover_left(q))
		return false;
	failover_note(q, why);
	struct relay *old = q->relay;
	pthread_mutex_lock(&old->mu);
	old->detached = true;
	pthread_mutex_unlock(&old->mu);
	relay_unref(old); /* it has ended: the upstream side let go already */
	q->relay = NULL;
	q->target++;
	size_t len;
	char *body = failover_body(q, &len);
	*rc = relay_launch(q, c, body, len, 0);
	return true;
}
