/*
 * interp.c — compose-style interpolation with a nesting bound; see
 * interp.h. The matching '}' of a ${ is found by one scan that also
 * measures the nesting; a span deeper than the bound is refused before any
 * recursion, so the work is at most INTERP_MAX_DEPTH passes over the input.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "fs.h"
#include "interp.h"

static char *interp_at(const char *s, size_t len, interp_lookup get, void *ctx, int level,
		       const char *whole, char **why)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	const char *end = s + len;
	for (const char *p = s; p < end;) {
		if (p[0] != '$' || p + 1 >= end) {
			buf_add(&b, p++, 1);
			continue;
		}
		if (p[1] == '$') {
			buf_adds(&b, "$");
			p += 2;
			continue;
		}
		if (p[1] == '{') {
			/* the matching '}', and how deep the span nests */
			int depth = 0, max = 0;
			const char *q = p + 1;
			for (; q < end; q++) {
				if (*q == '{' && ++depth > max)
					max = depth;
				else if (*q == '}' && --depth == 0)
					break;
			}
			if (level + max > INTERP_MAX_DEPTH) {
				*why = xasprintf("'${' nested more than %d levels deep at column %zu; expected at "
						 "most %d", INTERP_MAX_DEPTH, (size_t)(p - whole) + 1,
						 INTERP_MAX_DEPTH);
				return NULL;
			}
			if (q >= end) {
				buf_add(&b, p, (size_t)(end - p));
				break;
			}
			const char *in = p + 2;
			size_t inl = (size_t)(q - in), nl = 0;
			while (nl < inl && (isalnum((unsigned char)in[nl]) || in[nl] == '_'))
				nl++;
			_cleanup_free_ char *name = xasprintf("%.*s", (int)nl, in);
			const char *op = in + nl;
			size_t opl = inl - nl;
			const char *v = get(name, ctx);
			bool colon = opl >= 2 && op[0] == ':' && op[1] == '-';
			if (colon || (opl >= 1 && op[0] == '-')) {
				const char *def = op + (colon ? 2 : 1);
				if (!v || (colon && !*v)) {
					_cleanup_free_ char *dv = interp_at(def, (size_t)(q - def), get, ctx,
									    level + 1, whole, why);
					if (!dv)
						return NULL;
					buf_adds(&b, dv);
				} else {
					buf_adds(&b, v);
				}
			} else {
				buf_adds(&b, v ? v : ""); /* ${X}, ${X:?msg}, ${X?msg} */
			}
			p = q + 1;
			continue;
		}
		size_t nl = 0;
		while (p + 1 + nl < end && (isalnum((unsigned char)p[1 + nl]) || p[1 + nl] == '_'))
			nl++;
		if (!nl) {
			buf_add(&b, p++, 1);
			continue;
		}
		_cleanup_free_ char *name = xasprintf("%.*s", (int)nl, p + 1);
		const char *v = get(name, ctx);
		buf_adds(&b, v ? v : "");
		p += 1 + nl;
	}
	return buf_take(&b);
}

char *interp_compose(const char *s, interp_lookup get, void *ctx, char **why)
{
	*why = NULL;
	return interp_at(s, strlen(s), get, ctx, 0, s, why);
}
