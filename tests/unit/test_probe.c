/*
 * test_probe.c — the pure half of the correctness probes: request bodies,
 * judging response bodies (pass, wrong answer, HTTP error, malformed), and
 * the known-failure mapping. Transport is covered by tests/cases/probe.t.
 */
#include "testutil.h"

#include "../../src/lib/probe/probe.h"

/* Judge body (HTTP status) for role r with an optional known failure; the
 * caller frees p. */
static void judge(struct probe *p, enum role_id r, long status, const char *body,
		  const struct known_failure *kf)
{
	probe_init(p, r, 8000, kf);
	probe_judge(p, status, body, strlen(body));
}

static const char *chat_body(const char *answer, char *out, size_t n)
{
	snprintf(out, n, "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":%s},"
			 "\"finish_reason\":\"stop\"}]}", answer);
	return out;
}

static void test_ids_and_requests(void **state)
{
	(void)state;
	assert_string_equal(probe_id(ROLE_CORTEX), "chat-capital");
	assert_string_equal(probe_id(ROLE_SENSES), "chat-sky");
	assert_string_equal(probe_id(ROLE_HAND), "chat-known-answer");
	assert_string_equal(probe_id(ROLE_EMBEDDER), "embed-paraphrase");
	assert_string_equal(probe_id(ROLE_RERANKER), "rerank-order");
	assert_string_equal(probe_path(ROLE_EMBEDDER), "/v1/embeddings");
	assert_string_equal(probe_path(ROLE_RERANKER), "/v1/rerank");
	assert_string_equal(probe_path(ROLE_SENSES), "/v1/chat/completions");

	_cleanup_free_ char *chat = probe_request_body(ROLE_CORTEX);
	json_auto_t *j = json_loads(chat, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "model")), "cortex");
	assert_int_equal(json_integer_value(json_object_get(j, "max_tokens")), 16);
	assert_true(json_number_value(json_object_get(j, "temperature")) == 0.0);
	assert_true(json_is_false(json_object_get(json_object_get(j, "chat_template_kwargs"),
						  "enable_thinking")));
	const char *q = json_string_value(
		json_object_get(json_array_get(json_object_get(j, "messages"), 0), "content"));
	assert_string_equal(q, "What is the capital city of France? Reply with only the city name.");

	_cleanup_free_ char *emb = probe_request_body(ROLE_EMBEDDER);
	json_auto_t *e = json_loads(emb, 0, NULL);
	assert_int_equal(json_array_size(json_object_get(e, "input")), 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(e, "input"), 1)),
			    "A cat was resting on the sunny windowsill.");

	_cleanup_free_ char *rr = probe_request_body(ROLE_RERANKER);
	json_auto_t *r = json_loads(rr, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(r, "query")),
			    "What is the capital of France?");
	assert_string_equal(json_string_value(json_object_get(r, "model")), "reranker");
	/* The Paris document is not first: an echo of the input order fails. */
	assert_string_contains(json_string_value(json_array_get(json_object_get(r, "documents"), 1)),
			       "Paris");
	assert_null(strstr(json_string_value(json_array_get(json_object_get(r, "documents"), 0)),
			   "Paris"));
}

