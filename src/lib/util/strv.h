/*
 * strv.h — NULL-terminated string vectors (char **), freed with strv_free()
 * (cleanup.h). Appending walks the vector: these hold a handful of names.
 */
#ifndef LOBES_STRV_H
#define LOBES_STRV_H

#include <stdbool.h>

/* Append a copy of s to *v (which may be NULL). */
void strv_push(char ***v, const char *s);
/* True when s is one of v's strings (v may be NULL). */
bool strv_has(char *const *v, const char *s);

#endif
