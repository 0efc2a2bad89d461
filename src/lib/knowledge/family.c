/*
 * family.c — the family schema: the knobs that follow from the model, not
 * the card (FACTS.md "Model families"), how a checkpoint is matched to one,
 * and the cross-check of every parser a family sets against the vLLM of the
 * images it will be rendered with.
 *
 *   kind: family
 *   name: qwen3-xml-tools
 *   description: ..
 *   match:
 *     architectures: [Qwen3_5ForConditionalGeneration]   config.json, any of
 *     model_type: [qwen3_5]                               config.json, any of
 *     model_id: ["*Qwen3.5-*"]        case-insensitive patterns of the model id
 *     model_id_when: without-config   | always (the id must hold with a config too)
 *     lane: generate                  | pooling (absent: any lane)
 *   set: {tool_call_parser: qwen3_coder, reasoning_parser: qwen3}
 *   evidence: [..]
 *
 * Why the config first: names mislead (`Qwen3-8B` is a dense Qwen3, not a
 * Qwen3.8), so the model id decides only when the cache holds no
 * config.json — a dry render, or a model not downloaded yet. Where a config
 * cannot tell two families apart (the Qwen3 reranker is a Qwen3ForCausalLM
 * like any dense Qwen3), the family says model_id_when: always and wins by
 * being more specific.
 */
#include <fnmatch.h>
#include <string.h>

#include "parse.h"
#include "vllm.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/strv.h"

bool family_knob(enum knob_id k)
{
	return k == KNOB_TOOL_CALL_PARSER || k == KNOB_REASONING_PARSER || k == KNOB_RUNNER ||
	       k == KNOB_CONVERT || k == KNOB_HF_OVERRIDES || k == KNOB_TRUST_REMOTE_CODE;
}

#define FAMILY_KNOBS "tool_call_parser, reasoning_parser, runner, convert, hf_overrides or trust_remote_code"

void family_free(struct family *f)
{
	free(f->name);
	pos_free(&f->pos);
	free(f->description);
	strv_free(f->architectures);
	strv_free(f->model_types);
	strv_free(f->model_ids);
	for (size_t i = 0; i < f->n_set; i++)
		free(f->set[i].value);
	free(f->set);
	for (int k = 0; k < KNOB__COUNT; k++)
		pos_free(&f->set_pos[k]);
	evidence_free(f->evidence, f->n_evidence);
	memset(f, 0, sizeof(*f));
}

static bool pattern_ok(const char *s)
{
	return *s && !strpbrk(s, " \t");
}

static int parse_match(const struct pctx *c, struct yval v, struct family *f, struct err **err)
{
	static const char *const keys[] = { "architectures", "model_type", "model_id", "model_id_when",
					    "lane", NULL };
	static const char *const when[] = { "without-config", "always", NULL };
	static const char *const lanes[] = { "generate", "pooling", NULL };
	const char *w = "'match'";
	if (map_check(c, v.val, v.key, "match", w, "key", keys, err) < 0 ||
	    ystrv(c, map_find(v.val, "architectures"), "architectures", false, pattern_ok,
		  "invalid architecture", "class names such as Qwen3ForCausalLM", &f->architectures,
		  NULL, err) < 0 ||
	    ystrv(c, map_find(v.val, "model_type"), "model_type", false, pattern_ok,
		  "invalid model_type", "config.json model_type values such as qwen3", &f->model_types,
		  NULL, err) < 0 ||
	    ystrv(c, map_find(v.val, "model_id"), "model_id", false, pattern_ok, "invalid pattern",
		  "model id patterns such as \"*Qwen3.5-*\"", &f->model_ids, NULL, err) < 0)
		return -1;
	_cleanup_free_ char *idw = NULL, *lane = NULL;
	if (yenum(c, v.val, v.key, "model_id_when", w, false, when, &idw, err) < 0 ||
	    yenum(c, v.val, v.key, "lane", w, false, lanes, &lane, err) < 0)
		return -1;
	f->id_always = idw && strcmp(idw, "always") == 0;
	f->lane = !lane ? -1 : strcmp(lane, "generate") == 0 ? LANE_GENERATE : LANE_POOLING;
	bool cfg = f->architectures || f->model_types;
	if (!cfg && !f->model_ids)
		return perr(c, v.val, v.key, err, "'match' names nothing; expected architectures, "
			    "model_type or model_id");
	if (f->id_always && (!cfg || !f->model_ids)) {
		struct yval wv = map_find(v.val, "model_id_when");
		return perr(c, wv.val, wv.key, err, "model_id_when: always needs both a model_id and "
			    "architectures or model_type; expected without-config or both keys");
	}
	return 0;
}

