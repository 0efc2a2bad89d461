/*
 * interp.h — compose-style variable interpolation: ${VAR:-default},
 * ${VAR-default}, ${VAR}, ${VAR:?msg}, ${VAR?msg}, $VAR and $$.
 *
 * The values come from a lookup callback (doctor uses the deploy dir's
 * .env, never the process environment). Defaults may nest
 * (${A:-${B:-x}}), at most INTERP_MAX_DEPTH levels: deeper nesting is an
 * error rather than work that grows with the square of the depth (each
 * level rescans its span). Unknown forms are kept as written.
 */
#ifndef LOBES_INTERP_H
#define LOBES_INTERP_H

#define INTERP_MAX_DEPTH 32

/* The value of name, or NULL when unset. Borrowed. */
typedef const char *(*interp_lookup)(const char *name, void *ctx);

/* The interpolated copy of s (caller frees), or NULL with *why (owned)
 * "'${' nested N levels deep at column C; expected at most 32" when a
 * ${...} nests deeper than INTERP_MAX_DEPTH. */
char *interp_compose(const char *s, interp_lookup get, void *ctx, char **why);

#endif
