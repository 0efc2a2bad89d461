/*
 * test_probe_edges.c — probe_judge on the bodies test_probe.c does not
 * send: each malformed shape of a chat, tool-call, reasoning, embedding and
 * rerank answer lands in PF_MALFORMED (or PF_WRONG) with its own reason;
 * the text shown in a reason is cut without splitting a UTF-8 sequence and
 * with control characters blanked; an error body of 0 bytes; the exact-match
 * probe with punctuation around the word; a known failure with no ref.
 */
#include "testutil.h"

#include "../../src/lib/probe/probe.h"

static void judge(struct probe *p, enum role_id r, enum probe_kind k, long status, const char *body,
		  const struct known_failure *kf)
{
	probe_init_kind(p, r, k, 8000, kf);
	probe_judge(p, status, body, body ? strlen(body) : 0);
}

/* The verdict's reason for body (role r, kind k); the probe is freed. */
#define REASON_IS(r, k, body, f, want)                                                   \
	do {                                                                             \
		struct probe _p;                                                         \
		judge(&_p, r, k, 200, body, NULL);                                       \
		if (_p.status != PROBE_FAIL || _p.failure != (f) || !_p.reason ||        \
		    strcmp(_p.reason, want) != 0)                                        \
			fail_msg("%s\n got: %d/%d %s\nwant: %s", body, _p.status,        \
				 _p.failure, _p.reason ? _p.reason : "(pass)", want);    \
		probe_free(&_p);                                                         \
	} while (0)

#define PASSES(r, k, body)                                                               \
	do {                                                                             \
		struct probe _p;                                                         \
		judge(&_p, r, k, 200, body, NULL);                                       \
		if (_p.status != PROBE_PASS)                                             \
			fail_msg("%s\n failed: %s", body, _p.reason ? _p.reason : "?");  \
		probe_free(&_p);                                                         \
	} while (0)

#define CHAT_MALFORMED "malformed body: no choices[0].message.content string"
#define MSG_MALFORMED "malformed body: no choices[0].message with a content string or null"

static void test_chat_shapes(void **state)
{
	(void)state;
	REASON_IS(ROLE_CORTEX, PK_ANSWER, "{}", PF_MALFORMED, CHAT_MALFORMED);
	REASON_IS(ROLE_CORTEX, PK_ANSWER, "{\"choices\":[]}", PF_MALFORMED, CHAT_MALFORMED);
	REASON_IS(ROLE_CORTEX, PK_ANSWER, "{\"choices\":[{\"message\":\"Paris\"}]}", PF_MALFORMED,
		  CHAT_MALFORMED);
	REASON_IS(ROLE_CORTEX, PK_ANSWER, "{\"choices\":[{\"message\":{\"content\":7}}]}",
		  PF_MALFORMED, CHAT_MALFORMED);
	/* content null or absent is an empty answer, not a malformed body */
	REASON_IS(ROLE_CORTEX, PK_ANSWER, "{\"choices\":[{\"message\":{\"content\":null}}]}",
		  PF_WRONG, "empty answer (expected one containing 'paris')");
	REASON_IS(ROLE_HAND, PK_ANSWER, "{\"choices\":[{\"message\":{}}]}", PF_WRONG,
		  "empty answer (expected 'paris')");
	/* exact match: punctuation and spaces around the word are fine, more
	 * words are not, nor a word that only starts with it */
	PASSES(ROLE_HAND, PK_ANSWER, "{\"choices\":[{\"message\":{\"content\":\" \\\"Paris.\\\"\\n\"}}]}");
	REASON_IS(ROLE_HAND, PK_ANSWER, "{\"choices\":[{\"message\":{\"content\":\"Parisian\"}}]}",
		  PF_WRONG, "answer 'Parisian' is not 'paris'");
	REASON_IS(ROLE_HAND, PK_ANSWER, "{\"choices\":[{\"message\":{\"content\":\"...\"}}]}",
		  PF_WRONG, "answer '...' is not 'paris'");
	REASON_IS(ROLE_HAND, PK_ANSWER, "{\"choices\":[{\"message\":{\"content\":\"Pari\"}}]}",
		  PF_WRONG, "answer 'Pari' is not 'paris'");
	/* the reasoning of a chat answer is kept as evidence, an empty one is not */
	struct probe p;
	judge(&p, ROLE_CORTEX, PK_ANSWER, 200,
	      "{\"choices\":[{\"message\":{\"content\":\"Paris\",\"reasoning_content\":\"France...\"},"
	      "\"finish_reason\":7}]}",
	      NULL);
	assert_int_equal(p.status, PROBE_PASS);
	assert_string_equal(json_string_value(json_object_get(p.evidence, "reasoning")), "France...");
	assert_null(json_object_get(p.evidence, "finish_reason")); /* not a string: left out */
	probe_free(&p);
	judge(&p, ROLE_CORTEX, PK_ANSWER, 200,
	      "{\"choices\":[{\"message\":{\"content\":\"Paris\",\"reasoning\":\"\"}}]}", NULL);
	assert_null(json_object_get(p.evidence, "reasoning"));
	probe_free(&p);
}

