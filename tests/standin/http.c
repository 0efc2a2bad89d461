/*
 * http.c — vLLM's OpenAI-compatible HTTP surface, served by the stand-in
 * (a test double) with libmicrohttpd on the socket main() bound early.
 *
 * Routes: GET /health, /version, /metrics (metrics.c), /v1/models; POST /v1/chat/completions,
 * /v1/completions (generate.c), /tokenize (logprob.c), /v1/embeddings, /v1/rerank, /rerank,
 * /v2/rerank, /v1/score, /score (pool.c). Errors use vLLM's
 * {"error":{"message","type","param","code"}} shape; unknown routes answer
 * FastAPI's {"detail":"Not Found"}.
 *
 * One thread per connection: a handler runs under one lock (the toy model
 * keeps static state), then the response goes out on the connection's own
 * thread. A streamed reply is a callback response: each SSE frame is handed
 * to libmicrohttpd as soon as it is due (the first waits
 * S->first_token_ms, the prefill; each later token frame S->token_ms, a
 * decode step; usage and [DONE] go at once), so nothing is buffered.
 * STANDIN_503_EVERY answers every Nth generate request 503;
 * STANDIN_DROP_EVERY drops the connection of every Nth stream after its
 * first two frames (a chunked body cut short). While waiting the connection's
 * socket is polled for the peer hanging up; a client that disconnects
 * mid-stream stops the generation at once and the abort is logged with
 * vLLM's wording ("Aborted request(s) ID." then "Request ID aborted.";
 * vLLM prints them with --enable-log-requests, the stand-in always does so
 * tests can see the cancellation). A hung request (sm_110 pooling fault)
 * holds its connection, unanswered, until the client goes away.
 */
#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "standin.h"

#define MAX_BODY (8u << 20)

struct standin *S;
static struct MHD_Daemon *daemon_;
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;

struct body {
	char *data;
	size_t len;
	bool too_big;
};

/* ---- replies ------------------------------------------------------------- */

static const char *error_type(unsigned status)
{
	switch (status) {
	case 400: return "BadRequestError";
	case 401: return "Unauthorized";
	case 404: return "NotFoundError";
	case 413: return "BadRequestError";
	default: return "InternalServerError";
	}
}

void reply_json(struct reply *r, unsigned status, json_t *body)
{
	r->status = status;
	json_decref(r->body);
	r->body = body;
}

void reply_error(struct reply *r, unsigned status, const char *param, const char *msg)
{
	reply_json(r, status,
		   json_pack("{s:{s:s, s:s, s:o, s:i}}", "error", "message", msg, "type",
			     error_type(status), "param", param ? json_string(param) : json_null(),
			     "code", (int)status));
}

static void add_frame(struct reply *r, json_t *event, bool now)
{
	char *text = event ? json_dumps(event, JSON_COMPACT) : NULL, *frame;

	json_decref(event);
	if (asprintf(&frame, "data: %s\n\n", event ? (text ? text : "{}") : "[DONE]") < 0)
		abort();
	free(text);
	r->frames = realloc(r->frames, (r->n_frames + 1) * sizeof *r->frames);
	r->now = realloc(r->now, (r->n_frames + 1) * sizeof *r->now);
	if (!r->frames || !r->now)
		abort();
	r->now[r->n_frames] = now;
	r->frames[r->n_frames++] = frame;
	r->status = 200;
}

void reply_frame(struct reply *r, json_t *event)
{
	add_frame(r, event, event == NULL);
}

void reply_frame_now(struct reply *r, json_t *event)
{
	add_frame(r, event, true);
}

/* Generate requests counted for the injected failures (under handler_lock). */
static long generate_requests, streams;

bool injected_503(struct reply *r)
{
	generate_requests++;
	if (S->fail_every <= 0 || generate_requests % S->fail_every)
		return false;
	reply_error(r, 503, NULL, "The server is overloaded (standin: STANDIN_503_EVERY)");
	return true;
}

void maybe_cut(struct reply *r)
{
	streams++;
	if (S->drop_every > 0 && streams % S->drop_every == 0)
		r->cut_after = 2;
}

