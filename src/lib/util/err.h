/*
 * err.h — the error model (after crun's libcrun_error_t).
 *
 * A function that can fail takes `struct err **err` as its last parameter,
 * returns a negative value (or NULL) and sets *err only on failure. Callers
 * add context with err_wrap() ("render 'thor': open 'x': No such file...").
 * Only main() prints an error. The code is one of the documented exit codes
 * so the outermost caller knows which class of failure it was.
 */
#ifndef LOBES_ERR_H
#define LOBES_ERR_H

#include <stdarg.h>

enum exit_code {
	EXIT_OK = 0,
	EXIT_CHECK = 1,   /* a check found problems */
	EXIT_USAGE = 2,   /* bad command line */
	EXIT_CONFIG = 3,  /* config or environment error (bad data, missing file) */
	EXIT_RUNTIME = 4, /* docker, network, a child process */
	EXIT_INTERNAL = 5,
};

struct err {
	int code;  /* enum exit_code */
	char *msg; /* owned, never NULL */
};

/* Set *err (if err is non-NULL) to a new error; returns -1 for chaining:
 * `return err_set(err, EXIT_CONFIG, "open '%s'", p);` */
int err_set(struct err **err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* As err_set, with ": strerror(errnum)" appended. */
int err_errno(struct err **err, int code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Prefix the message of an existing error with "context: ". No-op when
 * err or *err is NULL. Returns -1. */
int err_wrap(struct err **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void err_free(struct err *e);
static inline void err_freep(struct err **e) { err_free(*e); }
#define _cleanup_err_ __attribute__((cleanup(err_freep)))

/* Allocating printf; aborts on OOM (the only unrecoverable failure). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with a va_list (the caller's va_start/va_end around it). */
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
char *xstrdup(const char *s);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);

#endif
