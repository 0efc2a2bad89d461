/*
 * observe.c — what the HTTP front learns of each request, for the counters
 * (metrics.c), and the gateway's own views of itself: /metrics (the
 * Prometheus text of metrics_expo.c), /status (status.c), /ui. In the server layer: it reads a
 * finished request and its relay (relay.h) and the gateway object
 * (internal.h), and calls down to the counters.
 *
 * A request is counted once, when MHD reports it completed (before its
 * relay is let go): its role (none when it was not routed) and route, the
 * status sent, the total time and the time to the first body byte, the
 * bytes both ways, the engine's usage, and what kind of answer it was:
 *   - the gateway's own error answer: its OpenAI error code (404
 *     role_infeasible, 503 backend_unavailable, 429 concurrency_limit ...);
 *   - a 429: concurrency (the role's cap), pressure (server_busy), key (an
 *     API key's limit, keycheck.c) or rate (an engine's or a peer's own 429);
 *   - an upstream error: connect (no connection to the engine or peer, or
 *     none within the connect timeout), timeout (silent past the read
 *     timeout), read (the transfer broke off) — never a client's leaving
 *     or a drain's cancel;
 *   - a stream cancel: a client gone before the engine's stream ended.
 */
#include <string.h>

#include "../knowledge/knowledge.h"
#include "../util/cleanup.h"
#include "internal.h"

static int throttle_of(const struct req *q)
{
	if (q->status != 429)
		return -1;
	if (q->outcome && !strcmp(q->outcome, "concurrency_limit"))
		return GW_THR_CONCURRENCY;
	if (q->outcome && !strcmp(q->outcome, "server_busy"))
		return GW_THR_PRESSURE;
	if (q->outcome && !strcmp(q->outcome, "rate_limited"))
		return GW_THR_KEY;
	return GW_THR_RATE;
}

/* The relay's part of o (r->mu taken here). */
static void relay_obs(struct relay *r, enum MHD_RequestTerminationCode toe, struct gw_obs *o)
{
	pthread_mutex_lock(&r->mu);
	o->relayed = true;
	o->req_bytes = r->body_len;
	bool ended = r->done && r->result == CURLE_OK;
	if (r->stream && !ended && !r->cancelled &&
	    (r->client_gone || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK))
		o->stream_cancel = true;
	if (r->done && r->result != CURLE_OK && !r->client_gone && !r->cancelled) {
		CURLcode res = r->result;
		curl_off_t conn_us = 0; /* 0: never connected (a connect timeout) */
		if (r->easy)
			curl_easy_getinfo(r->easy, CURLINFO_CONNECT_TIME_T, &conn_us);
		if (res == CURLE_COULDNT_CONNECT || res == CURLE_COULDNT_RESOLVE_HOST ||
		    (!r->head && !r->stalled && res == CURLE_OPERATION_TIMEDOUT && conn_us == 0))
			o->uperr = GW_UPERR_CONNECT;
		else if (r->stalled || res == CURLE_OPERATION_TIMEDOUT)
			o->uperr = GW_UPERR_TIMEOUT;
		else
			o->uperr = GW_UPERR_READ;
	}
	pthread_mutex_unlock(&r->mu);
}

void gw_observe_done(struct gateway *g, struct req *q, enum MHD_RequestTerminationCode toe)
{
	struct gw_obs o = {
		.role = q->log_role,
		.ep = q->ep,
		.status = q->status,
		.total_ms = gw_now_ms() - q->t0,
		.ttfb_ms = q->t_first > 0 ? q->t_first - q->t0 : -1,
		.resp_bytes = q->bytes,
		.req_bytes = q->body.len,
		.own = gw_metrics_own_index(q->outcome),
		.throttle = throttle_of(q),
		.uperr = -1,
	};
	if (q->relay)
		relay_obs(q->relay, toe, &o);
	if (q->status >= 200 && q->status < 300) {
		o.prompt_tokens = q->usage.prompt;
		o.completion_tokens = q->usage.completion;
	}
	gw_usage_free(&q->usage);
	gw_metrics_record(g->metrics, &o);
}

void gateway_set_version(struct gateway *g, const char *version)
{
	snprintf(g->metrics->version, sizeof(g->metrics->version), "%s", version);
}

static enum MHD_Result metrics_answer(struct gateway *g, struct req *q, struct MHD_Connection *c)
{
	struct gw_expo_state st = { .workers = g->n_workers };
	for (int i = 0; i < ROLE__COUNT; i++) {
		st.ready[i] = __atomic_load_n(&g->eng.ready[i], __ATOMIC_RELAXED);
		st.feasible[i] = q->cfg->roles[i].feasible;
	}
	st.open_requests = __atomic_load_n(&g->inflight, __ATOMIC_RELAXED);
	_cleanup_free_ char *text = gw_metrics_render(g->metrics, &st);
	struct buf b;
	buf_init(&b, 0);
	buf_adds(&b, text);
	gw_keyuse_render(&g->keyuse, &b); /* lobes_gateway_key_*: by key name */
	enum MHD_Result rc = req_answer(q, c, 200, buf_str(&b), GW_METRICS_CTYPE, NULL);
	buf_free(&b);
	return rc;
}

enum MHD_Result gw_observe_answer(struct gateway *g, struct req *q, struct MHD_Connection *c)
{
	if (q->ep == GW_EP_METRICS)
		return metrics_answer(g, q, c);
	if (q->ep == GW_EP_STATUS)
		return req_json(q, c, 200, gw_status_json(g, q->cfg), NULL);
	const struct embedded_file *f = gw_embedded("data/gateway/ui.html");
	if (q->ep == GW_EP_UI && f) {
		/* the page may talk to this gateway only: nothing from elsewhere */
		const char *h[] = { "Content-Security-Policy",
				    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
				    "connect-src 'self'; img-src 'self' data:; form-action 'none'; base-uri 'none'",
				    "Cache-Control", "no-cache", NULL };
		return req_answer(q, c, 200, f->data, "text/html; charset=utf-8", h);
	}
	return req_error(q, c, 404, "invalid_request_error", "not_found", "no such route", NULL, NULL);
}