static void reply_free(struct reply *r)
{
	for (size_t i = 0; i < r->n_frames; i++)
		free(r->frames[i]);
	free(r->frames);
	free(r->now);
	json_decref(r->body);
	free(r->text);
	memset(r, 0, sizeof *r);
}

bool model_ok(struct reply *r, json_t *req)
{
	const char *m = json_string_value(json_object_get(req, "model"));
	char msg[512];

	if (!m)
		return true;
	for (size_t i = 0; i < S->n_served; i++)
		if (!strcmp(m, S->served[i]))
			return true;
	snprintf(msg, sizeof msg, "The model `%s` does not exist.", m);
	reply_error(r, 404, "model", msg);
	return false;
}

void engine_dies(struct reply *r)
{
	static const char *const frames[] = {
		"  File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py\", line 870, in run_engine_core",
		"    engine_core.run_busy_loop()",
		"  File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py\", line 897, in run_busy_loop",
		"    self._process_engine_step()",
		"  File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py\", line 2504, in execute_model",
		"    self.cudagraph_dispatcher.replay(batch_descriptor)",
		NULL,
	};

	if (S->fault == FAULT_MTP_NO_KERNEL) {
		/* FACTS.md trait 8 records this line with its middle elided */
		vtraceback("core.py:879", "EngineCore encountered a fatal error.", frames,
			   "RuntimeError: launch_gdn_decode_post_conv_mtp ... no kernel image is "
			   "available for execution on the device");
		goto dead;
	}
	vtraceback("core.py:879", "EngineCore encountered a fatal error.", frames,
		   "torch.AcceleratorError: CUDA error: unspecified launch failure");
	vlog(LV_ERROR, "core.py:879",
	     "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.");
	vlog(LV_ERROR, "core.py:879", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1");
	vlog(LV_ERROR, "cuda_graph.py:211",
	     "CUDA graph replay failed: cudaErrorLaunchFailure (unspecified launch failure)");
dead:
	vlog(LV_ERROR, "async_llm.py:480", "AsyncLLM output_handler failed.");
	raw(false, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.");
	S->dead = 1;
	reply_error(r, 500, NULL,
		    "EngineCore encountered an issue. See stack trace (above) for the root cause.");
}

static void models(struct reply *r)
{
	json_t *data = json_array();
	long now = (long)time(NULL);

	for (size_t i = 0; i < S->n_served; i++)
		json_array_append_new(data, json_pack("{s:s, s:s, s:i, s:s, s:s, s:n, s:i}", "id",
						      S->served[i], "object", "model", "created",
						      (json_int_t)now, "owned_by", "vllm", "root",
						      S->model, "parent", "max_model_len",
						      (json_int_t)S->max_model_len));
	reply_json(r, 200, json_pack("{s:s, s:o}", "object", "list", "data", data));
}

/* ---- sending --------------------------------------------------------------- */

/* True when the peer of connection c has hung up; waits up to ms for it. */
static bool peer_gone(struct MHD_Connection *c, long ms)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p;
	struct timespec until, now;

	if (!ci)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	for (;;) {
		long left;
		int n;
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* rounded up: a wait is never shorter than asked (token timing is measured) */
		left = ((until.tv_sec - now.tv_sec) * 1000000000L + (until.tv_nsec - now.tv_nsec) +
			999999L) / 1000000L;
		p = (struct pollfd){ .fd = ci->connect_fd, .events = POLLRDHUP };
		n = poll(&p, 1, left > 0 ? (int)left : 0);
		if (n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
			return true;
		if (n == 0 || (n < 0 && errno != EINTR) || left <= 0)
			return false;
	}
}

struct stream {
	struct reply r;
	struct MHD_Connection *c;
	size_t next, off;         /* next frame, bytes of it already handed out */
};

static void stream_abort(struct stream *st)
{
	vlog(LV_INFO, "async_llm.py:520", "Aborted request(s) %s.", st->r.id);
	vlog(LV_INFO, "async_llm.py:476", "Request %s aborted.", st->r.id);
}

/* libmicrohttpd asks for the next bytes: the rest of the current frame, or
 * the next frame once it is due. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	const char *f;
	size_t len;

	(void)pos;
	if (st->next >= st->r.n_frames)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (st->off == 0 && st->r.cut_after && st->next >= st->r.cut_after) {
		vlog(LV_INFO, "async_llm.py:520", "Aborted request(s) %s. (standin: STANDIN_DROP_EVERY)",
		     st->r.id);
		return MHD_CONTENT_READER_END_WITH_ERROR;  /* the connection is dropped */
	}
	if (st->off == 0) {
		/* the first frame waits for the prefill, a token frame for its decode step */
		long wait = st->next == 0 ? S->first_token_ms : st->r.now[st->next] ? 0 : S->token_ms;
		if ((st->next > 0 || wait > 0) && peer_gone(st->c, wait)) {
			stream_abort(st);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
	}
	if (st->off == 0 && S->dead)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	f = st->r.frames[st->next];
	len = strlen(f + st->off);
	if (len > max)
		len = max;
	memcpy(buf, f + st->off, len);
	st->off += len;
	if (!f[st->off]) {
		st->next++;
		st->off = 0;
	}
	return (ssize_t)len;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;

	stream_end(st->r.kv_tokens);
	reply_free(&st->r);
	free(st);
}

/* Queue r on c (r is consumed). */
static enum MHD_Result send_reply(struct MHD_Connection *c, struct reply *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	unsigned status = r->status ? r->status : 500;

	if (r->n_frames) {
		struct stream *st = calloc(1, sizeof *st);
		if (!st)
			return MHD_NO;
		st->r = *r;
		st->c = c;
		memset(r, 0, sizeof *r);
		stream_begin(st->r.kv_tokens);
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, st,
							 stream_free);
		if (!resp) {
			stream_free(st);
			return MHD_NO;
		}
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/event-stream; charset=utf-8");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	} else {
		bool plain = r->text != NULL;
		char *text = plain ? r->text : r->body ? json_dumps(r->body, JSON_COMPACT) : NULL;
		size_t len = text ? strlen(text) : 0;
		r->text = NULL;
		reply_free(r);
		resp = MHD_create_response_from_buffer_with_free_callback(len, text, free);
		if (!resp) {
			free(text);
			return MHD_NO;
		}
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					plain ? "text/plain; version=0.0.4; charset=utf-8" : "application/json");
	}
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* ---- routing ---------------------------------------------------------------- */

