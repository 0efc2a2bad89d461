/*
 * model.c — the stand-in's toy "model" (a test double, no inference).
 *
 * Deterministic answers just good enough for lobes' correctness probes:
 * chat knows two facts (the capital of France, the colour of the sky) and
 * the sums, differences and products of "What is X + Y?", and otherwise
 * echoes; embeddings are a hashed bag of words, L2-normalised, so
 * paraphrases sharing words score a higher cosine than unrelated text;
 * rerank relevance is the cosine of the query's and document's word sets.
 * Words are lowercase ASCII alphanumeric runs, a trailing plural "s" is
 * dropped and a short list of stop words is ignored.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "standin.h"

#define MAX_WORDS 512
#define WORD_LEN 32

static const char *const stop_words[] = {
	"a", "an", "and", "are", "is", "of", "on", "the", "to", "was", "what", "in", "it",
};

struct words {
	int n;
	char w[MAX_WORDS][WORD_LEN];
};

static bool is_stop(const char *w)
{
	for (size_t i = 0; i < sizeof stop_words / sizeof *stop_words; i++)
		if (!strcmp(w, stop_words[i]))
			return true;
	return false;
}

/* Split text into normalised words (stemmed, stop words dropped; repeats
 * kept when keep_repeats, else a set). Words beyond MAX_WORDS are ignored. */
static void split_words(const char *text, struct words *out, bool keep_repeats)
{
	const unsigned char *p = (const unsigned char *)(text ? text : "");

	out->n = 0;
	while (*p) {
		char w[WORD_LEN];
		size_t len = 0;

		while (*p && !isalnum(*p))
			p++;
		while (*p && isalnum(*p)) {
			if (len < WORD_LEN - 1)
				w[len++] = (char)tolower(*p);
			p++;
		}
		if (!len)
			continue;
		w[len] = '\0';
		if (len > 3 && w[len - 1] == 's' && w[len - 2] != 's')
			w[--len] = '\0';
		if (is_stop(w) || out->n >= MAX_WORDS)
			continue;
		if (!keep_repeats) {
			bool seen = false;
			for (int i = 0; i < out->n && !seen; i++)
				seen = !strcmp(out->w[i], w);
			if (seen)
				continue;
		}
		memcpy(out->w[out->n++], w, len + 1);
	}
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* Case-insensitive "haystack contains needle". */
static bool has(const char *haystack, const char *needle)
{
	return strcasestr(haystack, needle) != NULL;
}

void model_chat_reply(const char *prompt, char *out, size_t size)
{
	const char *q;
	long x, y;
	char op;

	if (!prompt)
		prompt = "";
	/* "What is 12 + 30?": the toy can add, subtract and multiply */
	if ((q = strstr(prompt, "What is ")) && sscanf(q + 8, "%ld %c %ld", &x, &op, &y) == 3 &&
	    (op == '+' || op == '-' || op == '*')) {
		snprintf(out, size, "%ld", op == '+' ? x + y : op == '-' ? x - y : x * y);
		return;
	}
	if (has(prompt, "capital") && has(prompt, "france"))
		snprintf(out, size, "Paris");
	else if (has(prompt, "sky"))
		snprintf(out, size, "Blue");
	else
		snprintf(out, size, "This is a stand-in reply to: %.80s", prompt);
}

const char *model_garbage_reply(void)
{
	return "Paris Paris\xef\xbf\xbd\xef\xbf\xbd<|im_end|>ning ning ning"
	       "\xef\xbf\xbd !!!!!!!!";
}

void model_embed(const char *text, float *vec, size_t dim)
{
	static struct words ws;  /* large; the HTTP server runs on one thread */
	double norm = 0;

	memset(vec, 0, dim * sizeof *vec);
	split_words(text, &ws, true);
	for (int i = 0; i < ws.n; i++) {
		uint64_t h = fnv1a(ws.w[i]);
		vec[h % dim] += (h >> 63) ? -1.0f : 1.0f;
	}
	for (size_t i = 0; i < dim; i++)
		norm += (double)vec[i] * vec[i];
	if (norm == 0) {
		vec[0] = 1.0f;
		return;
	}
	norm = sqrt(norm);
	for (size_t i = 0; i < dim; i++)
		vec[i] = (float)(vec[i] / norm);
}

double model_relevance(const char *query, const char *doc)
{
	static struct words q, d;
	int common = 0;

	split_words(query, &q, false);
	split_words(doc, &d, false);
	if (!q.n || !d.n)
		return 0;
	for (int i = 0; i < q.n; i++)
		for (int j = 0; j < d.n; j++)
			if (!strcmp(q.w[i], d.w[j])) {
				common++;
				break;
			}
	return common / sqrt((double)q.n * d.n);
}

int model_count_tokens(const char *text)
{
	const unsigned char *p = (const unsigned char *)(text ? text : "");
	int n = 0;

	while (*p) {
		if (isalnum(*p)) {
			n++;
			while (isalnum(*p))
				p++;
		} else {
			if (!isspace(*p))
				n++;
			p++;
		}
	}
	return n;
}
