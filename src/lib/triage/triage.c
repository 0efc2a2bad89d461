/*
 * triage.c — slices, records and traceback walks (see triage.h; the
 * anchors and the prefilter are in triage_anchor.c, feeding and input
 * notes in triage_feed.c, recording and the cause rules in
 * triage_result.c).
 *
 * Slices: input is processed in slices of whole lines of at most about
 * SLICE bytes, cut where a record starts. The prefilter's hits, the hits of
 * unanchored signatures and the lines holding an ESC byte (their anchors may
 * be split by colour codes; they are looked up again on the normalised
 * record) are visited in position order; each names a line, and the line's
 * record (its first line and the NK_CONT lines after it, at most REC_LINES
 * lines and REC_TAIL bytes of them) is normalised once and matched against
 * the signature (joined by a space, else without a separator).
 *
 * Traceback walks: the header `Traceback (most recent call last)` is an
 * anchor; from it the walk passes frames, code and interleaved INFO/WARNING
 * records (at most TB_LINES lines, across slices) to the first exception
 * line, the traceback's root.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "normalise.h"
#include "triage_int.h"
#include "../util/cleanup.h"


/* --- construction ----------------------------------------------------- */

/* The set's prefilter, built on first use and kept in the set's cache (a
 * cache: what the set means does not change, so a const set may hold it).
 * The lock makes two first triages of one set build it once. */
static const struct prefilter *prefilter_get(const struct sigset *set)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct sigset *cache = (struct sigset *)set;
	pthread_mutex_lock(&lock);
	if (!cache->cache) {
		cache->cache = prefilter_build(set);
		cache->cache_free = prefilter_free;
	}
	const struct prefilter *pf = cache->cache;
	pthread_mutex_unlock(&lock);
	return pf;
}

struct triage *triage_new(const struct sigset *set, unsigned flags)
{
	struct triage *t = xcalloc(1, sizeof(*t));
	t->set = set;
	t->flags = flags;
	t->seen = xcalloc(set->n + 1, sizeof(uint64_t));
	t->lc.last_kind = -1;
	t->count = xcalloc(set->n + 1, sizeof(uint64_t));
	t->first = xcalloc(set->n + 1, sizeof(struct triage_match));
	t->has_first = xcalloc(set->n + 1, sizeof(bool));
	t->parent = xcalloc(set->n + 1, sizeof(long));
	t->depth = xcalloc(set->n + 1, sizeof(int));
	for (size_t i = 0; i < set->n; i++) {
		const struct signature *p = set->sigs[i].parent ? sigset_find(set, set->sigs[i].parent) : NULL;
		t->parent[i] = p ? (long)(p - set->sigs) : -1;
	}
	for (size_t i = 0; i < set->n; i++) /* bounded: sigset_link refuses cycles */
		for (long p = t->parent[i]; p >= 0 && t->depth[i] <= (int)set->n; p = t->parent[p])
			t->depth[i]++;
	buf_init(&t->carry, TRIAGE_LINE_CAP + 4 * REC_TAIL);
	buf_init(&t->rec, TRIAGE_LINE_CAP + 2 * REC_TAIL);
	buf_init(&t->rec_alt, TRIAGE_LINE_CAP + 2 * REC_TAIL);
	uint32_t pairs = 1;
	for (size_t i = 0; i < set->n; i++) {
		uint32_t c = 0;
		if (set->sigs[i].code &&
		    pcre2_pattern_info(set->sigs[i].code, PCRE2_INFO_CAPTURECOUNT, &c) == 0 &&
		    c + 1 > pairs)
			pairs = c + 1;
	}
	t->md = pcre2_match_data_create(pairs, NULL);
	if (!t->md)
		abort();
	t->pf = prefilter_get(set);
	return t;
}

void triage_free(struct triage *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->set->n; i++)
		match_clear(&t->first[i]);
	for (size_t i = 0; i < t->n_all; i++)
		match_clear(&t->all[i]);
	for (size_t i = 0; i < t->n_rm; i++)
		match_clear(&t->rm[i]);
	for (size_t i = 0; i < t->n_roots; i++)
		free(t->roots[i].text);
	free(t->all);
	free(t->rm);
	free(t->first);
	free(t->has_first);
	free(t->count);
	free(t->seen);
	free(t->parent);
	free(t->depth);
	free(t->pend);
	free(t->hits);
	free(t->scratch);
	pcre2_match_data_free(t->md);
	buf_free(&t->carry);
	buf_free(&t->rec);
	buf_free(&t->rec_alt);
	lc_free(t);
	free(t);
}

