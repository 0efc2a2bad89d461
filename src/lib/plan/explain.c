/*
 * explain.c — the plan as a JSON tree: the facts that selected the profile,
 * then for each role every knob's value and the chain that produced it
 * (default / profile / trait with cause and evidence / override). The text
 * form printed by `lobes explain` is built from this same tree.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "plan.h"

static json_t *evidence_list(const struct evidence *e, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, evidence_json(&e[i]));
	return a;
}

static json_t *chain_json(const struct knob_value *kv)
{
	json_t *a = json_array();
	for (size_t i = 0; i < kv->n_chain; i++) {
		const struct prov_step *s = &kv->chain[i];
		json_t *o = json_pack("{s:s, s:s?, s:s?}", "kind", prov_kind_name(s->kind), "value",
				      s->value, "where", s->where);
		if (s->trait) {
			json_object_set_new(o, "trait", json_string(s->trait->name));
			json_object_set_new(o, "cause", json_string(s->trait->cause ? s->trait->cause : ""));
			json_object_set_new(o, "predicate", json_string(tri_name(s->truth)));
			if (s->assumption)
				json_object_set_new(o, "assumption", json_string(s->assumption));
			json_object_set_new(o, "evidence",
					    evidence_list(s->trait->evidence, s->trait->n_evidence));
		}
		if (s->kind == PROV_FAMILY && s->family) {
			json_object_set_new(o, "family", json_string(s->family->name));
			json_object_set_new(o, "evidence",
					    evidence_list(s->family->evidence, s->family->n_evidence));
		}
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *knob_json(const struct knob_value *kv)
{
	return json_pack("{s:s?, s:o}", "value", kv->value, "chain", chain_json(kv));
}

static json_t *role_json(const struct plan *p, const struct role_plan *rp)
{
	json_t *knobs = json_object();
	for (int k = 0; k < KNOB__COUNT; k++)
		json_object_set_new(knobs, knob_name((enum knob_id)k), knob_json(&rp->knobs[k]));
	json_t *traits = json_array();
	for (size_t i = 0; i < rp->n_evals; i++) {
		const struct trait_eval *e = &rp->evals[i];
		json_array_append_new(traits, json_pack("{s:s, s:s, s:b, s:s}", "trait", e->trait->name,
							"predicate", tri_name(e->truth), "applied",
							e->applied, "detail", e->detail));
	}
	/* the image's vLLM, which selects the lists its flags are checked against */
	json_t *image = json_pack("{s:s?, s:b, s:s?, s:s?}", "ref", rp->knobs[KNOB_IMAGE].value,
				  "recorded", rp->image != NULL, "vllm",
				  rp->image ? rp->image->vllm_version : NULL, "registry",
				  rp->image ? rp->image->registry : NULL);
	/* the family: what follows from the model, and what matched it */
	const struct family *fam = rp->family;
	json_t *family = json_pack("{s:s?, s:s?, s:s?, s:o}", "name", fam ? fam->name : NULL,
				   "description", fam ? fam->description : NULL, "why", rp->family_why,
				   "evidence", fam ? evidence_list(fam->evidence, fam->n_evidence)
						   : json_array());
	if (fam) {
		_cleanup_free_ char *w = src_pos_str(&fam->pos);
		json_object_set_new(family, "where", json_string(w));
	}
	return json_pack("{s:s, s:b, s:s, s:{s:s?, s:s?}, s:o, s:o, s:o, s:o, s:o}", "lane",
			 lane_name(role_lane(rp->role)), "feasible", role_feasible(p, rp->role),
			 "model", rp->knobs[KNOB_MODEL].value ? rp->knobs[KNOB_MODEL].value : "",
			 "attention_path", "value", rp->attention_path, "why", rp->attention_path_why,
			 "checkpoint", checkpoint_facts_json(&rp->ckpt), "family", family, "knobs",
			 knobs, "traits", traits, "image", image);
}

json_t *plan_json(const struct plan *p, const struct host_facts *f, int role)
{
	const struct profile *pr = p->profile;
	_cleanup_free_ char *ppos = src_pos_str(&pr->pos);
	json_t *card = p->card ? json_pack("{s:s, s:s, s:s?}", "id", p->card->name, "status",
					   p->card->status, "why", p->card_why)
			       : json_pack("{s:s, s:s, s:s?}", "id", "unknown", "status", "unknown",
					   "why", p->card_why);
	json_t *order = json_array();
	for (size_t i = 0; i < p->n_order; i++)
		json_array_append_new(order, json_string(role_name(p->order[i])));
	json_t *dead = json_array();
	for (size_t i = 0; p->dead_env && p->dead_env[i]; i++) {
		const struct trait *t = p->dead_env_traits[i];
		json_array_append_new(dead, json_pack("{s:s, s:s, s:s?, s:s?}", "name", p->dead_env[i],
						      "trait", t->name, "replacement",
						      t->dead_env_replacement, "cause", t->cause));
	}
	json_t *warn = json_array();
	for (size_t i = 0; p->warnings && p->warnings[i]; i++)
		json_array_append_new(warn, json_string(p->warnings[i]));
	json_t *roles = json_object();
	for (int r = 0; r < ROLE__COUNT; r++)
		if (role < 0 || role == r)
			json_object_set_new(roles, role_name((enum role_id)r), role_json(p, &p->roles[r]));
	json_t *kf = json_array();
	for (size_t i = 0; i < pr->n_known_failures; i++) {
		const struct known_failure *x = &pr->known_failures[i];
		json_array_append_new(kf, json_pack("{s:s?, s:s?, s:s?, s:s?}", "role", x->role, "probe",
						    x->probe, "reason", x->reason, "ref", x->ref));
	}
	return json_pack("{s:{s:s, s:s, s:s, s:s, s:b, s:b, s:s?}, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "profile", "name", pr->name, "status", pr->status, "card", pr->card,
			 "where", ppos, "forced", p->forced, "unvalidated", p->unvalidated,
			 "description", pr->description, "card", card, "facts",
			 f ? host_facts_json(f) : json_null(), "warnings", warn, "bringup",
			 knob_json(&p->bringup), "order", order, "dead_env", dead, "known_failures",
			 kf, "roles", roles);
}
