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
/* The lines of text (NULL: none), each stripped of the white space around
 * it, without blank lines and '#' comment lines, each given to keep, which
 * may shorten it in place and drops it by returning false; a vector that is
 * empty, not NULL, when none is kept. The reader of one-name-a-line lists
 * (the .txt lists under data/vllm/<commit>/, an image's env registry). */
char **strv_lines(const char *text, bool (*keep)(char *line));

#endif