static bool authorised(struct MHD_Connection *c)
{
	const char *h;
	char want[512];

	if (!S->api_key)
		return true;
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	snprintf(want, sizeof want, "Bearer %s", S->api_key);
	return h && !strcmp(h, want);
}

typedef void (*handler)(struct reply *, json_t *);

static handler post_route(const char *url)
{
	static const struct {
		const char *url;
		handler fn;
	} routes[] = {
		{ "/v1/chat/completions", api_chat }, { "/v1/completions", api_completions },
		{ "/v1/embeddings", api_embeddings }, { "/v1/rerank", api_rerank },
		{ "/rerank", api_rerank },            { "/v2/rerank", api_rerank },
		{ "/v1/score", api_score },           { "/score", api_score },
		{ "/tokenize", api_tokenize },         { "/v1/responses", api_responses },
	};

	for (size_t i = 0; i < sizeof routes / sizeof *routes; i++)
		if (!strcmp(url, routes[i].url))
			return routes[i].fn;
	return NULL;
}

/* Answer a complete request (body in b, may be empty) into r. */
static void route(struct MHD_Connection *c, const char *url, const char *method,
		  struct body *b, struct reply *r)
{
	bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
	handler fn = post_route(url);
	json_error_t jerr;
	json_t *req;

	if (!strcmp(url, "/health")) {
		if (!get)
			return reply_json(r, 405, json_pack("{s:s}", "detail", "Method Not Allowed"));
		r->status = S->dead ? 503 : 200;
		return;
	}
	if (!strcmp(url, "/version") && get)
		return reply_json(r, 200, json_pack("{s:s}", "version", S->version));
	if (!strcmp(url, "/metrics") && get)
		return api_metrics(r);
	if ((!strncmp(url, "/v1/", 4) || fn) && !authorised(c))
		return reply_json(r, 401, json_pack("{s:s}", "error", "Unauthorized"));
	if (!strcmp(url, "/v1/models")) {
		if (!get)
			return reply_json(r, 405, json_pack("{s:s}", "detail", "Method Not Allowed"));
		return models(r);
	}
	if (!fn)
		return reply_json(r, 404, json_pack("{s:s}", "detail", "Not Found"));
	if (!post)
		return reply_json(r, 405, json_pack("{s:s}", "detail", "Method Not Allowed"));
	if (b->too_big)
		return reply_error(r, 413, NULL, "request body too large");
	req = json_loadb(b->data ? b->data : "", b->len, 0, &jerr);
	if (!json_is_object(req)) {
		char msg[256];
		snprintf(msg, sizeof msg, "JSON decode error: %s", jerr.text);
		json_decref(req);
		return reply_error(r, 400, NULL, msg);
	}
	fn(r, req);
	json_decref(req);
}

