/*
 * http.c — vLLM's OpenAI-compatible HTTP surface, served by the stand-in
 * (a test double) with libmicrohttpd on the socket main() bound early.
 *
 * Routes: GET /health, /version, /v1/models; POST /v1/chat/completions
 * (plain or "stream":true SSE), /v1/embeddings, /v1/rerank (also /rerank,
 * /v2/rerank). Errors use vLLM's {"error":{"message","type","param","code"}}
 * shape; unknown routes answer FastAPI's {"detail":"Not Found"}.
 *
 * Faults (chosen by main() from the pretended card): a pooling request may be
 * suspended forever (the sm_110 hang: accepted, never answered, /health
 * green); a request may kill the engine (500, logged launch failure, main()
 * exits 1); chat may answer garbage first. One polling thread serves every
 * connection, so the toy model needs no locking.
 */
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "standin.h"

#define MAX_BODY (8u << 20)

static struct standin *S;
static struct MHD_Daemon *daemon_;
static unsigned long request_seq;
static int chat_requests;
static bool rerank_seen;
static unsigned last_status;  /* of the response just queued; 0 = none (hung) */

struct body {
	char *data;
	size_t len;
	bool too_big;
};

/* Queue a response that takes ownership of text (malloc'd, len bytes). */
static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, char *text,
				 size_t len, const char *type)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer_with_free_callback(len, text, free);
	enum MHD_Result ret;

	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, status, r);
	last_status = status;
	MHD_destroy_response(r);
	return ret;
}

/* Queue j (reference stolen) as a JSON response. */
static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	if (!text)
		return MHD_NO;
	return send_text(c, status, text, strlen(text), "application/json");
}

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

/* vLLM's error body: {"error":{"message","type","param","code"}}. */
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *param,
				  const char *msg)
{
	return send_json(c, status,
			 json_pack("{s:{s:s, s:s, s:o, s:i}}", "error", "message", msg, "type",
				   error_type(status), "param",
				   param ? json_string(param) : json_null(), "code", (int)status));
}

static enum MHD_Result send_detail(struct MHD_Connection *c, unsigned status, const char *detail)
{
	return send_json(c, status, json_pack("{s:s}", "detail", detail));
}

/* Check the request's "model" against the served name: true when absent or
 * equal; else a 404 is queued and its result stored in *ret. */
static bool model_ok(struct MHD_Connection *c, json_t *req, enum MHD_Result *ret)
{
	const char *m = json_string_value(json_object_get(req, "model"));
	char msg[512];

	if (!m || !strcmp(m, S->served_name))
		return true;
	snprintf(msg, sizeof msg, "The model `%s` does not exist.", m);
	*ret = send_error(c, 404, "model", msg);
	return false;
}

/* The engine dies on this request: log vLLM's launch-failure lines, answer
 * 500 and let main() exit 1 (a dead engine). */
static enum MHD_Result engine_dies(struct MHD_Connection *c)
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

	vtraceback("core.py:879", "EngineCore encountered a fatal error.", frames,
		   "torch.AcceleratorError: CUDA error: unspecified launch failure");
	vlog(LV_ERROR, "core.py:879",
	     "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.");
	vlog(LV_ERROR, "core.py:879", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1");
	vlog(LV_ERROR, "cuda_graph.py:211",
	     "CUDA graph replay failed: cudaErrorLaunchFailure (unspecified launch failure)");
	vlog(LV_ERROR, "async_llm.py:480", "AsyncLLM output_handler failed.");
	raw(false, "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.");
	S->dead = 1;
	return send_error(c, 500, NULL,
			  "EngineCore encountered an issue. See stack trace (above) for the root cause.");
}

/* Text of a message "content": a string, or the text parts of an array. */
static void content_text(json_t *content, char *out, size_t size)
{
	size_t used = 0;
	size_t i;
	json_t *part;

	out[0] = '\0';
	if (json_is_string(content)) {
		snprintf(out, size, "%s", json_string_value(content));
		return;
	}
	json_array_foreach(content, i, part) {
		const char *t = json_string_value(json_object_get(part, "text"));
		if (t && used < size) {
			int n = snprintf(out + used, size - used, "%s%s", used ? " " : "", t);
			if (n > 0)
				used += (size_t)n;
		}
	}
}

/* Keep at most max_words words of reply; true when it was cut. */
static bool truncate_words(char *reply, long max_words)
{
	long words = 0;
	char *p = reply;

	if (max_words <= 0)
		return false;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (++words > max_words) {
			p[-1] = '\0';
			return true;
		}
		while (*p && *p != ' ')
			p++;
	}
	return false;
}

