/*
 * card.c — the card schema: how a board is recognised (name and
 * device-tree markers, compute capability, a memory band), its memory model,
 * how the GPU is attached, its validation status and default profile.
 *
 *   kind: card
 *   name: thor
 *   detect: {name_markers: [..], dt_markers: [..], dt_exclude: [..],
 *            compute_cap: "11.0", memory_gib: [min, max]}
 *   memory_model: unified|discrete        gpu_attach: reservation|runtime
 *   status: validated|partial|unvalidated profile: thor
 *   attention_path: {generate: TRITON_ATTN, pooling: FLASH_ATTN}
 *   kubernetes: {gpu_product: NVIDIA-Thor, compute_major: "11",
 *                compute_minor: "0", note: how sure these labels are}
 *   evidence: [..]
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "../util/yaml_scalar.h"
#include "../util/cleanup.h"

void card_free(struct card *c)
{
	free(c->name);
	pos_free(&c->pos);
	free(c->description);
	strv_free(c->name_markers);
	strv_free(c->dt_markers);
	strv_free(c->dt_exclude);
	free(c->compute_cap);
	free(c->memory_model);
	free(c->gpu_attach);
	free(c->status);
	free(c->profile);
	for (int l = 0; l < LANE__COUNT; l++)
		free(c->attention_path[l]);
	free(c->gfd_product);
	free(c->gfd_compute_major);
	free(c->gfd_compute_minor);
	free(c->gfd_note);
	evidence_free(c->evidence, c->n_evidence);
	pos_free(&c->profile_pos);
	memset(c, 0, sizeof(*c));
}

/* "12.1": digits, a dot, digits. */
static bool compute_cap_ok(const char *s)
{
	const char *dot = strchr(s, '.');
	if (!dot || dot == s || !dot[1])
		return false;
	for (const char *p = s; *p; p++)
		if (p != dot && !isdigit((unsigned char)*p))
			return false;
	return true;
}

static bool number_ok(const char *s, double *out)
{
	char *end;
	if (!*s || isspace((unsigned char)*s))
		return false;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && *p != '.' && *p != '-')
			return false;
	*out = strtod(s, &end);
	return *end == '\0';
}

/* memory_gib: [min, max] in GiB, 0 <= min < max. */
static int parse_band(const struct pctx *c, struct yval v, struct card *out, struct err **err)
{
	static const char expect[] = "a [min, max] pair of GiB with 0 <= min < max";
	if (!v.val || v.val == v.key || ynull(v.val))
		return 0;
	if (!fy_node_is_sequence(v.val))
		return perr(c, v.val, v.key, err, "'memory_gib' is %s; expected %s", node_kind(v.val),
			    expect);
	int n = fy_node_sequence_item_count(v.val);
	if (n != 2)
		return perr(c, v.val, v.key, err, "'memory_gib' has %d entries; expected %s", n, expect);
	double d[2];
	for (int i = 0; i < 2; i++) {
		struct fy_node *e = fy_node_sequence_get_by_index(v.val, i);
		const char *s = e && fy_node_is_scalar(e) && !ynull(e) ? yaml_scalar0(e, NULL) : NULL;
		if (!s)
			return perr(c, e, v.key, err, "an entry of 'memory_gib' is %s; expected %s",
				    node_kind(e), expect);
		if (!number_ok(s, &d[i]))
			return perr(c, e, v.key, err, "memory_gib entry '%s' is not a number; expected %s",
				    s, expect);
		if (d[i] < 0)
			return perr(c, e, v.key, err, "memory_gib entry '%s' is negative; expected %s", s,
				    expect);
	}
	if (!(d[0] < d[1]))
		return perr(c, v.val, v.key, err, "memory_gib minimum is not below its maximum; expected %s",
			    expect);
	out->has_mem_band = true;
	out->mem_min_gib = d[0];
	out->mem_max_gib = d[1];
	return 0;
}

static int parse_detect(const struct pctx *c, struct yval v, struct card *out, struct err **err)
{
	static const char *const keys[] = { "name_markers", "dt_markers", "dt_exclude", "compute_cap",
					    "memory_gib", NULL };
	if (!v.val || v.val == v.key || ynull(v.val))
		return 0;
	if (map_check(c, v.val, v.key, "detect", "'detect'", "key", keys, err) < 0)
		return -1;
	const char *m = "a list of non-empty strings";
	if (ystrv(c, map_find(v.val, "name_markers"), "name_markers", false, NULL, "invalid marker", m,
		  &out->name_markers, NULL, err) < 0 ||
	    ystrv(c, map_find(v.val, "dt_markers"), "dt_markers", false, NULL, "invalid marker", m,
		  &out->dt_markers, NULL, err) < 0 ||
	    ystrv(c, map_find(v.val, "dt_exclude"), "dt_exclude", false, NULL, "invalid marker", m,
		  &out->dt_exclude, NULL, err) < 0)
		return -1;
	if (ystr(c, v.val, v.key, "compute_cap", "'detect'", false, "", &out->compute_cap, err) < 0)
		return -1;
	if (out->compute_cap && !compute_cap_ok(out->compute_cap)) {
		struct yval cc = map_find(v.val, "compute_cap");
		return perr(c, cc.val, cc.key, err,
			    "compute_cap '%s' is not a compute capability; expected MAJOR.MINOR such as "
			    "\"12.1\"",
			    out->compute_cap);
	}
	return parse_band(c, map_find(v.val, "memory_gib"), out, err);
}

