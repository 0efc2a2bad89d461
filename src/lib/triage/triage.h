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

/* Where a vLLM run was: before vLLM runs or while it imports (container
 * runtime, a missing library, a caller's API), starting its engine and
 * workers up to the weights loaded, profiling memory (and compiling, in
 * V1), warming up, capturing CUDA graphs, serving. */
enum triage_phase {
	PHASE_UNKNOWN, PHASE_PRESTART, PHASE_LOAD, PHASE_PROFILE, PHASE_WARMUP, PHASE_GRAPH,
	PHASE_SERVING,
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
	enum triage_phase phase;      /* fatal signatures' first match: where the log was */
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

/* --- the lifecycle (lifecycle.c) ---------------------------------------
 *
 * Beside the signatures, the matcher reads the log's lifecycle: which
 * processes speak (from their prefixes: V0's engine and its multiprocessing
 * workers, V1's API server, engine core and workers, Ray actors), each
 * Python traceback (its root exception, the innermost vLLM frame, the
 * traceback it was chained to), the lifecycle markers (startup complete,
 * engine dead, fatal signal, exit codes, container restarts, "Killed"),
 * native deaths (segmentation faults, aborts, "Fatal Python error", NCCL
 * watchdog aborts) and the container runtime's own errors. From them comes
 * a verdict that needs no signature: a log whose engine or worker dies with
 * a traceback, or that never reaches startup complete and ends in an error,
 * is fatal; a traceback the process survives (logged as a warning, followed
 * by startup complete, a request error answered while serving) is not. */

enum triage_proc {
	PROC_NONE,    /* no process prefix (V0's engine, a single-process log) */
	PROC_API,     /* V1's API server */
	PROC_ENGINE,  /* V1's engine core, V0's multiprocessing engine */
	PROC_WORKER,  /* a GPU worker: V0/V1 multiprocessing, Ray's worker wrapper */
	PROC_RAY,     /* another Ray actor or the raylet */
	PROC_OTHER,   /* a prefix of another name */
};

enum triage_event_kind {
	EV_STARTUP,       /* startup complete */
	EV_ENGINE_DEAD,   /* the engine is dead (EngineDeadError, output handler failed) */
	EV_FATAL_SIGNAL,  /* "Got fatal signal from worker processes" */
	EV_ENGINE_FAILED, /* the engine failed to start / a worker failed */
	EV_PROC_DIED,     /* a process died (unexpectedly, with an exit code) */
	EV_EXIT,          /* a container or process exited (code in `code`) */
	EV_RESTART,       /* a container restarted / is crash-looping */
	EV_NATIVE,        /* segmentation fault, abort, core dump, Fatal Python error */
	EV_WATCHDOG,      /* a collective-communication watchdog abort */
	EV_KILLED,        /* killed (the OOM killer, SIGKILL) */
	EV_RUNTIME,       /* the container runtime's error (docker, nvidia-container-cli) */
	EV_SHUTDOWN,      /* the server shuts down (fatal only after an error) */
	EV_BOOT,          /* a (new) boot starts: the run before it ended */
	EV_KINDS
};

#define TRIAGE_PROC_CAP 48

struct triage_event {
	enum triage_event_kind kind;
	uint64_t line_no;
	enum triage_proc proc;
	char proc_name[TRIAGE_PROC_CAP];
	int code;                     /* EV_EXIT: the exit code (-1 unknown) */
	enum triage_phase phase;      /* where the log was when it happened */
	char *text;                   /* the normalised line, capped */
};

/* One Python traceback. */
struct triage_tb {
	uint64_t line_no;             /* its `Traceback (most recent call last):` */
	uint64_t root_line;           /* its exception line; 0 when it has none */
	char *type;                   /* the exception's class ("torch.OutOfMemoryError") */
	char *message;                /* what follows `type: ` ("" when nothing) */
	char *frame;                  /* innermost vLLM frame "vllm/x.py:12 in f" (NULL: none) */
	enum triage_proc proc;
	char proc_name[TRIAGE_PROC_CAP];
	long chained_from;            /* the traceback this one was raised from (-1) */
	bool quiet;                   /* logged at INFO/WARNING/DEBUG level */
	enum triage_phase phase;      /* from its frames, else the log's markers */
	enum triage_phase at;         /* what the log's progress lines said at its header */
	bool request;                 /* its frames handle a request (the API server's serving_*) */
	bool dump;                    /* a stack faulthandler dumped at a native crash (most
				       * recent call first), not a raised exception */
	bool fatal;                   /* set by the verdict */
};

struct triage_life {
	bool fatal;                   /* structurally: a death, or no start and an error at the end */
	enum triage_phase phase;      /* of the fatal event (PHASE_UNKNOWN when not fatal) */
	const struct triage_tb *root; /* the root exception's traceback, or NULL */
	/* the root exception when no traceback carries it (an exception line,
	 * an event): type/message/line_no; type NULL when none */
	const char *root_type, *root_message, *root_frame;
	uint64_t root_line;
	const struct triage_event *death; /* the event that decided, or NULL */
	uint64_t error_line;          /* the log's last line when it ends in an error, else 0 */
	uint64_t startup_line;        /* first startup complete, 0 when none */
	unsigned procs;               /* bit (1 << enum triage_proc) per kind seen */
	/* a log that is not fatal, never reached startup complete and whose
	 * last progress line names a start-up step (pre-start to graph
	 * capture): that step; else PHASE_UNKNOWN. Such a log shows no error,
	 * but it stops before the server was up: a paste cut before a death
	 * reads the same as one cut while a healthy server was starting, so it
	 * is said, not judged (docs/triage.md) */
	enum triage_phase stops_in;
	const struct triage_tb *tbs;
	size_t n_tbs;
	const struct triage_event *events;
	size_t n_events;
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

/* The lifecycle and its verdict; complete after triage_finish() (before
 * it, what was read so far). */
const struct triage_life *triage_life(const struct triage *t);
/* Whether the log is fatal: a fatal cause, or a structural death. */
bool triage_fatal(const struct triage *t);

/* The verdict as an operator reads it: fatal or not, in which phase, the
 * root exception (from the lifecycle; when only a signature says the log
 * is fatal, from the cause's line) and the cause (NULL: no known cause). */
struct triage_verdict {
	bool fatal;
	bool structural;              /* the lifecycle alone says fatal */
	enum triage_phase phase;      /* PHASE_UNKNOWN when not fatal */
	const char *type;             /* the root exception's class (NULL: none named) */
	const char *message;          /* its message (NULL: none, e.g. a traceback cut short) */
	const char *frame;            /* the innermost vLLM frame (NULL: none) */
	uint64_t line;                /* the root exception's line (its traceback's when cut
				       * short, a death's; 0: no root) */
	const char *process;          /* its process kind (NULL: unknown) */
	const struct triage_match *cause;
};
/* Valid until the next call on t or triage_free. */
void triage_verdict(const struct triage *t, struct triage_verdict *v);
const char *triage_phase_name(enum triage_phase p);
const char *triage_proc_kind(enum triage_proc p);
const char *triage_event_name(enum triage_event_kind k);
/* The signal an exit code says a process died of: a shell's or a
 * container runtime's 128 + N (137: SIGKILL, 139: SIGSEGV), Python
 * multiprocessing's -N; "SIGSEGV (a segmentation fault)" and the like, or
 * NULL when the code names no signal (or one lobes does not name). */
const char *triage_exit_signal(int code);

/* Signatures that have no anchor and are found by a full regex scan
 * (slower); for tests and diagnostics. */
size_t triage_unanchored(const struct triage *t);


/* The room's other public pieces: include this header, not them. */
#include "normalise.h"
#include "report.h"
#include "vversion.h"
#endif
