/*
 * metrics.c — the stand-in's (a test double's) speculative decoding and its
 * Prometheus GET /metrics, so a measurement of MTP on against off has both
 * sides to see.
 *
 * Model: an MTP --speculative-config ({"method": "mtp"...} with
 * num_speculative_tokens k, default 1) makes each decode step propose k
 * draft tokens of which a share A (STANDIN_MTP_ACCEPT, default 0.7, held in
 * [0, 1]) is accepted, so one step yields 1 + k*A tokens on average: the
 * spacing of streamed tokens, STANDIN_TOKEN_MS, is divided by 1 + k*A
 * (rounded). The answers are the same (greedy speculative decoding is
 * lossless). Each finished generation of n tokens counts
 * ceil(n / (1 + k*A)) drafts, k draft tokens per draft, and the accepted
 * count is kept at floor(A * draft tokens) over the engine's life, so the
 * counters' ratio is A to within one token.
 *
 * /metrics speaks Prometheus text as vLLM's prometheus_client does: counter
 * vllm:generation_tokens_total always; with speculative decoding the
 * spec-decode counters vLLM registers in vllm/v1/spec_decode/metrics.py
 * (SpecDecodingProm: vllm:spec_decode_num_drafts, _num_draft_tokens,
 * _num_accepted_tokens, exposed with the client's "_total" suffix), labelled
 * engine and model_name. Without it vLLM registers none of them, and
 * neither does the stand-in.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "standin.h"

int spec_tokens(const char *speculative)
{
	json_t *j = speculative ? json_loads(speculative, 0, NULL) : NULL;
	const char *m = json_string_value(json_object_get(j, "method"));
	json_t *k = json_object_get(j, "num_speculative_tokens");
	int n = 0;

	if (m && strstr(m, "mtp"))
		n = json_is_integer(k) && json_integer_value(k) > 0 && json_integer_value(k) <= 16
			    ? (int)json_integer_value(k)
			    : 1;
	json_decref(j);
	return n;
}

void spec_setup(struct standin *s, const char *speculative)
{
	s->spec_k = spec_tokens(speculative);
	if (!s->spec_k)
		return;
	s->spec_accept = env_double("STANDIN_MTP_ACCEPT", 0.7);
	if (!(s->spec_accept >= 0))
		s->spec_accept = 0;
	if (s->spec_accept > 1)
		s->spec_accept = 1;
	s->token_ms = lround((double)s->token_ms / (1 + s->spec_k * s->spec_accept));
	s->spec_drift = env_double("STANDIN_MTP_DRIFT", 0);
	if (!(s->spec_drift >= 0))
		s->spec_drift = 0;
	if (s->spec_drift > 1)
		s->spec_drift = 1;
}

void spec_drift(const char *prompt, char *text, size_t size)
{
	unsigned long h = 2166136261u; /* FNV-1a of the prompt */

	if (!S->spec_k || S->spec_drift <= 0)
		return;
	for (const unsigned char *p = (const unsigned char *)prompt; *p; p++)
		h = ((h ^ *p) * 16777619u) & 0xffffffffu;
	if ((double)(h % 1000) >= S->spec_drift * 1000)
		return;
	size_t n = strlen(text);
	if (n + 9 > size)
		return;
	memmove(text + 8, text, n + 1);
	memcpy(text, "Perhaps ", 8);
}

void spec_observe(int completion_tokens)
{
	if (completion_tokens <= 0)
		return;
	S->gen_tokens += (unsigned long long)completion_tokens;
	if (!S->spec_k)
		return;
	unsigned long long drafts =
		(unsigned long long)ceil(completion_tokens / (1 + S->spec_k * S->spec_accept));
	S->spec_drafts += drafts;
	S->spec_draft_tokens += drafts * (unsigned long long)S->spec_k;
	S->spec_accepted = (unsigned long long)floor(S->spec_accept * (double)S->spec_draft_tokens);
}

static void counter(FILE *f, const char *name, const char *help, unsigned long long v)
{
	fprintf(f, "# HELP %s_total %s\n# TYPE %s_total counter\n", name, help, name);
	fprintf(f, "%s_total{engine=\"0\",model_name=\"%s\"} %llu.0\n", name, S->served_name, v);
}

void api_metrics(struct reply *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	counter(f, "vllm:generation_tokens", "Number of generation tokens processed.",
		S->gen_tokens);
	if (S->spec_k) {
		counter(f, "vllm:spec_decode_num_drafts", "Number of spec decoding drafts.",
			S->spec_drafts);
		counter(f, "vllm:spec_decode_num_draft_tokens", "Number of draft tokens.",
			S->spec_draft_tokens);
		counter(f, "vllm:spec_decode_num_accepted_tokens",
			"Number of accepted tokens.", S->spec_accepted);
	}
	fclose(f);
	r->status = 200;
	r->text = buf;
}