static json_t *usage(int prompt, int completion)
{
	return json_pack("{s:i, s:i, s:i}", "prompt_tokens", prompt, "total_tokens",
			 prompt + completion, "completion_tokens", completion);
}

/* Append one SSE event "data: <json>\n\n" (j stolen) to the stream. */
static void sse(FILE *f, json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	fprintf(f, "data: %s\n\n", text ? text : "{}");
	free(text);
}

static json_t *chunk(const char *id, long created, json_t *delta, const char *finish)
{
	return json_pack("{s:s, s:s, s:i, s:s, s:[{s:i, s:o, s:n, s:o}]}", "id", id, "object",
			 "chat.completion.chunk", "created", (json_int_t)created, "model",
			 S->served_name, "choices", "index", 0, "delta", delta, "logprobs",
			 "finish_reason", finish ? json_string(finish) : json_null());
}

static enum MHD_Result chat(struct MHD_Connection *c, json_t *req)
{
	enum MHD_Result ret;
	json_t *messages = json_object_get(req, "messages");
	json_t *msg, *mt;
	char prompt[4096] = "", text[4096], reply[4096], id[64];
	int prompt_tokens = 0, completion_tokens;
	long created = (long)time(NULL), max_tokens = 0;
	bool cut;
	size_t i;

	if (S->task != TASK_GENERATE)
		return send_error(c, 400, NULL, "The model does not support Chat Completions API");
	if (!model_ok(c, req, &ret))
		return ret;
	if (!json_is_array(messages) || !json_array_size(messages))
		return send_error(c, 400, "messages", "messages: field required (a non-empty list)");
	json_array_foreach(messages, i, msg) {
		const char *role = json_string_value(json_object_get(msg, "role"));
		if (!role)
			return send_error(c, 400, "messages", "each message needs a role");
		content_text(json_object_get(msg, "content"), text, sizeof text);
		prompt_tokens += 4 + model_count_tokens(text);
		if (!strcmp(role, "user"))
			snprintf(prompt, sizeof prompt, "%s", text);
	}
	mt = json_object_get(req, "max_completion_tokens");
	if (!mt || json_is_null(mt))
		mt = json_object_get(req, "max_tokens");
	if (mt && !json_is_null(mt)) {
		if (!json_is_integer(mt) || json_integer_value(mt) < 1)
			return send_error(c, 400, "max_tokens", "max_tokens must be at least 1");
		max_tokens = (long)json_integer_value(mt);
	}
	if (S->fault == FAULT_CORRUPT_THEN_DIE && ++chat_requests >= 2)
		return engine_dies(c);
	if (S->fault == FAULT_CORRUPT_THEN_DIE)
		snprintf(reply, sizeof reply, "%s", model_garbage_reply());
	else
		model_chat_reply(prompt, reply, sizeof reply);
	cut = truncate_words(reply, max_tokens);
	completion_tokens = model_count_tokens(reply);
	snprintf(id, sizeof id, "chatcmpl-standin-%lu", ++request_seq);

	if (json_is_true(json_object_get(req, "stream"))) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		char *save = NULL, *word;
		bool first = true;

		if (!f)
			return MHD_NO;
		sse(f, chunk(id, created, json_pack("{s:s, s:s}", "role", "assistant", "content", ""),
			     NULL));
		for (word = strtok_r(reply, " ", &save); word; word = strtok_r(NULL, " ", &save)) {
			snprintf(text, sizeof text, "%s%s", first ? "" : " ", word);
			sse(f, chunk(id, created, json_pack("{s:s}", "content", text), NULL));
			first = false;
		}
		sse(f, chunk(id, created, json_object(), cut ? "length" : "stop"));
		fputs("data: [DONE]\n\n", f);
		fclose(f);
		return send_text(c, 200, buf, len, "text/event-stream; charset=utf-8");
	}
	return send_json(c, 200,
			 json_pack("{s:s, s:s, s:i, s:s, s:[{s:i, s:{s:s, s:s, s:n, s:[]}, s:n, s:s}], s:o}",
				   "id", id, "object", "chat.completion", "created",
				   (json_int_t)created, "model", S->served_name, "choices", "index", 0,
				   "message", "role", "assistant", "content", reply,
				   "reasoning_content", "tool_calls", "logprobs", "finish_reason",
				   cut ? "length" : "stop", "usage",
				   usage(prompt_tokens, completion_tokens)));
}

