/*
 * triage_result.c — recording matches and ranking causes (see triage.h).
 *
 * A record's matches are held until the record ends; then the record rules
 * apply: a signature whose descendant (parent chain) matched the same
 * record is dropped, and of several signatures of one family (cause id)
 * only the best fit stays (printed by the log's version, then one that
 * names its versions, then the deepest, then the first defined). Causes
 * are ranked when asked for: see triage_causes().
 */
#include <stdlib.h>
#include <string.h>

#include "triage_int.h"
#include "../util/cleanup.h"

void match_clear(struct triage_match *m)
{
	free(m->text);
	for (size_t i = 0; i < m->n_caps; i++)
		free(m->caps[i].value);
	free(m->caps);
	memset(m, 0, sizeof(*m));
}

static void match_copy(struct triage_match *dst, const struct triage_match *src)
{
	*dst = *src;
	dst->text = xstrdup(src->text);
	dst->caps = src->n_caps ? xcalloc(src->n_caps, sizeof(*dst->caps)) : NULL;
	for (size_t i = 0; i < src->n_caps; i++) {
		dst->caps[i].name = src->caps[i].name;
		dst->caps[i].value = xstrdup(src->caps[i].value);
	}
}

int version_score(const struct triage *t, const struct signature *s)
{
	if (!t->version.n || !s->versions)
		return 1;
	for (char **r = s->versions; *r; r++)
		if (vrange_contains(*r, &t->version))
			return 2;
	return 0;
}

int triage_version_fit(const struct triage *t, const struct signature *s)
{
	int v = version_score(t, s);
	return v == 1 ? -1 : v == 2;
}

static bool ancestor(const struct triage *t, size_t a, size_t b)
{
	for (long p = t->parent[b]; p >= 0; p = t->parent[p])
		if ((size_t)p == a)
			return true;
	return false;
}

/* Whether signature a fits a record better than b of the same family. */
static bool better(const struct triage *t, size_t a, size_t b)
{
	const struct signature *x = &t->set->sigs[a], *y = &t->set->sigs[b];
	int vx = version_score(t, x), vy = version_score(t, y);
	if (vx != vy)
		return vx > vy;
	if (!x->versions != !y->versions)
		return x->versions != NULL;
	if (t->depth[a] != t->depth[b])
		return t->depth[a] > t->depth[b];
	return a < b;
}

static void record(struct triage *t, struct triage_match *m)
{
	size_t i = m->sig_index;
	t->count[i]++;
	if (t->cb)
		t->cb(m, t->opaque);
	bool keep = (t->flags & TRIAGE_KEEP_ALL) != 0;
	if (keep && t->n_all >= TRIAGE_KEEP_MAX) {
		t->dropped++;
		keep = false;
	}
	if (keep) {
		if (t->n_all == t->alloc_all) {
			t->alloc_all = t->alloc_all ? 2 * t->alloc_all : 64;
			t->all = xrealloc(t->all, t->alloc_all * sizeof(*t->all));
		}
		if (!t->has_first[i]) {
			match_copy(&t->all[t->n_all++], m);
		} else {
			t->all[t->n_all++] = *m;
			memset(m, 0, sizeof(*m));
		}
	}
	if (!t->has_first[i]) {
		if (m->sig->severity == SEV_FATAL && t->slice_s && t->rec_start >= t->slice_s)
			m->phase = lc_phase_at(t, t->slice_s, t->rec_start);
		t->first[i] = *m;
		memset(m, 0, sizeof(*m));
		t->has_first[i] = true;
	}
	match_clear(m);
}

static int by_sig(const void *a, const void *b)
{
	const struct triage_match *x = a, *y = b;
	return x->sig_index < y->sig_index ? -1 : x->sig_index > y->sig_index;
}

void record_flush(struct triage *t)
{
	size_t n = t->n_rm;
	if (!n)
		return;
	struct triage_match *rm = t->rm;
	if (n > 1)
		qsort(rm, n, sizeof(*rm), by_sig);
	bool root = false;
	for (size_t r = t->n_roots; r-- > 0 && t->roots[r].line_no >= rm[0].line_no;)
		if (t->roots[r].line_no < rm[0].line_no + rm[0].lines)
			root = true;
	bool *dropped = xcalloc(n, sizeof(bool));
	for (size_t a = 0; a < n; a++) {
		bool drop = false;
		for (size_t b = 0; b < n && !drop; b++) {
			if (a == b)
				continue;
			size_t x = rm[a].sig_index, y = rm[b].sig_index;
			if (ancestor(t, x, y))
				drop = true;
			else if (strcmp(sig_cause_id(rm[a].sig), sig_cause_id(rm[b].sig)) == 0 &&
				 better(t, y, x))
				drop = true;
		}
		dropped[a] = drop;
	}
	for (size_t a = 0; a < n; a++) {
		if (dropped[a]) {
			match_clear(&rm[a]);
			continue;
		}
		rm[a].root = root;
		record(t, &rm[a]);
	}
	free(dropped);
	t->n_rm = 0;
}

