/*
 * probe.c — the correctness probes; see probe.h.
 *
 * Requests go to http://127.0.0.1:<port> only, with proxies switched off and
 * plain HTTP as the only protocol. All probes are easy handles on one curl
 * multi handle, so they run at once and each is bounded by its own timeout.
 * Response bodies are read through a capped struct buf: a runaway answer
 * fails the probe ("body larger than ...") instead of exhausting memory.
 * Judging is split from transport so unit tests can feed bodies directly
 * (probe_judge.c); the questions themselves are in probe_def.c, below both.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <curl/curl.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "probe_int.h"

#define BODY_CAP ((size_t)4 << 20) /* three 8192-float embeddings fit many times over */

const char *probe_status_name(enum probe_status s)
{
	switch (s) {
	case PROBE_PASS: return "pass";
	case PROBE_FAIL: return "fail";
	case PROBE_KNOWN_FAILURE: return "known-failure";
	case PROBE_KNOWN_FAILURE_PASSED: return "known-failure-passed";
	}
	return "?";
}

const char *probe_failure_name(enum probe_failure f)
{
	switch (f) {
	case PF_NONE: return NULL;
	case PF_WRONG: return "wrong-answer";
	case PF_TIMEOUT: return "timeout";
	case PF_REFUSED: return "refused";
	case PF_TRANSPORT: return "transport";
	case PF_HTTP: return "http";
	case PF_MALFORMED: return "malformed";
	}
	return "?";
}

const char *probe_path(enum role_id r)
{
	switch (r) {
	case ROLE_EMBEDDER: return "/v1/embeddings";
	case ROLE_RERANKER: return "/v1/rerank";
	default: return "/v1/chat/completions";
	}
}

const char *probe_kind_path(enum role_id r, enum probe_kind k)
{
	return k == PK_ANSWER ? probe_path(r) : "/v1/chat/completions";
}

/* The tool-call probe's request: one tool, get_weather(city), thinking off. */
static json_t *tool_request(enum role_id r)
{
	return json_pack("{s:s, s:[{s:s, s:s}], s:[{s:s, s:{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}}, "
			 "s:[s]}}}], s:s, s:i, s:f, s:{s:b}}",
			 "model", role_name(r), "messages", "role", "user", "content", TOOL_QUESTION,
			 "tools", "type", "function", "function", "name", TOOL_NAME, "description",
			 "Get the current weather in a city", "parameters", "type", "object",
			 "properties", TOOL_ARG, "type", "string", "description", "the city's name",
			 "required", TOOL_ARG, "tool_choice", "auto", "max_tokens", 256,
			 "temperature", 0.0, "chat_template_kwargs", "enable_thinking", 0);
}

char *probe_kind_request_body(enum role_id r, enum probe_kind k)
{
	json_auto_t *j = NULL;
	if (k == PK_ANSWER)
		return probe_request_body(r);
	if (k == PK_TOOL_CALL)
		j = tool_request(r);
	else
		j = json_pack("{s:s, s:[{s:s, s:s}], s:i, s:f, s:{s:b}}", "model", role_name(r),
			      "messages", "role", "user", "content", REASONING_QUESTION,
			      "max_tokens", REASONING_MAX_TOKENS, "temperature", 0.0,
			      "chat_template_kwargs", "enable_thinking", 1);
	char *s = json_dumps(j, JSON_COMPACT);
	if (!s)
		abort(); /* only on OOM: the values are fixed */
	return s;
}

char *probe_request_body(enum role_id r)
{
	json_auto_t *j = NULL;
	if (r == ROLE_EMBEDDER) {
		j = json_pack("{s:s, s:[s,s,s]}", "model", role_name(r), "input", probe_embed_inputs[0],
			      probe_embed_inputs[1], probe_embed_inputs[2]);
	} else if (r == ROLE_RERANKER) {
		json_t *docs = json_array();
		for (size_t i = 0; i < N_DOCS; i++)
			json_array_append_new(docs, json_string(probe_rerank_docs[i]));
		j = json_pack("{s:s, s:s, s:o}", "model", role_name(r), "query", probe_rerank_query,
			      "documents", docs);
	} else {
		j = json_pack("{s:s, s:[{s:s, s:s}], s:i, s:f, s:{s:b}}", "model", role_name(r),
			      "messages", "role", "user", "content", probe_chat[r].question,
			      "max_tokens", 16, "temperature", 0.0, "chat_template_kwargs",
			      "enable_thinking", 0);
	}
	char *s = json_dumps(j, JSON_COMPACT);
	if (!s)
		abort(); /* only on OOM: the values are fixed */
	return s;
}

