/*
 * triage_helpers.h — what the triage unit tests share: the shipped
 * signatures loaded once per group (setup/teardown), running a signature
 * set over a text, listing its matches, and the verdict and phase of a
 * text read by the structure alone (the empty set `none`), and what a
 * line normalises to.
 */
#ifndef LOBES_TRIAGE_HELPERS_H
#define LOBES_TRIAGE_HELPERS_H

#include "../../src/lib/triage/normalise.h"
#include "../../src/lib/triage/triage.h"

static struct sigset shipped;

static int setup(void **state)
{
	(void)state;
	struct err *e = NULL;
	if (sigset_load(&shipped, NULL, &e) < 0) {
		fprintf(stderr, "# %s\n", e->msg);
		err_free(e);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sigset_free(&shipped);
	return 0;
}

/* Run set over text (fed in pieces of `chunk` bytes; 0 = at once). */
static inline struct triage *run(const struct sigset *set, const char *text, size_t chunk)
{
	struct triage *t = triage_new(set, TRIAGE_KEEP_ALL);
	size_t len = strlen(text);
	if (!chunk)
		chunk = len ? len : 1;
	for (size_t off = 0; off < len; off += chunk)
		triage_feed(t, text + off, len - off < chunk ? len - off : chunk);
	triage_finish(t);
	return t;
}

/* "id@line id@line ..." of every match, in order; caller frees. */
static inline char *summary(const struct triage *t)
{
	size_t n;
	const struct triage_match *m = triage_matches(t, &n);
	char *s = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		char *x = xasprintf("%s%s%s@%llu", s, i ? " " : "", m[i].sig->id,
				    (unsigned long long)m[i].line_no);
		free(s);
		s = x;
	}
	return s;
}

/* No signature: the structure alone. */
static struct sigset none __attribute__((unused));

/* Run set over text and take its verdict into v; the caller frees. */
static inline struct triage *verdict_of(const struct sigset *set, const char *text,
					struct triage_verdict *v)
{
	struct triage *t = run(set, text, 0);
	triage_verdict(t, v);
	return t;
}

/* The structure alone calls log fatal, in phase want. */
static inline void expect_phase(const char *log, enum triage_phase want)
{
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, log, &v);
	if (!v.fatal)
		fail_msg("not fatal:\n%s", log);
	if (v.phase != want)
		fail_msg("phase %s, expected %s:\n%s", triage_phase_name(v.phase), triage_phase_name(want), log);
	triage_free(t);
}

/* Case i: the line in normalises to out. */
static inline void expect_norm(size_t i, const char *in, const char *want)
{
	char out[256];
	struct norm k;
	size_t n = norm_line(in, strlen(in), out, &k);
	out[n] = '\0';
	if (strcmp(out, want))
		fail_msg("case %zu: '%s', expected '%s'", i, out, want);
}

/* A traceback frame under site-packages. */
#define FRAME(path, fn) "  File \"/usr/lib/python3.12/site-packages/" path "\", line 10, in " fn "\n"

#endif
