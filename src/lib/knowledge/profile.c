/*
 * profile.c — the profile schema (a validated bundle: card, per-role knobs,
 * traits considered, bring-up order, known failures) and the template
 * defaults file, which shares the per-role knob schema.
 *
 *   kind: profile
 *   name: thor       card: thor|any     status: validated|partial|unvalidated
 *   description: ..  traits: [..]       order: [cortex, ..]
 *   roles: {cortex: {model: .., gpu_mem_util: 0.30, ..}, ..}
 *   known_failures: [{role: reranker, probe: .., reason: .., ref: ..}]
 *
 *   kind: defaults
 *   roles: {cortex: {feasible: true, ..}, ..}
 */
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "../util/cleanup.h"

static void pos_array_free(struct src_pos *p, char **v)
{
	for (size_t i = 0; p && v && v[i]; i++)
		pos_free(&p[i]);
	free(p);
}

void profile_free(struct profile *p)
{
	free(p->name);
	pos_free(&p->pos);
	free(p->card);
	free(p->status);
	free(p->description);
	for (int r = 0; r < ROLE__COUNT; r++)
		role_spec_free(&p->roles[r]);
	pos_array_free(p->traits_pos, p->traits);
	strv_free(p->traits);
	pos_array_free(p->order_pos, p->order);
	strv_free(p->order);
	for (size_t i = 0; i < p->n_known_failures; i++) {
		free(p->known_failures[i].role);
		free(p->known_failures[i].probe);
		free(p->known_failures[i].reason);
		free(p->known_failures[i].ref);
	}
	free(p->known_failures);
	pos_free(&p->card_pos);
	memset(p, 0, sizeof(*p));
}

static bool role_ok(const char *s)
{
	return role_from_name(s) >= 0;
}

static int parse_failures(const struct pctx *c, struct yval v, struct profile *p, struct err **err)
{
	static const char *const keys[] = { "role", "probe", "reason", "ref", NULL };
	static const char *roles[ROLE__COUNT + 1];
	for (int r = 0; r < ROLE__COUNT; r++)
		roles[r] = role_name(r);
	if (!v.val || v.val == v.key || ynull(v.val))
		return 0;
	if (!fy_node_is_sequence(v.val))
		return perr(c, v.val, v.key, err, "'known_failures' is %s; expected a list of failures",
			    node_kind(v.val));
	int n = fy_node_sequence_item_count(v.val);
	p->known_failures = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*p->known_failures));
	void *it = NULL;
	struct fy_node *e;
	const char *w = "a known failure";
	while ((e = fy_node_sequence_iterate(v.val, &it)) && p->n_known_failures < (size_t)n) {
		struct known_failure *f = &p->known_failures[p->n_known_failures++];
		if (map_check(c, e, v.key, "known_failures", w, "key", keys, err) < 0 ||
		    yenum(c, e, v.key, "role", w, true, roles, &f->role, err) < 0 ||
		    ystr(c, e, v.key, "probe", w, false, "a probe name", &f->probe, err) < 0 ||
		    ystr(c, e, v.key, "reason", w, true, "a sentence", &f->reason, err) < 0 ||
		    ystr(c, e, v.key, "ref", w, false, "a reference", &f->ref, err) < 0)
			return -1;
	}
	return 0;
}

int profile_parse(const struct pctx *c, struct fy_node *root, struct profile *out, struct err **err)
{
	static const char *const keys[] = { "kind",   "name",  "card",  "status",	  "description",
					    "traits", "order", "roles", "known_failures", NULL };
	static const char *const status[] = { "validated", "partial", "unvalidated", NULL };
	const char *w = "a profile";
	if (yhead(c, root, "profile", w, keys, &out->name, &out->pos, err) < 0)
		return -1;
	if (ystr(c, root, NULL, "card", w, true, "the name of a card, or any", &out->card, err) < 0)
		return -1;
	struct yval cv = map_find(root, "card");
	if (!name_ok(out->card))
		return perr(c, cv.val, cv.key, err, "card '%s' is invalid; expected %s", out->card,
			    NAME_EXPECT);
	pos_set(&out->card_pos, c, cv.val, cv.key);
	if (yenum(c, root, NULL, "status", w, true, status, &out->status, err) < 0 ||
	    ystr(c, root, NULL, "description", w, false, "a sentence", &out->description, err) < 0 ||
	    ystrv(c, map_find(root, "traits"), "traits", true, name_ok, "invalid name", NAME_EXPECT,
		  &out->traits, &out->traits_pos, err) < 0 ||
	    ystrv(c, map_find(root, "order"), "order", false, role_ok, "unknown role",
		  "one of cortex, senses, hand, embedder, reranker", &out->order, &out->order_pos,
		  err) < 0 ||
	    yroles(c, root, NULL, w, out->roles, err) < 0)
		return -1;
	return parse_failures(c, map_find(root, "known_failures"), out, err);
}

int defaults_parse(const struct pctx *c, struct fy_node *root, struct role_spec out[ROLE__COUNT],
		   struct err **err)
{
	static const char *const keys[] = { "kind", "roles", NULL };
	if (map_check(c, root, NULL, "defaults", "the defaults", "key", keys, err) < 0)
		return -1;
	return yroles(c, root, NULL, "the defaults", out, err);
}
