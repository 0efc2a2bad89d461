/*
 * buf.h — a growable byte buffer with a per-instance cap (after curl's
 * dynbuf). Anything fed by the network, a log or a child process goes
 * through a buf so a runaway input fails cleanly at the cap instead of
 * exhausting memory. The content is always NUL-terminated.
 */
#ifndef LOBES_BUF_H
#define LOBES_BUF_H

#include <stddef.h>
#include <stdarg.h>

struct buf {
	char *data;  /* owned; NUL-terminated when non-NULL */
	size_t len;
	size_t alloc;
	size_t cap;  /* maximum len; 0 means the default cap */
};

#define BUF_DEFAULT_CAP ((size_t)64 << 20)

void buf_init(struct buf *b, size_t cap);
/* Append n bytes; returns -1 (and leaves b unchanged) when the cap would be
 * exceeded. */
int buf_add(struct buf *b, const void *p, size_t n);
int buf_adds(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_reset(struct buf *b);
/* Hand the NUL-terminated content out (never NULL); b is reset. */
char *buf_take(struct buf *b);
void buf_free(struct buf *b);
static inline const char *buf_str(const struct buf *b) { return b->data ? b->data : ""; }
#define _cleanup_buf_ __attribute__((cleanup(buf_free)))

#endif
