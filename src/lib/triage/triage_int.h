/*
 * triage_int.h — the matcher's state, shared by its files, lowest first:
 * normalise.c, text.c (line helpers), phase.c, lifecycle.c and tail.c (the
 * lifecycle reader), verdict.c (the lifecycle's verdict), triage_anchor.c
 * (anchors and the Wu-Manber prefilter), triage_result.c (recording
 * matches, the per-record and per-log cause rules, results), triage.c
 * (slices, records, traceback walks), triage_feed.c (feeding, input
 * notes), verdict_cause.c (the verdict with its cause). A file calls only
 * files before it in that order (tools/check-calls.sh). Not a public
 * header.
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
#define CLASSIFY_CAP 512  /* bytes of a line that decide its kind (text.c) */
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

#define LC_TAIL ((size_t)256 << 10) /* bytes of the log's end kept (tail, phase look-back) */
#define LC_TBS 256        /* tracebacks kept (then the last slot is reused) */
#define LC_EVENTS 512     /* lifecycle events kept */
#define LC_PHASE_SCANS 256 /* events whose phase is looked up by a backward scan */
#define LC_BACK ((size_t)256 << 10) /* bytes a phase look-up goes back at most */

/* The lifecycle reader's state (lifecycle.c). */
struct lifecycle {
	struct triage_tb tbs[LC_TBS];
	size_t n_tbs;
	struct triage_tb cur;     /* the traceback being walked */
	bool cur_open;
	int cur_strong, cur_weak; /* phases its frames named (enum triage_phase) */
	bool chain_open;          /* a chained-exception banner followed the last root */
	uint64_t chain_line;
	struct triage_event *events;
	size_t n_events, alloc_events;
	uint64_t last_death;      /* line of the last fatal event (0 none) */
	uint64_t first_startup, last_startup;
	uint64_t last_answer;     /* the last 4xx/5xx answer the server logged (0 none) */
	const char *answer_at;    /* its line in the slice being scanned, not counted yet */
	unsigned procs;
	const char *last_ls;      /* the last marker line (one event per line and kind) */
	int last_kind;
	char *tail;               /* the last LC_TAIL bytes read, from a line start */
	size_t tail_len, tail_alloc;
	uint64_t tail_first;      /* line number of its first line */
	unsigned phase_scans;
	bool finished;
	uint64_t error_line;      /* the last significant line when it is an error */
	size_t error_off;         /* its offset in tail */
	bool error_shutdown;      /* the server shut down after it */
	uint64_t answered_line;   /* the first HTTP access line of the tail (0 none) */
	char *error_type, *error_message;
	bool error_native;        /* the last line is a native death or a kill */
	struct triage_life life;
	char *root_type, *root_message; /* owned: the root taken from a line */
};

/* The anchors of a signature set and its Wu-Manber tables: built once per
 * set (about 10 ms for the shipped one), kept in the set's cache and shared
 * read-only by every triage of it. */
struct prefilter {
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

	const struct prefilter *pf; /* the set's, shared (prefilter_get) */
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
	char *scratch;            /* for normalising: scratch_size bytes, grown by */
	size_t scratch_size;      /* triage_scratch up to TRIAGE_LINE_CAP + 1 */
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
	const char *slice_s;      /* the slice being scanned (NULL outside one) */
	const char *tb_ls;        /* the header line of the walk (a long one has two windows) */

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
	struct lifecycle lc;
};

/* triage_anchor.c */
struct prefilter *prefilter_build(const struct sigset *set);
void prefilter_free(void *pf);
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

/* text.c (calls only normalise.c) */
char *tr_capped_copy(const char *s, size_t len, size_t cap, bool *cut);
uint64_t count_nl(const char *p, size_t n);
/* The line of the slice [s, e) holding p. */
void line_of(const char *s, const char *e, const char *p, const char **ls, const char **le);
/* t->scratch, grown to hold a line of n bytes normalised (n at most
 * TRIAGE_LINE_CAP). It starts at 4 KiB: a 1 MiB buffer made and zeroed
 * for every triage was most of the cost of a short log. */
char *triage_scratch(struct triage *t, size_t n);
struct norm classify(struct triage *t, const char *ls, const char *le);
bool long_line(struct triage *t, const char *ls, const char *le);
bool joins(struct triage *t, const char *pls, const char *ple, const char *ls, const char *le);
/* triage.c */
void scan_slice(struct triage *t, const char *s, size_t n);

