/*
 * intake.c — the HTTP front's reading of a request head (server.c calls it
 * when MHD has parsed the head, before any body): the framing rules, and
 * the errors decided at the head but answered once the body is in.
 *
 * Framing. A request whose body length is ambiguous is answered at once,
 * once, in OpenAI's error shape, and its connection closed (what follows on
 * it cannot be trusted): two Content-Length headers (the first would win —
 * a request-smuggling shape behind another proxy) or Content-Length with
 * Transfer-Encoding are 400 invalid_framing; a Transfer-Encoding other than
 * one `chunked` (identity, gzip, "gzip, chunked") is 501
 * unsupported_transfer_encoding (it used to wait for the idle timeout).
 * What MHD 0.9.75 refuses itself before any callback (a Content-Length
 * that is not a number or past 2^64-1, a head past the connection's memory,
 * a malformed request line) keeps MHD's own answer: it offers no hook for
 * those (docs/gateway.md, "HTTP framing").
 *
 * Early errors. MHD 0.9.75 closes the connection after any answer queued
 * from the head (it then discards the rest of the request), so an error
 * decided there — no route (404), the wrong method (405), no key (401) —
 * is kept and answered once the body has been read and dropped: the
 * client's connection stays open for its next request.
 */
#include <string.h>
#include <strings.h>

#include "../util/cleanup.h"
#include "intake.h"

struct count {
	int cl, te;
	const char *te_value;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	(void)kind;
	struct count *n = cls;
	if (!strcasecmp(key, "Content-Length"))
		n->cl++;
	else if (!strcasecmp(key, "Transfer-Encoding")) {
		n->te++;
		n->te_value = value;
	}
	return MHD_YES;
}

enum MHD_Result intake_framing(struct req *q, struct MHD_Connection *c, bool *answered)
{
	struct count n = { 0 };
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &n);
	*answered = true;
	if (n.cl > 1)
		return req_error(q, c, 400, "invalid_request_error", "invalid_framing",
				 "the request has more than one Content-Length header", NULL, NULL);
	if (n.te && n.cl)
		return req_error(q, c, 400, "invalid_request_error", "invalid_framing",
				 "the request has both Content-Length and Transfer-Encoding", NULL,
				 NULL);
	if (n.te > 1 || (n.te && strcasecmp(n.te_value, "chunked") != 0)) {
		_cleanup_free_ char *m = xasprintf(
			"Transfer-Encoding '%.64s' is not supported; send Content-Length or "
			"Transfer-Encoding: chunked", n.te > 1 ? "(several headers)" : n.te_value);
		return req_error(q, c, 501, "invalid_request_error", "unsupported_transfer_encoding", m,
				 NULL, NULL);
	}
	*answered = false;
	return MHD_YES;
}

enum MHD_Result intake_answer_early(struct req *q, struct MHD_Connection *c)
{
	switch (q->early) {
	case EARLY_NOT_FOUND:
		return req_error(q, c, 404, "invalid_request_error", "not_found", "no such route", NULL,
				 NULL);
	case EARLY_METHOD: {
		const char *h[] = { "Allow", gw_endpoint_proxied(q->ep) ? "POST" : "GET, HEAD", NULL };
		return req_error(q, c, 405, "invalid_request_error", "method_not_allowed",
				 "method not allowed on this route", NULL, h);
	}
	case EARLY_AUTH: {
		const char *h[] = { "WWW-Authenticate", "Bearer", NULL };
		return req_error(q, c, 401, "invalid_request_error", "invalid_api_key",
				 "invalid or missing API key (Authorization: Bearer KEY)", NULL, h);
	}
	default:
		return MHD_NO;
	}
}
