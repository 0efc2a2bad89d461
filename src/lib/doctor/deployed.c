/*
 * deployed.c (doctor) — the deployed fleet, as deploy/ reads it, turned
 * into doctor's inputs: the dir's read problems as deploy-dir findings,
 * the checkpoint facts and attention path of each deployed role, and the
 * predicate view the trait checks evaluate. Traits are evaluated against
 * the deployed values and the DETECTED facts, not against the plan: a
 * profile that does not list a trait (spark on a Thor) must still be caught.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "doctor_int.h"

void deployed_read(struct deployed *d, const char *dir, struct doctor_report *r)
{
	deployed_load(d, dir);
	for (size_t i = 0; i < d->n_problems; i++) {
		struct check *c = doc_add(r, "deploy-dir", SEV_ERROR, "%s", d->problems[i].msg);
		if (d->problems[i].remedy)
			c->remedy = xstrdup(d->problems[i].remedy);
	}
}

/* --- predicates over the deployed values ------------------------------- */

/* The predicate inputs of the deployed values (dr NULL: fleet level). */
void deployed_view(const struct card *card, const struct host_facts *f, int role,
			  const struct deployed_role *dr, struct fact_view *v)
{
	memset(v, 0, sizeof(*v));
	v->facts = f;
	v->card = card;
	v->role = dr ? role : -1;
	if (!dr)
		return;
	for (int k = 0; k < KNOB__COUNT; k++)
		v->knobs[k] = dr->knobs[k];
	v->attention_path = dr->attn;
	v->ckpt = &dr->ck;
}

/* The backend this role will take, as the plan derives it, but from the
 * deployed values and the DETECTED card. */
static void derive_attention(const struct card *card, enum role_id role, struct deployed_role *dr)
{
	free(dr->attn);
	free(dr->attn_why);
	dr->attn = attention_path_derive(card, role, dr->knobs[KNOB_ATTENTION_BACKEND],
					 dr->ck.hetero_head_dim, &dr->attn_why);
}

/* Read the checkpoint and derive the attention path of every deployed role. */
void deployed_facts(struct deployed *d, const struct card *card)
{
	for (int i = 0; i < ROLE__COUNT; i++) {
		struct deployed_role *dr = &d->roles[i];
		if (!dr->present)
			continue;
		struct err *e = NULL;
		if (dr->knobs[KNOB_MODEL] && checkpoint_facts_read(dr->knobs[KNOB_MODEL], &dr->ck, &e) < 0) {
			checkpoint_facts_free(&dr->ck);
			dr->ck.kv_scales = TRI_UNKNOWN;
			dr->ck.hetero_head_dim = TRI_UNKNOWN;
			dr->ck.kv_scales_why = xasprintf("unreadable: %s", e->msg);
			err_free(e);
		} else if (!dr->knobs[KNOB_MODEL]) {
			dr->ck.kv_scales = TRI_UNKNOWN;
			dr->ck.hetero_head_dim = TRI_UNKNOWN;
			dr->ck.kv_scales_why = xstrdup("no model in the compose command");
		}
		dr->ck_read = true;
		derive_attention(card, (enum role_id)i, dr);
	}
}