int family_parse(const struct pctx *c, struct fy_node *root, struct family *out, struct err **err)
{
	static const char *const keys[] = { "kind", "name", "description", "match", "set", "evidence",
					    NULL };
	const char *w = "a family";
	out->lane = -1;
	if (yhead(c, root, "family", w, keys, &out->name, &out->pos, err) < 0 ||
	    ystr(c, root, NULL, "description", w, true, "a sentence naming the models", &out->description,
		 err) < 0)
		return -1;
	struct yval mv = map_find(root, "match"), sv = map_find(root, "set");
	if (!mv.key)
		return missing(c, root, NULL, "match", w,
			       "a mapping with architectures, model_type or model_id", err);
	if (!sv.key)
		return missing(c, root, NULL, "set", w, "the knobs the family sets", err);
	if (parse_match(c, mv, out, err) < 0 ||
	    yknob_set(c, sv, family_knob, "does not follow from the model; expected " FAMILY_KNOBS
		      " (the card's knobs belong in a profile or trait)", out->set_pos, &out->set,
		      &out->n_set, err) < 0)
		return -1;
	if (!out->n_set)
		return perr(c, sv.val, sv.key, err, "'set' is empty; expected %s", FAMILY_KNOBS);
	return yevidence(c, root, NULL, w, true, &out->evidence, &out->n_evidence, err);
}

/* ---- matching ------------------------------------------------------------ */

static const char *id_hit(const struct family *f, const char *model)
{
	for (size_t i = 0; model && f->model_ids && f->model_ids[i]; i++)
		if (fnmatch(f->model_ids[i], model, FNM_CASEFOLD) == 0)
			return f->model_ids[i];
	return NULL;
}

/* How f matches; 0 = not at all, else its specificity, with *how. */
static int match_level(const struct family *f, const char *model, bool have_config,
		       char *const *archs, const char *model_type, enum lane lane, char **how)
{
	if (f->lane >= 0 && f->lane != (int)lane)
		return 0;
	int level = f->lane >= 0 ? 1 : 0;
	const char *pat = id_hit(f, model);
	if (!have_config) {
		if (!pat)
			return 0;
		*how = xasprintf("model id '%s' matches '%s' (no config.json read)", model, pat);
		return level + 1;
	}
	const char *hit = NULL, *key = NULL;
	for (size_t i = 0; !hit && f->architectures && f->architectures[i]; i++)
		if (strv_has(archs, f->architectures[i]))
			hit = f->architectures[i], key = "architectures";
	if (!hit && model_type && f->model_types && strv_has(f->model_types, model_type))
		hit = model_type, key = "model_type";
	if (!hit || (f->id_always && !pat))
		return 0;
	if (f->id_always)
		*how = xasprintf("config.json %s %s and model id '%s' matches '%s'", key, hit, model, pat);
	else
		*how = xasprintf("config.json %s %s", key, hit);
	return level + 1 + (f->id_always ? 1 : 0);
}

int family_match(const struct knowledge *k, const char *model, bool have_config,
		 char *const *archs, const char *model_type, enum lane lane,
		 const struct family **out, char **why, struct err **err)
{
	*out = NULL;
	*why = NULL;
	int best = 0;
	const struct family *tie = NULL;
	for (size_t i = 0; i < k->n_families; i++) {
		char *how = NULL;
		int lv = match_level(&k->families[i], model, have_config, archs, model_type, lane, &how);
		if (lv > best) {
			best = lv;
			*out = &k->families[i];
			tie = NULL;
			free(*why);
			*why = how;
		} else {
			if (lv && lv == best)
				tie = &k->families[i];
			free(how);
		}
	}
	if (tie) {
		_cleanup_free_ char *pa = src_pos_str(&(*out)->pos), *pb = src_pos_str(&tie->pos);
		err_set(err, EXIT_CONFIG, "model '%s' matches families '%s' (%s) and '%s' (%s) alike; "
			"expected one family to be more specific (model_id_when: always or a lane)",
			model ? model : "", (*out)->name, pa, tie->name, pb);
		*out = NULL;
		free(*why);
		*why = NULL;
		return -1;
	}
	if (*out)
		return 0;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	if (have_config) {
		buf_printf(&b, "config.json architectures [");
		for (size_t i = 0; archs && archs[i]; i++)
			buf_printf(&b, "%s%s", i ? ", " : "", archs[i]);
		buf_printf(&b, "], model_type %s match no family", model_type ? model_type : "(none)");
	} else {
		buf_printf(&b, "no config.json read and model id '%s' matches no family",
			   model ? model : "");
	}
	*why = xstrdup(buf_str(&b));
	return 0;
}

