/*
 * vversion.h — vLLM version numbers and the ranges a signature is printed
 * in (`versions: ">=0.11"`, `"<0.11.1"`, `">=0.6,<0.11"`, `"0.4"`; a list
 * of ranges is their union).
 *
 * A version is its first three numeric components: `0.6.1.dev238+ge2c6e0a82`
 * and `0.26.1rc1.dev942+g5a4c8d992` compare as 0.6.1 and 0.26.1 (a
 * pre-release sits with its release: the wording is the release's).
 * A bare `X.Y` in a range without an operator means every X.Y.*.
 */
#ifndef LOBES_VVERSION_H
#define LOBES_VVERSION_H

#include <stdbool.h>

struct vversion {
	int part[3];
	int n; /* components given: 0 = no version */
};

/* Parse the leading version of s (an optional `v`); false when s does not
 * start with digits.digits. */
bool vversion_parse(const char *s, struct vversion *v);
/* -1, 0, 1 over the components both have (a shorter one is a prefix). */
int vversion_cmp(const struct vversion *a, const struct vversion *b);
/* Check a range's syntax; on error *at is the offset of the bad byte. */
bool vrange_valid(const char *range, int *at);
/* Whether v lies in the range (a valid one). */
bool vrange_contains(const char *range, const struct vversion *v);

#endif
