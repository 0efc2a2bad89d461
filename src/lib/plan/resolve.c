/*
 * resolve.c — build the per-role plan from facts, a profile and traits.
 *
 * Order of precedence for each knob of each role, each step recorded:
 *   1. template default (data/template/defaults.yaml)
 *   2. the model's family (data/families/), matched by the checkpoint's
 *      config.json, by the model id only when none is read (family.c)
 *   3. profile value
 *   4. traits the profile lists whose predicate holds (or is unknown and the
 *      trait says on_unknown: apply — the assumption is recorded)
 *   5. operator overrides (e.g. values the operator edited in .env)
 * Between 4 and 5 the checkpoint's native context clamps max_model_len (a
 * family step naming the config key): vLLM refuses a longer one.
 *
 * Predicates are evaluated once, against the state after step 2: traits do
 * not chain into each other, so the result never depends on trait order.
 * Two traits giving one knob of one role different values is an error naming
 * both, unless one declares the other in `overrides:`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "plan.h"

const char *prov_kind_name(enum prov_kind k)
{
	static const char *n[] = { "default", "family", "profile", "trait", "override" };
	return n[k];
}

static void knob_push(struct knob_value *kv, enum prov_kind kind, const char *value,
		      const char *where, const struct trait *t, enum tri truth,
		      const char *assumption)
{
	kv->chain = xrealloc(kv->chain, (kv->n_chain + 1) * sizeof(*kv->chain));
	struct prov_step *s = &kv->chain[kv->n_chain++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->value = value ? xstrdup(value) : NULL;
	s->where = where ? xstrdup(where) : NULL;
	s->trait = t;
	s->truth = truth;
	s->assumption = assumption ? xstrdup(assumption) : NULL;
	free(kv->value);
	kv->value = value ? xstrdup(value) : NULL;
}

static void knob_value_free(struct knob_value *kv)
{
	for (size_t i = 0; i < kv->n_chain; i++) {
		free(kv->chain[i].value);
		free(kv->chain[i].where);
		free(kv->chain[i].assumption);
	}
	free(kv->chain);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

bool knob_is_true(const struct knob_value *v)
{
	return v->value && strcmp(v->value, "true") == 0;
}

bool role_feasible(const struct plan *p, enum role_id r)
{
	return p->roles[r].present && knob_is_true(&p->roles[r].knobs[KNOB_FEASIBLE]);
}

/* The predicate inputs of one role of the plan. */
static void role_view(const struct plan *p, const struct host_facts *f, const struct role_plan *rp,
		      struct fact_view *v)
{
	memset(v, 0, sizeof(*v));
	v->facts = f;
	v->card = p->card;
	v->role = rp ? (int)rp->role : -1;
	if (!rp)
		return;
	for (int k = 0; k < KNOB__COUNT; k++)
		v->knobs[k] = rp->knobs[k].value;
	v->attention_path = rp->attention_path;
	v->ckpt = &rp->ckpt;
}

static bool trait_overrides(const struct trait *a, const struct trait *b)
{
	for (char **o = a->overrides; o && *o; o++)
		if (strcmp(*o, b->name) == 0)
			return true;
	return false;
}

static void derive_attention_path(struct plan *p, struct role_plan *rp)
{
	free(rp->attention_path);
	free(rp->attention_path_why);
	rp->attention_path = attention_path_derive(p->card, rp->role,
						   rp->knobs[KNOB_ATTENTION_BACKEND].value,
						   rp->ckpt.hetero_head_dim, &rp->attention_path_why);
}

/* --- resolve ------------------------------------------------------------- */

static bool name_ok(const char *s)
{
	return *s && !strchr(s, '/') && !strstr(s, "..");
}

