/*
 * probe.h — semantic correctness probes: does each role answer RIGHT, not
 * merely answer? `/health` stays green on an engine that hangs every request
 * or ranks documents wrongly; a probe asks one question with a known answer.
 *
 * One probe per role, with a stable id:
 *   cortex    chat-capital       "What is the capital city of France? ..." → contains "paris"
 *   senses    chat-sky           "What color is a cloudless daytime sky? ..." → contains "blue"
 *   hand      chat-known-answer  "What is the capital of France? Reply with only the
 *                                city name." → exactly "paris" (surrounding spaces and
 *                                punctuation aside): a fact a 1.2B model knows for
 *                                sure, judged strictly because a corrupted
 *                                generation may still contain the word
 *   embedder  embed-paraphrase   cos(s, paraphrase) > cos(s, unrelated)
 *   reranker  rerank-order       the Paris document is served first, and no other
 *                                document scores above it
 * and, for what clients use, two more on the roles rendered for them (the
 * deploy dir's .env says which: <ROLE>_TOOL_CALL_PARSER, <ROLE>_REASONING_PARSER):
 *   tool-call        tools=[get_weather(city)], "What is the weather in Paris?
 *                    Use the tool." → finish_reason tool_calls, one call
 *                    get_weather with arguments {"city": "Paris"}, nothing in content
 *   reasoning-split  thinking on, "What is the capital city of France? ..." →
 *                    the thinking in the `reasoning` field (`reasoning_content`
 *                    on older vLLM), an answer containing "paris" in content,
 *                    no think markers in it
 * Known-answer chat probes run at temperature 0, max_tokens 16, with thinking off
 * ("chat_template_kwargs": {"enable_thinking": false}); the model name is the
 * role name (the render serves each role under it).
 *
 * Every probe is bounded by a timeout, and every way of not getting a right
 * answer is a FAIL with its reason: a wrong answer, a timeout, a refused
 * connection, an HTTP error, a malformed or oversized body. A profile's
 * known failure (role, probe) turns a WRONG ANSWER into `known-failure` (the
 * run still passes); a transport failure is never masked by it. A listed
 * probe that passes is `known-failure-passed`, with a notice asking for the
 * entry's removal.
 *
 * probe_run() sends all probes at once (libcurl's multi interface) to
 * 127.0.0.1 and never prints. probe_judge() is the pure half (a response in,
 * a verdict out) so unit tests can feed it bodies directly.
 */
#ifndef LOBES_PROBE_H
#define LOBES_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "../knowledge/knowledge.h"

enum probe_status {
	PROBE_PASS,
	PROBE_FAIL,
	PROBE_KNOWN_FAILURE,        /* failed with a wrong answer, as the profile records */
	PROBE_KNOWN_FAILURE_PASSED, /* listed as a known failure, yet it passed */
};

/* Why a probe did not pass (PF_NONE when it did). */
enum probe_failure {
	PF_NONE,
	PF_WRONG,     /* answered, with the wrong answer */
	PF_TIMEOUT,   /* no complete answer within the timeout */
	PF_REFUSED,   /* nothing listening */
	PF_TRANSPORT, /* any other connection-level failure */
	PF_HTTP,      /* a non-2xx status */
	PF_MALFORMED, /* 2xx, but not the JSON shape the API promises (or too large) */
};

/* Which probe of a role. */
enum probe_kind {
	PK_ANSWER,    /* the role's known-answer probe (chat-capital, embed-paraphrase, ...) */
	PK_TOOL_CALL, /* tool-call */
	PK_REASONING, /* reasoning-split */
};

struct probe {
	/* Input, set by probe_init / probe_init_kind. */
	enum role_id role;
	enum probe_kind kind;
	int port;
	const struct known_failure *known; /* the profile's entry for (role, probe), or NULL */
	const char *origin; /* borrowed; NULL: http://127.0.0.1:<port> (a gateway's, for probe --fleet) */
	const char *bearer; /* borrowed; NULL: no Authorization (the gateway's key, never printed) */
	/* Output, set by probe_run / probe_judge. */
	enum probe_status status;
	enum probe_failure failure;
	char *reason;      /* owned: why it failed ("timed out after 2 s: no answer"); NULL on pass */
	char *summary;     /* owned: one-line evidence ("answer 'Paris'") */
	char *notice;      /* owned: set for known-failure-passed */
	json_t *evidence;  /* owned: the answer, the cosines or the ranking; {} when none */
	long http_status;  /* 0: no HTTP response */
	long latency_ms;   /* from sending the request to the end (or the timeout) */
};

/* The stable id of a role's known-answer probe ("chat-capital", ...). */
const char *probe_id(enum role_id r);
/* The stable id of probe kind k of role r ("tool-call", "reasoning-split",
 * else probe_id(r)). */
const char *probe_kind_id(enum role_id r, enum probe_kind k);
/* "pass" | "fail" | "known-failure" | "known-failure-passed" */
const char *probe_status_name(enum probe_status s);
/* NULL for PF_NONE; "wrong-answer" "timeout" "refused" "transport" "http" "malformed" */
const char *probe_failure_name(enum probe_failure f);
/* The request a role's probe sends: path ("/v1/chat/completions") and JSON
 * body (caller frees). */
const char *probe_path(enum role_id r);
char *probe_request_body(enum role_id r);
/* The same for probe kind k of role r. */
const char *probe_kind_path(enum role_id r, enum probe_kind k);
char *probe_kind_request_body(enum role_id r, enum probe_kind k);

/* Prepare p for role r on 127.0.0.1:port. known: the profile's known failure
 * for this (role, probe) or NULL; it must outlive p. */
void probe_init(struct probe *p, enum role_id r, int port, const struct known_failure *known);
/* The same for probe kind k of role r. */
void probe_init_kind(struct probe *p, enum role_id r, enum probe_kind k, int port,
		     const struct known_failure *known);
/* The profile's entry for (role, probe id of role), or NULL (prof may be NULL). */
const struct known_failure *probe_known_failure(const struct profile *prof, enum role_id r);
/* The profile's entry for (role, probe id of kind k), or NULL. */
const struct known_failure *probe_kind_known_failure(const struct profile *prof, enum role_id r,
						     enum probe_kind k);

/* Run the n probes concurrently, each bounded by timeout_s seconds (> 0).
 * Network outcomes are results, not errors: returns -1 (EXIT_INTERNAL) only
 * when the HTTP client cannot be set up. */
int probe_run(struct probe *ps, size_t n, double timeout_s, struct err **err);

/* Judge a complete response (status, body of len bytes) into p: pass or a
 * FAIL with PF_HTTP / PF_MALFORMED / PF_WRONG, evidence and summary, then
 * the known-failure mapping. Pure. */
void probe_judge(struct probe *p, long http_status, const char *body, size_t len);
/* Record a failure that happened before a response could be judged
 * (timeout, refused, ...); reason is copied. Applies the known-failure
 * mapping (which never masks these). */
void probe_fail(struct probe *p, enum probe_failure f, const char *reason);

/* The full result as a new JSON object. */
json_t *probe_json(const struct probe *p);
void probe_free(struct probe *p);

#endif
