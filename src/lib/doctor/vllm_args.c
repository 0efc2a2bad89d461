/*
 * vllm_args.c — check "vllm-args": every argument of each deployed role's
 * `vllm serve` command line (interpolated with .env, as the container gets
 * it) against the recorded lists of the vLLM its image carries: the flag
 * exists, its value is of the flag's kind and among its choices, a JSON
 * value is a JSON object (--attention-config keys and backend included),
 * and the tool and reasoning parsers are registered in that version. A
 * role whose image is not recorded is left to the "image" check.
 */
#include <string.h>

#include "../knowledge/knowledge.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "doctor_int.h"

static bool bare_kind(const char *kind)
{
	return !kind || strcmp(kind, "bool") == 0 || strcmp(kind, "bool-neg") == 0 ||
	       strcmp(kind, "store_true") == 0;
}

/* Check one role's argv; returns the number of problems found. */
static size_t check_role(struct doctor_ctx *x, enum role_id role, char **args, const struct vllm_reg *reg,
			 const struct vimage *vi, size_t *n_args)
{
	size_t bad = 0, i = 0;
	const char *rn = role_name(role);
	/* skip the entrypoint ("vllm" "serve") and the positional model */
	if (args && args[i] && strcmp(args[i], "vllm") == 0)
		i++;
	if (args && args[i] && strcmp(args[i], "serve") == 0)
		i++;
	if (args && args[i] && !str_starts_with(args[i], "-"))
		i++;
	for (; args && args[i]; i++) {
		const char *a = args[i];
		(*n_args)++;
		_cleanup_free_ char *flag = NULL;
		const char *val = NULL;
		const char *eq = str_starts_with(a, "-") ? strchr(a, '=') : NULL;
		if (!str_starts_with(a, "-")) {
			struct check *c = doc_add(x->r, "vllm-args", SEV_ERROR,
						  "%s: stray argument '%s' on the vllm serve command line", rn, a);
			c->role = xstrdup(rn);
			c->remedy = xstrdup("run `lobes init --apply` to render the command again");
			bad++;
			continue;
		}
		flag = eq ? xasprintf("%.*s", (int)(eq - a), a) : xstrdup(a);
		val = eq ? eq + 1 : NULL;
		const char *kind = vllm_reg_flag_kind(reg, flag);
		if (!eq && kind && !bare_kind(kind) && args[i + 1] && !str_starts_with(args[i + 1], "-")) {
			val = args[++i];
			/* a list flag (--served-model-name) takes every value up to the next flag */
			if (strcmp(kind, "list") == 0)
				while (args[i + 1] && !str_starts_with(args[i + 1], "-"))
					i++;
		}
		_cleanup_free_ char *why = NULL;
		if (vllm_reg_check_arg(reg, flag, val, &why) == 0)
			continue;
		struct check *c = doc_add(x->r, "vllm-args", SEV_ERROR, "%s: %s (image %s)", rn, why,
					  vi->name);
		c->role = xstrdup(rn);
		c->name = xstrdup(flag);
		c->remedy = xasprintf("fix the value in .env (or the profile) and run `lobes init --apply`; "
				      "the lists are data/vllm/%s/", vi->registry);
		bad++;
	}
	return bad;
}

void check_vllm_args(struct doctor_ctx *x)
{
	size_t bad = 0, n_args = 0, roles = 0;
	for (int i = 0; i < ROLE__COUNT; i++) {
		const struct deployed_role *dr = &x->d->roles[i];
		const struct vimage *vi = dr->present ? knowledge_image(x->k, dr->image) : NULL;
		if (!vi)
			continue;
		struct vllm_reg reg;
		if (vllm_reg_load(&reg, vi->registry, NULL) == 0) {
			bad += check_role(x, (enum role_id)i, dr->args, &reg, vi, &n_args);
			roles++;
		}
		vllm_reg_free(&reg);
	}
	if (!bad && roles)
		doc_add(x->r, "vllm-args", SEV_OK,
			"%zu vllm serve argument%s of %zu role%s accepted by the recorded vLLM of each "
			"role's image (flags, values, parsers)",
			n_args, n_args == 1 ? "" : "s", roles, roles == 1 ? "" : "s");
}