static void test_shown_text(void **state)
{
	(void)state;
	/* 79 ASCII bytes then 'é' (2 bytes) straddling the 80-byte cut: the cut
	 * moves back before the sequence */
	char answer[128];
	memset(answer, 'x', 79);
	memcpy(answer + 79, "\xC3\xA9yyy", 6);
	char body[256];
	snprintf(body, sizeof(body), "{\"choices\":[{\"message\":{\"content\":\"%s\"}}]}", answer);
	struct probe p;
	judge(&p, ROLE_HAND, PK_ANSWER, 200, body, NULL);
	char want[160];
	memset(want, 0, sizeof(want));
	memcpy(want, "answer '", 8);
	memset(want + 8, 'x', 79);
	memcpy(want + 8 + 79, "...' is not 'paris'", sizeof("...' is not 'paris'"));
	assert_string_equal(p.reason, want);
	probe_free(&p);
	/* control characters and DEL become spaces; non-ASCII UTF-8 is kept */
	judge(&p, ROLE_HAND, PK_ANSWER, 200,
	      "{\"choices\":[{\"message\":{\"content\":\"a\\tb\\u007fc\\u00e9\"}}]}", NULL);
	assert_string_equal(p.reason, "answer 'a b c\xC3\xA9' is not 'paris'");
	probe_free(&p);
	/* an HTTP error with an empty body, and one whose error is a string */
	judge(&p, ROLE_CORTEX, PK_ANSWER, 503, "", NULL);
	assert_string_equal(p.reason, "HTTP 503: empty body");
	assert_int_equal(p.failure, PF_HTTP);
	probe_free(&p);
	judge(&p, ROLE_CORTEX, PK_ANSWER, 500, "{\"error\":\"engine dead\"}", NULL);
	assert_string_equal(p.reason, "HTTP 500: engine dead");
	probe_free(&p);
	/* 199 and 300 are not success; 200 and 299 are */
	judge(&p, ROLE_CORTEX, PK_ANSWER, 199, "{}", NULL);
	assert_int_equal(p.failure, PF_HTTP);
	probe_free(&p);
	judge(&p, ROLE_CORTEX, PK_ANSWER, 300, "{}", NULL);
	assert_int_equal(p.failure, PF_HTTP);
	probe_free(&p);
	judge(&p, ROLE_CORTEX, PK_ANSWER, 299, "{\"choices\":[{\"message\":{\"content\":\"Paris\"}}]}",
	      NULL);
	assert_int_equal(p.status, PROBE_PASS);
	probe_free(&p);
}