static int parse_attention_path(const struct pctx *c, struct yval v, struct card *out,
				struct err **err)
{
	static const char *const lanes[] = { "generate", "pooling", NULL };
	if (!v.val || v.val == v.key || ynull(v.val))
		return 0;
	if (map_check(c, v.val, v.key, "attention_path", "'attention_path'", "lane", lanes, err) < 0)
		return -1;
	for (int l = 0; l < LANE__COUNT; l++) {
		struct yval lv = map_find(v.val, lane_name(l));
		const char *s;
		if (ytext(c, lv, lane_name(l), &s, err) < 0)
			return -1;
		if (!lv.key)
			continue;
		if (!s || !upper_name_ok(s))
			return perr(c, lv.val, lv.key, err,
				    "attention path '%s' is not a backend name; expected an UPPER_CASE "
				    "name such as FLASH_ATTN",
				    s ? s : "");
		out->attention_path[l] = xstrdup(s);
	}
	return 0;
}

/* A label value as Kubernetes allows it: 1-63 of [A-Za-z0-9-_.], starting
 * and ending alphanumeric. */
static bool label_value_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
			return false;
	return true;
}

/* kubernetes: the GPU Feature Discovery labels of this card's nodes. */
static int parse_kubernetes(const struct pctx *c, struct yval v, struct card *out, struct err **err)
{
	static const char *const keys[] = { "gpu_product", "compute_major", "compute_minor", "note",
					    NULL };
	if (!v.val || v.val == v.key || ynull(v.val))
		return 0;
	if (map_check(c, v.val, v.key, "kubernetes", "'kubernetes'", "key", keys, err) < 0)
		return -1;
	char **dst[] = { &out->gfd_product, &out->gfd_compute_major, &out->gfd_compute_minor };
	for (size_t i = 0; i < 3; i++) {
		if (ystr(c, v.val, v.key, keys[i], "'kubernetes'", true, "a node label value", dst[i],
			 err) < 0)
			return -1;
		if (!label_value_ok(*dst[i])) {
			struct yval kv = map_find(v.val, keys[i]);
			return perr(c, kv.val, kv.key, err,
				    "'%s' is not a label value; expected 1-63 letters, digits, '-', '_' "
				    "or '.', starting and ending with a letter or digit",
				    *dst[i]);
		}
	}
	return ystr(c, v.val, v.key, "note", "'kubernetes'", false, "a sentence", &out->gfd_note, err);
}

int card_parse(const struct pctx *c, struct fy_node *root, struct card *out, struct err **err)
{
	static const char *const keys[] = { "kind",   "name",	 "description",	   "detect",
					    "memory_model", "gpu_attach", "status", "profile",
					    "attention_path", "kubernetes", "evidence", NULL };
	static const char *const models[] = { "unified", "discrete", NULL };
	static const char *const attach[] = { "reservation", "runtime", NULL };
	static const char *const status[] = { "validated", "partial", "unvalidated", NULL };
	const char *w = "a card";
	if (yhead(c, root, "card", w, keys, &out->name, &out->pos, err) < 0)
		return -1;
	if (ystr(c, root, NULL, "description", w, false, "a sentence", &out->description, err) < 0 ||
	    parse_detect(c, map_find(root, "detect"), out, err) < 0 ||
	    yenum(c, root, NULL, "memory_model", w, true, models, &out->memory_model, err) < 0 ||
	    yenum(c, root, NULL, "gpu_attach", w, true, attach, &out->gpu_attach, err) < 0 ||
	    yenum(c, root, NULL, "status", w, true, status, &out->status, err) < 0 ||
	    ystr(c, root, NULL, "profile", w, false, NAME_EXPECT, &out->profile, err) < 0)
		return -1;
	if (out->profile) {
		struct yval pv = map_find(root, "profile");
		if (!name_ok(out->profile))
			return perr(c, pv.val, pv.key, err, "profile '%s' is invalid; expected %s",
				    out->profile, NAME_EXPECT);
		pos_set(&out->profile_pos, c, pv.val, pv.key);
	}
	if (parse_attention_path(c, map_find(root, "attention_path"), out, err) < 0 ||
	    parse_kubernetes(c, map_find(root, "kubernetes"), out, err) < 0)
		return -1;
	return yevidence(c, root, NULL, w, false, &out->evidence, &out->n_evidence, err);
}
