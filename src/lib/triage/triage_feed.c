/*
 * triage_feed.c — feeding the matcher and noting odd input (see triage.h).
 *
 * a record ends where the next one starts, so the complete lines
 * from the last record start of a feed on are held back (bounded) until
 * the next feed shows whether it continues them; triage_flush() and
 * triage_finish() let them go. A partial last line is carried too, capped
 * at TRIAGE_LINE_CAP (the rest of an overlong line is skipped).
 *
 *
 * Notes: lines with NUL bytes and lines that are not valid UTF-8 are
 * counted (a vector scan for NUL and for bytes >= 0x80 first; only lines
 * holding a high byte are validated); they are matched like any other.
 */
#include <stdlib.h>
#include <string.h>

#include "normalise.h"
#include "triage_int.h"

/* --- input notes ------------------------------------------------------------ */

static bool utf8_valid(const unsigned char *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = p[i];
		size_t k;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			k = 1;
		else if ((c & 0xF0) == 0xE0)
			k = 2;
		else if (c >= 0xF0 && c <= 0xF4)
			k = 3;
		else
			return false;
		if (i + k >= n)
			return false;
		for (size_t j = 1; j <= k; j++)
			if ((p[i + j] & 0xC0) != 0x80)
				return false;
		i += k + 1;
	}
	return true;
}

/* The first byte >= 0x80 in [p, p+n), or NULL. */
static const char *find_high(const char *p, size_t n)
{
	typedef unsigned char v16 __attribute__((vector_size(16)));
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		v16 x;
		memcpy(&x, p + i, 16);
		v16 hi = x & (unsigned char)0x80;
		uint64_t a, b;
		memcpy(&a, &hi, 8);
		memcpy(&b, (char *)&hi + 8, 8);
		if (a | b)
			break;
	}
	for (; i < n; i++)
		if ((unsigned char)p[i] & 0x80)
			return p + i;
	return NULL;
}

/* Lines of [s, s+n) longer than TRIAGE_LINE_CAP (a line the carry cut at
 * the cap was counted when it was cut). From a line start, the last newline
 * within the next TRIAGE_LINE_CAP + 1 bytes is found from the window's end
 * (memrchr: a few bytes back in ordinary text), so a slice of short lines
 * costs one short backward scan per MiB. */
