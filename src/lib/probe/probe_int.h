/*
 * probe_int.h — what probe.c (requests, transport, output) and probe_judge.c
 * (verdicts) share inside the probe module: the probes' fixed questions and
 * the formatted failure. Not for other modules; see probe.h.
 */
#ifndef LOBES_PROBE_INT_H
#define LOBES_PROBE_INT_H

#include "probe.h"

/* The embedder's sentences (FACTS.md "Correctness probes"). */
extern const char *const probe_embed_inputs[3];
/* The reranker's query and documents; the Paris one is not first, so a
 * server that echoes the input order fails. */
extern const char *const probe_rerank_query;
extern const char *const probe_rerank_docs[4];
#define PARIS_DOC 1
#define N_DOCS 4

struct chat_probe {
	const char *question;
	const char *expect; /* case-insensitive: a substring of the answer, or all of it */
	bool exact;         /* the whole answer, less surrounding spaces and punctuation */
};
extern const struct chat_probe probe_chat[ROLE__COUNT];

/* The tool-call probe: one tool, get_weather(city), and a question that asks
 * for it; the call must be get_weather with {"city": "Paris"}. */
#define TOOL_QUESTION "What is the weather in Paris? Use the tool."
#define TOOL_NAME "get_weather"
#define TOOL_ARG "city"
#define TOOL_VALUE "Paris"
/* The reasoning probe: thinking on; the thinking must come in the reasoning
 * field and the answer (containing "paris") in content, no think markers. */
#define REASONING_QUESTION "What is the capital city of France? Think it through, then reply with only the city name."
#define REASONING_EXPECT "paris"
#define REASONING_MAX_TOKENS 2048

/* Set a FAIL with a formatted reason, then the known-failure mapping. */
void probe_failf(struct probe *p, enum probe_failure f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