/* Suspend the connection forever: accepted, never answered. */
static enum MHD_Result hang(struct MHD_Connection *c, const char *what)
{
	vlog(LV_DEBUG, "serving.py:212", "%s request accepted (standin: sm_110 pooling hang)", what);
	MHD_suspend_connection(c);
	return MHD_YES;
}

static enum MHD_Result embeddings(struct MHD_Connection *c, json_t *req)
{
	enum MHD_Result ret;
	json_t *input = json_object_get(req, "input"), *inputs, *data, *item;
	int tokens = 0;
	size_t i, dim = S->embed_dim;
	float *vec;
	char id[64];

	if (S->task != TASK_EMBED)
		return send_error(c, 400, NULL, "The model does not support Embeddings API");
	if (!model_ok(c, req, &ret))
		return ret;
	if (json_is_string(input))
		inputs = json_pack("[O]", input);
	else if (json_is_array(input) && json_array_size(input))
		inputs = json_incref(input);
	else
		return send_error(c, 400, "input", "input: a string or a non-empty list of strings");
	json_array_foreach(inputs, i, item) {
		if (!json_is_string(item)) {
			json_decref(inputs);
			return send_error(c, 400, "input", "input: the stand-in accepts strings only");
		}
	}
	if (S->fault == FAULT_POOLING_HANG) {
		json_decref(inputs);
		return hang(c, "embeddings");
	}
	vec = calloc(dim, sizeof *vec);
	data = json_array();
	json_array_foreach(inputs, i, item) {
		json_t *arr = json_array();
		model_embed(json_string_value(item), vec, dim);
		for (size_t k = 0; k < dim; k++)
			json_array_append_new(arr, json_real(vec[k]));
		json_array_append_new(data, json_pack("{s:i, s:s, s:o}", "index", (json_int_t)i,
						      "object", "embedding", "embedding", arr));
		tokens += model_count_tokens(json_string_value(item));
	}
	free(vec);
	json_decref(inputs);
	snprintf(id, sizeof id, "embd-standin-%lu", ++request_seq);
	return send_json(c, 200,
			 json_pack("{s:s, s:s, s:i, s:s, s:o, s:o}", "id", id, "object", "list",
				   "created", (json_int_t)time(NULL), "model", S->served_name, "data",
				   data, "usage", usage(tokens, 0)));
}

struct scored {
	size_t index;
	double score;
	const char *text;
};

