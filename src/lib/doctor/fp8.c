/*
 * fp8.c — check "fp8-kv": the `assert layer.k_scale > 0.0` crash the fp8
 * trait predicts, per role keeping its KV cache in fp8, from the deployed
 * values, the checkpoint's KV scales and the derived attention path.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "doctor_int.h"

static const char *kv_scales_word(enum tri t)
{
	return t == TRI_TRUE ? "ships KV scales" : t == TRI_FALSE ? "ships NO KV scales" : "KV scales UNKNOWN";
}

void check_fp8(struct doctor_ctx *x)
{
	struct doctor_report *r = x->r;
	struct deployed *d = x->d;
	const struct knowledge *k = x->k;
	const struct card *card = x->card;
	const struct host_facts *f = x->f;
	const struct trait *t = knowledge_trait(k, FP8_TRAIT);
	size_t n = 0;
	for (int i = 0; i < ROLE__COUNT; i++) {
		const struct deployed_role *dr = &d->roles[i];
		const char *kv = dr->knobs[KNOB_KV_CACHE_DTYPE];
		if (!dr->present || !kv || !str_starts_with(kv, "fp8"))
			continue;
		n++;
		const char *role = role_name((enum role_id)i);
		_cleanup_free_ char *facts = xasprintf(
			"kv_cache_dtype=%s; checkpoint '%s' %s (%s); attention path %s (%s)", kv,
			dr->knobs[KNOB_MODEL] ? dr->knobs[KNOB_MODEL] : "?", kv_scales_word(dr->ck.kv_scales),
			dr->ck.kv_scales_why ? dr->ck.kv_scales_why : "", dr->attn ? dr->attn : "unknown",
			dr->attn_why ? dr->attn_why : "");
		if (!t) {
			doc_add(r, "fp8-kv", SEV_INFO, "%s: %s; trait '%s' is not loaded, nothing predicted", role,
			    facts, FP8_TRAIT)->role = xstrdup(role);
			continue;
		}
		struct fact_view dc;
		deployed_view(card, f, i, dr, &dc);
		_cleanup_free_ char *detail = NULL;
		enum tri truth = trait_predicate(t, &dc, &detail);
		_cleanup_free_ char *key = env_key((enum role_id)i, "KV_CACHE_DTYPE");
		struct check *c;
		if (truth == TRI_TRUE) {
			c = doc_add(r, "fp8-kv", SEV_ERROR,
				"%s: predicted crash `assert layer.k_scale > 0.0` at boot: %s", role, facts);
			c->remedy = xasprintf("kv_cache_dtype=auto (trait %s): set %s=auto in .env, then "
					      "`lobes init --apply`",
					      t->name, key);
		} else if (truth == TRI_UNKNOWN) {
			c = doc_add(r, "fp8-kv", SEV_WARNING,
				"%s: the `assert layer.k_scale > 0.0` crash cannot be ruled out: %s", role, facts);
			c->remedy = xasprintf("put the checkpoint in the Hugging Face cache so its KV scales can "
					      "be read, or set %s=auto in .env (trait %s)",
					      key, t->name);
		} else {
			c = doc_add(r, "fp8-kv", SEV_OK, "%s: no fp8 KV crash predicted: %s", role, facts);
		}
		c->role = xstrdup(role);
		c->trait = xstrdup(t->name);
		c->detail = xasprintf("%s\n%s", detail, truth == TRI_FALSE ? "" : t->cause);
		char *nl = c->detail + strlen(c->detail);
		while (nl > c->detail && nl[-1] == '\n')
			*--nl = '\0';
	}
	if (!n)
		doc_add(r, "fp8-kv", SEV_OK, "no feasible role keeps its KV cache in fp8");
}
