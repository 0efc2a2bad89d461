/*
 * env_registry.c — check "env-registry": every VLLM_* name passed to the
 * fleet (.env and each service's environment:) against the names the
 * traits declare dead, data/vllm-env/removed.txt, the image build noise,
 * and the registry of the vLLM version (recorded, or probed from the image).
 */
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "../knowledge/knowledge.h"
#include "doctor_int.h"

/* The replacement removed.txt records for name, or NULL. Caller frees. */
static char *removed_replacement(const char *name)
{
	const struct embedded_file *f = doc_embedded("data/vllm-env/removed.txt");
	if (!f)
		return NULL;
	_cleanup_free_ char *copy = xstrdup(f->data);
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *s = str_strip(l);
		if (*s == '#')
			continue;
		size_t n = strcspn(s, " \t");
		if (n == strlen(name) && strncmp(s, name, n) == 0)
			return xstrdup(str_strip(s + n));
	}
	return NULL;
}

/* Replace every "<NAME>"/"<VALUE>" placeholder in tmpl by value. */
static char *fill(const char *tmpl, const char *value)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	for (const char *p = tmpl; *p;) {
		if (value && *value && (str_starts_with(p, "<NAME>") || str_starts_with(p, "<VALUE>"))) {
			buf_adds(&b, value);
			p += p[1] == 'N' ? 6 : 7;
		} else {
			buf_add(&b, p++, 1);
		}
	}
	return buf_take(&b);
}

/* A trait replacement "--flag=JSON" as a shell/YAML-safe "--flag='JSON'". */
static char *quote_flag(const char *s)
{
	const char *eq = strchr(s, '=');
	if (!str_starts_with(s, "--") || !eq || eq[1] == '\'' || !strpbrk(eq, "{\" "))
		return xstrdup(s);
	return xasprintf("%.*s'%s'", (int)(eq - s + 1), s, eq + 1);
}

/* The env registry one role's image is checked against: the image's own
 * (--image-probe) or the recorded list of its vLLM version. */
struct role_reg {
	char **names; /* NULL: none known */
	char *source, *ver;
	bool probed;
};

static void role_reg_get(struct doctor_ctx *x, const struct deployed_role *dr, struct role_reg *rr)
{
	memset(rr, 0, sizeof(*rr));
	const struct vimage *vi = knowledge_image(x->k, dr->image);
	if (vi)
		rr->ver = xstrdup(vi->vllm_version);
	if (x->o->image_probe) {
		rr->names = image_registry(x->r, x->o, x->docker, dr->image, &rr->source);
		rr->probed = rr->names != NULL;
	}
	if (!rr->names && vi) {
		struct vllm_reg reg;
		if (vllm_reg_load(&reg, vi->registry, NULL) == 0) {
			rr->names = TAKE_PTR(reg.envs);
			rr->source = xasprintf("vLLM %s (recorded list, data/vllm/%s/envs.txt)",
					       vi->vllm_version, vi->registry);
		}
		vllm_reg_free(&reg);
	}
}

static void role_reg_free(struct role_reg *rr)
{
	strv_free(rr->names);
	free(rr->source);
	free(rr->ver);
}

