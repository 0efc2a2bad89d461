/*
 * fuzz.h — shared by the fuzz targets in tests/fuzz/fuzz_<target>.c.
 *
 * A target is one file defining LLVMFuzzerTestOneInput() over one parser of
 * outside input, calling the library the way the program does and freeing
 * everything (leaks are findings). The same file is built twice:
 *   - `make fuzz`: with clang -fsanitize=fuzzer,address,undefined, run for
 *     FUZZ_SECONDS on a copy of tests/fuzz/corpus/<target>/;
 *   - `make test`: with the normal compiler and replay.c's main(), which
 *     feeds every committed seed and crash input once (tests/cases/fuzz.t).
 * To add a target: copy a fuzz_*.c, name it fuzz_<target>.c, commit seeds
 * under tests/fuzz/corpus/<target>/; the Makefile rules pick it up.
 */
#ifndef LOBES_FUZZ_H
#define LOBES_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/util/cleanup.h"
#include "../../src/lib/util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (it may hold NULs itself). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Make a private scratch directory for targets that must go through files
 * (dir receives its path): in /dev/shm when there is one (a disk-backed
 * /tmp makes such targets ten times slower), else $TMPDIR or /tmp. */
static inline void fuzz_mkdtemp(char *dir, size_t size, const char *what)
{
	struct stat st;
	const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : NULL;
	if (!base)
		base = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(dir, size, "%s/lobes-fuzz-%s.XXXXXX", base, what);
	if (!mkdtemp(dir))
		abort();
}

/* An error must carry a message and a documented code. */
static inline void fuzz_check_err(int rc, struct err *e)
{
	if (rc < 0 && (!e || !e->msg || e->code < EXIT_CHECK || e->code > EXIT_INTERNAL))
		abort();
	if (rc >= 0 && e)
		abort();
	err_free(e);
}

#endif