static void scan_long(struct triage *t, const char *s, size_t n)
{
	struct triage_notes *nt = &t->notes;
	const char *p = s, *e = s + n;
	while ((size_t)(e - p) > TRIAGE_LINE_CAP) {
		const char *nl = memrchr(p, '\n', TRIAGE_LINE_CAP + 1);
		if (nl) {
			p = nl + 1;
			continue;
		}
		if (!nt->long_lines++)
			nt->first_long_line = t->nl + count_nl(s, (size_t)(p - s)) + 1;
		nl = memchr(p + TRIAGE_LINE_CAP, '\n', (size_t)(e - p) - TRIAGE_LINE_CAP);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* NUL bytes, invalid UTF-8 and long lines: count the lines, remember the
 * first. */
void scan_notes(struct triage *t, const char *s, size_t n)
{
	struct triage_notes *nt = &t->notes;
	const char *p = s, *e = s + n, *ls, *le;
	scan_long(t, s, n);
	while (p < e && (p = memchr(p, '\0', (size_t)(e - p)))) {
		line_of(s, e, p, &ls, &le);
		if (!nt->nul_lines++)
			nt->first_nul_line = t->nl + count_nl(s, (size_t)(ls - s)) + 1;
		p = le + 1;
	}
	for (p = s; p < e && (p = find_high(p, (size_t)(e - p))); p = le + 1) {
		line_of(s, e, p, &ls, &le);
		if (!utf8_valid((const unsigned char *)ls, (size_t)(le - ls)) && !nt->bad_utf8_lines++)
			nt->first_bad_utf8_line = t->nl + count_nl(s, (size_t)(ls - s)) + 1;
	}
}

/* Where in [p, p+n) (whole lines) a slice may end at or after byte `at`:
 * the start of the first line there that does not continue the line above
 * (at most REC_LINES lines on), or n. */
static size_t record_cut(struct triage *t, const char *p, size_t n, size_t at)
{
	const char *q = memchr(p + at, '\n', n - at);
	for (unsigned k = 0; q && k < REC_LINES; k++) {
		const char *ls = q + 1;
		if (ls >= p + n)
			return n;
		const char *le = memchr(ls, '\n', (size_t)(p + n - ls));
		le = le ? le : p + n;
		const char *pl = memrchr(p, '\n', (size_t)(q - p));
		if (!joins(t, pl ? pl + 1 : p, q, ls, le))
			return (size_t)(ls - p);
		q = le < p + n ? le : NULL;
	}
	return q ? (size_t)(q + 1 - p) : n;
}

/* Match a buffer of whole lines in slices of about SLICE bytes. */
static void scan_lines(struct triage *t, const char *s, size_t n)
{
	while (n > 0) {
		size_t take = n > SLICE ? record_cut(t, s, n, SLICE) : n;
		scan_notes(t, s, take);
		scan_slice(t, s, take);
		s += take;
		n -= take;
	}
}

/* --- feeding ------------------------------------------------------------------- */

/* The start of the last record among the whole lines [p, p+n) when the
 * next input may continue it (its last line is long): the offset to hold
 * back from; n when nothing is worth holding. */
static size_t hold_from(struct triage *t, const char *p, size_t n)
{
	if (!n)
		return 0;
	const char *le = p + n - 1;
	const char *nl = le > p ? memrchr(p, '\n', (size_t)(le - p)) : NULL;
	const char *ls = nl ? nl + 1 : p;
	if (!long_line(t, ls, le))
		return n;
	for (unsigned k = 0; k < REC_LINES; k++) {
		if ((size_t)(p + n - ls) > REC_TAIL)
			return n;
		if (ls == p)
			return 0;
		const char *pe = ls - 1, *pl = pe > p ? memrchr(p, '\n', (size_t)(pe - p)) : NULL;
		pl = pl ? pl + 1 : p;
		if (!joins(t, pl, pe, ls, le))
			return (size_t)(ls - p);
		ls = pl;
		le = pe;
	}
	return n;
}

/* Append to the partial line in the carry; at the cap, match the carry as
 * it is and skip the rest of the line. Returns true when it skipped. */
static bool carry_partial(struct triage *t, const char *p, size_t n)
{
	size_t have = t->carry.len - t->carry_done, room = TRIAGE_LINE_CAP - have;
	if (n < room) {
		buf_add(&t->carry, p, n);
		return false;
	}
	buf_add(&t->carry, p, room);
	scan_lines(t, t->carry.data, t->carry.len);
	if (!t->notes.long_lines++)
		t->notes.first_long_line = t->nl + 1;
	buf_reset(&t->carry);
	t->carry_done = 0;
	t->skipping = true;
	return true;
}

/* Match the held lines now (they start a record of their own). */
static void carry_release(struct triage *t)
{
	if (!t->carry_done)
		return;
	scan_lines(t, t->carry.data, t->carry_done);
	size_t rest = t->carry.len - t->carry_done;
	memmove(t->carry.data, t->carry.data + t->carry_done, rest);
	t->carry.len = rest;
	t->carry.data[rest] = '\0';
	t->carry_done = 0;
}

void triage_feed(struct triage *t, const char *data, size_t len)
{
	if (t->finished || len == 0)
		return;
	/* 1. end the partial line */
	if (t->skipping || t->carry.len > t->carry_done) {
		const char *nl = memchr(data, '\n', len);
		size_t head = nl ? (size_t)(nl - data) + 1 : len;
		if (t->skipping || carry_partial(t, data, head)) {
			if (!nl)
				return;
			t->skipping = false;
			t->nl++;
		} else if (!nl) {
			return;
		} else {
			t->carry_done = t->carry.len;
		}
		data += head;
		len -= head;
	}
	/* 2. held lines: join the continuation lines that start this feed */
	if (t->carry_done) {
		const char *p = data, *e = data + len;
		const char *cl = t->carry.data, *ce = cl + t->carry_done - 1;
		const char *cs = ce > cl ? memrchr(cl, '\n', (size_t)(ce - cl)) : NULL;
		bool prev_long = long_line(t, cs ? cs + 1 : cl, ce);
		bool open = prev_long; /* the record may go on past this feed */
		for (unsigned k = 0; open && p < e; k++) {
			const char *nl = memchr(p, '\n', (size_t)(e - p));
			if (!nl)
				break;
			if (k >= REC_LINES || (size_t)(nl - data) > REC_TAIL || !prev_long ||
			    classify(t, p, nl).kind != NK_CONT) {
				open = false;
				break;
			}
			prev_long = long_line(t, p, nl);
			p = nl + 1;
		}
		open = open && prev_long;
		buf_add(&t->carry, data, (size_t)(p - data));
		t->carry_done = t->carry.len;
		len -= (size_t)(p - data);
		data = p;
		if (open && t->carry.len < 2 * REC_TAIL) {
			carry_partial(t, data, len);
			return;
		}
		carry_release(t);
	}
	/* 3. the rest: match up to the last record start, hold the rest */
	const char *last = len ? memrchr(data, '\n', len) : NULL;
	size_t whole = last ? (size_t)(last - data) + 1 : 0;
	size_t h = hold_from(t, data, whole);
	scan_lines(t, data, h);
	buf_add(&t->carry, data + h, whole - h);
	t->carry_done = t->carry.len;
	if (whole < len)
		carry_partial(t, data + whole, len - whole);
}

void triage_flush(struct triage *t)
{
	if (!t->finished)
		carry_release(t);
}

void triage_finish(struct triage *t)
{
	if (t->finished)
		return;
	t->finished = true;
	if (t->carry.len) {
		t->partial_last = t->carry.len > t->carry_done;
		scan_lines(t, t->carry.data, t->carry.len);
		buf_reset(&t->carry);
		t->carry_done = 0;
	} else if (t->skipping) {
		t->partial_last = true;
	}
	lc_finish(t);
}

uint64_t triage_lines(const struct triage *t)
{
	return t->nl + (t->partial_last ? 1 : 0);
}
