/*
 * measure.h — how fast a role is (bench) and whether two settings answer
 * alike (eval). The library never prints: every result is a jansson object
 * the command prints as text or --json.
 *
 * bench: a load generator on libcurl's multi interface, one thread. Against
 * a generate role it streams /v1/completions (prompts of N words from
 * data/bench/words.txt, max_tokens M, ignore_eos so the output runs to M)
 * and reports the metrics as vLLM's `bench serve` defines them:
 *   TTFT  time from sending a request to its first chunk with choices
 *   TPOT  per request, (E2EL - TTFT) / (output tokens - 1), requests with
 *         more than one output token
 *   ITL   every gap between two successive chunks with choices, all
 *         requests pooled
 *   E2EL  time from sending a request to the end of its stream
 * each as mean, median, p90 and p99 in ms (percentiles by linear
 * interpolation, as numpy's); request throughput (completed / duration),
 * output tokens/s, total tokens/s, and goodput (requests meeting every SLO
 * given, per second). Token counts are the engine's `usage` (stream_options
 * include_usage); a stream without usage is an error ("no-usage"), never a
 * count guessed from the text. Errors are counted by kind: http-NNN,
 * refused, timeout, dropped (the connection closed mid-answer), transport,
 * malformed, no-usage. Against a pooling role (embedder, reranker) each
 * request carries a batch of inputs and the result is requests/s, inputs/s
 * and latency.
 *
 * eval: see eval_compare below.
 */
#ifndef LOBES_MEASURE_H
#define LOBES_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "../util/err.h"

enum bench_kind { BENCH_GENERATE, BENCH_EMBED, BENCH_RERANK };

/* Where the load goes. Strings borrowed. */
struct bench_target {
	const char *label;  /* "cortex", "cortex via gateway", "http://..." */
	const char *origin; /* "http://127.0.0.1:8001" (no trailing slash, no /v1) */
	const char *model;  /* the request's "model" */
	const char *bearer; /* API key or NULL; never in a result */
	enum bench_kind kind;
};

/* Progress of a run, for a bar on a terminal; called from the run's loop. */
typedef void (*bench_progress_fn)(void *cls, size_t done, size_t total, double elapsed_s);

struct bench_opts {
	int input_len;       /* prompt words (generate) or words per input (pooling) */
	int output_len;      /* max_tokens (generate) */
	bool ignore_eos;     /* send ignore_eos: true */
	long requests;       /* stop launching after this many (0: only --duration bounds) */
	double duration_s;   /* stop launching after this long (0: only requests bounds) */
	double rate;         /* mean requests/s, Poisson arrivals; 0: as fast as concurrency allows */
	int concurrency;     /* at most this many in flight (>= 1) */
	int batch;           /* pooling: inputs per request (>= 1) */
	unsigned long seed;  /* prompts and arrivals */
	double timeout_s;    /* one request's bound */
	double slo_ttft_ms, slo_tpot_ms, slo_e2el_ms; /* 0: not set */
	bench_progress_fn progress;
	void *progress_cls;
};

/* The named shape's lengths: balanced 256/256, prompt-heavy 1024/64,
 * decode-heavy 64/512 (words in, tokens out). -1 for an unknown name. */
int bench_shape(const char *name, int *input_len, int *output_len);

/* Run one point (one concurrency, one rate) against t. Network trouble is
 * counted, not an error: returns NULL (EXIT_INTERNAL or EXIT_CONFIG) only
 * when the run cannot be set up. The result: {target, url, model, kind,
 * concurrency, rate, batch?, input_len, output_len, sent, completed, failed,
 * errors{kind: n}, duration_s, input_tokens, output_tokens,
 * request_throughput, output_throughput, total_token_throughput, goodput,
 * ttft_ms/tpot_ms/itl_ms/e2el_ms {mean, median, p90, p99} (generate) or
 * latency_ms and input_throughput (pooling)}; a statistic over no sample
 * is null. */
json_t *bench_run(const struct bench_target *t, const struct bench_opts *o, struct err **err);

/* The prompt of request i: n words from the word list, drawn from seed.
 * Caller frees. */
char *bench_prompt(unsigned long seed, long i, int n, struct err **err);

/* Percentile p (0-100) of v[n] sorted ascending, numpy's linear rule. */
double measure_percentile(const double *sorted, size_t n, double p);

/* The vLLM version an engine reports on GET /version, or NULL (no answer,
 * no version). Caller frees. */
char *measure_engine_version(const char *origin, const char *bearer, double timeout_s);