/* A request that carries a W3C traceparent: its trace headers and request
 * id, so a test can follow one request from the client to the engine. vLLM
 * logs nothing like it (it hands the context to OpenTelemetry): the line
 * says it is the stand-in's. */
static void log_trace(struct MHD_Connection *c, const char *url)
{
	const char *tp = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "traceparent");
	const char *ts = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "tracestate");
	const char *id = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Request-Id");
	if (tp)
		vlog(LV_INFO, "standin", "%s traceparent=%s tracestate=%s x-request-id=%s (standin: trace headers received)",
		     url, tp, ts ? ts : "-", id ? id : "-");
}

/* libmicrohttpd's access handler: gather the body, then route once. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct body *b = *con_cls;
	struct reply r = { 0 };

	(void)cls;
	if (!b) {
		*con_cls = calloc(1, sizeof *b);
		return *con_cls ? MHD_YES : MHD_NO;
	}
	if (*upload_data_size) {
		if (!b->too_big && b->len + *upload_data_size <= MAX_BODY) {
			char *n = realloc(b->data, b->len + *upload_data_size + 1);
			if (!n)
				return MHD_NO;
			memcpy(n + b->len, upload_data, *upload_data_size);
			b->len += *upload_data_size;
			n[b->len] = '\0';
			b->data = n;
		} else {
			b->too_big = true;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	log_trace(c, url);
	pthread_mutex_lock(&handler_lock);
	route(c, url, method, b, &r);
	pthread_mutex_unlock(&handler_lock);
	if (r.hang) {
		vlog(LV_DEBUG, "serving.py:212", "%s request accepted (standin: sm_110 pooling hang)",
		     url);
		reply_free(&r);
		while (!peer_gone(c, 1000))
			;
		return MHD_NO;
	}
	uvlog("127.0.0.1 - \"%s %s %s\" %u %s", method, url, version, r.status,
	      MHD_get_reason_phrase_for(r.status));
	return send_reply(c, &r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct body *b = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (b) {
		free(b->data);
		free(b);
		*con_cls = NULL;
	}
}

int http_start(struct standin *s)
{
	S = s;
	if (listen(s->listen_fd, 1024) < 0) {
		raw(true, "OSError: [Errno %d] %s", errno, strerror(errno));
		return -1;
	}
	daemon_ = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
					   MHD_USE_POLL,
				   0, NULL, NULL, on_request, NULL, MHD_OPTION_LISTEN_SOCKET,
				   s->listen_fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				   MHD_OPTION_CONNECTION_LIMIT, (unsigned)4096,
				   MHD_OPTION_THREAD_STACK_SIZE, (size_t)(256 * 1024),
				   MHD_OPTION_END);
	if (!daemon_) {
		raw(true, "RuntimeError: the HTTP server did not start");
		return -1;
	}
	return 0;
}

void http_stop(void)
{
	/* Hung connections make a clean stop impossible; the process exits
	 * right after, which closes everything. */
	daemon_ = NULL;
}