static void test_chat(void **state)
{
	(void)state;
	char b[512];
	struct probe p;

	judge(&p, ROLE_CORTEX, 200, chat_body("\"The capital is PARIS.\"", b, sizeof b), NULL);
	assert_int_equal(p.status, PROBE_PASS);
	assert_null(p.reason);
	assert_string_equal(json_string_value(json_object_get(p.evidence, "answer")),
			    "The capital is PARIS.");
	assert_string_equal(p.summary, "answer 'The capital is PARIS.'");
	probe_free(&p);

	judge(&p, ROLE_CORTEX, 200, chat_body("\"Lyon\"", b, sizeof b), NULL);
	assert_int_equal(p.status, PROBE_FAIL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_equal(p.reason, "answer 'Lyon' does not contain 'paris'");
	probe_free(&p);

	judge(&p, ROLE_SENSES, 200, chat_body("\"Blue.\"", b, sizeof b), NULL);
	assert_int_equal(p.status, PROBE_PASS);
	probe_free(&p);

	/* Thinking ate the tokens: content null is an empty (wrong) answer. */
	judge(&p, ROLE_CORTEX, 200, chat_body("null", b, sizeof b), NULL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_contains(p.reason, "empty answer");
	probe_free(&p);

	/* The hand is judged strictly. */
	judge(&p, ROLE_HAND, 200, chat_body("\" Paris.\\n\"", b, sizeof b), NULL);
	assert_int_equal(p.status, PROBE_PASS);
	probe_free(&p);
	judge(&p, ROLE_HAND, 200, chat_body("\"Paris Paris\\ufffd ning ning\"", b, sizeof b), NULL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_contains(p.reason, "is not 'paris'");
	probe_free(&p);

	judge(&p, ROLE_CORTEX, 200, "{\"choices\":[]}", NULL);
	assert_int_equal(p.failure, PF_MALFORMED);
	assert_string_contains(p.reason, "malformed body: no choices[0].message.content");
	probe_free(&p);
}

static void test_http_and_malformed(void **state)
{
	(void)state;
	struct probe p;

	judge(&p, ROLE_SENSES, 400,
	      "{\"error\":{\"message\":\"The model `x` does not exist.\",\"type\":\"NotFoundError\"}}",
	      NULL);
	assert_int_equal(p.failure, PF_HTTP);
	assert_int_equal(p.http_status, 400);
	assert_string_equal(p.reason, "HTTP 400: The model `x` does not exist.");
	probe_free(&p);

	judge(&p, ROLE_SENSES, 404, "{\"detail\":\"Not Found\"}", NULL);
	assert_string_equal(p.reason, "HTTP 404: Not Found");
	probe_free(&p);

	judge(&p, ROLE_SENSES, 502, "<html>\x01\xff bad gateway</html>", NULL);
	assert_string_equal(p.reason, "HTTP 502: <html> ? bad gateway</html>");
	probe_free(&p);

	judge(&p, ROLE_EMBEDDER, 200, "<html>junk</html>", NULL);
	assert_int_equal(p.failure, PF_MALFORMED);
	assert_string_contains(p.reason, "malformed body: ");
	assert_string_contains(p.reason, "(body '<html>junk</html>')");
	probe_free(&p);

	judge(&p, ROLE_EMBEDDER, 200, "[1,2]", NULL);
	assert_string_equal(p.reason, "malformed body: not a JSON object");
	probe_free(&p);
}

static void test_embed(void **state)
{
	(void)state;
	struct probe p;

	judge(&p, ROLE_EMBEDDER, 200,
	      "{\"data\":[{\"index\":0,\"embedding\":[1,0,0]},{\"index\":1,\"embedding\":[0.8,0.6,0]},"
	      "{\"index\":2,\"embedding\":[0,0,1]}]}", NULL);
	assert_int_equal(p.status, PROBE_PASS);
	assert_true(json_real_value(json_object_get(p.evidence, "cos_paraphrase")) > 0.79);
	assert_true(json_real_value(json_object_get(p.evidence, "cos_unrelated")) == 0.0);
	assert_string_equal(p.summary, "cos(paraphrase)=0.800 > cos(unrelated)=0.000");
	probe_free(&p);

	/* The "index" field, not the array position, says which sentence. */
	judge(&p, ROLE_EMBEDDER, 200,
	      "{\"data\":[{\"index\":2,\"embedding\":[0.8,0.6,0]},{\"index\":0,\"embedding\":[1,0,0]},"
	      "{\"index\":1,\"embedding\":[0,0,1]}]}", NULL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_contains(p.reason, "cos(paraphrase)=0.000 <= cos(unrelated)=0.800");
	probe_free(&p);

	judge(&p, ROLE_EMBEDDER, 200,
	      "{\"data\":[{\"index\":0,\"embedding\":[0,0]},{\"index\":1,\"embedding\":[1,0]},"
	      "{\"index\":2,\"embedding\":[0,1]}]}", NULL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_contains(p.reason, "all zeros");
	assert_true(json_is_null(json_object_get(p.evidence, "cos_paraphrase")));
	probe_free(&p);

	judge(&p, ROLE_EMBEDDER, 200,
	      "{\"data\":[{\"index\":0,\"embedding\":[1,0]},{\"index\":1,\"embedding\":[1]},"
	      "{\"index\":2,\"embedding\":[0,1]}]}", NULL);
	assert_int_equal(p.failure, PF_MALFORMED);
	assert_string_contains(p.reason, "differ in length");
	probe_free(&p);

	judge(&p, ROLE_EMBEDDER, 200, "{\"data\":[{\"index\":0,\"embedding\":[1]}]}", NULL);
	assert_int_equal(p.failure, PF_MALFORMED);
	probe_free(&p);

	judge(&p, ROLE_EMBEDDER, 200,
	      "{\"data\":[{\"index\":0,\"embedding\":[1,\"x\"]},{\"index\":1,\"embedding\":[1,0]},"
	      "{\"index\":2,\"embedding\":[0,1]}]}", NULL);
	assert_int_equal(p.failure, PF_MALFORMED);
	probe_free(&p);
}

static void test_rerank(void **state)
{
	(void)state;
	struct probe p;

	judge(&p, ROLE_RERANKER, 200,
	      "{\"results\":[{\"index\":1,\"relevance_score\":0.9},{\"index\":0,\"relevance_score\":0.1},"
	      "{\"index\":3,\"relevance_score\":0.05},{\"index\":2,\"relevance_score\":0.01}]}", NULL);
	assert_int_equal(p.status, PROBE_PASS);
	assert_int_equal(json_integer_value(json_object_get(p.evidence, "paris_rank")), 1);
	assert_int_equal(json_array_size(json_object_get(p.evidence, "ranking")), 4);
	assert_string_equal(p.summary, "ranking [1,0,3,2], Paris document (1) first");
	probe_free(&p);

	judge(&p, ROLE_RERANKER, 200,
	      "{\"results\":[{\"index\":3,\"relevance_score\":0.9},{\"index\":1,\"relevance_score\":0.5}]}",
	      NULL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_equal(p.reason, "the Paris document ranked 2 of 2: ranking [3,1]");
	probe_free(&p);

	/* Served first, but another document scores higher: still wrong. */
	judge(&p, ROLE_RERANKER, 200,
	      "{\"results\":[{\"index\":1,\"relevance_score\":0.2},{\"index\":0,\"relevance_score\":0.7}]}",
	      NULL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_contains(p.reason, "document 0 scores higher");
	probe_free(&p);

	judge(&p, ROLE_RERANKER, 200, "{\"results\":[{\"index\":0,\"relevance_score\":0.2}]}", NULL);
	assert_string_contains(p.reason, "missing from the ranking");
	probe_free(&p);

	judge(&p, ROLE_RERANKER, 200,
	      "{\"results\":[{\"index\":1,\"relevance_score\":0.2},{\"index\":1,\"relevance_score\":0.1}]}",
	      NULL);
	assert_int_equal(p.failure, PF_MALFORMED);
	probe_free(&p);

	judge(&p, ROLE_RERANKER, 200, "{\"results\":[{\"index\":9,\"relevance_score\":0.2}]}", NULL);
	assert_int_equal(p.failure, PF_MALFORMED);
	probe_free(&p);
}

static void test_known_failures(void **state)
{
	(void)state;
	struct known_failure kf = { .role = "reranker", .probe = "rerank-order",
				    .reason = "ranks wrong on sm_110", .ref = "lobes-cli#105" };
	struct profile prof = { .name = "thor", .known_failures = &kf, .n_known_failures = 1 };
	assert_ptr_equal(probe_known_failure(&prof, ROLE_RERANKER), &kf);
	assert_null(probe_known_failure(&prof, ROLE_EMBEDDER));
	assert_null(probe_known_failure(NULL, ROLE_RERANKER));

	struct probe p;
	const char *wrong = "{\"results\":[{\"index\":3,\"relevance_score\":0.9},"
			    "{\"index\":1,\"relevance_score\":0.5}]}";
	judge(&p, ROLE_RERANKER, 200, wrong, &kf);
	assert_int_equal(p.status, PROBE_KNOWN_FAILURE);
	assert_int_equal(p.failure, PF_WRONG);
	assert_non_null(p.reason);
	assert_null(p.notice);
	json_auto_t *j = probe_json(&p);
	assert_string_equal(json_string_value(json_object_get(j, "status")), "known-failure");
	assert_true(json_is_true(json_object_get(j, "ok")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "known_failure"), "ref")),
			    "lobes-cli#105");
	probe_free(&p);

	judge(&p, ROLE_RERANKER, 200,
	      "{\"results\":[{\"index\":1,\"relevance_score\":0.9},{\"index\":3,\"relevance_score\":0.5}]}",
	      &kf);
	assert_int_equal(p.status, PROBE_KNOWN_FAILURE_PASSED);
	assert_string_contains(p.notice, "known failure lobes-cli#105 now passes: remove the entry");
	json_auto_t *j2 = probe_json(&p);
	assert_string_contains(json_string_value(json_object_get(j2, "notice")), "now passes");
	probe_free(&p);

	/* A known failure never masks a failure of another kind. */
	judge(&p, ROLE_RERANKER, 500, "{\"error\":{\"message\":\"engine dead\"}}", &kf);
	assert_int_equal(p.status, PROBE_FAIL);
	probe_free(&p);
	probe_init(&p, ROLE_RERANKER, 8005, &kf);
	probe_fail(&p, PF_TIMEOUT, "timed out after 2 s: no answer");
	assert_int_equal(p.status, PROBE_FAIL);
	json_auto_t *j3 = probe_json(&p);
	assert_string_equal(json_string_value(json_object_get(j3, "failure")), "timeout");
	assert_string_equal(json_string_value(json_object_get(j3, "url")),
			    "http://127.0.0.1:8005/v1/rerank");
	assert_true(json_is_false(json_object_get(j3, "ok")));
	probe_free(&p);
}

/* Judge body for probe kind k of the cortex; the caller frees p. */
static void judge_kind(struct probe *p, enum probe_kind k, long status, const char *body,
		       const struct known_failure *kf)
{
	probe_init_kind(p, ROLE_CORTEX, k, 8000, kf);
	probe_judge(p, status, body, strlen(body));
}

/* A chat answer with tool_calls (a JSON array text), content (JSON) and finish. */
static const char *tool_body(const char *calls, const char *content, const char *finish, char *out,
			     size_t n)
{
	snprintf(out, n, "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
			 "\"content\":%s,\"tool_calls\":%s},\"finish_reason\":\"%s\"}]}",
		 content, calls, finish);
	return out;
}

#define PARIS_CALL "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\"," \
		   "\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]"

static void test_tool_call(void **state)
{
	(void)state;
	char b[1024];
	struct probe p;

	assert_string_equal(probe_kind_id(ROLE_CORTEX, PK_TOOL_CALL), "tool-call");
	assert_string_equal(probe_kind_id(ROLE_HAND, PK_ANSWER), "chat-known-answer");
	assert_string_equal(probe_kind_path(ROLE_CORTEX, PK_TOOL_CALL), "/v1/chat/completions");
	_cleanup_free_ char *req = probe_kind_request_body(ROLE_SENSES, PK_TOOL_CALL);
	json_auto_t *r = json_loads(req, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(r, "model")), "senses");
	const json_t *fn = json_object_get(json_array_get(json_object_get(r, "tools"), 0), "function");
	assert_string_equal(json_string_value(json_object_get(fn, "name")), "get_weather");
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(json_object_get(fn, "parameters"), "required"), 0)),
			    "city");
	assert_string_equal(json_string_value(json_object_get(json_array_get(
				    json_object_get(r, "messages"), 0), "content")),
			    "What is the weather in Paris? Use the tool.");

	judge_kind(&p, PK_TOOL_CALL, 200, tool_body(PARIS_CALL, "null", "tool_calls", b, sizeof b), NULL);
	assert_int_equal(p.status, PROBE_PASS);
	assert_string_equal(p.summary, "get_weather({\"city\": \"Paris\"}), finish_reason tool_calls");
	json_auto_t *j = probe_json(&p);
	assert_string_equal(json_string_value(json_object_get(j, "probe")), "tool-call");
	probe_free(&p);
	judge_kind(&p, PK_TOOL_CALL, 200, tool_body(PARIS_CALL, "\"\"", "tool_calls", b, sizeof b), NULL);
	assert_int_equal(p.status, PROBE_PASS); /* an empty content is nothing leaked */
	probe_free(&p);

	/* text leaked beside the call */
	judge_kind(&p, PK_TOOL_CALL, 200,
		   tool_body(PARIS_CALL, "\"<tool_call>get_weather\"", "tool_calls", b, sizeof b), NULL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_contains(p.reason, "text leaked into content beside the tool call");
	probe_free(&p);
	/* no call at all: the answer in text */
	judge_kind(&p, PK_TOOL_CALL, 200, tool_body("[]", "\"It is sunny in Paris.\"", "stop", b, sizeof b),
		   NULL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_equal(p.reason, "no tool call (finish_reason 'stop', content 'It is sunny in Paris.')");
	probe_free(&p);
	/* wrong finish_reason */
	judge_kind(&p, PK_TOOL_CALL, 200, tool_body(PARIS_CALL, "null", "stop", b, sizeof b), NULL);
	assert_string_equal(p.reason, "finish_reason 'stop', expected 'tool_calls'");
	probe_free(&p);
	/* wrong arguments, wrong tool, arguments not JSON */
	judge_kind(&p, PK_TOOL_CALL, 200,
		   tool_body("[{\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Lyon\\\"}\"}}]",
			     "null", "tool_calls", b, sizeof b), NULL);
	assert_string_equal(p.reason, "arguments {\"city\": \"Lyon\"}, expected {\"city\": \"Paris\"}");
	probe_free(&p);
	judge_kind(&p, PK_TOOL_CALL, 200,
		   tool_body("[{\"function\":{\"name\":\"get_time\",\"arguments\":\"{}\"}}]", "null",
			     "tool_calls", b, sizeof b), NULL);
	assert_string_equal(p.reason, "called 'get_time', not 'get_weather'");
	probe_free(&p);
	judge_kind(&p, PK_TOOL_CALL, 200,
		   tool_body("[{\"function\":{\"name\":\"get_weather\",\"arguments\":\"city=Paris\"}}]",
			     "null", "tool_calls", b, sizeof b), NULL);
	assert_string_equal(p.reason, "arguments are not a JSON object string: 'city=Paris'");
	probe_free(&p);
	/* vLLM's refusal when the role has no tool parser: an HTTP FAIL with its message */
	judge_kind(&p, PK_TOOL_CALL, 400,
		   "{\"error\":{\"message\":\"\\\"auto\\\" tool choice requires --enable-auto-tool-choice "
		   "and --tool-call-parser to be set\",\"type\":\"BadRequestError\",\"code\":400}}", NULL);
	assert_int_equal(p.failure, PF_HTTP);
	assert_string_equal(p.reason, "HTTP 400: \"auto\" tool choice requires --enable-auto-tool-choice "
				      "and --tool-call-parser to be set");
	probe_free(&p);

	/* known failures are per (role, probe id) */
	struct known_failure kf = { .role = "cortex", .probe = "tool-call", .ref = "x#1" };
	struct profile prof = { .name = "p", .known_failures = &kf, .n_known_failures = 1 };
	assert_ptr_equal(probe_kind_known_failure(&prof, ROLE_CORTEX, PK_TOOL_CALL), &kf);
	assert_null(probe_known_failure(&prof, ROLE_CORTEX));
	judge_kind(&p, PK_TOOL_CALL, 200, tool_body(PARIS_CALL, "null", "stop", b, sizeof b), &kf);
	assert_int_equal(p.status, PROBE_KNOWN_FAILURE);
	probe_free(&p);
}

static const char *reasoning_body(const char *field, const char *reasoning, const char *content,
				  char *out, size_t n)
{
	snprintf(out, n, "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
			 "\"content\":%s,\"%s\":%s},\"finish_reason\":\"stop\"}]}",
		 content, field, reasoning);
	return out;
}

static void test_reasoning(void **state)
{
	(void)state;
	char b[1024];
	struct probe p;

	assert_string_equal(probe_kind_id(ROLE_CORTEX, PK_REASONING), "reasoning-split");
	_cleanup_free_ char *req = probe_kind_request_body(ROLE_CORTEX, PK_REASONING);
	json_auto_t *r = json_loads(req, 0, NULL);
	assert_true(json_is_true(json_object_get(json_object_get(r, "chat_template_kwargs"),
						 "enable_thinking")));

	judge_kind(&p, PK_REASONING, 200,
		   reasoning_body("reasoning", "\"France's capital is Paris.\"", "\"Paris\"", b, sizeof b),
		   NULL);
	assert_int_equal(p.status, PROBE_PASS);
	assert_string_equal(json_string_value(json_object_get(p.evidence, "reasoning")),
			    "France's capital is Paris.");
	assert_string_equal(p.summary, "reasoning 26 bytes, answer 'Paris'");
	probe_free(&p);
	/* older vLLM's field name */
	judge_kind(&p, PK_REASONING, 200,
		   reasoning_body("reasoning_content", "\"thinking\"", "\"Paris\"", b, sizeof b), NULL);
	assert_int_equal(p.status, PROBE_PASS);
	probe_free(&p);
	/* no reasoning parser: the thinking leaks into content */
	judge_kind(&p, PK_REASONING, 200,
		   reasoning_body("reasoning", "null", "\"<think>\\nhmm\\n</think>\\n\\nParis\"", b, sizeof b),
		   NULL);
	assert_int_equal(p.failure, PF_WRONG);
	assert_string_contains(p.reason, "the thinking leaked into content");
	probe_free(&p);
	/* no thinking at all */
	judge_kind(&p, PK_REASONING, 200, reasoning_body("reasoning", "\"\"", "\"Paris\"", b, sizeof b),
		   NULL);
	assert_string_equal(p.reason, "no thinking in the reasoning field (answer 'Paris')");
	probe_free(&p);
	/* thinking, but a wrong answer */
	judge_kind(&p, PK_REASONING, 200,
		   reasoning_body("reasoning", "\"hmm\"", "\"Lyon\"", b, sizeof b), NULL);
	assert_string_equal(p.reason, "answer 'Lyon' does not contain 'paris'");
	probe_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_and_requests),
		cmocka_unit_test(test_chat),
		cmocka_unit_test(test_http_and_malformed),
		cmocka_unit_test(test_embed),
		cmocka_unit_test(test_rerank),
		cmocka_unit_test(test_known_failures),
		cmocka_unit_test(test_tool_call),
		cmocka_unit_test(test_reasoning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
