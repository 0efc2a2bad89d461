/*
 * engine_metrics.h — what an engine's own GET /metrics says about its load:
 * requests running and waiting, KV-cache usage, prompt and generation token
 * counters, and speculative-decoding (MTP) draft and accepted tokens.
 *
 * Three pieces: a small, strict parser of the Prometheus text exposition
 * format (version 0.0.4, what vLLM's prometheus_client writes; prom_text.c);
 * the names to read, chosen per vLLM version from the families recorded in
 * data/vllm/<folder>/metrics.txt (an image maps to its folder through
 * data/images/); and the scrape itself (libcurl, loopback, bounded time and
 * size). One scrape is one sample of counters; rates come from two samples
 * (engine_rates), the way Prometheus's rate() reads them.
 */
#ifndef LOBES_ENGINE_METRICS_H
#define LOBES_ENGINE_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/err.h"

/* ---- Prometheus text format ---- */

#define PROM_MAX_LABELS 32

/* One sample line. Strings point into the parser's copy of the line and
 * live only during the callback. */
struct prom_sample {
	const char *name;
	size_t n_labels;
	const char *label[PROM_MAX_LABELS]; /* label names */
	const char *value[PROM_MAX_LABELS]; /* unescaped label values */
	double v;                           /* NaN and ±Inf as written */
	bool has_ts;
	long long ts;                       /* milliseconds, when has_ts */
	unsigned line;                      /* 1-based */
};

/* Called for every sample; a negative return stops the parse (its error
 * stands). */
typedef int (*prom_sample_fn)(void *ud, const struct prom_sample *s, struct err **err);

/* Parse text[0..len) (NULs inside are an error). Blank lines and comments
 * are skipped; "# HELP NAME ..." and "# TYPE NAME TYPE" are checked (a
 * metric name; TYPE one of counter, gauge, histogram, summary, untyped).
 * Anything else malformed is EXIT_RUNTIME "WHAT: line L, column C: expected
 * ..." (what names the source, e.g. "engine on port 8001: /metrics").
 * Returns the number of samples, or -1. */
int prom_parse(const char *what, const char *text, size_t len, prom_sample_fn fn, void *ud,
	       struct err **err);

/* ---- the engine's figures ---- */

enum engine_metric {
	EM_RUNNING,           /* gauge: requests in the model's batches */
	EM_WAITING,           /* gauge: requests queued */
	EM_KV_USAGE,          /* gauge: KV-cache usage, 0..1 */
	EM_PROMPT_TOKENS,     /* counter: prompt tokens processed */
	EM_GENERATION_TOKENS, /* counter: tokens generated */
	EM_SPEC_DRAFTS,       /* counter: speculative drafts (spec decoding only) */
	EM_SPEC_DRAFT_TOKENS, /* counter: draft tokens proposed */
	EM_SPEC_ACCEPTED,     /* counter: draft tokens accepted */
	EM__COUNT
};

/* Short name for JSON and tables: "running", "waiting", "kv_usage",
 * "prompt_tokens", "generation_tokens", "spec_drafts", "spec_draft_tokens",
 * "spec_accepted_tokens". */
const char *engine_metric_key(enum engine_metric m);

/* The sample names one vLLM version exposes for each figure. */
struct engine_metric_names {
	char *folder;                /* data/vllm/<folder>/ they were read from */
	char *sample[EM__COUNT];     /* "vllm:prompt_tokens_total"; NULL: this vLLM has none */
};

/* Pick the names from data/vllm/<folder>/metrics.txt: for each figure the
 * first of its known families (newest name first) the version records,
 * with the type the figure needs. A version that records no running,
 * waiting, KV-usage, prompt or generation family is EXIT_CONFIG naming the
 * figure and the file; the spec-decoding ones may be absent. Free with
 * engine_metric_names_free (also on failure). */
int engine_metric_names_load(struct engine_metric_names *n, const char *folder,
			     struct err **err);
void engine_metric_names_free(struct engine_metric_names *n);
/* Which recorded data/vllm/<folder>/ names the figures of an engine running
 * image (a ref; NULL or "" unknown) on port (0: none to ask): the image's
 * own when it is recorded; else the recorded image of the MAJOR.MINOR the
 * engine's GET /version reports; else the newest recorded one. *from says
 * which: "image", "version X" or "assumed". Both caller-freed; NULL when
 * nothing is recorded. */
struct knowledge;
char *engine_metric_folder(const struct knowledge *k, const char *image, int port, long timeout_ms,
			   char **from);

/* One scrape. v[m] is the sum over the engine's label sets (data-parallel
 * engines, one per "engine" label) — the largest for EM_KV_USAGE — and NaN
 * when the figure was not in the scrape (or its version has no name for it).
 * at: CLOCK_MONOTONIC seconds when the answer was read. */
struct engine_sample {
	double v[EM__COUNT];
	double at;
};

/* Read the figures out of a /metrics body. EXIT_RUNTIME for a malformed one
 * (prom_parse's message, prefixed by what). */
int engine_metrics_parse(const char *what, const char *text, size_t len,
			 const struct engine_metric_names *n, struct engine_sample *s,
			 struct err **err);

/* GET http://127.0.0.1:PORT/metrics within timeout_ms (connect included),
 * body at most 16 MiB, then engine_metrics_parse. Nothing listening, a
 * timeout, a non-200 answer or a malformed body is EXIT_RUNTIME "engine on
 * port PORT: /metrics: ...". */
int engine_metrics_scrape(int port, long timeout_ms, const struct engine_metric_names *n,
			  struct engine_sample *s, struct err **err);

/* Rates between two samples of the same engine (prev earlier than cur).
 * A counter that went down (the engine restarted) counts from zero, as
 * Prometheus's rate() does. NaN where a figure is missing from either
 * sample or no time passed. accept is the share of draft tokens accepted
 * over the interval (NaN when none was drafted in it); accept_total the
 * same over the engine's life, from cur alone. */
struct engine_rates {
	double prompt_tps, generation_tps;
	double accept, accept_total;
};
void engine_rates(const struct engine_sample *prev, const struct engine_sample *cur,
		  struct engine_rates *r);

#endif
