/*
 * triage_int.h — the matcher's state, shared by its three files:
 * triage_anchor.c (anchors and the Wu-Manber prefilter), triage.c (feeding,
 * slices, records, traceback walks) and triage_result.c (recording matches,
 * the per-record and per-log cause rules, results). Not a public header.
 */
#ifndef LOBES_TRIAGE_INT_H
#define LOBES_TRIAGE_INT_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "triage.h"
#include "vversion.h"
#include "normalise.h"
#include "../util/buf.h"

#define WM_MIN 4          /* shortest anchor the prefilter takes */
#define WM_FAST 10        /* shorter anchors are scanned apart (scan_shorts) */
#define WM_SPLIT 24       /* an anchor this long gets a window in each half */
#define WM_MAX 32         /* longest window */
#define WM_BITS 14
#define WM_TBL (1u << WM_BITS)
#define SLICE ((size_t)4 << 20)
#define REC_LINES 16      /* physical lines a record joins at most */
#define REC_TAIL ((size_t)64 << 10) /* bytes of continuation lines a record joins */
#define TB_LINES 400      /* lines a traceback walk passes at most */
#define ROOTS_MAX 256     /* traceback root lines remembered */

/* The traceback header: a prefilter anchor of its own (sig == set->n). */
#define TB_TEXT "Traceback (most recent call last)"

struct anchor {
	const char *win;    /* the window: m bytes of the anchor (borrowed) */
	size_t sig;         /* signature index; set->n for the traceback header */
	const char *anchor; /* the whole anchor (borrowed) */
	size_t alen;
	size_t woff;        /* offset of the window in the anchor */
};

/* A line to look at outside the prefilter's hits: an unanchored
 * signature's hit (sig), or a line with ANSI escapes (sig == SIZE_MAX). */
struct pending {
	size_t off;
	size_t sig;
};

struct root {
	uint64_t line_no;
	char *text;
};

struct triage {
	const struct sigset *set;
	unsigned flags;
	triage_cb cb;
	void *opaque;
	long *parent;             /* per signature: parent index or -1 */
	int *depth;               /* per signature: length of its parent chain */
	struct vversion version;  /* of the log; n == 0 while unknown */
	bool version_given;       /* from triage_set_version: the banner does not override */

	/* prefilter */
	size_t m;                 /* window length; 0 = no anchored signature */
	uint8_t shift[WM_TBL];
	uint32_t bucket[WM_TBL + 1];
	struct anchor *anchors;
	size_t n_anchors;
	struct anchor *shorts;    /* anchors shorter than WM_FAST */
	size_t n_shorts;
	size_t *unanchored;
	size_t n_unanchored;
	char **owned;
	size_t n_owned;
	pcre2_match_data *md;

	/* slice and record state */
	uint64_t nl;              /* newlines before count_from */
	const char *count_from;
	const char *rec_start, *rec_end; /* the current record in the slice */
	uint64_t rec_line;        /* its first line's number */
	unsigned rec_nlines;
	bool rec_built;
	struct buf rec;           /* its normalised text, lines joined by a space */
	struct buf rec_alt;       /* joined without a separator (terminal wraps) */
	char *scratch;            /* TRIAGE_LINE_CAP bytes for normalising */
	uint64_t gen;
	uint64_t *seen;
	struct triage_match *rm;  /* matches of the current record, not yet recorded */
	size_t n_rm, alloc_rm;
	struct buf carry;         /* held-back lines and a partial line */
	size_t carry_done;        /* bytes of complete lines at the start of carry */
	bool skipping;
	bool finished;
	bool partial_last;
	uint64_t held_lines;      /* newlines in carry[0, carry_done) */

	/* traceback walk */
	bool tb_active;
	unsigned tb_seen;

	/* results */
	uint64_t *count;
	struct triage_match *first;
	bool *has_first;
	struct triage_match *all;
	size_t n_all, alloc_all;
	uint64_t dropped;
	struct root roots[ROOTS_MAX];
	size_t n_roots;
	uint64_t n_roots_total;
	struct pending *pend;
	size_t n_pend, alloc_pend;
	size_t *hits;
	size_t alloc_hits;
	struct triage_notes notes;
};

/* triage_anchor.c */
void build_prefilter(struct triage *t);
size_t wm_collect(struct triage *t, const unsigned char *p, size_t from, size_t to);
/* Whether a window hit at win (in the slice [s, e)) may be its anchor. */
bool anchor_hit(const struct anchor *a, const char *s, const char *e, const char *win);
void scan_shorts(struct triage *t, const char *s, size_t n,
		 void (*add)(struct triage *, size_t, size_t));
uint32_t wm_hash3(const unsigned char *p);
/* Call fn for each signature whose anchor occurs in text[0, n) (small
 * texts: normalised records). */
void wm_each(struct triage *t, const char *text, size_t n, void (*fn)(struct triage *, size_t));

/* triage_result.c */
void match_clear(struct triage_match *m);
/* The matches of the record that ended: apply the record rules, record. */
void record_flush(struct triage *t);
void record_root(struct triage *t, uint64_t line_no, const char *text, size_t len);
int version_score(const struct triage *t, const struct signature *s);

/* triage.c */
char *tr_capped_copy(const char *s, size_t len, size_t cap, bool *cut);
uint64_t count_nl(const char *p, size_t n);
/* The line of the slice [s, e) holding p. */
void line_of(const char *s, const char *e, const char *p, const char **ls, const char **le);
struct norm classify(struct triage *t, const char *ls, const char *le);
bool long_line(struct triage *t, const char *ls, const char *le);
bool joins(struct triage *t, const char *pls, const char *ple, const char *ls, const char *le);
void scan_slice(struct triage *t, const char *s, size_t n);

/* triage_feed.c */
void scan_notes(struct triage *t, const char *s, size_t n);

#endif