/* lifecycle.c */
#define LC_MARKERS lc_marker_count()
size_t lc_marker_count(void);
/* The text of lifecycle marker k (an anchor of at least WM_FAST bytes). */
const char *lc_marker_text(size_t k);
/* A marker's window hit on the line [ls, le) of the slice [s, e). */
void lc_marker(struct triage *t, const char *s, const char *e, const char *ls, const char *le, size_t k);
/* A traceback header on the line [ls, le) of the slice [s, e). */
void lc_tb_begin(struct triage *t, const char *s, const char *e, const char *ls, const char *le);
/* A line the walk passes (normalised in t->scratch, classified as k). */
void lc_tb_line(struct triage *t, const struct norm *k, size_t len);
/* The walk reached the root (normalised text); p is the next line's start
 * in the slice [s, e) (chained banners are looked for there). */
void lc_tb_root(struct triage *t, uint64_t line, const char *text, size_t len, const char *p,
		const char *e);
/* The walk ended without a root. */
void lc_tb_abort(struct triage *t);
/* The end of a slice: keep its tail. */
void lc_slice_end(struct triage *t, const char *s, size_t n);
void lc_finish(struct triage *t);
/* A frame line `File "p", line N, in f` (m[0, n), after the level header):
 * *frame becomes its vLLM frame when its path is under vllm/, *strong /
 * *weak the phase its function names. False when m is not a frame. */
bool lc_frame(const char *m, size_t n, char **frame, int *strong, int *weak, bool *request);
/* A frame as IPython and Colab print it (`/x/vllm/utils.py in inner(*args)`,
 * `[/x/vllm/llm.py](https://...) in __init__(self, ...)`): as lc_frame. */
bool lc_ipy_frame(const char *m, size_t n, char **frame, int *strong, int *weak);
/* A frame's code line m[0, n) (`    engine_core.run_busy_loop()`): the
 * phase of the function it calls, as lc_frame's for a frame — the call a
 * paste cut after its last frame was making. */
void lc_code_call(const char *m, size_t n, int *strong, int *weak);
void lc_split_exception(const char *text, size_t len, char **type, char **message);
void lc_tb_clear(struct triage_tb *tb);
/* Keep tb (taking its fields) in line order. */
void lc_add_tb(struct triage *t, struct triage_tb *tb);
enum triage_proc lc_line_proc(struct triage *t, const char *ls, const char *le, char *name);
/* The phase of the log at p (a line start in the slice starting at s):
 * the last progress line before it (for the first LC_PHASE_SCANS calls). */
enum triage_phase lc_phase_at(struct triage *t, const char *s, const char *p);
/* A traceback's phase: its frames' (strong), its message's (msg, may be
 * NULL), the log's progress lines' (marker), then what a message names
 * that can happen in any phase (a caller's unexpected argument), then a
 * frame's that other phases call too (weak). */
enum triage_phase lc_tb_phase(int strong, const char *msg, enum triage_phase marker, int weak);
/* tail.c: read the kept tail at the end of the input. */
/* The offset of an exception token in m[0, n) (`pkg.NameError: `), or -1. */
long lc_find_exception(const char *m, size_t n);
void lc_read_tail(struct triage *t);
/* An event found outside the prefilter (the tail, verdict.c). */
void lc_add_event(struct triage *t, enum triage_event_kind kind, uint64_t line, const char *ls,
		  const char *le, enum triage_phase phase);
/* The phase of a failure at line: serving once startup had completed
 * before it, else ph (load when unknown). verdict.c */
enum triage_phase lc_phase_of(const struct lifecycle *lc, uint64_t line, enum triage_phase ph);
/* Whether line lies in a traceback its process is known to have survived
 * (after triage_life has judged the tracebacks): not fatal, and logged as
 * a warning, a stop, a request's, or followed by the server answering a
 * request with an error status. (A failed start followed by a start that
 * completed keeps its signatures: the failure is still reported.)
 * verdict.c */
bool lc_survived_surely(const struct lifecycle *lc, uint64_t line);
/* The phase the last progress line in [lo, p) names. */
enum triage_phase lc_phase_back(const char *lo, const char *p);
void lc_free(struct triage *t);
/* The line number of p in the current slice. */
uint64_t line_at(const struct triage *t, const char *p);

/* triage_feed.c */
void scan_notes(struct triage *t, const char *s, size_t n);

#endif