static int select_profile(struct plan *p, const struct plan_input *in, struct err **err)
{
	const struct knowledge *k = in->k;
	p->card = card_match(k, in->facts, &p->card_why);
	if (in->profile) {
		if (!name_ok(in->profile))
			return err_set(err, EXIT_CONFIG,
				       "profile name '%s' is not valid; expected a plain name without '/' or '..'",
				       in->profile);
		p->profile = knowledge_profile(k, in->profile);
		if (!p->profile) {
			_cleanup_buf_ struct buf names;
			buf_init(&names, 0);
			for (size_t i = 0; i < k->n_profiles; i++)
				buf_printf(&names, "%s%s", i ? ", " : "", k->profiles[i].name);
			return err_set(err, EXIT_CONFIG, "unknown profile '%s'; expected one of: %s",
				       in->profile, buf_str(&names));
		}
		p->forced = true;
	} else {
		const char *name = p->card ? p->card->profile : "base";
		p->profile = knowledge_profile(k, name);
		if (!p->profile)
			return err_set(err, EXIT_CONFIG, "card '%s' names profile '%s', which does not exist",
				       p->card ? p->card->name : "unknown", name);
	}
	const struct profile *pr = p->profile;
	bool for_any = strcmp(pr->card, "any") == 0;
	if (!p->card) {
		strv_push(&p->warnings, p->forced ? "no known card matched this machine"
						  : "no known card matched this machine; using the "
						    "conservative base profile");
		p->unvalidated = !for_any || strcmp(pr->status, "validated") != 0;
	} else {
		p->unvalidated = (!for_any && strcmp(pr->card, p->card->name) != 0) ||
				 strcmp(pr->status, "validated") != 0;
	}
	if (p->forced && p->card && !for_any && strcmp(pr->card, p->card->name) != 0) {
		_cleanup_free_ char *w = xasprintf("profile '%s' is validated for card '%s', not for the "
						   "detected card '%s'; proceeding as asked",
						   pr->name, pr->card, p->card->name);
		strv_push(&p->warnings, w);
	} else if (p->forced && !p->card && !for_any) {
		_cleanup_free_ char *w = xasprintf("profile '%s' is for card '%s'; this card is unknown; "
						   "proceeding as asked", pr->name, pr->card);
		strv_push(&p->warnings, w);
	}
	if (strcmp(pr->status, "validated") != 0) {
		_cleanup_free_ char *w = xasprintf("profile '%s' is %s: its values are declared, not all "
						   "measured", pr->name, pr->status);
		strv_push(&p->warnings, w);
	}
	return 0;
}

static int apply_traits_to_role(struct plan *p, struct role_plan *rp, const struct plan_input *in,
				struct err **err)
{
	const struct profile *pr = p->profile;
	struct fact_view ec;
	role_view(p, in->facts, rp, &ec);
	/* Pending trait settings per knob: evaluate all first, apply after. */
	const struct trait *setter[KNOB__COUNT] = { 0 };
	const char *setval[KNOB__COUNT] = { 0 };
	enum tri settruth[KNOB__COUNT] = { 0 };
	for (char **tn = pr->traits; tn && *tn; tn++) {
		const struct trait *t = knowledge_trait(in->k, *tn);
		if (!t)
			return err_set(err, EXIT_CONFIG, "profile '%s' lists unknown trait '%s'", pr->name, *tn);
		if (!t->n_set)
			continue; /* fleet-level trait */
		if (t->roles_mask && !(t->roles_mask & (1u << rp->role)))
			continue;
		char *detail = NULL;
		enum tri truth = trait_predicate(t, &ec, &detail);
		bool applies = trait_applies(t, truth);
		rp->evals = xrealloc(rp->evals, (rp->n_evals + 1) * sizeof(*rp->evals));
		rp->evals[rp->n_evals++] = (struct trait_eval){ t, truth, applies, detail };
		if (!applies)
			continue;
		for (size_t i = 0; i < t->n_set; i++) {
			enum knob_id kn = t->set[i].knob;
			const struct trait *prev = setter[kn];
			if (prev && strcmp(setval[kn], t->set[i].value) != 0) {
				if (trait_overrides(prev, t))
					continue;
				if (!trait_overrides(t, prev)) {
					_cleanup_free_ char *pa = src_pos_str(&prev->pos);
					_cleanup_free_ char *pb = src_pos_str(&t->pos);
					return err_set(err, EXIT_CONFIG,
						       "traits '%s' (%s) and '%s' (%s) set %s %s to '%s' and '%s'; "
						       "expected one to declare precedence with overrides:",
						       prev->name, pa, t->name, pb, role_name(rp->role),
						       knob_name(kn), setval[kn], t->set[i].value);
				}
			}
			setter[kn] = t;
			setval[kn] = t->set[i].value;
			settruth[kn] = truth;
		}
	}
	for (int kn = 0; kn < KNOB__COUNT; kn++) {
		const struct trait *t = setter[kn];
		if (!t)
			continue;
		_cleanup_free_ char *where = src_pos_str(&t->pos);
		const char *assume = settruth[kn] == TRI_UNKNOWN ? (t->assume ? t->assume
									     : "a fact was unknown; applied as the trait asks")
								 : NULL;
		knob_push(&rp->knobs[kn], PROV_TRAIT, setval[kn], where, t, settruth[kn], assume);
	}
	return 0;
}

