/* diff.c — LCS line diff printed as unified hunks; see render.h. */
#include <stdbool.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/err.h"
#include "render.h"

struct lines {
	const char **l; /* pointers into the text */
	size_t *len;    /* length without the newline */
	size_t n;
};

static void split(const char *s, struct lines *out)
{
	out->n = 0;
	out->l = NULL;
	out->len = NULL;
	if (!s)
		return;
	size_t cap = 0;
	const char *p = s;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (out->n == cap) {
			cap = cap ? cap * 2 : 64;
			out->l = xrealloc(out->l, cap * sizeof(*out->l));
			out->len = xrealloc(out->len, cap * sizeof(*out->len));
		}
		out->l[out->n] = p;
		out->len[out->n++] = n;
		p += n + (nl ? 1 : 0);
	}
}

static bool eq(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->l[i], b->l[j], a->len[i]) == 0;
}

enum op { OP_EQ, OP_DEL, OP_ADD };
struct edit {
	enum op op;
	size_t ai, bi;
};

int diff_unified(const char *a, const char *b, const char *label_a, const char *label_b,
		 struct buf *out)
{
	struct lines A, B;
	split(a, &A);
	split(b, &B);
	size_t n = A.n, m = B.n;
	/* lcs[i][j] = LCS length of A[i..] and B[j..] */
	unsigned *lcs = xcalloc((n + 1) * (m + 1), sizeof(unsigned));
#define L(i, j) lcs[(i) * (m + 1) + (j)]
	for (size_t i = n; i-- > 0;)
		for (size_t j = m; j-- > 0;)
			L(i, j) = eq(&A, i, &B, j) ? L(i + 1, j + 1) + 1
				  : L(i + 1, j) >= L(i, j + 1) ? L(i + 1, j) : L(i, j + 1);
	struct edit *ed = xcalloc(n + m + 1, sizeof(*ed));
	size_t ne = 0, i = 0, j = 0;
	int changed = 0;
	while (i < n || j < m) {
		if (i < n && j < m && eq(&A, i, &B, j)) {
			ed[ne++] = (struct edit){ OP_EQ, i++, j++ };
		} else if (i < n && (j == m || L(i + 1, j) >= L(i, j + 1))) {
			ed[ne++] = (struct edit){ OP_DEL, i++, j };
			changed++;
		} else {
			ed[ne++] = (struct edit){ OP_ADD, i, j++ };
			changed++;
		}
	}
#undef L
	free(lcs);
	if (changed) {
		buf_printf(out, "--- %s\n+++ %s\n", a ? label_a : "/dev/null", label_b);
		const size_t ctx = 3;
		size_t k = 0;
		while (k < ne) {
			while (k < ne && ed[k].op == OP_EQ)
				k++;
			if (k == ne)
				break;
			/* hunk from k-ctx to the last change followed by < 2*ctx equal lines */
			size_t start = k > ctx ? k - ctx : 0, end = k;
			for (;;) {
				while (end < ne && ed[end].op != OP_EQ)
					end++;
				size_t run = end;
				while (run < ne && ed[run].op == OP_EQ)
					run++;
				if (run < ne && run - end <= 2 * ctx) {
					end = run;
					continue;
				}
				end = end + ctx < ne ? end + ctx : ne;
				break;
			}
			size_t as = 0, bs = 0, ac = 0, bc = 0;
			bool first = true;
			for (size_t x = start; x < end; x++) {
				if (first) {
					as = ed[x].ai;
					bs = ed[x].bi;
					first = false;
				}
				if (ed[x].op != OP_ADD)
					ac++;
				if (ed[x].op != OP_DEL)
					bc++;
			}
			buf_printf(out, "@@ -%zu,%zu +%zu,%zu @@\n", ac ? as + 1 : as, ac, bc ? bs + 1 : bs,
				   bc);
			for (size_t x = start; x < end; x++) {
				const struct edit *e = &ed[x];
				if (e->op == OP_ADD)
					buf_printf(out, "+%.*s\n", (int)B.len[e->bi], B.l[e->bi]);
				else
					buf_printf(out, "%c%.*s\n", e->op == OP_DEL ? '-' : ' ',
						   (int)A.len[e->ai], A.l[e->ai]);
			}
			k = end;
		}
	}
	free(ed);
	free(A.l);
	free(A.len);
	free(B.l);
	free(B.len);
	return changed;
}
