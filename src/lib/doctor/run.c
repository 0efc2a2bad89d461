/*
 * run.c — doctor_run: gather what is deployed, what init would write now
 * and the facts of this box, then run every family of the check table
 * (table.c) whose needs are met, in table order.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../facts/facts.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "doctor_int.h"

int doctor_run(struct doctor_report *r, const struct doctor_opts *o, struct err **err)
{
	memset(r, 0, sizeof(*r));
	r->dir = xstrdup(o->dir);
	bool exists = fs_exists(o->dir);
	if (exists && !fs_is_dir(o->dir))
		return err_set(err, EXIT_CONFIG, "deploy dir '%s' is not a directory; expected the "
				 "directory `lobes init --apply` wrote", o->dir);
	if (exists && access(o->dir, R_OK | X_OK) < 0)
		return err_errno(err, EXIT_CONFIG, errno, "deploy dir '%s' cannot be read", o->dir);
	const char *docker = o->docker ? o->docker : getenv("LOBES_DOCKER");
	if (!docker || !*docker)
		docker = "docker";

	struct deployed d = { 0 };
	r->no_dir = !exists;
	if (!exists) {
		struct check *c = doc_add(r, "deploy-dir", SEV_ERROR, "no deploy dir at '%s'", o->dir);
		c->remedy = xstrdup("run `lobes init --apply` (or pass --dir)");
	} else {
		deployed_read(&d, o->dir, r);
	}

	/* What init would write now, the plan behind it, and the facts. */
	struct init_opts io = { .dir = o->dir, .profile = o->profile };
	struct init_result ir;
	struct err *e = NULL;
	bool ir_ok = init_prepare(&ir, &io, &e) == 0;
	struct host_facts own_facts = { 0 };
	struct knowledge own_k = { 0 };
	const struct host_facts *f = &ir.lp.facts;
	const struct knowledge *k = &ir.lp.k;
	const struct card *card = ir_ok ? ir.lp.plan.card : NULL;
	_cleanup_free_ char *card_why = NULL;
	if (!ir_ok) {
		if (exists) {
			struct check *c = doc_add(r, "deploy-dir", SEV_ERROR, "`lobes init` cannot render over it: %s",
					      e ? e->msg : "unknown error");
			c->remedy = xstrdup("fix what the message names; then `lobes doctor` again");
		} else {
			doc_add(r, "profile", SEV_ERROR, "%s", e ? e->msg : "the plan cannot be resolved");
		}
		err_free(e);
		e = NULL;
		struct facts_opts fo;
		facts_opts_from_env(&fo);
		host_facts_gather(&own_facts, &fo, NULL);
		_cleanup_free_ char *opdir = xasprintf("%s/profiles", o->dir);
		if (knowledge_load(&own_k, opdir, &e) < 0) {
			err_free(e);
			e = NULL;
			knowledge_load(&own_k, NULL, NULL);
		}
		f = &own_facts;
		k = &own_k;
		card = card_match(k, f, &card_why);
	}
	if (exists && d.compose_ok)
		deployed_facts(&d, card);
	struct doctor_ctx x = {
		.r = r, .o = o, .docker = docker, .exists = exists, .d = &d, .ir = &ir, .ir_ok = ir_ok,
		.f = f, .k = k, .card = card, .card_why = ir_ok ? ir.lp.plan.card_why : card_why,
	};
	unsigned have = (ir_ok ? DOC_NEEDS_PLAN : 0) | (exists ? DOC_NEEDS_DIR : 0) |
			(exists && d.env_ok ? DOC_NEEDS_ENV : 0) |
			(exists && d.compose_ok ? DOC_NEEDS_COMPOSE : 0);
	for (size_t i = 0; i < doctor_families_count; i++)
		if ((doctor_families[i].needs & have) == doctor_families[i].needs)
			doctor_families[i].run(&x);

	deployed_free(&d);
	init_result_free(&ir);
	host_facts_free(&own_facts);
	knowledge_free(&own_k);
	return 0;
}
