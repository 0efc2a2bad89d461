/*
 * profile.c — check "profile": the card detected on this box and the
 * profile the deploy dir is (or would be) rendered from.
 */
#include <string.h>

#include "../facts/facts.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "doctor_int.h"

static void check_profile_one(struct doctor_report *r, const struct init_result *ir, bool ok,
			  const struct host_facts *f, const struct card *card, const char *card_why,
			  const char *env_profile, const char *asked)
{
	double gib = 0;
	_cleanup_free_ char *mem = host_facts_mem_gib(f, &gib) ? xasprintf("%.1f GiB", gib)
							       : xstrdup("memory unknown");
	_cleanup_free_ char *facts2 = xasprintf(
		"%s, compute capability %s, %s", f->gpu_name.valid ? f->gpu_name.value : "name unknown",
		f->compute_cap.valid ? f->compute_cap.value : "unknown", mem);
	if (!ok) {
		doc_add(r, "profile", SEV_WARNING,
		    "card %s (%s): %s; the profile could not be resolved (see deploy-dir)",
		    card ? card->name : "unknown", facts2, card_why ? card_why : "");
		return;
	}
	const struct plan *p = &ir->lp.plan;
	const char *src = asked ? "--profile" : ir->profile_from_dir ? "the deploy dir's .env LOBES_PROFILE"
								    : "the detected card";
	enum check_sev sev = p->unvalidated || !card ? SEV_WARNING : SEV_OK;
	_cleanup_buf_ struct buf m;
	buf_init(&m, 0);
	buf_printf(&m, "profile '%s' (%s, from %s) on card %s (%s): %s", p->profile->name,
		   p->profile->status, src, card ? card->name : "unknown", facts2, card_why ? card_why : "");
	if (p->unvalidated)
		buf_printf(&m, "; UNVALIDATED for this card: profile '%s' is made for card '%s'",
			   p->profile->name, p->profile->card);
	if (asked && env_profile && strcmp(env_profile, asked) != 0)
		buf_printf(&m, "; the deploy dir was rendered for '%s'", env_profile);
	struct check *c = doc_add(r, "profile", sev, "%s", buf_str(&m));
	if (p->unvalidated && card && card->profile && strcmp(card->profile, p->profile->name) != 0)
		c->remedy = xasprintf("use the profile made for this card: `lobes init --profile %s --apply`",
				      card->profile);
	else if (!card)
		c->remedy = xstrdup("no shipped card matches this box: add a card file (and a profile) "
				    "under <deploy-dir>/profiles/ or serve the conservative base profile");
}

void check_profile_family(struct doctor_ctx *x)
{
	check_profile_one(x->r, x->ir, x->ir_ok, x->f, x->card, x->card_why, env_get(&x->d->env, "LOBES_PROFILE"),
		      x->o->profile);
}