void triage_set_callback(struct triage *t, triage_cb cb, void *opaque)
{
	t->cb = cb;
	t->opaque = opaque;
}

bool triage_set_version(struct triage *t, const char *v)
{
	struct vversion x;
	if (!vversion_parse(v, &x))
		return false;
	t->version = x;
	t->version_given = true;
	return true;
}

void triage_version(const struct triage *t, char *buf, size_t n)
{
	if (!t->version.n)
		snprintf(buf, n, "%s", "");
	else if (t->version.n == 2)
		snprintf(buf, n, "%d.%d", t->version.part[0], t->version.part[1]);
	else
		snprintf(buf, n, "%d.%d.%d", t->version.part[0], t->version.part[1], t->version.part[2]);
}

/* The record holding the line [ls, le) of the slice [s, e): its first line
 * (not before floor), its end, its number of lines. */
static void rec_bounds(struct triage *t, const char *floor, const char *e, const char *ls,
		       const char *le, const char **rs, const char **re, unsigned *nlines)
{
	for (unsigned back = 0; back < REC_LINES && ls > floor; back++) {
		const char *pe = ls - 1, *pl = memrchr(floor, '\n', (size_t)(pe - floor));
		pl = pl ? pl + 1 : floor;
		if (!joins(t, pl, pe, ls, le))
			break;
		le = pe;
		ls = pl;
	}
	*rs = ls;
	unsigned n = 1;
	while (le < e && n < REC_LINES && (size_t)(le - ls) < TRIAGE_LINE_CAP + REC_TAIL) {
		const char *nl = le + 1, *ne = memchr(nl, '\n', (size_t)(e - nl));
		ne = ne ? ne : e;
		const char *cur = memrchr(ls, '\n', (size_t)(le - ls));
		if (nl == e || !joins(t, cur ? cur + 1 : ls, le, nl, ne))
			break;
		le = ne;
		n++;
	}
	*re = le;
	*nlines = n;
}

/* Normalise the current record into t->rec (and t->rec_alt when joined). */
static void rec_build(struct triage *t)
{
	if (t->rec_built)
		return;
	t->rec_built = true;
	buf_reset(&t->rec);
	buf_reset(&t->rec_alt);
	const char *ls = t->rec_start;
	for (unsigned i = 0; i < t->rec_nlines && ls <= t->rec_end; i++) {
		const char *le = memchr(ls, '\n', (size_t)(t->rec_end - ls));
		le = le ? le : t->rec_end;
		size_t len = (size_t)(le - ls);
		if (len > TRIAGE_LINE_CAP)
			len = TRIAGE_LINE_CAP;
		size_t k = norm_line(ls, len, triage_scratch(t, len), NULL);
		size_t room = t->rec.cap - t->rec.len - 2;
		if (k > room)
			k = room;
		if (i)
			buf_add(&t->rec, " ", 1);
		buf_add(&t->rec, t->scratch, k);
		buf_add(&t->rec_alt, t->scratch, k);
		ls = le + 1;
	}
}

static bool sig_matches(struct triage *t, const struct signature *s, const char *text, size_t len)
{
	if (s->literal)
		return memmem(text, len, s->literal, s->literal_len) != NULL;
	return pcre2_match(s->code, (PCRE2_SPTR)text, len, 0, 0, t->md, NULL) >= 0;
}

/* Try signature si on the current record; a match waits in t->rm until
 * the record ends. */
static void try_sig(struct triage *t, size_t si)
{
	if (si >= t->set->n || t->seen[si] == t->gen)
		return;
	t->seen[si] = t->gen;
	rec_build(t);
	const struct signature *s = &t->set->sigs[si];
	const char *text = buf_str(&t->rec);
	size_t len = t->rec.len;
	if (!sig_matches(t, s, text, len)) {
		if (t->rec_nlines < 2 || !sig_matches(t, s, buf_str(&t->rec_alt), t->rec_alt.len))
			return;
		text = buf_str(&t->rec_alt);
		len = t->rec_alt.len;
	}
	if (t->n_rm == t->alloc_rm) {
		t->alloc_rm = t->alloc_rm ? 2 * t->alloc_rm : 8;
		t->rm = xrealloc(t->rm, t->alloc_rm * sizeof(*t->rm));
	}
	struct triage_match *m = &t->rm[t->n_rm++];
	*m = (struct triage_match){
		.line_no = t->rec_line,
		.sig_index = si,
		.sig = s,
		.lines = t->rec_nlines,
	};
	m->text = tr_capped_copy(text, len, TRIAGE_TEXT_CAP, &m->truncated);
	if (!s->n_captures)
		return;
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(t->md);
	uint32_t pairs = pcre2_get_ovector_count(t->md);
	m->caps = xcalloc(s->n_captures, sizeof(*m->caps));
	for (size_t c = 0; c < s->n_captures; c++) {
		uint32_t g = (uint32_t)s->capture_groups[c];
		if (g >= pairs || ov[2 * g] == PCRE2_UNSET)
			continue;
		m->caps[m->n_caps].name = s->captures[c];
		m->caps[m->n_caps++].value = tr_capped_copy(text + ov[2 * g], ov[2 * g + 1] - ov[2 * g],
							    TRIAGE_CAPTURE_CAP, NULL);
		if (strcmp(s->captures[c], "vllm_version") == 0 && !t->version_given && !t->version.n)
			vversion_parse(m->caps[m->n_caps - 1].value, &t->version);
	}
}

