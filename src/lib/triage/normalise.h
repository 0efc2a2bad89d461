/*
 * normalise.h — what a log line says once the layers around it are gone.
 *
 * Operators paste logs through several layers, each adding its own bytes to
 * every physical line: ANSI colour (also with the ESC byte lost in a paste,
 * `[1;36m`), docker compose's `service-1  | `, journald's `Aug 19 18:30:11
 * host ident[pid]: `, ISO/CI/cloud-logging timestamps (`[2025-03-10T15:07:20Z]`,
 * `2025-...Z stdout F `), kubectl's `[pod/x/c] `, and Ray/vLLM process
 * prefixes (`(RayWorkerWrapper pid=1, ip=10.0.0.1) `, `(EngineCore_DP0
 * pid=77) `). norm_line() removes them and classifies what is left:
 *
 *   NK_RECORD  starts a log record: a level header (vLLM `ERROR 11-18
 *              18:07:28 [core.py:1] `, uvicorn `INFO:  `, glog, NCCL),
 *              `Traceback (most recent call last):`, a Python exception
 *              line (`torch.OutOfMemoryError: ...`), chained-exception
 *              banners, `[...]` or `{...}` records;
 *   NK_INDENT  starts with white space (a traceback frame or code line);
 *   NK_BLANK   nothing left;
 *   NK_CONT    anything else: the continuation of the record above (a
 *              terminal wrap, a message with a newline in it).
 *
 * The library does not decide what a record is beyond this; triage joins a
 * record with its NK_CONT lines.
 */
#ifndef LOBES_NORMALISE_H
#define LOBES_NORMALISE_H

#include <stdbool.h>
#include <stddef.h>

enum norm_kind { NK_RECORD, NK_CONT, NK_INDENT, NK_BLANK };

struct norm {
	enum norm_kind kind;
	size_t body;       /* offset in out of the message after a level header */
	bool exception;    /* the message is a Python exception line */
	bool traceback;    /* the message is `Traceback (most recent call last):` */
	bool chained;      /* `During handling ...` / `The above exception ...` */
	bool quiet_level;  /* the level header is INFO, DEBUG or WARNING */
};

/* Normalise the line s[0, n) (no newline) into out, which must hold n
 * bytes: ANSI sequences out, leading layers out, a trailing CR out. Returns
 * the length written; *info (may be NULL) gets the classification. */
size_t norm_line(const char *s, size_t n, char *out, struct norm *info);

/* Strip the layers only (no ANSI pass; s may equal nothing special): the
 * offset in s where the message starts. For classification of raw lines
 * without copying when s has no ESC byte. */
size_t norm_prefix_len(const char *s, size_t n);

/* The process prefix of the raw line s[0, n) under any other layer
 * (`(EngineCore_DP0 pid=7) `, `(RayWorkerWrapper pid=1, ip=...) `,
 * `(raylet) `): its name into name (cap bytes; "pid" for a bare `(pid=N)`).
 * Returns false (name "") when the line has none. */
bool norm_process(const char *s, size_t n, char *name, size_t cap);

#endif
