/*
 * vversion.c — vLLM version numbers and ranges (see vversion.h).
 */
#include <stdlib.h>
#include <string.h>

#include "vversion.h"

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Parse up to 3 dotted numbers at s; returns the bytes used (0: none). */
static int parse_at(const char *s, struct vversion *v)
{
	const char *p = s;
	memset(v, 0, sizeof(*v));
	if (*p == 'v')
		p++;
	while (v->n < 3 && is_digit(*p)) {
		long x = 0;
		while (is_digit(*p) && x < 100000)
			x = x * 10 + (*p++ - '0');
		while (is_digit(*p))
			p++;
		v->part[v->n++] = (int)x;
		if (*p != '.' || !is_digit(p[1]))
			break;
		p++;
	}
	if (v->n < 2) {
		v->n = 0;
		return 0;
	}
	return (int)(p - s);
}

bool vversion_parse(const char *s, struct vversion *v)
{
	return parse_at(s, v) > 0;
}

int vversion_cmp(const struct vversion *a, const struct vversion *b)
{
	int n = a->n < b->n ? a->n : b->n;
	for (int i = 0; i < n; i++)
		if (a->part[i] != b->part[i])
			return a->part[i] < b->part[i] ? -1 : 1;
	return 0;
}

/* One constraint at s (`>=0.11`, `0.4`); its end in *end, false when bad. */
static bool constraint(const char *s, const char **end, const struct vversion *v, bool *ok)
{
	const char *p = s;
	while (*p == ' ')
		p++;
	char op[3] = "";
	size_t k = 0;
	while (k < 2 && strchr("<>=!", *p))
		op[k++] = *p++;
	op[k] = 0;
	struct vversion b;
	int used = parse_at(p, &b);
	if (!used || *p == 'v')
		return false;
	p += used;
	while (*p == ' ')
		p++;
	if (*p && *p != ',')
		return false;
	*end = p;
	if (!v || !ok)
		return strcmp(op, "") == 0 || strcmp(op, ">=") == 0 || strcmp(op, "<=") == 0 ||
		       strcmp(op, ">") == 0 || strcmp(op, "<") == 0 || strcmp(op, "==") == 0 ||
		       strcmp(op, "!=") == 0;
	/* compare over the range's components: `<0.11` is below every 0.11.x */
	struct vversion a = *v;
	if (a.n > b.n)
		a.n = b.n;
	int c = vversion_cmp(&a, &b);
	if (!*op || !strcmp(op, "=="))
		*ok = c == 0;
	else if (!strcmp(op, "!="))
		*ok = c != 0;
	else if (!strcmp(op, ">="))
		*ok = c >= 0;
	else if (!strcmp(op, "<="))
		*ok = c <= 0;
	else if (!strcmp(op, ">"))
		*ok = c > 0;
	else
		*ok = c < 0;
	return true;
}

bool vrange_valid(const char *range, int *at)
{
	const char *p = range, *end;
	for (;;) {
		if (!constraint(p, &end, NULL, NULL)) {
			*at = (int)(p - range);
			return false;
		}
		if (!*end)
			return true;
		p = end + 1;
	}
}

bool vrange_contains(const char *range, const struct vversion *v)
{
	const char *p = range, *end;
	for (;;) {
		bool ok = false;
		if (!constraint(p, &end, v, &ok) || !ok)
			return false;
		if (!*end)
			return true;
		p = end + 1;
	}
}