/* A candidate: the line [ls, le) of the slice may match signature si
 * (SIZE_MAX: any; the record's normalised text is looked up again). */
static void candidate(struct triage *t, const char *s, const char *e, const char *ls,
		      const char *le, size_t si)
{
	if (!t->rec_start || ls < t->rec_start || ls > t->rec_end) {
		const char *floor = s;
		if (t->rec_start) {
			record_flush(t);
			floor = t->rec_end + 1;
		}
		const char *rs, *re;
		unsigned n;
		rec_bounds(t, floor, e, ls, le, &rs, &re, &n);
		t->nl += count_nl(t->count_from, (size_t)(rs - t->count_from));
		t->count_from = rs;
		t->rec_start = rs;
		t->rec_end = re;
		t->rec_line = t->nl + 1;
		t->rec_nlines = n;
		t->rec_built = false;
		t->gen++;
	}
	if (si != SIZE_MAX) {
		try_sig(t, si);
		return;
	}
	rec_build(t);
	wm_each(t, buf_str(&t->rec), t->rec.len, try_sig);
	if (t->rec_nlines > 1)
		wm_each(t, buf_str(&t->rec_alt), t->rec_alt.len, try_sig);
}

/* --- traceback walks ------------------------------------------------------- */

/* Walk from p (a line start in [s, e)) to the traceback's root. */
static void tb_walk(struct triage *t, const char *s, const char *e, const char *p)
{
	(void)s;
	while (t->tb_active && p < e) {
		const char *le = memchr(p, '\n', (size_t)(e - p));
		le = le ? le : e;
		if (++t->tb_seen > TB_LINES) {
			lc_tb_abort(t);
			t->tb_active = false;
			break;
		}
		size_t cl = (size_t)(le - p) < CLASSIFY_CAP ? (size_t)(le - p) : CLASSIFY_CAP;
		struct norm k;
		size_t kn = norm_line(p, cl, triage_scratch(t, cl), &k);
		if (k.exception) {
			uint64_t line = line_at(t, p);
			size_t len = (size_t)(le - p) < 4096 ? (size_t)(le - p) : 4096;
			size_t n = norm_line(p, len, triage_scratch(t, len), &k);
			record_root(t, line, t->scratch + k.body, n - k.body);
			lc_tb_root(t, line, t->scratch + k.body, n - k.body, le + 1, e);
			t->tb_active = false;
			break;
		}
		bool pass = k.kind == NK_INDENT || k.kind == NK_BLANK || k.kind == NK_CONT ||
			    k.traceback || k.chained || (k.kind == NK_RECORD && k.quiet_level);
		if (!pass) {
			lc_tb_abort(t);
			t->tb_active = false;
			break;
		}
		lc_tb_line(t, &k, kn);
		p = le + 1;
	}
}

/* --- slices -------------------------------------------------------------------- */

static void pend_add(struct triage *t, size_t off, size_t si)
{
	if (t->n_pend == t->alloc_pend) {
		t->alloc_pend = t->alloc_pend ? 2 * t->alloc_pend : 64;
		t->pend = xrealloc(t->pend, t->alloc_pend * sizeof(*t->pend));
	}
	t->pend[t->n_pend++] = (struct pending){ off, si };
}

static int pend_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->sig < y->sig ? -1 : x->sig > y->sig;
}

/* Lines to look at besides the prefilter's hits, sorted into t->pend: hit
 * lines of unanchored signatures (a short literal by memmem over the slice,
 * a regex tried on every line), and lines with an ESC byte. */
