/*
 * diff.h — unified diffs of small text files (renders, .env), for
 * `init` dry-runs and `render --check`. Line-based LCS; files here are a few
 * hundred lines, so the quadratic table is a few hundred KiB at most.
 */
#ifndef LOBES_DIFF_H
#define LOBES_DIFF_H

#include "../util/buf.h"

/* Append a unified diff (3 lines of context) of a → b to out, with the
 * given labels ("a/x", "b/x"). a may be NULL (a new file: /dev/null).
 * Returns the number of changed lines (0: identical, nothing appended). */
int diff_unified(const char *a, const char *b, const char *label_a, const char *label_b,
		 struct buf *out);

#endif
