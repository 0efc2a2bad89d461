/*
 * testutil.h — shared by the cmocka unit tests: includes, and helpers to
 * locate the source tree (LOBES_SRC, set by the Makefile) and fixtures.
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

#define assert_string_contains(hay, needle)                                              \
	do {                                                                              \
		const char *_h = (hay), *_n = (needle);                                   \
		if (!_h || !strstr(_h, _n))                                               \
			fail_msg("expected \"%s\" to contain \"%s\"", _h ? _h : "(null)", _n); \
	} while (0)

#endif