static void test_tool_shapes(void **state)
{
	(void)state;
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL, "{\"choices\":[{\"message\":{\"content\":[]}}]}",
		  PF_MALFORMED, MSG_MALFORMED);
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL, "{\"choices\":[]}", PF_MALFORMED, MSG_MALFORMED);
	/* no finish_reason and no content */
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL, "{\"choices\":[{\"message\":{\"tool_calls\":[]}}]}",
		  PF_WRONG, "no tool call (finish_reason 'none', content '')");
	/* tool_calls not a list */
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL,
		  "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":{}},"
		  "\"finish_reason\":\"stop\"}]}",
		  PF_WRONG, "no tool call (finish_reason 'stop', content '')");
	/* two calls */
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL,
		  "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":["
		  "{\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}},"
		  "{\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}"
		  "]},\"finish_reason\":\"tool_calls\"}]}",
		  PF_WRONG, "2 tool calls, expected one");
	/* a call with no name, and no arguments */
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL,
		  "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"function\":{}}]},"
		  "\"finish_reason\":\"tool_calls\"}]}",
		  PF_WRONG, "called '(no name)', not 'get_weather'");
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL,
		  "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"function\":"
		  "{\"name\":\"get_weather\"}}]},\"finish_reason\":\"tool_calls\"}]}",
		  PF_WRONG, "arguments are not a JSON object string: ''");
	/* the right city but a second argument; the city in another case passes */
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL,
		  "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"function\":"
		  "{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\",\\\"u\\\":1}\"}}]},"
		  "\"finish_reason\":\"tool_calls\"}]}",
		  PF_WRONG, "arguments {\"city\":\"Paris\",\"u\":1}, expected {\"city\": \"Paris\"}");
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL,
		  "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"function\":"
		  "{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":7}\"}}]},"
		  "\"finish_reason\":\"tool_calls\"}]}",
		  PF_WRONG, "arguments {\"city\":7}, expected {\"city\": \"Paris\"}");
	PASSES(ROLE_CORTEX, PK_TOOL_CALL,
	       "{\"choices\":[{\"message\":{\"content\":\" \\n\",\"tool_calls\":[{\"function\":"
	       "{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"PARIS\\\"}\"}}]},"
	       "\"finish_reason\":\"tool_calls\"}]}");
	/* no finish_reason at all */
	REASON_IS(ROLE_CORTEX, PK_TOOL_CALL,
		  "{\"choices\":[{\"message\":{\"tool_calls\":[{\"function\":"
		  "{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}}]}",
		  PF_WRONG, "finish_reason 'none', expected 'tool_calls'");
}

static void test_reasoning_shapes(void **state)
{
	(void)state;
	REASON_IS(ROLE_CORTEX, PK_REASONING, "{\"choices\":[{\"message\":[]}]}", PF_MALFORMED,
		  MSG_MALFORMED);
	/* content null: an empty answer after the thinking, cut by the length */
	REASON_IS(ROLE_CORTEX, PK_REASONING,
		  "{\"choices\":[{\"message\":{\"content\":null,\"reasoning\":\"thinking\"},"
		  "\"finish_reason\":\"length\"}]}",
		  PF_WRONG, "the answer did not finish within 2048 tokens");
	/* the same, stopped: the answer lacks the word */
	REASON_IS(ROLE_CORTEX, PK_REASONING,
		  "{\"choices\":[{\"message\":{\"content\":null,\"reasoning\":\"thinking\"},"
		  "\"finish_reason\":\"stop\"}]}",
		  PF_WRONG, "answer '' does not contain 'paris'");
	/* cut by length but with an answer: judged on the answer */
	PASSES(ROLE_CORTEX, PK_REASONING,
	       "{\"choices\":[{\"message\":{\"content\":\"Paris\",\"reasoning\":\"t\"},"
	       "\"finish_reason\":\"length\"}]}");
	/* only a closing marker leaked */
	REASON_IS(ROLE_CORTEX, PK_REASONING,
		  "{\"choices\":[{\"message\":{\"content\":\"x</think>Paris\",\"reasoning\":\"t\"}}]}",
		  PF_WRONG, "the thinking leaked into content (think markers in the answer "
			    "'x</think>Paris'): no reasoning parser at work");
	/* a reasoning field of whitespace is no thinking; a non-string
	 * `reasoning` falls back to reasoning_content */
	REASON_IS(ROLE_CORTEX, PK_REASONING,
		  "{\"choices\":[{\"message\":{\"content\":\"Paris\",\"reasoning\":\" \\n\"}}]}",
		  PF_WRONG, "no thinking in the reasoning field (answer 'Paris')");
	PASSES(ROLE_CORTEX, PK_REASONING,
	       "{\"choices\":[{\"message\":{\"content\":\"Paris\",\"reasoning\":null,"
	       "\"reasoning_content\":\"t\"}}]}");
}

