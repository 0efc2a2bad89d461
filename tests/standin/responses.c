/*
 * responses.c — the stand-in's (a test double's) POST /v1/responses, the
 * Responses API vLLM's OpenAI server registers for generate models: not
 * streamed. `input` is a string or a list of messages (the last user
 * message's text is the prompt); the toy model (model.c) answers as it does
 * for a chat, cut to `max_output_tokens` words. The answer has the shape
 * vLLM gives: object "response", status "completed", one assistant
 * "message" output item holding one "output_text" part, and usage with
 * input/output/total tokens. Enough for a client library's `output_text`.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "standin.h"

static unsigned long seq;

/* The prompt of a Responses request: `input` as a string, or the text of
 * the last user message of a list (content a string or input_text parts). */
static bool prompt_of(json_t *input, char *out, size_t size)
{
	size_t i, j;
	json_t *m, *part;

	if (json_is_string(input)) {
		snprintf(out, size, "%s", json_string_value(input));
		return true;
	}
	if (!json_is_array(input) || !json_array_size(input))
		return false;
	out[0] = '\0';
	json_array_foreach(input, i, m) {
		json_t *content = json_object_get(m, "content");
		if (strcmp(json_string_value(json_object_get(m, "role")) ?: "", "user"))
			continue;
		if (json_is_string(content))
			snprintf(out, size, "%s", json_string_value(content));
		else
			json_array_foreach(content, j, part) if (json_is_string(json_object_get(part, "text")))
				snprintf(out, size, "%s", json_string_value(json_object_get(part, "text")));
	}
	return true;
}

void api_responses(struct reply *r, json_t *req)
{
	char prompt[4096], text[4096];
	json_t *limit_j = json_object_get(req, "max_output_tokens");
	long limit = -1;
	int in_tokens, out_tokens = 0, words = 0;

	if (S->task != TASK_GENERATE)
		return reply_error(r, 400, NULL, "The model does not support Responses API");
	if (!model_ok(r, req))
		return;
	if (!prompt_of(json_object_get(req, "input"), prompt, sizeof prompt))
		return reply_error(r, 400, "input", "input: a string or a non-empty list of messages");
	if (limit_j && (!json_is_integer(limit_j) || json_integer_value(limit_j) < 1))
		return reply_error(r, 400, "max_output_tokens", "max_output_tokens: a positive integer");
	if (limit_j)
		limit = (long)json_integer_value(limit_j);
	if (injected_503(r))
		return;
	model_chat_reply(prompt, text, sizeof text);
	/* cut to the limit, in words as the rest of the stand-in counts tokens:
	 * at the space before word limit + 1 */
	for (char *p = text; limit > 0 && *p; p++)
		if (*p != ' ' && (p == text || p[-1] == ' ') && ++words > limit) {
			p[-1] = '\0';
			break;
		}
	in_tokens = model_count_tokens(prompt);
	out_tokens = model_count_tokens(text);
	prompt_observe(in_tokens);
	spec_observe(out_tokens);
	char id[64], msg_id[64];
	snprintf(id, sizeof id, "resp_standin%lu", ++seq);
	snprintf(msg_id, sizeof msg_id, "msg_standin%lu", seq);
	reply_json(r, 200,
		   json_pack("{s:s, s:s, s:I, s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:[{s:s, s:s, s:[]}]}],"
			     " s:{s:i, s:i, s:i}}",
			     "id", id, "object", "response", "created_at", (json_int_t)time(NULL),
			     "model", S->served_name, "status", "completed", "output", "type", "message",
			     "id", msg_id, "role", "assistant", "status", "completed", "content", "type",
			     "output_text", "text", text, "annotations", "usage", "input_tokens", in_tokens,
			     "output_tokens", out_tokens, "total_tokens", in_tokens + out_tokens));
}