static void scan_extra(struct triage *t, const char *s, size_t n)
{
	t->n_pend = 0;
	for (size_t u = 0; u < t->pf->n_unanchored; u++) {
		size_t si = t->pf->unanchored[u];
		const struct signature *sig = &t->set->sigs[si];
		size_t off = 0;
		while (off < n) {
			const char *ls, *le;
			if (sig->literal) {
				const char *hit = memmem(s + off, n - off, sig->literal, sig->literal_len);
				if (!hit)
					break;
				line_of(s, s + n, hit, &ls, &le);
				pend_add(t, (size_t)(ls - s), si);
			} else {
				ls = s + off;
				le = memchr(ls, '\n', n - off);
				if (!le)
					le = s + n;
				struct norm k;
				size_t len = (size_t)(le - ls) < TRIAGE_LINE_CAP ? (size_t)(le - ls) : TRIAGE_LINE_CAP;
				size_t nn = norm_line(ls, len, triage_scratch(t, len), &k);
				if (pcre2_match(sig->code, (PCRE2_SPTR)t->scratch, nn, 0, 0, t->md, NULL) >= 0)
					pend_add(t, off, si);
			}
			off = (size_t)(le - s) + 1;
		}
	}
	scan_shorts(t, s, n, pend_add);
	for (const char *p = s, *e = s + n; p < e && (p = memchr(p, '\x1b', (size_t)(e - p)));) {
		const char *ls, *le;
		line_of(s, e, p, &ls, &le);
		pend_add(t, (size_t)(ls - s), SIZE_MAX);
		p = le + 1;
	}
	if (t->n_pend > 1)
		qsort(t->pend, t->n_pend, sizeof(*t->pend), pend_cmp);
}

/* Visit the pending lines starting at or before `upto`. */
static size_t flush_pending(struct triage *t, size_t k, const char *s, size_t n, size_t upto)
{
	for (; k < t->n_pend && t->pend[k].off <= upto; k++) {
		const char *ls = s + t->pend[k].off;
		const char *le = memchr(ls, '\n', n - t->pend[k].off);
		candidate(t, s, s + n, ls, le ? le : s + n, t->pend[k].sig);
	}
	return k;
}

/* Match the whole lines in [s, s+n) (the last may lack its newline). */
void scan_slice(struct triage *t, const char *s, size_t n)
{
	const char *e = s + n;
	t->count_from = s;
	t->rec_start = t->rec_end = NULL;
	t->tb_ls = NULL;
	t->slice_s = s;
	t->lc.last_ls = NULL;
	if (t->tb_active)
		tb_walk(t, s, e, s);
	scan_extra(t, s, n);
	size_t k = 0;
	const size_t m = t->pf->m;
	if (m && n >= m) {
		const unsigned char *p = (const unsigned char *)s;
		size_t nh = wm_collect(t, p, m - 1, n);
		for (size_t i = 0; i < nh; i++) {
			const size_t pos = t->hits[i], start = pos + 1 - m;
			const uint32_t h = wm_hash3(p + pos - 2);
			for (uint32_t b = t->pf->bucket[h]; b < t->pf->bucket[h + 1]; b++) {
				const struct anchor *a = &t->pf->anchors[b];
				if (memcmp(p + start, a->win, m) != 0 || !anchor_hit(a, s, e, s + start))
					continue;
				const char *ls, *le;
				line_of(s, e, s + start, &ls, &le);
				k = flush_pending(t, k, s, n, (size_t)(ls - s));
				if (a->sig == t->set->n) {
					if (ls != t->tb_ls &&
					    memmem(ls, (size_t)(le - ls), TB_TEXT, sizeof(TB_TEXT) - 1)) {
						t->tb_active = true;
						t->tb_seen = 0;
						t->tb_ls = ls;
						lc_tb_begin(t, s, e, ls, le);
						tb_walk(t, s, e, le + 1);
					}
				} else if (a->sig > t->set->n) {
					lc_marker(t, s, e, ls, le, a->sig - t->set->n - 1);
				} else {
					candidate(t, s, e, ls, le, a->sig);
				}
			}
		}
	}
	flush_pending(t, k, s, n, n);
	if (t->rec_start)
		record_flush(t);
	if (t->lc.answer_at) {
		t->lc.last_answer = line_at(t, t->lc.answer_at);
		t->lc.answer_at = NULL;
	}
	t->nl += count_nl(t->count_from, (size_t)(e - t->count_from));
	lc_slice_end(t, s, n);
	t->slice_s = NULL;
	t->count_from = NULL;
	t->rec_start = t->rec_end = NULL;
}