static int fleet_traits(struct plan *p, const struct plan_input *in, struct err **err)
{
	struct fact_view ec;
	role_view(p, in->facts, NULL, &ec);
	knob_push(&p->bringup, PROV_DEFAULT, "together", "template default", NULL, TRI_TRUE, NULL);
	const struct trait *bsetter = NULL;
	for (char **tn = p->profile->traits; tn && *tn; tn++) {
		const struct trait *t = knowledge_trait(in->k, *tn);
		if (!t)
			return err_set(err, EXIT_CONFIG, "profile '%s' lists unknown trait '%s'",
				       p->profile->name, *tn);
		if (t->n_set || (!t->bringup && !t->dead_env))
			continue;
		_cleanup_free_ char *detail = NULL;
		enum tri truth = trait_predicate(t, &ec, &detail);
		if (!trait_applies(t, truth))
			continue;
		if (t->bringup) {
			if (bsetter && strcmp(bsetter->bringup, t->bringup) != 0 &&
			    !trait_overrides(bsetter, t) && !trait_overrides(t, bsetter))
				return err_set(err, EXIT_CONFIG,
					       "traits '%s' and '%s' set bringup to '%s' and '%s'; expected "
					       "one to declare precedence with overrides:",
					       bsetter->name, t->name, bsetter->bringup, t->bringup);
			if (!bsetter || !trait_overrides(bsetter, t)) {
				_cleanup_free_ char *where = src_pos_str(&t->pos);
				knob_push(&p->bringup, PROV_TRAIT, t->bringup, where, t, truth,
					  truth == TRI_UNKNOWN ? t->assume : NULL);
				bsetter = t;
			}
		}
		for (char **e = t->dead_env; e && *e; e++) {
			size_t n = 0;
			while (p->dead_env && p->dead_env[n])
				n++;
			strv_push(&p->dead_env, *e);
			p->dead_env_traits = xrealloc(p->dead_env_traits, (n + 1) * sizeof(*p->dead_env_traits));
			p->dead_env_traits[n] = t;
		}
	}
	return 0;
}

/* The model role r runs: the operator's, else the profile's, else the
 * template's (the checkpoint read and the family follow it). */
static const char *role_model(const struct plan_input *in, const struct profile *pr, int r)
{
	const char *m = NULL;
	for (size_t i = 0; i < in->n_overrides; i++)
		if ((int)in->overrides[i].role == r && in->overrides[i].knob == KNOB_MODEL)
			m = in->overrides[i].value;
	if (!m)
		m = pr->roles[r].knobs[KNOB_MODEL];
	return m ? m : in->k->defaults[r].knobs[KNOB_MODEL];
}

static bool role_spec_feasible(const struct plan_input *in, const struct profile *pr, int r)
{
	const char *f = pr->roles[r].knobs[KNOB_FEASIBLE] ? pr->roles[r].knobs[KNOB_FEASIBLE]
							   : in->k->defaults[r].knobs[KNOB_FEASIBLE];
	return pr->roles[r].present && f && strcmp(f, "true") == 0;
}

/* Steps 1-3 of one role: default, family, profile (the checkpoint is read
 * first, as the family is matched by it). */
