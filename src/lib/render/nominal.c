/*
 * nominal.c — a profile rendered for its own card: nominal facts (the
 * card's recorded numbers, no detection) and no checkpoint reads, so the
 * bytes depend on the profile and the knowledge only. The knowledge comes
 * loaded (the command reads the operator's DIR/profiles): nothing here
 * touches the file system. This is what `lobes render` prints and what the
 * goldens hold.
 */
#include "render.h"

int render_nominal(const struct knowledge *k, const char *profile, struct render_out *out,
		   struct err **err)
{
	int rc = -1;
	struct host_facts f = { 0 };
	struct plan p = { 0 };
	struct fleet_template t = { 0 };
	const struct profile *pr = knowledge_profile(k, profile);
	if (!pr) {
		/* let plan_resolve produce the "unknown profile" error text */
		struct plan_input in = { .k = k, .facts = &f, .profile = profile,
					 .read_checkpoint = checkpoint_nominal };
		plan_resolve(&p, &in, err);
		goto out;
	}
	host_facts_nominal(&f, knowledge_card(k, pr->card));
	struct plan_input in = { .k = k, .facts = &f, .profile = profile,
				 .read_checkpoint = checkpoint_nominal };
	if (plan_resolve(&p, &in, err) < 0 || fleet_template_load(&t, err) < 0 ||
	    render_fleet(&p, &t, out, err) < 0)
		goto out;
	rc = 0;
out:
	fleet_template_free(&t);
	plan_free(&p);
	host_facts_free(&f);
	return rc;
}
