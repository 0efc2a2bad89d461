/*
 * placeholder.c — check "placeholder": no lobes placeholder and no empty
 * value reaches vLLM (docs/knowledge.md "What reaches vLLM"), and every
 * <ROLE>_<KNOB> value in .env is in effect.
 *
 * Compose reads only <ROLE>_IMAGE, _PORT, _MODEL, _GPU_MEM_UTIL,
 * _MAX_MODEL_LEN and _KV_CACHE_DTYPE, as ${KEY:-rendered}: an empty value
 * falls back to the rendered one (a warning: the line says nothing), and a
 * lobes word such as none or auto where vLLM wants a number would reach
 * vLLM as it is (an error, with the fix). Every other knob is written into
 * the compose command by `lobes init`; a .env value that differs from what
 * the command holds is not in effect until `lobes init --apply` (a warning),
 * and one init would refuse is an error.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "doctor_int.h"

static const enum knob_id read_by_compose[] = { KNOB_IMAGE, KNOB_MODEL, KNOB_GPU_MEM_UTIL,
						KNOB_MAX_MODEL_LEN, KNOB_KV_CACHE_DTYPE };

static bool compose_reads(enum knob_id k)
{
	for (size_t i = 0; i < ARRAY_SIZE(read_by_compose); i++)
		if (read_by_compose[i] == k)
			return true;
	return false;
}

static bool placeholder_word(const char *v)
{
	return strcmp(v, "none") == 0 || strcmp(v, "auto") == 0 || strcmp(v, "null") == 0 ||
	       strcmp(v, "None") == 0;
}

static size_t check_key(struct doctor_ctx *x, enum role_id role, enum knob_id k, const struct env_entry *e)
{
	const struct deployed_role *dr = &x->d->roles[role];
	const char *rn = role_name(role);
	_cleanup_free_ char *canon = NULL;
	const char *expect = NULL;
	bool valid = knob_canon(k, e->value, &canon, &expect) == 0;
	struct check *c = NULL;
	if (!*e->value) {
		c = doc_add(x->r, "placeholder", SEV_WARNING,
			    "%s: %s is empty (.env:%d); %s", rn, e->key, e->line,
			    compose_reads(k) ? "compose uses the rendered value instead: an empty value never "
					       "reaches vLLM"
					     : "`lobes init` would refuse it");
		c->remedy = xasprintf("set %s to %s, or delete the line to take lobes' value", e->key,
				      expect ? expect : "a value");
	} else if (compose_reads(k) && !valid) {
		c = doc_add(x->r, "placeholder", SEV_ERROR,
			    "%s: %s=%s (.env:%d) reaches vLLM as it is, and is not %s%s", rn, e->key, e->value,
			    e->line, expect, placeholder_word(e->value) ? " (a lobes placeholder)" : "");
		c->remedy = xasprintf("set %s to %s, or delete the line to take lobes' value", e->key, expect);
	} else if (!compose_reads(k) && !valid) {
		c = doc_add(x->r, "placeholder", SEV_ERROR,
			    "%s: %s=%s (.env:%d) is not %s: `lobes init` refuses it, and the compose "
			    "command keeps its old value", rn, e->key, e->value, e->line, expect);
		c->remedy = xasprintf("set %s to %s, then `lobes init --apply`", e->key, expect);
	} else if (!compose_reads(k) && dr->knobs[k] && strcmp(dr->knobs[k], canon) != 0) {
		c = doc_add(x->r, "placeholder", SEV_WARNING,
			    "%s: %s=%s (.env:%d) is not in effect: the compose command has %s; lobes "
			    "writes this knob into the command (a placeholder such as none or auto must "
			    "drop the flag, which compose cannot do)",
			    rn, e->key, e->value, e->line, dr->knobs[k]);
		c->remedy = xstrdup("run `lobes init --apply` to render the command from .env");
	}
	if (!c)
		return 0;
	if (!*e->value || !valid)
		c->fix = DOCTOR_FIX_SET_VALUE;
	c->line = e->line;
	c->role = xstrdup(rn);
	c->name = xstrdup(e->key);
	return 1;
}

/* The entry that counts for key: the last one. */
static const struct env_entry *last_entry(const struct env_file *f, const char *key)
{
	const struct env_entry *hit = NULL;
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->e[i].key, key) == 0)
			hit = &f->e[i];
	return hit;
}

void check_placeholder(struct doctor_ctx *x)
{
	size_t n = 0;
	for (size_t i = 0; i < x->d->env.n; i++) {
		const struct env_entry *e = &x->d->env.e[i];
		if (last_entry(&x->d->env, e->key) != e)
			continue; /* a repeated key: the last one counts */
		for (int r = 0; r < ROLE__COUNT; r++) {
			if (!x->d->roles[r].present)
				continue;
			for (int k = 0; k < KNOB__COUNT; k++) {
				if (k == KNOB_FEASIBLE)
					continue;
				_cleanup_free_ char *key = env_key((enum role_id)r, knob_name((enum knob_id)k));
				if (strcmp(key, e->key) == 0)
					n += check_key(x, (enum role_id)r, (enum knob_id)k, e);
			}
		}
	}
	if (!n)
		doc_add(x->r, "placeholder", SEV_OK,
			"every <ROLE>_* value in .env is in effect; no lobes placeholder or empty value "
			"reaches vLLM");
}
