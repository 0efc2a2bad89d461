/* session.c — facts + knowledge + plan in one owner; see session.h. */
#include <string.h>

#include "../util/cleanup.h"
#include "session.h"

int loaded_plan_init_ov(struct loaded_plan *lp, const char *deploy_dir, const char *profile,
			const struct override *ov, size_t n_ov, struct err **err)
{
	memset(lp, 0, sizeof(*lp));
	struct facts_opts o;
	facts_opts_from_env(&o);
	if (host_facts_gather(&lp->facts, &o, err) < 0)
		return err_wrap(err, "detect");
	_cleanup_free_ char *opdir = deploy_dir ? xasprintf("%s/profiles", deploy_dir) : NULL;
	if (knowledge_load(&lp->k, opdir, err) < 0) {
		loaded_plan_free(lp);
		return -1;
	}
	struct plan_input in = { .k = &lp->k, .facts = &lp->facts, .profile = profile,
				 .overrides = ov, .n_overrides = n_ov };
	if (plan_resolve(&lp->plan, &in, err) < 0) {
		loaded_plan_free(lp);
		return -1;
	}
	return 0;
}

int loaded_plan_reresolve(struct loaded_plan *lp, const char *profile, const struct override *ov,
			  size_t n_ov, struct err **err)
{
	plan_free(&lp->plan);
	struct plan_input in = { .k = &lp->k, .facts = &lp->facts, .profile = profile,
				 .overrides = ov, .n_overrides = n_ov };
	return plan_resolve(&lp->plan, &in, err);
}

int loaded_plan_init(struct loaded_plan *lp, const char *deploy_dir, const char *profile,
		     struct err **err)
{
	return loaded_plan_init_ov(lp, deploy_dir, profile, NULL, 0, err);
}

void loaded_plan_free(struct loaded_plan *lp)
{
	plan_free(&lp->plan);
	knowledge_free(&lp->k);
	host_facts_free(&lp->facts);
	memset(lp, 0, sizeof(*lp));
}
