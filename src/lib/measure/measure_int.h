/*
 * measure_int.h — what the files of measure/ share and nobody else includes:
 * the clock in seconds, summaries of samples, the word list, the one HTTP
 * request helper eval uses.
 */
#ifndef LOBES_MEASURE_INT_H
#define LOBES_MEASURE_INT_H

#include <stddef.h>
#include <jansson.h>

#include "../util/err.h"

/* Monotonic seconds (sub-millisecond; util/clock.h has milliseconds). */
double measure_now(void);

/* {mean, median, p90, p99} of v[n] seconds, in ms (v is sorted in place);
 * every field null when n is 0. */
json_t *measure_summary_ms(double *v, size_t n);

/* The word list of data/bench/words.txt (comments dropped): *n words,
 * pointers into the embedded data. Returns NULL with err when missing. */
const char *const *measure_words(size_t *n, struct err **err);

/* The embedded data file at path ("data/evals/reference.txt"), NUL-
 * terminated, or NULL; *len (may be NULL) its length. */
const char *measure_data(const char *path, size_t *len);

/* POST body (JSON) to origin+path with the bearer, bounded by timeout_s;
 * the response's JSON in *out. Returns the HTTP status, or -1 with err
 * (EXIT_RUNTIME) when no usable JSON answer came. */
long measure_post_json(const char *origin, const char *path, const char *bearer,
		       const json_t *body, double timeout_s, json_t **out, struct err **err);

/* GET origin+path with the bearer, bounded; the body as text in *out
 * (caller frees). Returns the HTTP status, or -1 with err (EXIT_RUNTIME). */
long measure_get_text(const char *origin, const char *path, const char *bearer, double timeout_s,
		      char **out, struct err **err);

#endif