/* The first model id of origin's GET /v1/models, or NULL with err. */
char *measure_first_model(const char *origin, const char *bearer, double timeout_s, struct err **err);

/* A markdown report of a bench result ({command, box, runs: [...]}, as the
 * bench command builds it): the command, the box, one table per target and
 * an ASCII plot of median TTFT / TPOT (or latency) against concurrency.
 * Caller frees. */
char *bench_report_md(const json_t *result);

/* ---- an engine's speculative decoding (metrics.c) ------------------------ */

/* vLLM's spec-decode counters (vllm:spec_decode_num_drafts_total,
 * _num_draft_tokens_total, _num_accepted_tokens_total), summed over their
 * label sets. present: the engine exposes them (vLLM registers them only
 * with speculative decoding). */
struct spec_counters {
	bool present;
	double drafts, draft_tokens, accepted;
};
/* Read them from Prometheus text (what names it in an error) by the sample
 * names of the engine's vLLM (n: runtime's engine_metric_names_load of the
 * image's recorded metrics.txt): 0, or -1 with err (EXIT_RUNTIME) when the
 * page is malformed, a count is negative, or draft tokens come without
 * accepted ones. No I/O. */
struct engine_metric_names;
int measure_spec_parse(const char *what, const char *text, const struct engine_metric_names *n,
		       struct spec_counters *out, struct err **err);
/* GET origin/metrics and read them; -1 with err (EXIT_RUNTIME). */
int measure_spec_decode(const char *origin, const char *bearer, double timeout_s,
			const struct engine_metric_names *n, struct spec_counters *out,
			struct err **err);
/* What happened between two reads: {drafts, draft_tokens, accepted_tokens,
 * acceptance_rate (accepted / draft tokens), mean_acceptance_length (1 +
 * accepted / drafts)}, a rate null over no draft; JSON null when after has
 * no counters. New reference. */
json_t *measure_spec_delta(const struct spec_counters *before, const struct spec_counters *after);

/* ---- eval ---------------------------------------------------------------- */

/* One side of a comparison. Strings borrowed. */
struct eval_side {
	const char *label;
	const char *origin;
	const char *model;
	const char *bearer;
};

struct eval_opts {
	int top_k;            /* prompt_logprobs k (1-20) */
	const char *reference; /* the reference text (NULL: data/evals/reference.txt) */
	const char *tasks;     /* task set name in data/evals (NULL: synthetic) */
	long max_tasks;        /* 0: all */
	double timeout_s;
	bool answers_only;     /* eval_collect asks only the task set (no prompt_logprobs) */
};

/* Compare a (the baseline) with b: prompt_logprobs on the reference text,
 * then greedy answers to the task set. Returns {a, b, logprobs{...},
 * tasks{...}} or NULL with err (EXIT_RUNTIME when a side does not answer
 * usably, EXIT_CONFIG for bad data). */
json_t *eval_compare(const struct eval_side *a, const struct eval_side *b,
		     const struct eval_opts *o, struct err **err);

/* One side's answers, to compare later with another's: {side, reference,
 * top_k, token_ids, prompt_logprobs, tasks: {set, synthetic, seed, answers:
 * [{id, answer, want}]}} ({side, tasks} with answers_only), or NULL with
 * err as eval_compare. */
json_t *eval_collect(const struct eval_side *s, const struct eval_opts *o, struct err **err);
/* The answers' half of a comparison of two collected runs (a the baseline;
 * answers_only runs do): {a, b, tasks{tasks, accuracy_a, accuracy_b,
 * accuracy_delta, agreement, disagreements, ...}}, or NULL with err. */
json_t *eval_compare_answers(const json_t *a, const json_t *b, struct err **err);
/* The comparison of two collected runs (a the baseline), as eval_compare. */
json_t *eval_compare_runs(const json_t *a, const json_t *b, struct err **err);

/* The pure half: divergence figures of two prompt_logprobs arrays (vLLM's
 * shape) over the same text whose token ids are ids (/tokenize). KL(a || b)
 * per position on the tokens both returned in their top-k, the rest of each
 * distribution as one bucket (a lower bound of the full-vocabulary KLD).
 * Returns {positions, kld_mean, kld_p99, kld_max, same_top (a fraction),
 * dlogp_mean, dlogp_max (|delta log p| of the prompt's token), ppl_a, ppl_b,
 * ppl_ratio (b / a), kld_note} or NULL with err when they do not line up. */
json_t *eval_logprob_figures(const json_t *a, const json_t *b, const json_t *ids, struct err **err);
extern const char *const eval_kld_note;

#endif