void check_env(struct doctor_ctx *x)
{
	struct doctor_report *r = x->r;
	struct deployed *d = x->d;
	const struct knowledge *k = x->k;
	const struct card *card = x->card;
	const struct host_facts *f = x->f;
	struct role_reg regs[ROLE__COUNT] = { 0 };
	for (int i = 0; i < ROLE__COUNT; i++) {
		const struct deployed_role *dr = &d->roles[i];
		if (!dr->present)
			continue;
		role_reg_get(x, dr, &regs[i]);
		if (!regs[i].names) {
			struct check *c = doc_add(r, "env-registry", SEV_WARNING,
						  "%s: the vLLM of image '%s' is not recorded; its VLLM_* names are "
						  "only checked against the names known to be dead",
						  role_name((enum role_id)i), dr->image ? dr->image : "(none)");
			c->role = xstrdup(role_name((enum role_id)i));
			c->remedy = xstrdup("run `lobes doctor --image-probe` to ask the image itself");
		}
	}
	const struct embedded_file *nf = doc_embedded("data/vllm-env/image-noise.txt");
	_cleanup_strv_ char **noise = vllm_env_list_parse(nf ? nf->data : "");
	/* Dead names: the traits that declare them, evaluated at fleet level. */
	struct fact_view dc;
	deployed_view(card, f, -1, NULL, &dc);
	size_t bad = 0, n = 0;
	for (size_t i = 0; i < d->n_uses; i++) {
		const struct env_use *u = &d->uses[i];
		n++;
		/* A service's name is checked against its role's registry; a .env
		 * name against every deployed role's (registered in one is enough). */
		bool any_reg = false, registered = false, probed = false;
		_cleanup_buf_ struct buf srcb, verb;
		buf_init(&srcb, 0);
		buf_init(&verb, 0);
		for (int ri = 0; ri < ROLE__COUNT; ri++) {
			if (!d->roles[ri].present || (u->role >= 0 && u->role != ri))
				continue;
			const struct role_reg *rr = &regs[ri];
			if (rr->ver && !strstr(buf_str(&verb), rr->ver))
				buf_printf(&verb, "%s%s", verb.len ? ", " : "", rr->ver);
			if (!rr->names)
				continue;
			any_reg = true;
			registered = registered || strv_has(rr->names, u->name);
			probed = probed || rr->probed;
			if (!strstr(buf_str(&srcb), rr->source))
				buf_printf(&srcb, "%s%s", srcb.len ? "; " : "", rr->source);
		}
		const char *ver = verb.len ? buf_str(&verb) : NULL;
		const char *source = srcb.len ? buf_str(&srcb) : NULL;
		const struct trait *dead_by = NULL;
		for (size_t t = 0; t < k->n_traits && !dead_by; t++) {
			const struct trait *tr = &k->traits[t];
			if (!strv_has(tr->dead_env, u->name))
				continue;
			_cleanup_free_ char *det = NULL;
			if (trait_applies(tr, trait_predicate(tr, &dc, &det)))
				dead_by = tr;
		}
		_cleanup_free_ char *removed = removed_replacement(u->name);
		if (probed && registered) {
			if (dead_by || removed)
				doc_add(r, "env-registry", SEV_INFO,
				    "%s (%s) is registered in this image (%s), though it is recorded as dead "
				    "on the pinned vLLM",
				    u->name, u->where, source)->name = xstrdup(u->name);
			continue;
		}
		if (dead_by || removed) {
			_cleanup_free_ char *tmpl = dead_by && dead_by->dead_env_replacement
							    ? quote_flag(dead_by->dead_env_replacement)
							    : NULL;
			_cleanup_free_ char *rep = fill(tmpl ? tmpl : removed, u->value);
			struct check *c = doc_add(r, "env-registry", SEV_ERROR,
					      "%s is DEAD on vLLM %s (%s): the variable is not honoured%s%s%s",
					      u->name, ver ? ver : "?", u->where,
					      dead_by ? " (trait " : "", dead_by ? dead_by->name : "",
					      dead_by ? ")" : "");
			c->name = xstrdup(u->name);
			if (dead_by)
				c->trait = xstrdup(dead_by->name);
			c->remedy = xasprintf("remove %s from %s; use %s instead%s", u->name, u->where, rep,
					      strcmp(u->name, "VLLM_ATTENTION_BACKEND") == 0
						      ? " (with lobes: set <ROLE>_ATTENTION_BACKEND in .env, "
							"then `lobes init --apply`)"
						      : "");
			bad++;
			continue;
		}
		if (strv_has(noise, u->name)) {
			doc_add(r, "env-registry", SEV_INFO,
			    "%s (%s) is image build metadata, not registered: vLLM logs `Unknown vLLM "
			    "environment variable detected: %s` on every boot; harmless",
			    u->name, u->where, u->name)->name = xstrdup(u->name);
			continue;
		}
		if (any_reg && !registered) {
			struct check *c = doc_add(r, "env-registry", SEV_WARNING,
					      "%s (%s) is not in the registry of %s: may be ignored", u->name,
					      u->where, source);
			c->name = xstrdup(u->name);
			if (u->role < 0 && str_starts_with(u->where, ".env:")) {
				c->fix = DOCTOR_FIX_COMMENT_OUT; /* a compose file's line is lobes' own */
				c->line = (int)strtol(u->where + 5, NULL, 10);
			}
			c->remedy = xasprintf("check the name against the image (`lobes doctor --image-probe`); "
					      "vLLM logs `Unknown vLLM environment variable detected: %s` "
					      "for an unregistered name",
					      u->name);
			bad++;
		}
	}
	_cleanup_buf_ struct buf all;
	buf_init(&all, 0);
	for (int ri = 0; ri < ROLE__COUNT; ri++)
		if (regs[ri].source && !strstr(buf_str(&all), regs[ri].source))
			buf_printf(&all, "%s%s", all.len ? "; " : "", regs[ri].source);
	if (!bad)
		doc_add(r, "env-registry", SEV_OK, "%zu VLLM_* name%s passed to the fleet, none dead or "
		    "unregistered%s%s", n, n == 1 ? "" : "s", all.len ? "; checked against " : "",
		    all.len ? buf_str(&all) : "");
	for (int ri = 0; ri < ROLE__COUNT; ri++)
		role_reg_free(&regs[ri]);
}
