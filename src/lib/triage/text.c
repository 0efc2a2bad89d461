/*
 * text.c — the line helpers every part of the matcher shares (see
 * triage_int.h): counting newlines, capped copies, the line holding a
 * byte, a line's kind and whether it continues the one above. It calls
 * only normalise.c, so the files above it (triage.c, triage_feed.c,
 * lifecycle.c, tail.c, triage_result.c) call down to it and never round.
 */
#include <stdlib.h>
#include <string.h>

#include "normalise.h"
#include "triage_int.h"
#include "../util/cleanup.h"

#define JOIN_MIN 60      /* a line this long (normalised) or longer may be wrapped */

/* --- counting newlines -------------------------------------------------- */

uint64_t count_nl(const char *p, size_t n)
{
	typedef unsigned char v16 __attribute__((vector_size(16)));
	const v16 nl = (v16){ 0 } + '\n';
	uint64_t total = 0;
	while (n >= 16) {
		size_t blocks = n / 16 > 255 ? 255 : n / 16;
		v16 acc = { 0 };
		for (size_t i = 0; i < blocks; i++) {
			v16 x;
			memcpy(&x, p, 16);
			acc -= (v16)(x == nl);
			p += 16;
		}
		n -= blocks * 16;
		for (int j = 0; j < 16; j++)
			total += acc[j];
	}
	while (n--)
		total += *p++ == '\n';
	return total;
}

/* --- lines and records ---------------------------------------------------- */

char *tr_capped_copy(const char *s, size_t len, size_t cap, bool *cut)
{
	if (cut)
		*cut = len > cap;
	if (len > cap) {
		len = cap;
		/* do not cut a UTF-8 sequence in half */
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
	}
	char *d = xcalloc(1, len + 1);
	memcpy(d, s, len);
	return d;
}

/* The line of the slice [s, e) holding p. */
void line_of(const char *s, const char *e, const char *p, const char **ls, const char **le)
{
	const char *a = p > s ? memrchr(s, '\n', (size_t)(p - s)) : NULL;
	*ls = a ? a + 1 : s;
	const char *b = memchr(p, '\n', (size_t)(e - p));
	*le = b ? b : e;
}

char *triage_scratch(struct triage *t, size_t n)
{
	if (n + 1 > t->scratch_size) {
		size_t a = t->scratch_size ? t->scratch_size : 4096;
		while (a < n + 1)
			a *= 2;
		if (a > TRIAGE_LINE_CAP + 1)
			a = TRIAGE_LINE_CAP + 1;
		t->scratch = xrealloc(t->scratch, a); /* nothing in it is kept */
		t->scratch_size = a;
	}
	return t->scratch;
}

struct norm classify(struct triage *t, const char *ls, const char *le)
{
	size_t len = (size_t)(le - ls);
	struct norm info;
	len = len < CLASSIFY_CAP ? len : CLASSIFY_CAP;
	norm_line(ls, len, triage_scratch(t, len), &info);
	return info;
}

/* Whether the line [ls, le) is long enough to have been wrapped. */
bool long_line(struct triage *t, const char *ls, const char *le)
{
	size_t len = (size_t)(le - ls);
	if (len >= CLASSIFY_CAP)
		return true;
	return len >= JOIN_MIN && norm_line(ls, len, triage_scratch(t, len), NULL) >= JOIN_MIN;
}

/* Whether the line [ls, le) continues the line [pls, ple) above it. */
bool joins(struct triage *t, const char *pls, const char *ple, const char *ls, const char *le)
{
	return classify(t, ls, le).kind == NK_CONT && long_line(t, pls, ple);
}