void probe_init(struct probe *p, enum role_id r, int port, const struct known_failure *known)
{
	probe_init_kind(p, r, PK_ANSWER, port, known);
}

void probe_init_kind(struct probe *p, enum role_id r, enum probe_kind k, int port,
		     const struct known_failure *known)
{
	memset(p, 0, sizeof(*p));
	p->role = r;
	p->kind = k;
	p->port = port;
	p->known = known;
	p->status = PROBE_FAIL;
	p->evidence = json_object();
}

const struct known_failure *probe_known_failure(const struct profile *prof, enum role_id r)
{
	return probe_kind_known_failure(prof, r, PK_ANSWER);
}

const struct known_failure *probe_kind_known_failure(const struct profile *prof, enum role_id r,
						     enum probe_kind k)
{
	for (size_t i = 0; prof && i < prof->n_known_failures; i++) {
		const struct known_failure *f = &prof->known_failures[i];
		if (f->role && f->probe && strcmp(f->role, role_name(r)) == 0 &&
		    strcmp(f->probe, probe_kind_id(r, k)) == 0)
			return f;
	}
	return NULL;
}

void probe_free(struct probe *p)
{
	free(p->reason);
	free(p->summary);
	free(p->notice);
	json_decref(p->evidence);
	p->reason = p->summary = p->notice = NULL;
	p->evidence = NULL;
}

/* --- transport ------------------------------------------------------------- */

