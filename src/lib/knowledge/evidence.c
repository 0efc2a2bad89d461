/*
 * evidence.c — the evidence entries every kind of knowledge carries (kind
 * measured|declared, date, box, image, observation, ref). Its own file,
 * below the kinds that read it (cards, images, traits) and the shared
 * schema (subschema.c), so images.c and subschema.c do not call each other
 * round through knob_canon.
 */
#include <ctype.h>
#include <string.h>

#include "parse.h"

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