/* ---- cross-checks ------------------------------------------------------- */

static bool parser_knob(enum knob_id k)
{
	return k == KNOB_TOOL_CALL_PARSER || k == KNOB_REASONING_PARSER || k == KNOB_RUNNER ||
	       k == KNOB_CONVERT;
}

/* Every value f sets that vLLM checks is accepted by at least one
 * recorded image's vLLM. */
static int check_somewhere(const struct knowledge *k, const struct family *f, struct err **err)
{
	for (size_t s = 0; s < f->n_set; s++) {
		enum knob_id kn = f->set[s].knob;
		const char *v = f->set[s].value;
		if (!parser_knob(kn) || !strcmp(v, "none") || !strcmp(v, "auto"))
			continue;
		bool ok = false;
		_cleanup_free_ char *why = NULL;
		for (size_t i = 0; i < k->n_images && !ok; i++) {
			struct vllm_reg reg;
			if (vllm_reg_load(&reg, k->images[i].registry, err) < 0) {
				vllm_reg_free(&reg);
				return -1;
			}
			free(why);
			why = NULL;
			ok = vllm_reg_check_arg(&reg, knob_vllm_flag(kn), v, &why) == 0;
			vllm_reg_free(&reg);
		}
		if (!ok)
			return pos_err(&f->set_pos[kn], err, "family '%s': %s; expected a value the vLLM "
				       "of a recorded image accepts", f->name,
				       why ? why : "no image is recorded");
	}
	return 0;
}

/* The family a shipped profile role gets with no checkpoint read (its model
 * id) must set only parsers that role's image registers. */
static int check_profile_role(const struct knowledge *k, const struct profile *p, enum role_id r,
			      struct err **err)
{
	const struct role_spec *rs = &p->roles[r], *d = &k->defaults[r];
	const char *model = rs->knobs[KNOB_MODEL] ? rs->knobs[KNOB_MODEL] : d->knobs[KNOB_MODEL];
	const char *feas = rs->knobs[KNOB_FEASIBLE] ? rs->knobs[KNOB_FEASIBLE] : d->knobs[KNOB_FEASIBLE];
	const char *img = rs->knobs[KNOB_IMAGE] ? rs->knobs[KNOB_IMAGE] : d->knobs[KNOB_IMAGE];
	if (!rs->present || !model || (feas && !strcmp(feas, "false")))
		return 0;
	const struct family *f;
	_cleanup_free_ char *why = NULL;
	if (family_match(k, model, false, NULL, NULL, role_lane(r), &f, &why, err) < 0)
		return -1;
	const struct vimage *vi = knowledge_image(k, img);
	if (!f || !vi)
		return 0;
	struct vllm_reg reg;
	if (vllm_reg_load(&reg, vi->registry, err) < 0) {
		vllm_reg_free(&reg);
		return -1;
	}
	int rc = 0;
	for (size_t s = 0; s < f->n_set && rc == 0; s++) {
		enum knob_id kn = f->set[s].knob;
		const char *v = f->set[s].value;
		if (!parser_knob(kn) || rs->knobs[kn] || !strcmp(v, "none") || !strcmp(v, "auto"))
			continue;
		_cleanup_free_ char *bad = NULL;
		if (vllm_reg_check_arg(&reg, knob_vllm_flag(kn), v, &bad) < 0)
			rc = pos_err(&f->set_pos[kn], err, "family '%s' for profile '%s' role '%s' (%s): %s "
				     "(image %s); expected a value that image's vLLM accepts, or the "
				     "profile to set %s", f->name, p->name, role_name(r), model, bad,
				     vi->name, knob_name(kn));
	}
	vllm_reg_free(&reg);
	return rc;
}

int knowledge_check_families(const struct knowledge *k, struct err **err)
{
	for (size_t i = 0; i < k->n_families; i++)
		if (check_somewhere(k, &k->families[i], err) < 0)
			return -1;
	for (size_t i = 0; i < k->n_profiles; i++)
		for (int r = 0; r < ROLE__COUNT; r++)
			if (check_profile_role(k, &k->profiles[i], (enum role_id)r, err) < 0)
				return -1;
	return 0;
}
