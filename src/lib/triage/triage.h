/*
 * triage.h — match a (streamed) vLLM log against the signature set.
 *
 * Feed the log in chunks of any size with triage_feed(); lines that span
 * chunks are joined, and line numbers run across chunks. Every match goes to
 * the optional callback as it is found (lines in order); the context keeps,
 * per signature, the count and the first occurrence, the cause (the first
 * non-generic fatal match, else the first fatal), and, with TRIAGE_KEEP_ALL,
 * every match (up to TRIAGE_KEEP_MAX). The library never prints.
 *
 * Lines are normalised before matching (normalise.h): ANSI and the layers
 * around a line (compose, journald, timestamps, Ray/vLLM process prefixes)
 * go, and a record is a line joined with the continuation lines below it
 * (lines that do not start like a record). A match names the record's first
 * line; a record is matched once its next record has started (or at
 * triage_flush / triage_finish). The last exception line of each Python
 * traceback is its root; a match on a root ranks first among causes.
 *
 * Causes: a fatal signature whose descendant (signature `parent:` chain)
 * also matched is not a cause; generic ones only count when nothing else
 * does; then a signature printed by the log's vLLM version (triage_set_version
 * or the banner, a capture named vllm_version) ranks before one that is not,
 * a match on a traceback's root before others, and then the earlier line.
 * On one record only the most specific signature of a parent chain and the
 * best-fitting wording of a family are kept.
 *
 * Speed: each signature contributes anchors (literal runs every matching
 * line must contain). One Wu-Manber scan over large buffers finds anchor
 * hits; only the lines holding a hit are matched against the signature
 * (memmem for literals, PCRE2 with JIT for regexes). Newlines are counted
 * lazily, up to each hit and at the end of each buffer.
 */
#ifndef LOBES_TRIAGE_H
#define LOBES_TRIAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "signatures.h"

#define TRIAGE_TEXT_CAP 1024     /* bytes of a matched line kept */
#define TRIAGE_CAPTURE_CAP 256   /* bytes of a capture kept */
#define TRIAGE_LINE_CAP ((size_t)1 << 20) /* a longer line is matched on its first 1 MiB */
#define TRIAGE_KEEP_MAX 100000   /* matches kept with TRIAGE_KEEP_ALL */

enum triage_flags {
	TRIAGE_KEEP_ALL = 1 << 0, /* keep every match, not just the first per signature */
};

struct triage_capture {
	const char *name; /* borrowed from the signature */
	char *value;      /* owned */
};

struct triage_match {
	uint64_t line_no;             /* 1-based */
	size_t sig_index;             /* into the sigset */
	const struct signature *sig;  /* borrowed from the sigset */
	char *text;                   /* the line (no newline), at most TRIAGE_TEXT_CAP bytes */
	bool truncated;               /* text was cut */
	struct triage_capture *caps;  /* set groups only */
	size_t n_caps;
	unsigned lines;               /* physical lines of the record (1 = not joined) */
	bool root;                    /* the record holds a traceback's root line */
};

/* What was odd about the input (for a note to the operator). */
struct triage_notes {
	uint64_t nul_lines;           /* lines holding NUL bytes */
	uint64_t first_nul_line;
	uint64_t bad_utf8_lines;      /* lines that are not valid UTF-8 */
	uint64_t first_bad_utf8_line;
	uint64_t long_lines;          /* lines longer than TRIAGE_LINE_CAP */
	uint64_t first_long_line;
};

/* A traceback's root: its last exception line. */
struct triage_root {
	uint64_t line_no;
	const char *text;             /* normalised, at most TRIAGE_TEXT_CAP bytes */
};

struct triage;

typedef void (*triage_cb)(const struct triage_match *m, void *opaque);

/* A new matching context over set (borrowed: it must outlive the context).
 * Never fails except on OOM (abort). */
struct triage *triage_new(const struct sigset *set, unsigned flags);
void triage_free(struct triage *t);
static inline void triage_freep(struct triage **t) { triage_free(*t); }
#define _cleanup_triage_ __attribute__((cleanup(triage_freep)))

/* Call cb(match, opaque) for every match as it is found; the match is only
 * valid during the call. */
void triage_set_callback(struct triage *t, triage_cb cb, void *opaque);

/* Match the next len bytes of the log. Complete lines are matched now; a
 * trailing partial line waits for the next feed or triage_finish(). */
void triage_feed(struct triage *t, const char *data, size_t len);
/* End of input: match a last line that has no newline. Idempotent. */
void triage_finish(struct triage *t);
/* Match the complete lines held back for a possible continuation now
 * (a reader that waits for more input calls this when none comes). */
void triage_flush(struct triage *t);

/* The log's vLLM version (e.g. "0.11.1"); false when v is not a version.
 * Set before feeding; the banner then no longer changes it. */
bool triage_set_version(struct triage *t, const char *v);
/* The version in use ("" when unknown) into buf of size n. */
void triage_version(const struct triage *t, char *buf, size_t n);
/* Whether the log's version prints s's wording: 1 yes, 0 no, -1 unknown
 * (no version known, or s names no versions). */
int triage_version_fit(const struct triage *t, const struct signature *s);

/* Lines seen so far (a partial last line counts once finished). */
uint64_t triage_lines(const struct triage *t);
/* How often signature i matched, and its first match (NULL when none). */
uint64_t triage_count(const struct triage *t, size_t i);
const struct triage_match *triage_first(const struct triage *t, size_t i);
/* The cause: the first of triage_causes, or NULL. */
const struct triage_match *triage_cause(const struct triage *t);
/* The causes in rank order (see above), at most max into out; returns how
 * many there are. */
size_t triage_causes(const struct triage *t, const struct triage_match **out, size_t max);
/* Traceback roots in line order (the last ROOTS_MAX kept) and how many
 * tracebacks ended in one. */
size_t triage_roots(const struct triage *t, struct triage_root *out, size_t max);
void triage_get_notes(const struct triage *t, struct triage_notes *n);
/* With TRIAGE_KEEP_ALL: every match in line order (*n set), and how many
 * were not kept past TRIAGE_KEEP_MAX. */
const struct triage_match *triage_matches(const struct triage *t, size_t *n);
uint64_t triage_dropped(const struct triage *t);

/* Signatures that have no anchor and are found by a full regex scan
 * (slower); for tests and diagnostics. */
size_t triage_unanchored(const struct triage *t);

#endif
