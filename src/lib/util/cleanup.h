/*
 * cleanup.h — scope-bound ownership for the whole library.
 *
 * Every owned resource is declared with one of the _cleanup_*_ attributes so
 * that early returns never leak; TAKE_PTR() hands ownership out of a scope
 * (the variable is set to NULL so the cleanup becomes a no-op).
 */
#ifndef LOBES_CLEANUP_H
#define LOBES_CLEANUP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p) { free(*(void **)p); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
static inline void closedirp(DIR **d) { if (*d) closedir(*d); }
static inline void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}
static inline void strv_freep(char ***v) { strv_free(*v); }

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_closedir_ _cleanup_(closedirp)
#define _cleanup_strv_ _cleanup_(strv_freep)

#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