struct xfer {
	struct probe *p;
	CURL *h;
	struct curl_slist *headers;
	char *request;
	char *url;
	struct buf body;
	bool too_large;
	char errbuf[CURL_ERROR_SIZE];
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct xfer *x = userdata;
	size_t n = size * nmemb;
	if (buf_add(&x->body, ptr, n) < 0) {
		x->too_large = true;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	return n;
}

/* Configure x's easy handle for its probe; -1 when curl refuses an option. */
static int xfer_setup(struct xfer *x, long timeout_ms)
{
	enum role_id r = x->p->role;
	x->request = probe_kind_request_body(r, x->p->kind);
	x->url = x->p->origin ? xasprintf("%s%s", x->p->origin, probe_kind_path(r, x->p->kind))
			      : xasprintf("http://127.0.0.1:%d%s", x->p->port, probe_kind_path(r, x->p->kind));
	buf_init(&x->body, BODY_CAP);
	x->h = curl_easy_init();
	if (!x->h)
		return -1;
	x->headers = curl_slist_append(NULL, "Content-Type: application/json");
	x->headers = curl_slist_append(x->headers, "Expect:");
	if (x->p->bearer) { /* through a gateway (probe --fleet) */
		_cleanup_free_ char *a = xasprintf("Authorization: Bearer %s", x->p->bearer);
		x->headers = curl_slist_append(x->headers, a);
		explicit_bzero(a, strlen(a));
	}
	CURLcode c = CURLE_OK;
#define SET(opt, val) \
	if (c == CURLE_OK) \
	c = curl_easy_setopt(x->h, opt, val)
	SET(CURLOPT_URL, x->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http");
#else
	SET(CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTP);
#endif
	SET(CURLOPT_PROXY, "");     /* loopback only: never through a proxy from the environment */
	SET(CURLOPT_NOPROXY, "*");
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_HTTPHEADER, x->headers);
	SET(CURLOPT_POSTFIELDS, x->request);
	SET(CURLOPT_TIMEOUT_MS, timeout_ms);
	SET(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	SET(CURLOPT_WRITEFUNCTION, on_data);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_ERRORBUFFER, x->errbuf);
	SET(CURLOPT_PRIVATE, x);
	SET(CURLOPT_USERAGENT, "lobes-probe");
#undef SET
	return c == CURLE_OK ? 0 : -1;
}

static void xfer_free(struct xfer *x)
{
	if (x->h)
		curl_easy_cleanup(x->h);
	curl_slist_free_all(x->headers);
	free(x->request);
	free(x->url);
	buf_free(&x->body);
}

/* Turn a finished transfer (curl result rc) into the probe's verdict. */
static void xfer_done(struct xfer *x, CURLcode rc, double timeout_s)
{
	struct probe *p = x->p;
	long status = 0, oserr = 0;
	curl_off_t total_us = 0;
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(x->h, CURLINFO_OS_ERRNO, &oserr);
	if (curl_easy_getinfo(x->h, CURLINFO_TOTAL_TIME_T, &total_us) == CURLE_OK)
		p->latency_ms = (long)(total_us / 1000);
	p->http_status = status;
	const char *detail = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
	_cleanup_free_ char *where = p->origin ? xstrdup(p->origin) : xasprintf("127.0.0.1:%d", p->port);
	switch (rc) {
	case CURLE_OK:
		probe_judge(p, status, buf_str(&x->body), x->body.len);
		break;
	case CURLE_OPERATION_TIMEDOUT:
		if (!status && !x->body.len)
			probe_failf(p, PF_TIMEOUT, "timed out after %g s: no answer", timeout_s);
		else
			probe_failf(p, PF_TIMEOUT, "timed out after %g s: the answer was incomplete "
				  "(HTTP %ld, %zu bytes)", timeout_s, status, x->body.len);
		break;
	case CURLE_COULDNT_CONNECT:
		if (oserr == ECONNREFUSED)
			probe_failf(p, PF_REFUSED, "connection refused: nothing listening on %s", where);
		else
			probe_failf(p, PF_TRANSPORT, "could not connect to %s: %s", where, detail);
		break;
	case CURLE_WRITE_ERROR:
		if (x->too_large) {
			probe_failf(p, PF_MALFORMED, "malformed body: larger than %zu bytes", BODY_CAP);
			break;
		}
		probe_failf(p, PF_TRANSPORT, "%s", detail);
		break;
	case CURLE_GOT_NOTHING:
		probe_failf(p, PF_TRANSPORT, "the connection closed without an answer");
		break;
	default:
		probe_failf(p, PF_TRANSPORT, "%s", detail);
		break;
	}
}

int probe_run(struct probe *ps, size_t n, double timeout_s, struct err **err)
{
	if (!n)
		return 0;
	if (!(timeout_s > 0))
		return err_set(err, EXIT_INTERNAL, "probe timeout must be positive");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return err_set(err, EXIT_INTERNAL, "cannot initialise the HTTP client");
	int ret = 0;
	long timeout_ms = (long)ceil(timeout_s * 1000);
	struct xfer *xs = xcalloc(n, sizeof(*xs));
	CURLM *m = curl_multi_init();
	if (!m) {
		ret = err_set(err, EXIT_INTERNAL, "cannot initialise the HTTP client");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		xs[i].p = &ps[i];
		if (xfer_setup(&xs[i], timeout_ms) < 0 || curl_multi_add_handle(m, xs[i].h) != CURLM_OK) {
			ret = err_set(err, EXIT_INTERNAL, "cannot set up the HTTP request for role '%s'",
				      role_name(ps[i].role));
			goto out;
		}
	}
	int running = (int)n;
	while (running > 0) {
		CURLMcode mc = curl_multi_perform(m, &running);
		if (mc == CURLM_OK && running > 0)
			mc = curl_multi_poll(m, NULL, 0, 1000, NULL);
		if (mc != CURLM_OK) {
			ret = err_set(err, EXIT_INTERNAL, "HTTP client: %s", curl_multi_strerror(mc));
			goto out;
		}
	}
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(m, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		struct xfer *x = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		if (x)
			xfer_done(x, msg->data.result, timeout_s);
	}
out:
	for (size_t i = 0; i < n; i++) {
		if (m && xs[i].h)
			curl_multi_remove_handle(m, xs[i].h);
		xfer_free(&xs[i]);
	}
	if (m)
		curl_multi_cleanup(m);
	free(xs);
	curl_global_cleanup();
	return ret;
}

/* --- output ---------------------------------------------------------------- */

json_t *probe_json(const struct probe *p)
{
	const char *failure = probe_failure_name(p->failure);
	_cleanup_free_ char *url =
		p->origin ? xasprintf("%s%s", p->origin, probe_kind_path(p->role, p->kind))
			  : xasprintf("http://127.0.0.1:%d%s", p->port, probe_kind_path(p->role, p->kind));
	json_t *known = json_null();
	if (p->known)
		known = json_pack("{s:o, s:o}", "reason",
				  p->known->reason ? json_string(p->known->reason) : json_null(), "ref",
				  p->known->ref ? json_string(p->known->ref) : json_null());
	json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:o, s:o, s:I, s:I, s:s, s:o, s:O, s:o}",
			      "role", role_name(p->role), "probe", probe_kind_id(p->role, p->kind),
			      "status", probe_status_name(p->status),
			      "ok", p->status != PROBE_FAIL,
			      "failure", failure ? json_string(failure) : json_null(),
			      "reason", p->reason ? json_string(p->reason) : json_null(),
			      "http_status", (json_int_t)p->http_status,
			      "latency_ms", (json_int_t)p->latency_ms, "url", url,
			      "summary", p->summary ? json_string(p->summary) : json_null(),
			      "evidence", p->evidence, "known_failure", known);
	if (o && p->notice)
		json_object_set_new(o, "notice", json_string(p->notice));
	return o;
}