static int base_steps(struct plan *p, struct role_plan *rp, const struct plan_input *in,
		      const char *ppos, struct err **err)
{
	const struct profile *pr = p->profile;
	int r = (int)rp->role;
	int (*rd)(const char *, struct checkpoint_facts *, struct err **) =
		in->read_checkpoint ? in->read_checkpoint : checkpoint_facts_read;
	const char *model = role_model(in, pr, r);
	if (role_spec_feasible(in, pr, r) && model) {
		if (rd(model, &rp->ckpt, err) < 0)
			return err_wrap(err, "checkpoint of %s", role_name(rp->role));
		if (family_match(in->k, model, rp->ckpt.has_config, rp->ckpt.architectures,
				 rp->ckpt.model_type, role_lane(rp->role), &rp->family, &rp->family_why,
				 err) < 0)
			return err_wrap(err, "%s", role_name(rp->role));
	} else {
		rp->ckpt.kv_scales_why = xstrdup("role not feasible: checkpoint not read");
	}
	const struct family *fam = rp->family;
	for (int kn = 0; kn < KNOB__COUNT; kn++) {
		const struct role_spec *d = &in->k->defaults[r];
		if (d->knobs[kn]) {
			_cleanup_free_ char *w = src_pos_str(&d->knob_pos[kn]);
			knob_push(&rp->knobs[kn], PROV_DEFAULT, d->knobs[kn], w, NULL, TRI_TRUE, NULL);
		}
		for (size_t i = 0; fam && i < fam->n_set; i++)
			if ((int)fam->set[i].knob == kn) {
				_cleanup_free_ char *w = src_pos_str(&fam->set_pos[kn]);
				knob_push(&rp->knobs[kn], PROV_FAMILY, fam->set[i].value, w, NULL, TRI_TRUE,
					  NULL);
				rp->knobs[kn].chain[rp->knobs[kn].n_chain - 1].family = fam;
			}
		if (pr->roles[r].knobs[kn]) {
			_cleanup_free_ char *w = src_pos_str(&pr->roles[r].knob_pos[kn]);
			knob_push(&rp->knobs[kn], PROV_PROFILE, pr->roles[r].knobs[kn], w, NULL, TRI_TRUE,
				  NULL);
		}
	}
	if (!rp->present) {
		_cleanup_free_ char *w = xasprintf("%s (profile '%s' does not name the role)", ppos,
						   pr->name);
		knob_push(&rp->knobs[KNOB_FEASIBLE], PROV_PROFILE, "false", w, NULL, TRI_TRUE, NULL);
	}
	return 0;
}

/* Between traits and operator: a max_model_len beyond the checkpoint's
 * native context is clamped to it (vLLM would refuse to start). */
static void clamp_context(struct role_plan *rp)
{
	struct knob_value *kv = &rp->knobs[KNOB_MAX_MODEL_LEN];
	if (rp->ckpt.native_context <= 0 || !kv->value || atoll(kv->value) <= rp->ckpt.native_context)
		return;
	_cleanup_free_ char *v = xasprintf("%lld", rp->ckpt.native_context);
	_cleanup_free_ char *w = xasprintf("%s/config.json: the checkpoint's native context (%s)",
					   rp->ckpt.snapshot ? rp->ckpt.snapshot : "checkpoint",
					   rp->ckpt.native_context_why);
	knob_push(kv, PROV_FAMILY, v, w, NULL, TRI_TRUE, NULL);
	kv->chain[kv->n_chain - 1].family = rp->family;
}

/* After the operator: family values still in effect must be accepted by
 * the role's vLLM; an unknown family on a generate lane, or an operator's
 * context beyond the native one, is a warning. */
static int family_checks(struct plan *p, struct role_plan *rp, struct err **err)
{
	const char *rn = role_name(rp->role);
	for (int kn = 0; rp->reg && kn < KNOB__COUNT; kn++) {
		const struct knob_value *kv = &rp->knobs[kn];
		const struct prov_step *last = kv->n_chain ? &kv->chain[kv->n_chain - 1] : NULL;
		const char *flag = knob_vllm_flag((enum knob_id)kn);
		if (!last || last->kind != PROV_FAMILY || !last->family || !flag ||
		    !strcmp(kv->value, "none") || !strcmp(kv->value, "auto"))
			continue;
		_cleanup_free_ char *bad = NULL;
		if (vllm_reg_check_arg(rp->reg, flag, kv->value, &bad) < 0)
			return err_set(err, EXIT_CONFIG, "%s: family '%s' for %s (%s): %s (image %s); "
				       "expected the profile or the operator to set %s",
				       last->where, last->family->name, rn,
				       rp->knobs[KNOB_MODEL].value, bad, rp->image->name, knob_name(kn));
	}
	if (!rp->family && role_lane(rp->role) == LANE_GENERATE &&
	    !strcmp(rp->knobs[KNOB_TOOL_CALL_PARSER].value ? rp->knobs[KNOB_TOOL_CALL_PARSER].value
							   : "none", "none")) {
		_cleanup_free_ char *up = xstrdup(rn);
		for (char *c = up; *c; c++)
			*c = (char)(*c - 'a' + 'A');
		_cleanup_free_ char *w = xasprintf("%s: unknown family: pass --tool-call-parser "
						   "(%s_TOOL_CALL_PARSER in .env) or add a family; '%s' "
						   "gets no tool-call or reasoning parser (%s)", rn, up,
						   rp->knobs[KNOB_MODEL].value,
						   rp->family_why ? rp->family_why : "checkpoint not read");
		strv_push(&p->warnings, w);
	}
	const struct knob_value *ml = &rp->knobs[KNOB_MAX_MODEL_LEN];
	if (rp->ckpt.native_context > 0 && ml->value && atoll(ml->value) > rp->ckpt.native_context) {
		_cleanup_free_ char *w = xasprintf("%s: max_model_len %s (%s) exceeds the checkpoint's "
						   "native context %lld (%s); vLLM refuses it unless "
						   "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", rn, ml->value,
						   ml->chain[ml->n_chain - 1].where,
						   rp->ckpt.native_context, rp->ckpt.native_context_why);
		strv_push(&p->warnings, w);
	}
	return 0;
}

