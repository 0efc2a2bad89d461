/*
 * nominal.c — a profile rendered for its own card: nominal facts (the
 * card's recorded numbers, no detection) and no checkpoint reads, so the
 * bytes depend on the profile and the knowledge only. The knowledge comes
 * loaded (the command reads the operator's DIR/profiles): nothing here
 * touches the file system. This is what `lobes render` prints and what the
 * goldens hold.
 */
#include <stdlib.h>
#include <string.h>

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

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int render_nominal_k8s(const struct knowledge *k, const char *const *profiles, size_t n,
		       const struct k8s_options *o, struct render_out *out, struct err **err)
{
	memset(out, 0, sizeof(*out));
	const char *names[K8S_MAX_PROFILES];
	if (!n) {
		for (size_t i = 0; i < k->n_profiles && n < K8S_MAX_PROFILES; i++)
			names[n++] = k->profiles[i].name;
		qsort(names, n, sizeof(names[0]), cmp_name);
	} else if (n > K8S_MAX_PROFILES) {
		return err_set(err, EXIT_USAGE, "%zu profiles; expected at most %d", n, K8S_MAX_PROFILES);
	} else
		memcpy(names, profiles, n * sizeof(names[0]));
	struct host_facts f[K8S_MAX_PROFILES] = { 0 };
	struct plan p[K8S_MAX_PROFILES] = { 0 };
	struct k8s_profile ps[K8S_MAX_PROFILES] = { 0 };
	struct fleet_template t = { 0 };
	struct k8s_template kt = { 0 };
	size_t done = 0;
	int rc = -1;
	for (; done < n; done++) {
		const struct profile *pr = knowledge_profile(k, names[done]);
		host_facts_nominal(&f[done], pr ? knowledge_card(k, pr->card) : NULL);
		struct plan_input in = { .k = k, .facts = &f[done], .profile = names[done],
					 .read_checkpoint = checkpoint_nominal };
		if (plan_resolve(&p[done], &in, err) < 0) {
			done++;
			goto out;
		}
		ps[done].plan = &p[done];
		ps[done].card = pr ? knowledge_card(k, pr->card) : NULL;
		const char *mem = f[done].mem_total.valid ? f[done].mem_total.value : NULL;
		if (mem && f[done].memory_model.valid && !strcmp(f[done].memory_model.value, "unified"))
			ps[done].mem_bytes = strtoull(mem, NULL, 10);
	}
	if (fleet_template_load(&t, err) < 0 || k8s_template_load(&kt, err) < 0 ||
	    render_kubernetes(ps, n, &t, &kt, o, out, err) < 0)
		goto out;
	rc = 0;
out:
	k8s_template_free(&kt);
	fleet_template_free(&t);
	for (size_t i = 0; i < done; i++) {
		plan_free(&p[i]);
		host_facts_free(&f[i]);
	}
	return rc;
}
