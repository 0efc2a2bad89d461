/*
 * logprob.c — the stand-in's (a test double's) token distributions, for
 * `prompt_logprobs` on /v1/completions.
 *
 * No model: a prompt is split into toy tokens (runs of letters and digits,
 * and single punctuation marks, as model_count_tokens counts them); a
 * token's id is a hash of its text. At each position after the first the
 * toy "vocabulary" is CANDIDATES tokens: the prompt's own token and decoys
 * whose ids come from the previous token. Their logits are deterministic
 * functions of the position's context, so the same prompt always gets the
 * same distributions, and the prompt's token is sometimes not the most
 * likely one (the same-top rate of a comparison is not trivially 100%).
 *
 * fp8 KV cache on a checkpoint without KV scales (vLLM's "Using KV cache
 * scaling factor 1.0") is modelled as noise on the logits: every candidate's
 * logit moves by A * u, u a deterministic value in [-1, 1] drawn from the
 * position and the candidate, A = S->fp8_noise (STANDIN_FP8_NOISE, nats),
 * before the softmax. Each log-probability therefore moves by at most 2A,
 * and the run with A = 0 is identical to the run without fp8.
 *
 * POST /tokenize answers the same token ids (a comparison needs the
 * prompt's ids to find its token among the top-k).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "standin.h"

#define CANDIDATES 32
#define VOCAB 50000
#define MAX_TOP 20  /* vLLM's default max_logprobs */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

static uint64_t hash_text(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* A value in [0, 1) from h. */
static double unit(uint64_t h)
{
	return (double)(mix(h, 17) >> 11) / 9007199254740992.0;
}

struct tok {
	const char *text;  /* into the prompt, with its leading spaces */
	size_t len;
	long id;
};

/* Split prompt into toy tokens (at most max); returns the count. */
static int tokenize(const char *prompt, struct tok *out, int max)
{
	const char *p = prompt;
	int n = 0;

	while (*p && n < max) {
		const char *start = p;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		const char *w = p;
		if (isalnum((unsigned char)*p))
			while (isalnum((unsigned char)*p))
				p++;
		else
			p++;
		out[n].text = start;
		out[n].len = (size_t)(p - start);
		out[n].id = 100 + (long)(hash_text(w, (size_t)(p - w)) % VOCAB);
		n++;
	}
	return n;
}

struct cand {
	long id;
	double logit, logprob;
	int rank;
};

static int by_logit(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->logit != y->logit)
		return x->logit < y->logit ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The candidates at position i (> 0) of toks, sorted, with log-probs. */
static void distribution(const struct tok *toks, int i, struct cand *c)
{
	uint64_t ctx = mix(mix((uint64_t)toks[i - 1].id, (uint64_t)i), 0x5eed);
	double max = -INFINITY, sum = 0;

	c[0].id = toks[i].id;
	/* the prompt's token: from clearly the most likely to below some decoys */
	c[0].logit = -1.0 + 5.0 * unit(mix(ctx, (uint64_t)toks[i].id));
	for (int j = 1; j < CANDIDATES; j++) {
		long id = 100 + (long)(mix(ctx, (uint64_t)j) % VOCAB);
		for (int k = 0; k < j; k++)
			if (c[k].id == id) {
				id = 100 + (id - 100 + 1) % VOCAB;
				k = -1;  /* look again from the start */
			}
		c[j].id = id;
		c[j].logit = -0.4 * j + 0.3 * unit(mix(ctx, (uint64_t)id));
	}
	for (int j = 0; j < CANDIDATES; j++) {
		if (S->fp8_noise > 0)
			c[j].logit += S->fp8_noise *
				      (2.0 * unit(mix(mix(ctx, (uint64_t)c[j].id), 0xf8)) - 1.0);
		if (c[j].logit > max)
			max = c[j].logit;
	}
	for (int j = 0; j < CANDIDATES; j++)
		sum += exp(c[j].logit - max);
	for (int j = 0; j < CANDIDATES; j++)
		c[j].logprob = c[j].logit - max - log(sum);
	qsort(c, CANDIDATES, sizeof *c, by_logit);
	for (int j = 0; j < CANDIDATES; j++)
		c[j].rank = j + 1;
}

static json_t *entry(const struct cand *c, const char *text, size_t len)
{
	return json_pack("{s:f, s:i, s:s%}", "logprob", c->logprob, "rank", c->rank,
			 "decoded_token", text, len);
}

json_t *toy_prompt_logprobs(const char *prompt, int k, int *n_tokens)
{
	static struct tok toks[8192];  /* the HTTP handlers run one at a time */
	struct cand c[CANDIDATES];
	json_t *out = json_array();
	int n = tokenize(prompt, toks, (int)(sizeof toks / sizeof *toks));

	*n_tokens = n;
	if (k > MAX_TOP)
		k = MAX_TOP;
	for (int i = 0; i < n; i++) {
		json_t *pos;
		char key[32];
		if (i == 0) {
			json_array_append_new(out, json_null());
			continue;
		}
		distribution(toks, i, c);
		pos = json_object();
		for (int j = 0; j < CANDIDATES; j++) {
			bool prompt_tok = c[j].id == toks[i].id;
			if (j >= k && !prompt_tok)
				continue;
			snprintf(key, sizeof key, "%ld", c[j].id);
			/* a decoy's text: its id, so a reader can tell them apart */
			char decoy[32];
			int dl = snprintf(decoy, sizeof decoy, " <%ld>", c[j].id);
			json_object_set_new(pos, key,
					    prompt_tok ? entry(&c[j], toks[i].text, toks[i].len)
						       : entry(&c[j], decoy, (size_t)dl));
		}
		json_array_append_new(out, pos);
	}
	return out;
}

/* POST /tokenize (vLLM serves it at the root): the toy token ids. */
void api_tokenize(struct reply *r, json_t *req)
{
	static struct tok toks[8192];
	const char *prompt = json_string_value(json_object_get(req, "prompt"));
	json_t *ids = json_array();
	int n;

	if (S->task != TASK_GENERATE)
		return reply_error(r, 400, NULL, "The model does not support Tokenize API");
	if (!model_ok(r, req))
		return;
	if (!prompt)
		return reply_error(r, 400, "prompt", "prompt: a string");
	n = tokenize(prompt, toks, (int)(sizeof toks / sizeof *toks));
	for (int i = 0; i < n; i++)
		json_array_append_new(ids, json_integer(toks[i].id));
	reply_json(r, 200, json_pack("{s:i, s:i, s:o, s:n}", "count", n, "max_model_len",
				     (json_int_t)S->max_model_len, "tokens", ids, "token_strs"));
}
