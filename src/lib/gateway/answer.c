/*
 * answer.c — the answers the gateway queues itself on a client connection
 * (relay.h): a body with its type and the request id, a JSON body, an
 * OpenAI-shaped error, a proxy error. Each records the status and size for
 * the access line; req_sent counts the bytes of a relayed answer. In the relay's layer, so the relay and the HTTP front
 * above it both call down to it.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "relay.h"

enum MHD_Result req_answer(struct req *q, struct MHD_Connection *c, int status, const char *body,
			   const char *ctype, const char *const *hdrs)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", ctype);
	req_trace_answer(q, r); /* X-Request-Id, traceparent */
	for (; hdrs && *hdrs; hdrs += 2)
		MHD_add_response_header(r, hdrs[0], hdrs[1]);
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	q->status = status;
	q->bytes = strlen(body);
	q->t_first = gw_now_ms();
	q->state = R_RESP;
	return rc;
}

void req_sent(struct req *q, const char *p, size_t n)
{
	if (q->t_first <= 0)
		q->t_first = gw_now_ms();
	gw_usage_feed(&q->usage, p, n);
	q->bytes += n;
}

enum MHD_Result req_json(struct req *q, struct MHD_Connection *c, int status, json_t *o,
			 const char *const *hdrs)
{
	_cleanup_free_ char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return req_answer(q, c, status, s ? s : "{}", "application/json", hdrs);
}

enum MHD_Result req_error(struct req *q, struct MHD_Connection *c, int status, const char *type,
			  const char *code, const char *msg, const json_t *extra,
			  const char *const *hdrs)
{
	_cleanup_free_ char *s = gw_error_body(msg, type, code, extra);
	q->outcome = code;
	return req_answer(q, c, status, s ? s : "{\"error\":{}}", "application/json", hdrs);
}

enum MHD_Result req_proxy_err(struct req *q, struct MHD_Connection *c, struct proxy_err *e)
{
	const char *h[] = { "Retry-After", GW_RETRY_AFTER, NULL };
	enum MHD_Result rc = req_error(q, c, e->status, e->type, e->code, e->msg, e->extra,
				       e->status == 503 ? h : NULL);
	proxy_err_free(e);
	return rc;
}
