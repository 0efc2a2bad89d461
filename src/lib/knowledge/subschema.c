/*
 * subschema.c — the parts of the knowledge schema more than one kind
 * shares: evidence entries (kind measured|declared, date, box, image,
 * observation, ref), a role's knobs (knob → value, canonicalised through
 * knob_canon) and the `roles:` mapping of profiles and defaults.
 */
#include <ctype.h>
#include <string.h>

#include "parse.h"
#include "../util/cleanup.h"
#include "../util/yaml_scalar.h"

static bool date_ok(const char *s)
{
	/* YYYY-MM-DD */
	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return false;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
			return false;
	int mo = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
	return mo >= 1 && mo <= 12 && d >= 1 && d <= 31;
}

void evidence_free(struct evidence *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++) {
		free(e[i].kind);
		free(e[i].date);
		free(e[i].box);
		free(e[i].image);
		free(e[i].observation);
		free(e[i].ref);
	}
	free(e);
}

static int evidence_one(const struct pctx *c, struct fy_node *m, struct fy_node *mkey,
			struct evidence *ev, struct err **err)
{
	static const char *const keys[] = { "kind", "date", "box", "image", "observation", "ref", NULL };
	static const char *const kinds[] = { "measured", "declared", NULL };
	const char *w = "an evidence entry";
	if (map_check(c, m, mkey, "evidence", w, "key", keys, err) < 0 ||
	    yenum(c, m, mkey, "kind", w, true, kinds, &ev->kind, err) < 0 ||
	    ystr(c, m, mkey, "date", w, false, "a date YYYY-MM-DD", &ev->date, err) < 0 ||
	    ystr(c, m, mkey, "box", w, false, "a box name", &ev->box, err) < 0 ||
	    ystr(c, m, mkey, "image", w, false, "an image reference", &ev->image, err) < 0 ||
	    ystr(c, m, mkey, "observation", w, true, "what was observed", &ev->observation, err) < 0 ||
	    ystr(c, m, mkey, "ref", w, false, "a reference", &ev->ref, err) < 0)
		return -1;
	if (ev->date && !date_ok(ev->date)) {
		struct yval v = map_find(m, "date");
		return perr(c, v.val, v.key, err, "date '%s' is not a date; expected YYYY-MM-DD", ev->date);
	}
	return 0;
}

int yevidence(const struct pctx *c, struct fy_node *m, struct fy_node *mkey, const char *where,
	      bool required, struct evidence **out, size_t *n, struct err **err)
{
	struct yval v = map_find(m, "evidence");
	*out = NULL;
	*n = 0;
	if (!v.val || v.val == v.key || ynull(v.val)) {
		if (!required)
			return 0;
		if (!v.key)
			return missing(c, m, mkey, "evidence", where, "a list of evidence entries", err);
		return perr(c, v.val, v.key, err, "'evidence' is empty; expected a list of evidence entries");
	}
	if (!fy_node_is_sequence(v.val))
		return perr(c, v.val, v.key, err, "'evidence' is %s; expected a list of evidence entries",
			    node_kind(v.val));
	int cnt = fy_node_sequence_item_count(v.val);
	if (cnt <= 0 && required)
		return perr(c, v.val, v.key, err,
			    "'evidence' is an empty list; expected at least one evidence entry");
	struct evidence *ev = xcalloc((size_t)(cnt > 0 ? cnt : 1), sizeof(*ev));
	void *it = NULL;
	struct fy_node *e;
	size_t i = 0;
	while ((e = fy_node_sequence_iterate(v.val, &it)) && i < (size_t)cnt) {
		if (evidence_one(c, e, v.key, &ev[i], err) < 0) {
			evidence_free(ev, i + 1);
			return -1;
		}
		i++;
	}
	*out = ev;
	*n = i;
	return 0;
}

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
