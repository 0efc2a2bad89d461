/*
 * parse.h — internal to src/lib/knowledge: the strict YAML walking helpers
 * (ynode.c) and the shared sub-schemas (subschema.c) used by the per-kind
 * parsers (card.c, trait.c, profile.c, images.c), and what the loader
 * (load.c) and the cross-checks (check.c) need of those parsers.
 *
 * Every helper that finds a problem sets *err to EXIT_CONFIG with
 * "FILE:LINE:COL: what is wrong; expected WHAT", LINE:COL being the 1-based
 * position of the offending node (or of its key when the value is empty).
 */
#ifndef LOBES_KNOWLEDGE_PARSE_H
#define LOBES_KNOWLEDGE_PARSE_H

#include <libfyaml.h>

#include "knowledge.h"

struct pctx {
	const char *file; /* name used in messages */
	bool operator;
};

/* A mapping value together with its key (the key gives a position when
 * the value is empty). val NULL: the key is absent. */
struct yval {
	struct fy_node *key, *val;
};

/* The position of n (or fallback, else 1:1; yaml_node_pos) as an entry
 * keeps it. */
void pos_set(struct src_pos *p, const struct pctx *c, struct fy_node *n, struct fy_node *fallback);
void pos_free(struct src_pos *p);
/* Error at n (or fallback): "FILE:L:C: <fmt>". Returns -1. */
int perr(const struct pctx *c, struct fy_node *n, struct fy_node *fallback, struct err **err,
	 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Error at a kept position (a cross-reference found after parsing):
 * "FILE:L:C: <fmt>". Returns -1. */
int pos_err(const struct src_pos *p, struct err **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* True for a missing node or a plain null scalar (empty, ~, null). */
bool ynull(struct fy_node *n);

/* Check a mapping: n must be a mapping (else "'<name>' is ..., expected a
 * mapping"), every key a scalar from keys[] (NULL-terminated; an unknown
 * one is "unknown <noun> 'x' in <where>") and no key twice. `where` names
 * the mapping in messages ("a card", "'detect'"). */
int map_check(const struct pctx *c, struct fy_node *n, struct fy_node *nkey, const char *name,
	      const char *where, const char *noun, const char *const *keys, struct err **err);
struct yval map_find(struct fy_node *m, const char *key);
/* "missing 'key' in WHERE; expected EXPECT" at the mapping m. */
int missing(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *key,
	    const char *where, const char *expect, struct err **err);

/* Scalar text of v (NULL when absent or null). Non-scalars are an error
 * naming `name`. *out is borrowed from the document. */
int ytext(const struct pctx *c, struct yval v, const char *name, const char **out, struct err **err);
/* As ytext, copied; required: a missing/null value is an error. */
int ystr(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *key,
	 const char *where, bool required, const char *expect, char **out, struct err **err);
/* One of the words in `allowed` (NULL-terminated). */
int yenum(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *key,
	  const char *where, bool required, const char *const *allowed, char **out, struct err **err);
/* A sequence of distinct non-empty scalars; absent → *out NULL. With pos,
 * one position per entry is returned too. check (may be NULL) validates
 * each entry; a failing one is "<bad> 'x' in '<name>'; expected <expect>".
 * An empty sequence is an error unless allow_empty. */
int ystrv(const struct pctx *c, struct yval v, const char *name, bool allow_empty,
	  bool (*check)(const char *), const char *bad, const char *expect, char ***out,
	  struct src_pos **pos, struct err **err);
/* "a or b", "a, b or c" from a NULL-terminated list; caller frees. */
char *join_or(const char *const *words);
/* "a, b, c"; caller frees. */
char *join_comma(const char *const *words);
/* Short description of a node's type for messages: "a mapping", "empty"… */
const char *node_kind(struct fy_node *n);
/* A valid knowledge name: non-empty, no '/', no "..", no spaces. */
bool name_ok(const char *s);
/* An upper-case identifier: a capital, then capitals, digits and '_'
 * (attention backends, environment variable names). */
bool upper_name_ok(const char *s);
#define NAME_EXPECT "a non-empty name without '/', '..' or spaces"
/* The head every card, trait and profile shares: check root's keys against
 * keys[] (`kind` names the entry, `where` is "a card"...), then read its
 * required `name`, which must pass name_ok(), and where it stands. */
int yhead(const struct pctx *c, struct fy_node *root, const char *kind, const char *where,
	  const char *const *keys, char **name, struct src_pos *pos, struct err **err);

/* A sequence of evidence mappings (at least one when required). */
int yevidence(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *where,
	      bool required, struct evidence **out, size_t *n, struct err **err);
/* knob_canon with a message: the canonical value (caller frees), or NULL
 * and *why = "<knob> 'v' is invalid; expected ..." (caller frees). */
char *knob_value(enum knob_id k, const char *v, char **why);
/* Every knob name, NULL-terminated: the keys of a knobs mapping. */
const char *const *knob_keys(void);
/* One `knob: value` pair of a mapping whose keys map_check() accepted
 * against knob_keys(): *k and the canonical value (caller frees), or NULL
 * with *err at the value (empty, not a scalar, or refused by knob_canon). */
char *yknob(const struct pctx *c, struct yval kv, enum knob_id *k, struct err **err);
/* A `set:` mapping knob → value (traits, families); absent or null → none.
 * allowed (may be NULL) refuses a knob with "knob 'k' <allowed_expect>";
 * pos (may be NULL, KNOB__COUNT entries) gets each value's position. */
int yknob_set(const struct pctx *c, struct yval v, bool (*allowed)(enum knob_id),
	      const char *allowed_expect, struct src_pos *pos, struct knob_set **set, size_t *n,
	      struct err **err);
/* Knobs of one role: a mapping knob → value, canonicalised. */
int yrole_knobs(const struct pctx *c, struct yval v, struct role_spec *rs, struct err **err);
/* `roles:` mapping role → knobs (profiles and defaults). */
int yroles(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *where,
	   struct role_spec out[ROLE__COUNT], struct err **err);

void evidence_free(struct evidence *e, size_t n);
void role_spec_free(struct role_spec *rs);
void card_free(struct card *c);
void trait_free(struct trait *t);
void profile_free(struct profile *p);

/* Per-kind parsers: fill *out from the root mapping (kind already read). */
int card_parse(const struct pctx *c, struct fy_node *root, struct card *out, struct err **err);
int trait_parse(const struct pctx *c, struct fy_node *root, struct trait *out, struct err **err);
int profile_parse(const struct pctx *c, struct fy_node *root, struct profile *out, struct err **err);
int image_parse(const struct pctx *c, struct fy_node *root, struct vimage *out, struct err **err);
void vimage_free(struct vimage *m);
int family_parse(const struct pctx *c, struct fy_node *root, struct family *out, struct err **err);
void family_free(struct family *f);
/* Every parser a family sets is registered in some recorded image's vLLM,
 * and in the image of every shipped profile role the family matches by
 * model id (family.c). */
int knowledge_check_families(const struct knowledge *k, struct err **err);
/* Every profile role's image is a known, pinned image, and the serving
 * knobs it sets are accepted by that image's vLLM (images.c). */
int knowledge_check_serving(const struct knowledge *k, struct err **err);
int defaults_parse(const struct pctx *c, struct fy_node *root, struct role_spec out[ROLE__COUNT],
		   struct err **err);

#endif
