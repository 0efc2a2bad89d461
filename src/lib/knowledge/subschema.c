/*
 * subschema.c — the parts of the knowledge schema more than one kind
 * shares: a role's knobs (knob → value, canonicalised through knob_canon)
 * and the `roles:` mapping of profiles and defaults. Evidence entries are
 * in evidence.c.
 */
#include <string.h>

#include "parse.h"
#include "../util/cleanup.h"
#include "../util/yaml_scalar.h"

char *knob_value(enum knob_id k, const char *v, char **why)
{
	char *out = NULL;
	const char *expect = "a valid value";
	if (knob_canon(k, v, &out, &expect) == 0)
		return out;
	free(out);
	*why = xasprintf("%s '%s' is invalid; expected %s", knob_name(k), v, expect);
	return NULL;
}

const char *const *knob_keys(void)
{
	static const char *knobs[KNOB__COUNT + 1];
	for (int k = 0; k < KNOB__COUNT; k++)
		knobs[k] = knob_name(k);
	return knobs;
}

int yknob_set(const struct pctx *c, struct yval v, bool (*allowed)(enum knob_id),
	      const char *allowed_expect, struct src_pos *pos, struct knob_set **set, size_t *n,
	      struct err **err)
{
	if (!v.val || v.val == v.key || ynull(v.val))
		return 0;
	if (map_check(c, v.val, v.key, "set", "'set'", "knob", knob_keys(), err) < 0)
		return -1;
	*set = xcalloc(KNOB__COUNT, sizeof(**set));
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(v.val, &it))) {
		struct yval kv = { fy_node_pair_key(p), fy_node_pair_value(p) };
		enum knob_id k;
		char *canon = yknob(c, kv, &k, err);
		if (!canon)
			return -1;
		if (allowed && !allowed(k)) {
			free(canon);
			return perr(c, kv.key, NULL, err, "knob '%s' %s", knob_name(k), allowed_expect);
		}
		if (pos)
			pos_set(&pos[k], c, kv.val, kv.key);
		(*set)[*n].knob = k;
		(*set)[(*n)++].value = canon;
	}
	return 0;
}

char *yknob(const struct pctx *c, struct yval kv, enum knob_id *k, struct err **err)
{
	const char *kname = yaml_scalar0(kv.key, NULL), *s;
	if (ytext(c, kv, kname, &s, err) < 0)
		return NULL;
	if (!s) {
		perr(c, kv.val, kv.key, err, "'%s' is empty; expected a value for the knob", kname);
		return NULL;
	}
	*k = (enum knob_id)knob_from_name(kname);
	_cleanup_free_ char *why = NULL;
	char *canon = knob_value(*k, s, &why);
	if (!canon)
		perr(c, kv.val, kv.key, err, "%s", why);
	return canon;
}

void role_spec_free(struct role_spec *rs)
{
	for (int k = 0; k < KNOB__COUNT; k++) {
		free(rs->knobs[k]);
		pos_free(&rs->knob_pos[k]);
	}
	memset(rs, 0, sizeof(*rs));
}

int yrole_knobs(const struct pctx *c, struct yval v, struct role_spec *rs, struct err **err)
{
	const char *role = yaml_scalar0(v.key, NULL);
	_cleanup_free_ char *where = xasprintf("role '%s'", role);
	if (v.val == v.key)
		return perr(c, v.key, NULL, err, "'%s' is empty; expected a mapping of knobs", role);
	if (map_check(c, v.val, v.key, role, where, "knob", knob_keys(), err) < 0)
		return -1;
	rs->present = true;
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(v.val, &it))) {
		struct yval kv = { fy_node_pair_key(p), fy_node_pair_value(p) };
		enum knob_id k;
		char *canon = yknob(c, kv, &k, err);
		if (!canon)
			return -1;
		free(rs->knobs[k]);
		rs->knobs[k] = canon;
		pos_set(&rs->knob_pos[k], c, kv.val, kv.key);
	}
	return 0;
}

int yroles(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *where,
	   struct role_spec out[ROLE__COUNT], struct err **err)
{
	static const char *roles[ROLE__COUNT + 1];
	for (int r = 0; r < ROLE__COUNT; r++)
		roles[r] = role_name(r);
	struct yval v = map_find(m, "roles");
	if (!v.key)
		return missing(c, m, mkey, "roles", where, "a mapping of roles to knobs", err);
	if (v.val == v.key)
		return perr(c, v.key, NULL, err, "'roles' is empty; expected a mapping of roles to knobs");
	if (map_check(c, v.val, v.key, "roles", "'roles'", "role", roles, err) < 0)
		return -1;
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(v.val, &it))) {
		struct fy_node *k = fy_node_pair_key(p), *val = fy_node_pair_value(p);
		struct yval rv = { k, val ? val : k };
		if (ynull(val))
			rv.val = k;
		int r = role_from_name(yaml_scalar0(k, NULL));
		if (yrole_knobs(c, rv, &out[r], err) < 0)
			return -1;
	}
	return 0;
}
