/*
 * trace.c — W3C Trace Context (traceparent, tracestate) through the
 * gateway, beside the request id (X-Request-Id, made by server.c when the
 * client sent none): read from the client's request, passed to the engine
 * or the peer with the request, echoed on the answer, and the trace id
 * written on the access line, so one request can be followed from the
 * client to the engine's log.
 *
 * A traceparent is passed on only when it is well formed
 * (https://www.w3.org/TR/trace-context/#traceparent-header: version 2 hex
 * digits, not ff; trace id 32 and parent id 16 lower-case hex digits, not
 * all zero; flags 2; version 00 is exactly 55 bytes, a later version may go
 * on after a '-'); a malformed one is dropped with its tracestate, as the
 * recommendation asks. None is made up when the client sent none: the
 * gateway records no spans, and an unsampled parent of its own would stop
 * an engine that traces (vLLM's --otlp-traces-endpoint) from sampling on
 * its own. tracestate is passed on as sent, up to 512 bytes of printable
 * ASCII (the size every participant must propagate).
 */
#include <string.h>

#include "relay.h"

#define TRACESTATE_MAX 512

static bool hexes(const char *p, size_t n)
{
	bool nonzero = false;
	for (size_t i = 0; i < n; i++) {
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
		nonzero |= p[i] != '0';
	}
	return nonzero || n == 2; /* version 00 and flags 00 are fine */
}

bool gw_traceparent_ok(const char *h)
{
	size_t n = h ? strlen(h) : 0;
	if (n < 55 || n >= GW_TRACEPARENT_MAX || h[2] != '-' || h[35] != '-' || h[52] != '-')
		return false;
	if (!hexes(h, 2) || !strncmp(h, "ff", 2) || !hexes(h + 3, 32) || !hexes(h + 36, 16) ||
	    !hexes(h + 53, 2))
		return false;
	if (!strncmp(h, "00", 2))
		return n == 55;
	return n == 55 || h[55] == '-';
}

void req_trace_intake(struct req *q, struct MHD_Connection *c)
{
	const char *tp = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "traceparent");
	if (!gw_traceparent_ok(tp))
		return;
	snprintf(q->traceparent, sizeof(q->traceparent), "%s", tp);
	const char *ts = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "tracestate");
	size_t n = ts ? strlen(ts) : 0;
	bool ok = n > 0 && n <= TRACESTATE_MAX;
	for (size_t i = 0; ok && i < n; i++)
		ok = ts[i] >= 0x20 && ts[i] < 0x7f;
	if (ok)
		q->tracestate = xstrdup(ts);
}

struct curl_slist *req_trace_headers(const struct req *q, struct curl_slist *h)
{
	char line[GW_TRACEPARENT_MAX + TRACESTATE_MAX + 16];
	snprintf(line, sizeof(line), "X-Request-Id: %s", q->id);
	h = curl_slist_append(h, line);
	if (!q->traceparent[0])
		return h;
	snprintf(line, sizeof(line), "traceparent: %s", q->traceparent);
	h = curl_slist_append(h, line);
	if (q->tracestate) {
		snprintf(line, sizeof(line), "tracestate: %s", q->tracestate);
		h = curl_slist_append(h, line);
	}
	return h;
}

void req_trace_answer(const struct req *q, struct MHD_Response *r)
{
	MHD_add_response_header(r, "X-Request-Id", q->id);
	if (q->traceparent[0])
		MHD_add_response_header(r, "traceparent", q->traceparent);
	if (q->tracestate)
		MHD_add_response_header(r, "tracestate", q->tracestate);
}

void req_trace_log(struct req *q, char id[33])
{
	id[0] = '\0';
	if (q->traceparent[0]) {
		memcpy(id, q->traceparent + 3, 32);
		id[32] = '\0';
	}
	free(q->tracestate);
	q->tracestate = NULL;
}
