/*
 * generate.c — the stand-in's (a test double's) generate routes:
 * POST /v1/chat/completions and /v1/completions, plain or streamed.
 *
 * The toy model (model.c) gives the answer; this file shapes it the way
 * vLLM's OpenAI server does for the role's flags:
 *  - thinking: a thinking model (S->thinks) prefixes "<think>...</think>";
 *    with --reasoning-parser that text goes to the message's `reasoning`
 *    field (the name vLLM uses at the recorded versions; `reasoning_content`
 *    was removed before them), without one it stays in `content`;
 *  - tools: a request with `tools` and tool_choice "auto" (the default)
 *    needs --enable-auto-tool-choice and --tool-call-parser, else HTTP 400
 *    with vLLM's message; with them the toy calls the tool the prompt asks
 *    for (finish_reason "tool_calls", arguments a JSON string, no content);
 *  - "stream": true: the reply becomes SSE frames (role, one per word,
 *    the finish, usage when asked, [DONE]) that http.c sends spaced in time;
 *    a completion stream carries its finish reason on its last word;
 *  - completions: "ignore_eos": true runs the output to exactly max_tokens
 *    words (vLLM's sampling parameter; the load generator relies on it);
 *    "prompt_logprobs": k adds the toy distributions of logprob.c.
 * max_tokens counts words of the whole output, thinking included.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "standin.h"

static unsigned long seq;
static int chat_requests;

/* Text of a message "content": a string, or the text parts of an array. */
static void content_text(json_t *content, char *out, size_t size)
{
	size_t used = 0, i;
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

/* Keep at most max_words space-separated words of text; true when cut. */
static bool truncate_words(char *text, long max_words)
{
	long words = 0;
	char *p = text;

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

/* max_completion_tokens, else max_tokens: 0 = none, -1 = invalid (400 queued). */
static long max_tokens(struct reply *r, json_t *req)
{
	json_t *mt = json_object_get(req, "max_completion_tokens");

	if (!mt || json_is_null(mt))
		mt = json_object_get(req, "max_tokens");
	if (!mt || json_is_null(mt))
		return 0;
	if (!json_is_integer(mt) || json_integer_value(mt) < 1) {
		reply_error(r, 400, "max_tokens", "max_tokens must be at least 1");
		return -1;
	}
	return (long)json_integer_value(mt);
}

/* ---- tools ------------------------------------------------------------ */

/* The value the toy fills a string argument with: the last capitalised word
 * of the prompt that does not start a sentence ("Paris" in "What is the
 * weather in Paris? Use the tool."). */
static json_t *toy_string_arg(const char *prompt)
{
	char best[64] = "";
	bool sentence_start = true;

	for (const char *p = prompt; *p;) {
		if (isalpha((unsigned char)*p)) {
			const char *b = p;
			while (isalnum((unsigned char)*p) || *p == '-')
				p++;
			if (isupper((unsigned char)*b) && !sentence_start && (size_t)(p - b) < sizeof best)
				snprintf(best, sizeof best, "%.*s", (int)(p - b), b);
			sentence_start = false;
			continue;
		}
		if (*p == '.' || *p == '?' || *p == '!')
			sentence_start = true;
		p++;
	}
	return json_string(*best ? best : "unknown");
}

static bool mentions(const char *prompt, const char *text)
{
	char word[64];

	for (const char *p = text ? text : ""; *p;) {
		size_t n = 0;
		while (*p && !isalnum((unsigned char)*p))
			p++;
		while (isalnum((unsigned char)*p) && n + 1 < sizeof word)
			word[n++] = *p++;
		while (isalnum((unsigned char)*p))
			p++;
		word[n] = '\0';
		if (n >= 4 && strcasestr(prompt, word))
			return true;
	}
	return false;
}

/* The tool call for req, or NULL when the toy answers in text. *bad is set
 * (with a 400 in r) when the request cannot be served as vLLM would refuse. */
static json_t *tool_call(struct reply *r, json_t *req, const char *prompt, bool *bad)
{
	json_t *tools = json_object_get(req, "tools"), *choice = json_object_get(req, "tool_choice");
	json_t *tool, *fn = NULL, *props, *args, *prop;
	const char *mode = json_is_string(choice) ? json_string_value(choice) : choice ? "named" : "auto";
	const char *key, *want = NULL;
	char *text, id[64];
	size_t i;

	*bad = false;
	if (!json_is_array(tools) || !json_array_size(tools) || !strcmp(mode, "none"))
		return NULL;
	json_array_foreach(tools, i, tool) {
		if (!json_is_string(json_object_get(json_object_get(tool, "function"), "name"))) {
			reply_error(r, 400, "tools", "each tool needs function.name");
			*bad = true;
			return NULL;
		}
	}
	if (!strcmp(mode, "auto") && !(S->auto_tool_choice && S->tool_parser)) {
		reply_error(r, 400, NULL,
			    "\"auto\" tool choice requires --enable-auto-tool-choice and "
			    "--tool-call-parser to be set");
		*bad = true;
		return NULL;
	}
	if (!strcmp(mode, "named"))
		want = json_string_value(json_object_get(json_object_get(choice, "function"), "name"));
	json_array_foreach(tools, i, tool) {
		json_t *f = json_object_get(tool, "function");
		const char *name = json_string_value(json_object_get(f, "name"));
		if (want ? !strcmp(want, name)
			 : (!strcmp(mode, "required") || strcasestr(prompt, "tool") ||
			    mentions(prompt, name) ||
			    mentions(prompt, json_string_value(json_object_get(f, "description"))))) {
			fn = f;
			break;
		}
	}
	if (!fn)
		return NULL;
	args = json_object();
	props = json_object_get(json_object_get(fn, "parameters"), "properties");
	json_object_foreach(props, key, prop) {
		const char *type = json_string_value(json_object_get(prop, "type"));
		if (!type || !strcmp(type, "string"))
			json_object_set_new(args, key, toy_string_arg(prompt));
		else if (!strcmp(type, "integer") || !strcmp(type, "number"))
			json_object_set_new(args, key, json_integer(1));
		else if (!strcmp(type, "boolean"))
			json_object_set_new(args, key, json_true());
	}
	text = json_dumps(args, 0);  /* Python's json.dumps spacing: {"city": "Paris"} */
	json_decref(args);
	snprintf(id, sizeof id, "chatcmpl-tool-standin-%lu", ++seq);
	tool = json_pack("{s:s, s:s, s:{s:O, s:s}}", "id", id, "type", "function", "function",
			 "name", json_object_get(fn, "name"), "arguments", text ? text : "{}");
	free(text);
	return tool;
}

/* ---- chat --------------------------------------------------------------- */

/* Whether this request's answer starts with thinking: the model thinks, and
 * chat_template_kwargs (enable_thinking / thinking) do not say otherwise. */
static bool thinking_on(json_t *req)
{
	json_t *kw = json_object_get(req, "chat_template_kwargs"), *v;

	if (!S->thinks)
		return false;
	v = json_object_get(kw, "enable_thinking");
	if (!json_is_boolean(v))
		v = json_object_get(kw, "thinking");
	return json_is_boolean(v) ? json_is_true(v) : S->thinks_by_default;
}

static json_t *chunk(const char *id, long created, const char *object, json_t *choice)
{
	return json_pack("{s:s, s:s, s:i, s:s, s:[o]}", "id", id, "object", object, "created",
			 (json_int_t)created, "model", S->served_name, "choices", choice);
}

static json_t *delta_choice(json_t *delta, const char *finish)
{
	return json_pack("{s:i, s:o, s:n, s:o}", "index", 0, "delta", delta, "logprobs",
			 "finish_reason", finish ? json_string(finish) : json_null());
}

/* One SSE frame per word of text into field ("content" or "reasoning"). */
static void word_frames(struct reply *r, const char *text, const char *field, long created)
{
	char *copy = strdup(text ? text : ""), *save = NULL, *w, piece[512];
	bool first = true;

	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		snprintf(piece, sizeof piece, "%s%s", first ? "" : " ", w);
		reply_frame(r, chunk(r->id, created, "chat.completion.chunk",
				     delta_choice(json_pack("{s:s}", field, piece), NULL)));
		first = false;
	}
	free(copy);
}

static bool include_usage(json_t *req)
{
	return json_is_true(json_object_get(json_object_get(req, "stream_options"), "include_usage"));
}

void api_chat(struct reply *r, json_t *req)
{
	json_t *messages = json_object_get(req, "messages"), *msg, *call = NULL, *message;
	char prompt[4096] = "", text[4096], raw[8192], *reasoning = NULL, *content;
	int prompt_tokens = 0, completion_tokens;
	long created = (long)time(NULL), limit;
	const char *finish;
	bool cut, bad;
	size_t i;

	if (S->task != TASK_GENERATE)
		return reply_error(r, 400, NULL, "The model does not support Chat Completions API");
	if (!model_ok(r, req))
		return;
	if (!json_is_array(messages) || !json_array_size(messages))
		return reply_error(r, 400, "messages", "messages: field required (a non-empty list)");
	json_array_foreach(messages, i, msg) {
		const char *role = json_string_value(json_object_get(msg, "role"));
		if (!role)
			return reply_error(r, 400, "messages", "each message needs a role");
		content_text(json_object_get(msg, "content"), text, sizeof text);
		prompt_tokens += 4 + model_count_tokens(text);
		if (!strcmp(role, "user"))
			snprintf(prompt, sizeof prompt, "%s", text);
	}
	if ((limit = max_tokens(r, req)) < 0 || injected_503(r))
		return;
	if ((S->fault == FAULT_CORRUPT_THEN_DIE && ++chat_requests >= 2) ||
	    S->fault == FAULT_MTP_NO_KERNEL)
		return engine_dies(r);
	snprintf(r->id, sizeof r->id, "chatcmpl-standin-%lu", ++seq);
	call = tool_call(r, req, prompt, &bad);
	if (bad)
		return;

	/* The raw output: thinking, then the answer (or the tool call). */
	raw[0] = '\0';
	if (thinking_on(req))
		snprintf(raw, sizeof raw, "<think>\nThe user asks: %.60s I answer %s. </think>\n\n",
			 prompt, call ? "with the tool" : "briefly");
	if (S->fault == FAULT_CORRUPT_THEN_DIE)
		snprintf(text, sizeof text, "%s", model_garbage_reply());
	else if (!call) {
		model_chat_reply(prompt, text, sizeof text);
		spec_drift(prompt, text, sizeof text);
	}
	else
		text[0] = '\0';
	snprintf(raw + strlen(raw), sizeof raw - strlen(raw), "%s", text);
	cut = truncate_words(raw, limit);
	completion_tokens = model_count_tokens(raw);
	spec_observe(completion_tokens);
	prompt_observe(prompt_tokens);
	r->kv_tokens = prompt_tokens + completion_tokens;
	content = raw;
	if (S->reasoning_parser && !strncmp(raw, "<think>", 7)) {
		char *end = strstr(raw, "</think>");
		reasoning = raw + 7;
		while (*reasoning == '\n')
			reasoning++;
		content = end ? end + 8 : raw + strlen(raw);
		if (end)
			*end = '\0';
		while (*content == '\n')
			content++;
		for (char *e = reasoning + strlen(reasoning); e > reasoning && e[-1] == ' ';)
			*--e = '\0';
	}
	if (call && cut) {
		json_decref(call);  /* the limit came before the call was complete */
		call = NULL;
	}
	finish = cut ? "length" : call ? "tool_calls" : "stop";

	if (json_is_true(json_object_get(req, "stream"))) {
		reply_frame(r, chunk(r->id, created, "chat.completion.chunk",
				     delta_choice(json_pack("{s:s, s:s}", "role", "assistant",
							    "content", ""), NULL)));
		if (reasoning)
			word_frames(r, reasoning, "reasoning", created);
		word_frames(r, content, "content", created);
		if (call) {
			json_object_set_new(call, "index", json_integer(0));
			reply_frame(r, chunk(r->id, created, "chat.completion.chunk",
					     delta_choice(json_pack("{s:[o]}", "tool_calls", call),
							  NULL)));
		}
		reply_frame(r, chunk(r->id, created, "chat.completion.chunk",
				     delta_choice(json_object(), finish)));
		maybe_cut(r);
		if (include_usage(req))
			reply_frame_now(r, json_pack("{s:s, s:s, s:i, s:s, s:[], s:o}", "id", r->id, "object",
						 "chat.completion.chunk", "created", (json_int_t)created,
						 "model", S->served_name, "choices", "usage",
						 usage(prompt_tokens, completion_tokens)));
		reply_frame(r, NULL);
		return;
	}
	message = json_pack("{s:s, s:o, s:n, s:o, s:o}", "role", "assistant", "content",
			    !*content && (call || reasoning) ? json_null() : json_string(content),
			    "refusal", "reasoning", reasoning ? json_string(reasoning) : json_null(),
			    "tool_calls", call ? json_pack("[o]", call) : json_array());
	reply_json(r, 200,
		   json_pack("{s:s, s:s, s:i, s:s, s:[{s:i, s:o, s:n, s:s, s:n}], s:o}", "id", r->id,
			     "object", "chat.completion", "created", (json_int_t)created, "model",
			     S->served_name, "choices", "index", 0, "message", message, "logprobs",
			     "finish_reason", finish, "stop_reason", "usage",
			     usage(prompt_tokens, completion_tokens)));
}

/* ---- completions -------------------------------------------------------- */

/* Exactly n words (n tokens: no punctuation), cycling the words of text
 * (vLLM's ignore_eos: the output runs to max_tokens). Caller frees. */
static char *fill_words(const char *text, long n)
{
	size_t cap = (size_t)n * 34 + 1;
	char *out = malloc(cap), *o = out;
	const char *p = text;

	if (!out)
		abort();
	for (long i = 0; i < n; i++) {
		size_t len;
		for (int pass = 0; pass < 2; pass++) {
			while (*p && !isalnum((unsigned char)*p))
				p++;
			if (*p)
				break;
			p = text;
		}
		if (!*p)
			p = "word";
		for (len = 0; isalnum((unsigned char)p[len]) && len < 32; len++)
			;
		o += snprintf(o, cap - (size_t)(o - out), "%s%.*s", i ? " " : "", (int)len, p);
		p += len;
		while (isalnum((unsigned char)*p))
			p++;
	}
	*o = '\0';
	return out;
}

/* prompt_logprobs: -2 absent, -1 invalid (400 queued), else k. */
static int prompt_logprobs_k(struct reply *r, json_t *req)
{
	json_t *v = json_object_get(req, "prompt_logprobs");

	if (!v || json_is_null(v))
		return -2;
	if (!json_is_integer(v) || json_integer_value(v) < -1) {
		reply_error(r, 400, "prompt_logprobs", "prompt_logprobs must be a non-negative integer");
		return -1;
	}
	if (json_integer_value(v) > 20) {
		char msg[128];
		snprintf(msg, sizeof msg,
			 "Requested prompt logprobs of %lld, which is greater than max allowed: 20",
			 (long long)json_integer_value(v));
		reply_error(r, 400, "prompt_logprobs", msg);
		return -1;
	}
	return (int)json_integer_value(v);
}

/* The streamed frames of one completion choice: one per word, the finish
 * reason on the last (as vLLM sends it). */
static void completion_frames(struct reply *r, long created, size_t index, const char *text,
			      const char *finish)
{
	char *copy = strdup(text), *save = NULL, *w, *next, piece[512];
	bool first = true;

	if (!copy)
		abort();
	w = strtok_r(copy, " ", &save);
	if (!w)
		reply_frame(r, chunk(r->id, created, "text_completion",
				     json_pack("{s:i, s:s, s:n, s:s, s:n}", "index", (json_int_t)index,
					       "text", "", "logprobs", "finish_reason", finish,
					       "stop_reason")));
	for (; w; w = next) {
		next = strtok_r(NULL, " ", &save);
		snprintf(piece, sizeof piece, "%s%s", first ? "" : " ", w);
		first = false;
		reply_frame(r, chunk(r->id, created, "text_completion",
				     json_pack("{s:i, s:s, s:n, s:o, s:n}", "index", (json_int_t)index,
					       "text", piece, "logprobs", "finish_reason",
					       next ? json_null() : json_string(finish),
					       "stop_reason")));
	}
	free(copy);
}

void api_completions(struct reply *r, json_t *req)
{
	json_t *prompt = json_object_get(req, "prompt"), *prompts, *item, *choices;
	long created = (long)time(NULL), limit;
	int prompt_tokens = 0, completion_tokens = 0, plk;
	bool stream = json_is_true(json_object_get(req, "stream"));
	bool ignore_eos = json_is_true(json_object_get(req, "ignore_eos"));
	size_t i;

	if (S->task != TASK_GENERATE)
		return reply_error(r, 400, NULL, "The model does not support Completions API");
	if (!model_ok(r, req))
		return;
	if (json_is_string(prompt))
		prompts = json_pack("[O]", prompt);
	else if (json_is_array(prompt) && json_array_size(prompt) &&
		 json_is_string(json_array_get(prompt, 0)))
		prompts = json_incref(prompt);
	else
		return reply_error(r, 400, "prompt", "prompt: a string or a non-empty list of strings");
	if ((limit = max_tokens(r, req)) < 0 || (plk = prompt_logprobs_k(r, req)) == -1 ||
	    injected_503(r)) {
		json_decref(prompts);
		return;
	}
	if (S->fault == FAULT_MTP_NO_KERNEL) {
		json_decref(prompts);
		return engine_dies(r);
	}
	snprintf(r->id, sizeof r->id, "cmpl-standin-%lu", ++seq);
	choices = json_array();
	json_array_foreach(prompts, i, item) {
		const char *p = json_string_value(item);
		char reply[4096], *text;
		bool cut;
		int n;
		if (!p)
			continue;
		model_chat_reply(p, reply, sizeof reply);
		spec_drift(p, reply, sizeof reply);
		if (ignore_eos && limit > 0) {
			text = fill_words(reply, limit);
			cut = true;
		} else {
			text = strdup(reply);
			if (!text)
				abort();
			cut = truncate_words(text, limit);
		}
		prompt_tokens += model_count_tokens(p);
		completion_tokens += model_count_tokens(text);
		spec_observe(model_count_tokens(text));
		if (stream) {
			completion_frames(r, created, i, text, cut ? "length" : "stop");
		} else {
			json_t *choice = json_pack("{s:i, s:s, s:n, s:s, s:n, s:n}", "index",
						   (json_int_t)i, "text", text, "logprobs",
						   "finish_reason", cut ? "length" : "stop",
						   "stop_reason", "prompt_logprobs");
			if (plk >= 0)
				json_object_set_new(choice, "prompt_logprobs",
						    toy_prompt_logprobs(p, plk, &n));
			json_array_append_new(choices, choice);
		}
		free(text);
	}
	json_decref(prompts);
	prompt_observe(prompt_tokens);
	r->kv_tokens = prompt_tokens + completion_tokens;
	if (stream) {
		json_decref(choices);
		maybe_cut(r);
		if (include_usage(req))
			reply_frame_now(r, json_pack("{s:s, s:s, s:i, s:s, s:[], s:o}", "id", r->id,
						     "object", "text_completion", "created",
						     (json_int_t)created, "model", S->served_name,
						     "choices", "usage",
						     usage(prompt_tokens, completion_tokens)));
		reply_frame(r, NULL);
		return;
	}
	reply_json(r, 200,
		   json_pack("{s:s, s:s, s:i, s:s, s:o, s:o}", "id", r->id, "object",
			     "text_completion", "created", (json_int_t)created, "model",
			     S->served_name, "choices", choices, "usage",
			     usage(prompt_tokens, completion_tokens)));
}