static void test_embed_shapes(void **state)
{
	(void)state;
	const enum role_id E = ROLE_EMBEDDER;
	REASON_IS(E, PK_ANSWER, "{\"data\":{}}", PF_MALFORMED,
		  "malformed body: expected 'data' with 3 embeddings, got none");
	REASON_IS(E, PK_ANSWER, "{\"data\":[1,2]}", PF_MALFORMED,
		  "malformed body: expected 'data' with 3 embeddings, got another count");
	/* indexes: not an integer, out of range, repeated */
	REASON_IS(E, PK_ANSWER,
		  "{\"data\":[{\"index\":\"0\",\"embedding\":[1]},{\"embedding\":[1]},{\"embedding\":[1]}]}",
		  PF_MALFORMED, "malformed body: 'index' is not 0, 1 and 2");
	REASON_IS(E, PK_ANSWER,
		  "{\"data\":[{\"index\":3,\"embedding\":[1]},{\"embedding\":[1]},{\"embedding\":[1]}]}",
		  PF_MALFORMED, "malformed body: 'index' is not 0, 1 and 2");
	REASON_IS(E, PK_ANSWER,
		  "{\"data\":[{\"index\":-1,\"embedding\":[1]},{\"embedding\":[1]},{\"embedding\":[1]}]}",
		  PF_MALFORMED, "malformed body: 'index' is not 0, 1 and 2");
	REASON_IS(E, PK_ANSWER,
		  "{\"data\":[{\"index\":1,\"embedding\":[1]},{\"embedding\":[1]},{\"embedding\":[1]}]}",
		  PF_MALFORMED, "malformed body: 'index' is not 0, 1 and 2");
	/* embeddings: empty, not a list, of another length, a non-number */
	REASON_IS(E, PK_ANSWER, "{\"data\":[{\"embedding\":[]},{\"embedding\":[1]},{\"embedding\":[1]}]}",
		  PF_MALFORMED, "malformed body: an 'embedding' is not a non-empty list");
	REASON_IS(E, PK_ANSWER, "{\"data\":[{\"embedding\":\"x\"},{\"embedding\":[1]},{\"embedding\":[1]}]}",
		  PF_MALFORMED, "malformed body: an 'embedding' is not a non-empty list");
	REASON_IS(E, PK_ANSWER,
		  "{\"data\":[{\"embedding\":[1,0]},{\"embedding\":[1]},{\"embedding\":[1,0]}]}",
		  PF_MALFORMED, "malformed body: the embeddings differ in length");
	REASON_IS(E, PK_ANSWER,
		  "{\"data\":[{\"embedding\":[1,0]},{\"embedding\":[1,\"0\"]},{\"embedding\":[1,0]}]}",
		  PF_MALFORMED, "malformed body: an embedding holds a value that is not a finite number");
	/* served out of order: the index decides which is which */
	PASSES(E, PK_ANSWER,
	       "{\"data\":[{\"index\":2,\"embedding\":[0,1]},{\"index\":0,\"embedding\":[1,0]},"
	       "{\"index\":1,\"embedding\":[1,0.1]}]}");
	/* a zero vector among the others */
	REASON_IS(E, PK_ANSWER, "{\"data\":[{\"embedding\":[1,0]},{\"embedding\":[1,0]},{\"embedding\":[0,0]}]}",
		  PF_WRONG, "an embedding is all zeros: the cosines are undefined");
	struct probe p;
	judge(&p, E, PK_ANSWER, 200,
	      "{\"data\":[{\"embedding\":[1,0]},{\"embedding\":[1,0]},{\"embedding\":[0,0]}]}", NULL);
	assert_string_equal(p.summary, "a zero embedding (dim 2)");
	assert_true(json_is_real(json_object_get(p.evidence, "cos_paraphrase")));
	assert_true(json_is_null(json_object_get(p.evidence, "cos_unrelated")));
	probe_free(&p);
}

