/*
 * session.h — the common front half of most commands: gather host facts,
 * load the knowledge (shipped + <deploy-dir>/profiles), resolve the plan.
 * Owns all three so the plan's pointers into the knowledge stay valid.
 */
#ifndef LOBES_SESSION_H
#define LOBES_SESSION_H

#include "plan.h"

struct loaded_plan {
	struct host_facts facts;
	struct knowledge k;
	struct plan plan;
};

/* deploy_dir: operator files are read from <deploy_dir>/profiles (missing is
 * fine). profile: NULL = chosen by the detected card. overrides may be NULL. */
int loaded_plan_init(struct loaded_plan *lp, const char *deploy_dir, const char *profile,
		     struct err **err);
int loaded_plan_init_ov(struct loaded_plan *lp, const char *deploy_dir, const char *profile,
			const struct override *ov, size_t n_ov, struct err **err);
/* Resolve lp's plan again over the facts and knowledge it already holds
 * (nothing is detected or loaded twice), e.g. with overrides. On failure
 * the caller still calls loaded_plan_free(). */
int loaded_plan_reresolve(struct loaded_plan *lp, const char *profile, const struct override *ov,
			  size_t n_ov, struct err **err);
void loaded_plan_free(struct loaded_plan *lp);

#endif
