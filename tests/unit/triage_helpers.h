/*
 * triage_helpers.h — what test_triage.c and test_corpus.c both do with the
 * matcher: run a signature set over a text, and list its matches.
 */
#ifndef LOBES_TRIAGE_HELPERS_H
#define LOBES_TRIAGE_HELPERS_H

#include "../../src/lib/triage/triage.h"

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

#endif