static int by_score_desc(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static enum MHD_Result rerank(struct MHD_Connection *c, json_t *req)
{
	enum MHD_Result ret;
	const char *query = json_string_value(json_object_get(req, "query"));
	json_t *docs = json_object_get(req, "documents"), *doc, *results;
	json_t *top = json_object_get(req, "top_n");
	size_t n, i, limit;
	struct scored *sc;
	int tokens;
	char id[64];

	if (S->task != TASK_CLASSIFY)
		return send_error(c, 400, NULL, "The model does not support Rerank (Score) API");
	if (!model_ok(c, req, &ret))
		return ret;
	if (!query)
		return send_error(c, 400, "query", "query: field required (a string)");
	if (!json_is_array(docs) || !(n = json_array_size(docs)))
		return send_error(c, 400, "documents", "documents: a non-empty list");
	if (S->fault == FAULT_GRAPH_KILL && !rerank_seen) {
		rerank_seen = true;
		return engine_dies(c);
	}
	if (S->fault == FAULT_POOLING_HANG)
		return hang(c, "rerank");
	sc = calloc(n, sizeof *sc);
	tokens = model_count_tokens(query);
	json_array_foreach(docs, i, doc) {
		const char *t = json_is_string(doc) ? json_string_value(doc)
						    : json_string_value(json_object_get(doc, "text"));
		if (!t) {
			free(sc);
			return send_error(c, 400, "documents", "documents: strings or {\"text\": ...}");
		}
		sc[i] = (struct scored){ i, model_relevance(query, t), t };
		tokens += model_count_tokens(t) + model_count_tokens(query);
	}
	qsort(sc, n, sizeof *sc, by_score_desc);
	if (S->fault == FAULT_WRONG_ORDER) {
		/* The recorded known failure: the engine serves, the order is wrong. */
		for (i = 0; i < n / 2; i++) {
			struct scored t = sc[i];
			sc[i] = sc[n - 1 - i];
			sc[n - 1 - i] = t;
		}
	}
	limit = n;
	if (json_is_integer(top) && json_integer_value(top) > 0 &&
	    (size_t)json_integer_value(top) < n)
		limit = (size_t)json_integer_value(top);
	results = json_array();
	for (i = 0; i < limit; i++)
		json_array_append_new(results,
				      json_pack("{s:i, s:{s:s}, s:f}", "index", (json_int_t)sc[i].index,
						"document", "text", sc[i].text, "relevance_score",
						sc[i].score));
	free(sc);
	snprintf(id, sizeof id, "rerank-standin-%lu", ++request_seq);
	return send_json(c, 200,
			 json_pack("{s:s, s:s, s:{s:i}, s:o}", "id", id, "model", S->served_name,
				   "usage", "total_tokens", tokens, "results", results));
}

static enum MHD_Result models(struct MHD_Connection *c)
{
	long now = (long)time(NULL);

	return send_json(c, 200,
			 json_pack("{s:s, s:[{s:s, s:s, s:i, s:s, s:s, s:n, s:i}]}", "object", "list",
				   "data", "id", S->served_name, "object", "model", "created",
				   (json_int_t)now, "owned_by", "vllm", "root", S->model, "parent",
				   "max_model_len", (json_int_t)S->max_model_len));
}

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

static bool is_rerank(const char *url)
{
	return !strcmp(url, "/v1/rerank") || !strcmp(url, "/rerank") || !strcmp(url, "/v2/rerank");
}

/* Answer a complete request (body in b, may be empty). */
static enum MHD_Result route(struct MHD_Connection *c, const char *url, const char *method,
			     struct body *b)
{
	bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
	bool is_post_route = !strcmp(url, "/v1/chat/completions") ||
			     !strcmp(url, "/v1/embeddings") || is_rerank(url);
	json_error_t jerr;
	json_t *req;
	enum MHD_Result ret;

	if (!strcmp(url, "/health")) {
		if (!get)
			return send_detail(c, 405, "Method Not Allowed");
		if (S->dead)
			return send_text(c, 503, NULL, 0, "application/json");
		return send_text(c, 200, NULL, 0, "application/json");
	}
	if (!strcmp(url, "/version") && get)
		return send_json(c, 200, json_pack("{s:s}", "version", S->version));
	if (strncmp(url, "/v1/", 4) == 0 && !authorised(c))
		return send_json(c, 401, json_pack("{s:s}", "error", "Unauthorized"));
	if (!strcmp(url, "/v1/models")) {
		if (!get)
			return send_detail(c, 405, "Method Not Allowed");
		return models(c);
	}
	if (!is_post_route)
		return send_detail(c, 404, "Not Found");
	if (!post)
		return send_detail(c, 405, "Method Not Allowed");
	if (b->too_big)
		return send_error(c, 413, NULL, "request body too large");
	req = json_loadb(b->data ? b->data : "", b->len, 0, &jerr);
	if (!json_is_object(req)) {
		char msg[256];
		snprintf(msg, sizeof msg, "JSON decode error: %s", jerr.text);
		json_decref(req);
		return send_error(c, 400, NULL, msg);
	}
	if (!strcmp(url, "/v1/chat/completions"))
		ret = chat(c, req);
	else if (!strcmp(url, "/v1/embeddings"))
		ret = embeddings(c, req);
	else
		ret = rerank(c, req);
	json_decref(req);
	return ret;
}

/* libmicrohttpd's access handler: gather the body, then route once. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct body *b = *con_cls;
	enum MHD_Result ret;

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
	last_status = 0;
	ret = route(c, url, method, b);
	if (last_status)
		uvlog("127.0.0.1 - \"%s %s %s\" %u %s", method, url, version, last_status,
		      MHD_get_reason_phrase_for(last_status));
	return ret;
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
	if (listen(s->listen_fd, 128) < 0) {
		raw(true, "OSError: [Errno %d] %s", errno, strerror(errno));
		return -1;
	}
	daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
					   MHD_ALLOW_SUSPEND_RESUME,
				   0, NULL, NULL, on_request, NULL, MHD_OPTION_LISTEN_SOCKET,
				   s->listen_fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				   MHD_OPTION_END);
	if (!daemon_) {
		raw(true, "RuntimeError: the HTTP server did not start");
		return -1;
	}
	return 0;
}

void http_stop(void)
{
	/* Suspended (hung) connections make a clean stop impossible; the
	 * process exits right after, which closes everything. */
	daemon_ = NULL;
}