int plan_resolve(struct plan *p, const struct plan_input *in, struct err **err)
{
	memset(p, 0, sizeof(*p));
	if (select_profile(p, in, err) < 0)
		return -1;
	const struct profile *pr = p->profile;
	_cleanup_free_ char *ppos = src_pos_str(&pr->pos);
	for (int r = 0; r < ROLE__COUNT; r++) {
		struct role_plan *rp = &p->roles[r];
		rp->role = (enum role_id)r;
		rp->present = pr->roles[r].present;
		if (base_steps(p, rp, in, ppos, err) < 0)
			return -1;
		derive_attention_path(p, rp);
		if (knob_is_true(&rp->knobs[KNOB_FEASIBLE]) && apply_traits_to_role(p, rp, in, err) < 0)
			return -1;
		if (knob_is_true(&rp->knobs[KNOB_FEASIBLE]))
			clamp_context(rp);
	}
	if (fleet_traits(p, in, err) < 0)
		return -1;
	for (size_t i = 0; i < in->n_overrides; i++) {
		const struct override *o = &in->overrides[i];
		knob_push(&p->roles[o->role].knobs[o->knob], PROV_OVERRIDE, o->value, o->where, NULL,
			  TRI_TRUE, NULL);
	}
	for (int r = 0; r < ROLE__COUNT; r++) {
		struct role_plan *rp = &p->roles[r];
		derive_attention_path(p, rp);
		if (!role_feasible(p, (enum role_id)r))
			continue;
		rp->image = knowledge_image(in->k, rp->knobs[KNOB_IMAGE].value);
		if (rp->image) {
			rp->reg = xcalloc(1, sizeof(*rp->reg));
			if (vllm_reg_load(rp->reg, rp->image->registry, err) < 0)
				return -1;
		}
		static const enum knob_id need[] = { KNOB_MODEL, KNOB_GPU_MEM_UTIL, KNOB_MAX_MODEL_LEN,
						     KNOB_IMAGE };
		for (size_t i = 0; i < ARRAY_SIZE(need); i++)
			if (!rp->knobs[need[i]].value)
				return err_set(err, EXIT_CONFIG, "%s: role '%s' is feasible but has no %s; "
						 "expected the profile to set it or mark the role feasible: false",
					       ppos, role_name(rp->role), knob_name(need[i]));
		if (family_checks(p, rp, err) < 0)
			return -1;
	}
	bool placed[ROLE__COUNT] = { 0 };
	for (char **o = pr->order; o && *o; o++) {
		int r = role_from_name(*o);
		if (r >= 0 && !placed[r] && role_feasible(p, (enum role_id)r)) {
			p->order[p->n_order++] = (enum role_id)r;
			placed[r] = true;
		}
	}
	for (int r = 0; r < ROLE__COUNT; r++)
		if (!placed[r] && role_feasible(p, (enum role_id)r))
			p->order[p->n_order++] = (enum role_id)r;
	return 0;
}

void plan_free(struct plan *p)
{
	for (int r = 0; r < ROLE__COUNT; r++) {
		struct role_plan *rp = &p->roles[r];
		for (int kn = 0; kn < KNOB__COUNT; kn++)
			knob_value_free(&rp->knobs[kn]);
		checkpoint_facts_free(&rp->ckpt);
		free(rp->family_why);
		free(rp->attention_path);
		free(rp->attention_path_why);
		for (size_t i = 0; i < rp->n_evals; i++)
			free(rp->evals[i].detail);
		free(rp->evals);
		if (rp->reg)
			vllm_reg_free(rp->reg);
		free(rp->reg);
	}
	knob_value_free(&p->bringup);
	strv_free(p->dead_env);
	free(p->dead_env_traits);
	strv_free(p->warnings);
	free(p->card_why);
	memset(p, 0, sizeof(*p));
}
