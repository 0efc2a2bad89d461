/*
 * traits.c — check "traits": every shipped trait (other than fp8, which has
 * its own family) evaluated on the detected facts and the deployed values;
 * a trait that holds while the deployed config differs from what it sets is
 * a finding, whichever profile the deploy dir was rendered from.
 */
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "doctor_int.h"

void check_traits(struct doctor_ctx *x)
{
	struct doctor_report *r = x->r;
	struct deployed *d = x->d;
	const struct knowledge *k = x->k;
	const struct card *card = x->card;
	const struct host_facts *f = x->f;
	size_t findings = 0;
	for (size_t ti = 0; ti < k->n_traits; ti++) {
		const struct trait *t = &k->traits[ti];
		if (strcmp(t->name, FP8_TRAIT) == 0)
			continue; /* the fp8-kv check owns it */
		if (t->bringup && !t->n_set) {
			struct fact_view dc;
			deployed_view(card, f, -1, NULL, &dc);
			_cleanup_free_ char *detail = NULL;
			enum tri truth = trait_predicate(t, &dc, &detail);
			const char *have = env_get(&d->env, "LOBES_BRINGUP");
			if (truth == TRI_TRUE && have && strcmp(have, t->bringup) != 0) {
				struct check *c = doc_add(r, "traits", SEV_WARNING,
						      "trait %s holds on this box (%s) but .env has "
						      "LOBES_BRINGUP=%s, not %s: %s",
						      t->name, detail, have, t->bringup, t->cause);
				c->trait = xstrdup(t->name);
				c->detail = trait_evidence_text(t);
				c->remedy = xasprintf("set LOBES_BRINGUP=%s in .env (trait %s)", t->bringup, t->name);
				findings++;
			}
		}
		if (!t->n_set)
			continue;
		for (int i = 0; i < ROLE__COUNT; i++) {
			const struct deployed_role *dr = &d->roles[i];
			if (!dr->present || (t->roles_mask && !(t->roles_mask & (1u << i))))
				continue;
			struct fact_view dc;
			deployed_view(card, f, i, dr, &dc);
			_cleanup_free_ char *detail = NULL;
			enum tri truth = trait_predicate(t, &dc, &detail);
			if (truth == TRI_FALSE)
				continue;
			_cleanup_buf_ struct buf diff, fix;
			buf_init(&diff, 0);
			buf_init(&fix, 0);
			for (size_t s = 0; s < t->n_set; s++) {
				enum knob_id kn = t->set[s].knob;
				const char *have = dr->knobs[kn];
				if (have && strcmp(have, t->set[s].value) == 0)
					continue;
				_cleanup_free_ char *key = env_key((enum role_id)i, knob_name(kn));
				buf_printf(&diff, "%s%s=%s (the trait sets %s)", diff.len ? ", " : "",
					   knob_name(kn), have ? have : "unknown", t->set[s].value);
				buf_printf(&fix, "%s%s=%s", fix.len ? " " : "", key, t->set[s].value);
			}
			if (!diff.len)
				continue;
			const char *role = role_name((enum role_id)i);
			struct check *c;
			if (truth == TRI_TRUE)
				c = doc_add(r, "traits", SEV_WARNING,
					"%s: trait %s holds on this box but the deployed config has %s: %s", role,
					t->name, buf_str(&diff), t->cause);
			else if (t->on_unknown && strcmp(t->on_unknown, "apply") == 0)
				c = doc_add(r, "traits", SEV_INFO,
					"%s: trait %s could not be evaluated (a fact is unknown) and the deployed "
					"config has %s: %s",
					role, t->name, buf_str(&diff), t->cause);
			else
				continue;
			c->role = xstrdup(role);
			c->trait = xstrdup(t->name);
			_cleanup_free_ char *ev = trait_evidence_text(t);
			c->detail = xasprintf("%s%s%s", detail, ev ? "\n" : "", ev ? ev : "");
			c->remedy = xasprintf("set %s in .env, then `lobes init --apply` (trait %s)",
					      buf_str(&fix), t->name);
			findings++;
		}
	}
	if (!findings)
		doc_add(r, "traits", SEV_OK, "every shipped trait that holds on this box is followed by the "
		    "deployed config");
}