static void test_rerank_shapes(void **state)
{
	(void)state;
	const enum role_id R = ROLE_RERANKER;
	const char *need = "malformed body: expected 'results' with 1 to 4 entries";
	REASON_IS(R, PK_ANSWER, "{}", PF_MALFORMED, need);
	REASON_IS(R, PK_ANSWER, "{\"results\":[]}", PF_MALFORMED, need);
	REASON_IS(R, PK_ANSWER,
		  "{\"results\":[{\"index\":0,\"relevance_score\":1},{\"index\":1,\"relevance_score\":1},"
		  "{\"index\":2,\"relevance_score\":1},{\"index\":3,\"relevance_score\":1},"
		  "{\"index\":0,\"relevance_score\":1}]}",
		  PF_MALFORMED, need);
	const char *entry = "malformed body: results[%d] needs a new 'index' in 0..3 and a numeric "
			    "'relevance_score'";
	char want[200];
	snprintf(want, sizeof(want), entry, 0);
	REASON_IS(R, PK_ANSWER, "{\"results\":[{\"index\":4,\"relevance_score\":1}]}", PF_MALFORMED, want);
	REASON_IS(R, PK_ANSWER, "{\"results\":[{\"index\":-1,\"relevance_score\":1}]}", PF_MALFORMED, want);
	REASON_IS(R, PK_ANSWER, "{\"results\":[{\"index\":1.0,\"relevance_score\":1}]}", PF_MALFORMED, want);
	REASON_IS(R, PK_ANSWER, "{\"results\":[{\"index\":1,\"relevance_score\":\"1\"}]}", PF_MALFORMED,
		  want);
	snprintf(want, sizeof(want), entry, 1);
	REASON_IS(R, PK_ANSWER,
		  "{\"results\":[{\"index\":1,\"relevance_score\":1},{\"index\":1,\"relevance_score\":0}]}",
		  PF_MALFORMED, want);
}

static void test_known_failure_without_ref(void **state)
{
	(void)state;
	struct known_failure kf = { .role = "hand", .probe = "chat-known-answer", .reason = "r" };
	struct probe p;
	judge(&p, ROLE_HAND, PK_ANSWER, 200, "{\"choices\":[{\"message\":{\"content\":\"Paris\"}}]}", &kf);
	assert_int_equal(p.status, PROBE_KNOWN_FAILURE_PASSED);
	assert_string_equal(p.notice, "known failure (no ref) now passes: remove the entry (role hand, "
				      "probe chat-known-answer) from the profile's known_failures");
	probe_free(&p);
	/* a malformed body is never masked by the known failure */
	judge(&p, ROLE_HAND, PK_ANSWER, 200, "{}", &kf);
	assert_int_equal(p.status, PROBE_FAIL);
	assert_int_equal(p.failure, PF_MALFORMED);
	probe_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chat_shapes),
		cmocka_unit_test(test_shown_text),
		cmocka_unit_test(test_tool_shapes),
		cmocka_unit_test(test_reasoning_shapes),
		cmocka_unit_test(test_embed_shapes),
		cmocka_unit_test(test_rerank_shapes),
		cmocka_unit_test(test_known_failure_without_ref),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
