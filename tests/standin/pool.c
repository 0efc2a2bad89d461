/*
 * pool.c — the stand-in's (a test double's) pooling routes: POST
 * /v1/embeddings, /v1/rerank (also /rerank, /v2/rerank) and /v1/score
 * (also /score), with vLLM's request and response shapes.
 *
 * Faults chosen by main(): the sm_110 pooling hang (accepted, never
 * answered), the sm_110 reranker CUDA-graph launch failure (the first rerank
 * kills the engine), and — on every card — a classify model served without
 * the Qwen3-Reranker overrides: its classifier head is not the one the
 * checkpoint trained, so the toy scores come out inverted (S->wrong_scores)
 * and the ordering is wrong.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "standin.h"

static unsigned long seq;
static bool rerank_seen;

static json_t *usage(int prompt)
{
	return json_pack("{s:i, s:i, s:i}", "prompt_tokens", prompt, "total_tokens", prompt,
			 "completion_tokens", 0);
}

void api_embeddings(struct reply *r, json_t *req)
{
	json_t *input = json_object_get(req, "input"), *inputs, *data, *item;
	int tokens = 0;
	size_t i, dim = S->embed_dim;
	float *vec;

	if (S->task != TASK_EMBED)
		return reply_error(r, 400, NULL, "The model does not support Embeddings API");
	if (!model_ok(r, req))
		return;
	if (json_is_string(input))
		inputs = json_pack("[O]", input);
	else if (json_is_array(input) && json_array_size(input))
		inputs = json_incref(input);
	else
		return reply_error(r, 400, "input", "input: a string or a non-empty list of strings");
	json_array_foreach(inputs, i, item) {
		if (!json_is_string(item)) {
			json_decref(inputs);
			return reply_error(r, 400, "input", "input: the stand-in accepts strings only");
		}
	}
	if (S->fault == FAULT_POOLING_HANG) {
		json_decref(inputs);
		r->hang = true;
		return;
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
	snprintf(r->id, sizeof r->id, "embd-standin-%lu", ++seq);
	reply_json(r, 200,
		   json_pack("{s:s, s:s, s:i, s:s, s:o, s:o}", "id", r->id, "object", "list",
			     "created", (json_int_t)time(NULL), "model", S->served_name, "data",
			     data, "usage", usage(tokens)));
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

/* Score each document of docs (strings or {"text"}) against query into a
 * new array (n set); NULL with a 400 in r when a document is malformed, or
 * when the engine hangs or dies (r says which). */
static struct scored *score_docs(struct reply *r, const char *query, json_t *docs, size_t *n,
				 int *tokens)
{
	struct scored *sc;
	json_t *doc;
	size_t i;

	if (S->task != TASK_CLASSIFY) {
		reply_error(r, 400, NULL, "The model does not support Rerank (Score) API");
		return NULL;
	}
	if (!query) {
		reply_error(r, 400, "query", "query: field required (a string)");
		return NULL;
	}
	if (json_is_string(docs))
		docs = json_pack("[O]", docs);
	else
		json_incref(docs);
	if (!json_is_array(docs) || !(*n = json_array_size(docs))) {
		json_decref(docs);
		reply_error(r, 400, "documents", "documents: a non-empty list");
		return NULL;
	}
	if (S->fault == FAULT_GRAPH_KILL && !rerank_seen) {
		rerank_seen = true;
		json_decref(docs);
		engine_dies(r);
		return NULL;
	}
	if (S->fault == FAULT_POOLING_HANG) {
		json_decref(docs);
		r->hang = true;
		return NULL;
	}
	sc = calloc(*n, sizeof *sc);
	*tokens = 0;
	json_array_foreach(docs, i, doc) {
		const char *t = json_is_string(doc) ? json_string_value(doc)
						    : json_string_value(json_object_get(doc, "text"));
		double rel;
		if (!t) {
			free(sc);
			json_decref(docs);
			reply_error(r, 400, "documents", "documents: strings or {\"text\": ...}");
			return NULL;
		}
		rel = model_relevance(query, t);
		/* A classifier head that is not the trained one: meaningless scores. */
		sc[i] = (struct scored){ i, S->wrong_scores ? 1.0 - rel : rel, t };
		*tokens += model_count_tokens(t) + model_count_tokens(query);
	}
	/* the texts stay alive in req, which the caller holds */
	json_decref(docs);
	return sc;
}

void api_rerank(struct reply *r, json_t *req)
{
	json_t *top = json_object_get(req, "top_n"), *results;
	struct scored *sc;
	size_t n = 0, i, limit;
	int tokens = 0;

	if (S->task == TASK_CLASSIFY && !model_ok(r, req))
		return;
	sc = score_docs(r, json_string_value(json_object_get(req, "query")),
			json_object_get(req, "documents"), &n, &tokens);
	if (!sc)
		return;
	qsort(sc, n, sizeof *sc, by_score_desc);
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
	snprintf(r->id, sizeof r->id, "rerank-standin-%lu", ++seq);
	reply_json(r, 200,
		   json_pack("{s:s, s:s, s:{s:i}, s:o}", "id", r->id, "model", S->served_name,
			     "usage", "total_tokens", tokens, "results", results));
}

/* /score: text_1/text_2 (older) or queries/documents; one score per
 * document, in input order. */
void api_score(struct reply *r, json_t *req)
{
	json_t *q = json_object_get(req, "text_1"), *docs = json_object_get(req, "text_2"), *data;
	struct scored *sc;
	size_t n = 0, i;
	int tokens = 0;

	if (!q)
		q = json_object_get(req, "queries");
	if (!docs)
		docs = json_object_get(req, "documents");
	if (json_is_array(q))
		q = json_array_get(q, 0);
	if (S->task == TASK_CLASSIFY && !model_ok(r, req))
		return;
	sc = score_docs(r, json_string_value(q), docs, &n, &tokens);
	if (!sc)
		return;
	data = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(data, json_pack("{s:i, s:s, s:f}", "index", (json_int_t)i,
						      "object", "score", "score", sc[i].score));
	free(sc);
	snprintf(r->id, sizeof r->id, "score-standin-%lu", ++seq);
	reply_json(r, 200,
		   json_pack("{s:s, s:s, s:i, s:s, s:o, s:o}", "id", r->id, "object", "list",
			     "created", (json_int_t)time(NULL), "model", S->served_name, "data",
			     data, "usage", usage(tokens)));
}
