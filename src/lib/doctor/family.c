/*
 * family.c — check "family": each deployed generate role's model matched to
 * its family (data/families/, by the checkpoint's config.json, by the model
 * id only without one). An unknown family with no tool-call parser is a
 * warning that says to pass one; a known family whose parser is missing
 * from the deployed command (a request with tools gets HTTP 400, <think>
 * lands in the answer) is a warning with the family's value as the fix; a
 * different parser the operator chose is only noted.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "doctor_int.h"

static void one_role(struct doctor_ctx *x, int i)
{
	const struct deployed_role *dr = &x->d->roles[i];
	const char *role = role_name((enum role_id)i), *model = dr->knobs[KNOB_MODEL];
	const struct family *f = NULL;
	_cleanup_free_ char *why = NULL;
	struct err *e = NULL;
	if (family_match(x->k, model, dr->ck.has_config, dr->ck.architectures, dr->ck.model_type,
			 role_lane((enum role_id)i), &f, &why, &e) < 0) {
		doc_add(x->r, "family", SEV_WARNING, "%s: %s", role, e->msg);
		err_free(e);
		return;
	}
	const char *tool = dr->knobs[KNOB_TOOL_CALL_PARSER];
	bool no_tool = !tool || !strcmp(tool, "none");
	if (!f) {
		if (!no_tool)
			return;
		_cleanup_free_ char *key = env_key((enum role_id)i, "tool_call_parser");
		struct check *c = doc_add(x->r, "family", SEV_WARNING,
					  "%s: unknown family: pass --tool-call-parser; '%s' is served "
					  "with no tool-call parser (%s)", role, model, why);
		c->role = xstrdup(role);
		c->remedy = xasprintf("set %s=<parser> in .env and run lobes init --apply, or add a "
				      "family under %s/profiles/families/", key, x->o->dir);
		return;
	}
	for (size_t s = 0; s < f->n_set; s++) {
		enum knob_id kn = f->set[s].knob;
		if (kn != KNOB_TOOL_CALL_PARSER && kn != KNOB_REASONING_PARSER)
			continue;
		const char *want = f->set[s].value, *have = dr->knobs[kn];
		if (have && !strcmp(have, want))
			continue;
		_cleanup_free_ char *key = env_key((enum role_id)i, knob_name(kn));
		bool missing = !have || !strcmp(have, "none");
		struct check *c = doc_add(x->r, "family", missing ? SEV_WARNING : SEV_INFO,
					  "%s: '%s' is family %s (%s), which sets %s %s; the deployed "
					  "command has %s", role, model, f->name, why, knob_name(kn), want,
					  have ? have : "none");
		c->role = xstrdup(role);
		if (missing)
			c->remedy = xasprintf("set %s=%s in .env and run lobes init --apply", key, want);
	}
}

void check_family(struct doctor_ctx *x)
{
	size_t before = x->r->n;
	for (int i = 0; i < ROLE__COUNT; i++)
		if (x->d->roles[i].present && role_lane((enum role_id)i) == LANE_GENERATE &&
		    x->d->roles[i].knobs[KNOB_MODEL])
			one_role(x, i);
	if (x->r->n == before)
		doc_add(x->r, "family", SEV_OK, "every generate role's model family and parsers agree");
}
