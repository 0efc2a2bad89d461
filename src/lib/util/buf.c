/* buf.c — capped growable buffer; see buf.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"

void buf_init(struct buf *b, size_t cap)
{
	b->data = NULL;
	b->len = b->alloc = 0;
	b->cap = cap ? cap : BUF_DEFAULT_CAP;
}

int buf_add(struct buf *b, const void *p, size_t n)
{
	size_t cap = b->cap ? b->cap : BUF_DEFAULT_CAP;
	if (n > cap || b->len > cap - n)
		return -1;
	if (b->len + n + 1 > b->alloc) {
		size_t a = b->alloc ? b->alloc : 256;
		while (a < b->len + n + 1)
			a *= 2;
		b->data = xrealloc(b->data, a);
		b->alloc = a;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	int r = buf_add(b, s, (size_t)n);
	free(s);
	return r;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

char *buf_take(struct buf *b)
{
	char *d = b->data ? b->data : xstrdup("");
	b->data = NULL;
	b->len = b->alloc = 0;
	return d;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
}
