/*
 * yaml_guard.h — a pre-parse check every YAML input passes before libfyaml
 * sees its bytes.
 *
 * The libfyaml that Debian ships spins forever on some malformed inputs (a
 * directive with an invalid octet, alias reference loops, invalid UTF-8 in
 * scalars). lobes' files need none of the YAML features those inputs reach
 * for, so the guard refuses them up front, with a position:
 *
 *   - the text is UTF-8 (a UTF-8 byte order mark is allowed); UTF-16/32 is
 *     named as such; a NUL, a control character or a non-printable code
 *     point (YAML 1.2 c-printable) is refused;
 *   - no directives (`%YAML`, `%TAG`): a `%` starting a line;
 *   - no two '' escapes in a row in a single-quoted scalar (libfyaml 0.7.12
 *     misreads the run and leaks formatting it; double-quote such a value);
 *   - no explicit mapping keys (`? key`: libfyaml 0.7.12 crashes on some);
 *   - no anchors or aliases: `&` or `*` where a YAML node starts (not inside
 *     a quoted or block scalar, a comment, or the middle of a plain scalar);
 *   - at most YAML_GUARD_MAX_BYTES bytes and YAML_GUARD_MAX_DEPTH levels of
 *     nesting (block indentation, `-`/`?` entries and flow brackets).
 *
 * It is a conservative scanner, not a YAML parser: it may refuse an exotic
 * but valid file (a plain scalar continued on a line that starts with `*`),
 * never let a refused feature through.
 */
#ifndef LOBES_YAML_GUARD_H
#define LOBES_YAML_GUARD_H

#include <stddef.h>

#include "err.h"

#define YAML_GUARD_MAX_BYTES ((size_t)16 << 20)
#define YAML_GUARD_MAX_DEPTH 64

/* 0 when text (len bytes, need not be NUL-terminated) may be given to
 * libfyaml; else -1 with *err (EXIT_CONFIG) "NAME:LINE:COLUMN: what; expected
 * what" (1-based, the column counted in characters; without "NAME:" when
 * name is NULL). */
int yaml_guard(const char *name, const char *text, size_t len, struct err **err);

/* The encoding a byte order mark or the NUL pattern of the first bytes
 * names ("UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"), or NULL. Shared by
 * every reader of text files that reports a wrong encoding. */
const char *text_foreign_encoding(const char *text, size_t len);

#endif