void record_root(struct triage *t, uint64_t line_no, const char *text, size_t len)
{
	if (t->n_roots == ROOTS_MAX) {
		free(t->roots[0].text);
		memmove(t->roots, t->roots + 1, (ROOTS_MAX - 1) * sizeof(*t->roots));
		t->n_roots--;
	}
	t->roots[t->n_roots].line_no = line_no;
	t->roots[t->n_roots++].text = tr_capped_copy(text, len, TRIAGE_TEXT_CAP, NULL);
	t->n_roots_total++;
}

/* --- results ---------------------------------------------------------- */

uint64_t triage_count(const struct triage *t, size_t i)
{
	return i < t->set->n ? t->count[i] : 0;
}

const struct triage_match *triage_first(const struct triage *t, size_t i)
{
	return i < t->set->n && t->has_first[i] ? &t->first[i] : NULL;
}

static const struct triage *rank_t; /* qsort has no context argument */
static uint64_t rank_root;          /* the root exception's line (0: none) */

/* A specific signature on the root exception's record: the root's family
 * decides the cause (a generic line there only supports it). */
static bool on_root(const struct triage_match *m)
{
	return rank_root && !m->sig->generic && m->line_no <= rank_root &&
	       rank_root < m->line_no + m->lines;
}

static int rank_cmp(const void *a, const void *b)
{
	const struct triage_match *x = *(const struct triage_match *const *)a;
	const struct triage_match *y = *(const struct triage_match *const *)b;
	if (on_root(x) != on_root(y))
		return on_root(x) ? -1 : 1;
	int vx = version_score(rank_t, x->sig), vy = version_score(rank_t, y->sig);
	if (vx != vy)
		return vy - vx;
	if (x->root != y->root)
		return x->root ? -1 : 1;
	if (x->line_no != y->line_no)
		return x->line_no < y->line_no ? -1 : 1;
	int dx = rank_t->depth[x->sig_index], dy = rank_t->depth[y->sig_index];
	if (dx != dy)
		return dy - dx;
	return x->sig_index < y->sig_index ? -1 : x->sig_index > y->sig_index;
}

size_t triage_causes(const struct triage *t, const struct triage_match **out, size_t max)
{
	size_t n = t->set->n, k = 0;
	const struct triage_match **c = xcalloc(n + 1, sizeof(*c));
	bool specific = false;
	const struct triage_life *L = t->lc.finished ? triage_life(t) : NULL;
	for (size_t i = 0; i < n; i++) {
		if (!t->has_first[i] || t->set->sigs[i].severity != SEV_FATAL)
			continue;
		/* an exception its process survived (a request's error answered
		 * with 400, a retried step) is not what killed anything */
		if (L && lc_survived_surely(&t->lc, t->first[i].line_no))
			continue;
		bool superseded = false;
		for (size_t j = 0; j < n && !superseded; j++)
			superseded = j != i && t->has_first[j] && t->set->sigs[j].severity == SEV_FATAL &&
				     ancestor(t, i, j);
		if (superseded)
			continue;
		c[k++] = &t->first[i];
		specific |= !t->set->sigs[i].generic;
	}
	size_t w = 0;
	for (size_t i = 0; i < k; i++)
		if (!specific || !c[i]->sig->generic)
			c[w++] = c[i];
	rank_t = t;
	rank_root = L && L->fatal && L->root ? L->root->root_line : 0;
	qsort(c, w, sizeof(*c), rank_cmp);
	for (size_t i = 0; i < w && i < max; i++)
		out[i] = c[i];
	free(c);
	return w;
}

const struct triage_match *triage_cause(const struct triage *t)
{
	const struct triage_match *c = NULL;
	return triage_causes(t, &c, 1) ? c : NULL;
}

const struct triage_match *triage_matches(const struct triage *t, size_t *n)
{
	*n = t->n_all;
	return t->all;
}

uint64_t triage_dropped(const struct triage *t)
{
	return t->dropped;
}

size_t triage_unanchored(const struct triage *t)
{
	return t->pf->n_unanchored;
}

size_t triage_roots(const struct triage *t, struct triage_root *out, size_t max)
{
	for (size_t i = 0; i < t->n_roots && i < max; i++)
		out[i] = (struct triage_root){ t->roots[i].line_no, t->roots[i].text };
	return t->n_roots;
}

void triage_get_notes(const struct triage *t, struct triage_notes *n)
{
	*n = t->notes;
}
