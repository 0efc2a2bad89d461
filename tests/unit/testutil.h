/*
 * testutil.h — shared by the cmocka unit tests: includes, helpers to
 * locate the source tree (LOBES_SRC, set by the Makefile) and fixtures, and
 * what every fake engine or server needs (a unix listener, accepting a
 * connection with its request head read, sending all of an answer).
 * Tests print TAP (CMOCKA_MESSAGE_OUTPUT=TAP) and are run by prove.
 */
#ifndef LOBES_TESTUTIL_H
#define LOBES_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../src/lib/util/cleanup.h"
#include "../../src/lib/util/err.h"

/* "<LOBES_SRC>/<rel>" (LOBES_SRC defaults to "."); caller frees. */
static inline char *src_path(const char *rel)
{
	const char *s = getenv("LOBES_SRC");
	return xasprintf("%s/%s", s && *s ? s : ".", rel);
}

/* "<LOBES_BUILD>/<rel>"; caller frees. */
static inline char *build_path(const char *rel)
{
	const char *s = getenv("LOBES_BUILD");
	return xasprintf("%s/%s", s && *s ? s : "build", rel);
}

/* The message of the error e, which must be set and carry the exit code
 * code; e is freed, the message is the caller's to free. */
static inline char *test_err_msg(struct err *e, int code)
{
	assert_non_null(e);
	assert_int_equal(e->code, code);
	char *m = xstrdup(e->msg);
	err_free(e);
	return m;
}

/* A unix stream socket bound to path and listening (close-on-exec); -1 if
 * any step fails. */
static inline int test_listen_unix(const char *path, int backlog)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, backlog) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send all n bytes, or stop where the peer went away (a fake engine does
 * not care: the client under test sees what arrived). */
static inline void test_send_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	while (n > 0) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Accept one connection on the listening socket lfd and read its request
 * head into req (up to the blank line, or cap - 1 bytes, or the peer's
 * close; always NUL-terminated). Returns the connection, or -1 once lfd is
 * shut down (the fake engine's thread then ends). */
static inline int test_accept_head(int lfd, char *req, size_t cap)
{
	int c = accept(lfd, NULL, NULL);
	if (c < 0)
		return -1;
	size_t n = 0;
	req[0] = '\0';
	while (n < cap - 1) {
		ssize_t r = read(c, req + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		req[n] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	return c;
}

#define assert_string_contains(hay, needle)                                              \
	do {                                                                              \
		const char *_h = (hay), *_n = (needle);                                   \
		if (!_h || !strstr(_h, _n))                                               \
			fail_msg("expected \"%s\" to contain \"%s\"", _h ? _h : "(null)", _n); \
	} while (0)

#endif
