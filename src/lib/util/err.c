/*
 * err.c — error construction and wrapping; allocation helpers that treat OOM
 * as fatal (a CLI cannot meaningfully continue without memory).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static _Noreturn void oom(void)
{
	abort();
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		oom();
	return d;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);
	if (!q)
		oom();
	return q;
}

static int set(struct err **err, int code, char *msg)
{
	if (!err) {
		free(msg);
		return -1;
	}
	err_free(*err);
	struct err *e = xcalloc(1, sizeof(*e));
	e->code = code;
	e->msg = msg;
	*err = e;
	return -1;
}

int err_set(struct err **err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	return set(err, code, m);
}

int err_errno(struct err **err, int code, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	char *full = xasprintf("%s: %s", m, strerror(errnum));
	free(m);
	return set(err, code, full);
}

int err_wrap(struct err **err, const char *fmt, ...)
{
	if (!err || !*err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *ctx = xvasprintf(fmt, ap);
	va_end(ap);
	char *full = xasprintf("%s: %s", ctx, (*err)->msg);
	free(ctx);
	free((*err)->msg);
	(*err)->msg = full;
	return -1;
}

void err_free(struct err *e)
{
	if (!e)
		return;
	free(e->msg);
	free(e);
}
