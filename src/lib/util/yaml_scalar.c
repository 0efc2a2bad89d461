/* yaml_scalar.c — scalar text through the token iterator; see yaml_scalar.h. */
#include <string.h>

#include "buf.h"
#include "err.h"
#include "yaml_scalar.h"

struct scalar_text {
	size_t len;
	char s[];
};

static void meta_free(struct fy_node *n, void *meta, void *user)
{
	(void)n;
	(void)user;
	free(meta);
}

const char *yaml_scalar0(struct fy_node *n, size_t *len)
{
	if (!n || !fy_node_is_scalar(n))
		return NULL;
	struct scalar_text *t = fy_node_get_meta(n);
	if (!t) {
		/* the hook frees every copy with the document; -1 when already set */
		fy_document_register_meta(fy_node_document(n), meta_free, NULL);
		struct buf b;
		buf_init(&b, 0);
		struct fy_token_iter *it = fy_token_iter_create(fy_node_get_scalar_token(n));
		if (it) {
			const struct fy_iter_chunk *c = NULL;
			int e = 0;
			while ((c = fy_token_iter_chunk_next(it, c, &e)))
				if (buf_add(&b, c->str, c->len) < 0)
					break;
			fy_token_iter_destroy(it);
		}
		t = xcalloc(1, sizeof(*t) + b.len + 1);
		t->len = b.len;
		if (b.len)
			memcpy(t->s, b.data, b.len);
		buf_free(&b);
		if (fy_node_set_meta(n, t) < 0) {
			free(t);
			return NULL;
		}
	}
	if (len)
		*len = t->len;
	return t->s;
}
