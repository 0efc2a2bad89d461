/*
 * metrics.c — the stand-in's (a test double's) load figures, speculative
 * decoding, and its Prometheus GET /metrics, so a measurement of MTP on
 * against off has both sides to see and `lobes top` has an engine to read.
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
 * Load: a streamed answer is a request in the engine from its first frame
 * to its last; up to --max-num-seqs (default 256) of them run, the rest
 * wait. Each holds its prompt and completion tokens in a KV cache of
 * STANDIN_KV_TOKENS tokens (default 65536), so KV usage is the held tokens
 * over that, at most 1. A non-streamed answer is over before /metrics could
 * see it.
 *
 * /metrics speaks Prometheus text as vLLM's prometheus_client does (HELP and
 * TYPE lines, a counter's samples with the "_total" suffix), labelled engine
 * and model_name, with the names of the version the stand-in reports: each
 * figure lists the families vLLM used for it, and the first one that
 * version records (data/vllm/<commit>/metrics.txt, embedded by args.c) is
 * served, with the recorded type; none recorded, none served. The
 * spec-decode counters (vllm/v1/spec_decode/metrics.py) exist only with
 * speculative decoding, as in vLLM.
 */
#include <math.h>
#include <pthread.h>
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

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static long active, held;

void prompt_observe(int prompt_tokens)
{
	if (prompt_tokens > 0)
		S->prompt_tokens += (unsigned long long)prompt_tokens;
}

void stream_begin(long kv)
{
	pthread_mutex_lock(&load_lock);
	active++;
	held += kv;
	pthread_mutex_unlock(&load_lock);
}

void stream_end(long kv)
{
	pthread_mutex_lock(&load_lock);
	active--;
	held -= kv;
	pthread_mutex_unlock(&load_lock);
}

/* One figure: the first family of fams (NULL-ended) the reported version
 * records, written with its recorded type; a counter as NAME_total. */
static void figure(FILE *f, const char *const *fams, const char *help, double v)
{
	char kind[32];

	for (; *fams; fams++) {
		if (!ref_metric_kind(*fams, kind, sizeof kind))
			continue;
		const char *sfx = strcmp(kind, "counter") == 0 ? "_total" : "";
		fprintf(f, "# HELP %s%s %s\n# TYPE %s%s %s\n", *fams, sfx, help, *fams, sfx, kind);
		fprintf(f, "%s%s{engine=\"0\",model_name=\"%s\"} %.17g%s\n", *fams, sfx,
			S->served_name, v, v == floor(v) && fabs(v) < 1e15 ? ".0" : "");
		return;
	}
}

#define FAMS(...) ((const char *const[]){ __VA_ARGS__, NULL })

void api_metrics(struct reply *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	long run, wait, kv;

	if (!f)
		abort();
	pthread_mutex_lock(&load_lock);
	run = active < S->max_num_seqs ? active : S->max_num_seqs;
	wait = active - run;
	kv = held;
	pthread_mutex_unlock(&load_lock);
	figure(f, FAMS("vllm:num_requests_running"), "Number of requests in model execution batches.",
	       (double)run);
	figure(f, FAMS("vllm:num_requests_waiting"), "Number of requests waiting to be processed.",
	       (double)wait);
	figure(f, FAMS("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
	       "KV-cache usage. 1 means 100 percent usage.",
	       kv >= S->kv_tokens ? 1.0 : (double)kv / (double)S->kv_tokens);
	figure(f, FAMS("vllm:prompt_tokens"), "Number of prefill tokens processed.",
	       (double)S->prompt_tokens);
	figure(f, FAMS("vllm:generation_tokens"), "Number of generation tokens processed.",
	       (double)S->gen_tokens);
	if (S->spec_k) {
		figure(f, FAMS("vllm:spec_decode_num_drafts"), "Number of spec decoding drafts.",
		       (double)S->spec_drafts);
		figure(f, FAMS("vllm:spec_decode_num_draft_tokens"), "Number of draft tokens.",
		       (double)S->spec_draft_tokens);
		figure(f, FAMS("vllm:spec_decode_num_accepted_tokens"), "Number of accepted tokens.",
		       (double)S->spec_accepted);
	}
	fclose(f);
	r->status = 200;
	r->text = buf;
}
