/*
 * kubernetes.c — `lobes doctor --kubernetes DIR`: a tree `lobes render
 * --target kubernetes` wrote, checked overlay by overlay with the SAME
 * check families as a compose deploy dir (image, vllm-args, fp8-kv,
 * traits: the table's functions, run on what deploy/ reads from the
 * overlay), against the overlay's own profile and card (nominal facts: the
 * tree is not deployed on this box). Then what only Kubernetes has:
 *
 *   kubernetes-nodes     the node selector is the card's GPU Feature
 *                        Discovery labels (or the opt-in profile label)
 *   kubernetes-sidecars  engines are native sidecars with startupProbes, in
 *                        the profile's bring-up order; and the known gap
 *   kubernetes-secrets   no secret value in the gateway's ConfigMap or in
 *                        an env literal
 *   kubernetes-render    the overlay's files equal the render of its profile
 *
 * Each finding's message starts with "overlays/<profile>: ".
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../render/render.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/secret.h"
#include "../util/strv.h"
#include "doctor_int.h"

static size_t strv_length(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

static char *strv_join(char *const *v, const char *sep)
{
	struct buf b;
	buf_init(&b, 0);
	for (size_t i = 0; v && v[i]; i++)
		buf_printf(&b, "%s%s", i ? sep : "", v[i]);
	return buf_take(&b);
}

/* Move tr's findings into r, each message prefixed. */
static void take(struct doctor_report *r, struct doctor_report *tr, const char *prefix)
{
	for (size_t i = 0; i < tr->n; i++) {
		struct check *c = &tr->c[i];
		struct check *n = doc_add(r, c->id, c->sev, "%s%s", prefix, c->message);
		n->remedy = TAKE_PTR(c->remedy);
		n->detail = TAKE_PTR(c->detail);
		n->role = TAKE_PTR(c->role);
		n->trait = TAKE_PTR(c->trait);
		n->name = TAKE_PTR(c->name);
	}
}

static void check_nodes(struct doctor_report *r, const char *pre, const char *profile,
			const struct card *card, const struct k8s_template *kt, char **have)
{
	_cleanup_strv_ char **want = NULL;
	_cleanup_free_ char *p = NULL, *ma = NULL, *mi = NULL, *opt = NULL;
	if (render_k8s_gfd_selects(card)) {
		strv_push(&want, p = xasprintf("nvidia.com/gpu.product=%s", card->gfd_product));
		strv_push(&want, ma = xasprintf("nvidia.com/gpu.compute.major=%s", card->gfd_compute_major));
		strv_push(&want, mi = xasprintf("nvidia.com/gpu.compute.minor=%s", card->gfd_compute_minor));
	} else {
		strv_push(&want, opt = xasprintf("%s=%s", kt->profile_label, profile));
	}
	bool same = strv_length(want) == strv_length(have);
	for (char **w = want; same && *w; w++)
		same = strv_has(have, *w);
	_cleanup_free_ char *ws = strv_join(want, ", ");
	if (!same) {
		_cleanup_free_ char *hs = have ? strv_join(have, ", ") : xstrdup("none");
		struct check *c = doc_add(r, "kubernetes-nodes", SEV_ERROR,
					  "%snodeSelector %s does not select card '%s' nodes; expected %s", pre,
					  hs, card ? card->name : "unknown", ws);
		c->remedy = xstrdup("render the tree again (`lobes render --target kubernetes`)");
		return;
	}
	struct check *c = doc_add(r, "kubernetes-nodes", SEV_OK, "%sselects %s", pre, ws);
	if (render_k8s_gfd_selects(card) && card->gfd_note)
		c->detail = xasprintf("label values: %s", card->gfd_note);
}

static void check_sidecars(struct doctor_report *r, const char *pre, const struct plan *p,
			   const struct deployed_k8s *dk)
{
	_cleanup_strv_ char **want = NULL;
	for (size_t i = 0; i < p->n_order; i++)
		strv_push(&want, role_name(p->order[i]));
	_cleanup_free_ char *ws = strv_join(want, ", ");
	_cleanup_free_ char *hs = dk->order ? strv_join(dk->order, ", ") : xstrdup("none");
	bool same = strv_length(want) == strv_length(dk->order);
	for (size_t i = 0; same && want[i]; i++)
		same = strcmp(want[i], dk->order[i]) == 0;
	size_t before = r->n;
	if (!same)
		doc_add(r, "kubernetes-sidecars", SEV_ERROR,
			"%sthe engines start in the order %s; the profile's bring-up order is %s", pre, hs, ws)
			->remedy = xstrdup("render the tree again: the kubelet starts sidecars in list order");
	for (char **n = dk->not_sidecar; n && *n; n++)
		doc_add(r, "kubernetes-sidecars", SEV_ERROR,
			"%s%s is not a native sidecar (restartPolicy: Always): the pod's next container "
			"waits for it to exit", pre, *n);
	for (char **n = dk->no_startup; n && *n; n++)
		doc_add(r, "kubernetes-sidecars", SEV_ERROR,
			"%s%s has no startupProbe: the kubelet starts the next engine while it still "
			"profiles memory", pre, *n);
	if (r->n == before)
		doc_add(r, "kubernetes-sidecars", SEV_OK,
			"%sengines are native sidecars with startupProbes, in the bring-up order %s", pre, ws);
}

static void check_secrets(struct doctor_report *r, const char *pre, const struct deployed_k8s *dk)
{
	size_t before = r->n;
	for (char **l = dk->literals; l && *l; l++)
		doc_add(r, "kubernetes-secrets", SEV_ERROR, "%san env literal under a secret's name, %s",
			pre, *l)->remedy = xstrdup("take it from a Secret (valueFrom.secretKeyRef)");
	for (size_t i = 0; i < dk->d.env.n; i++)
		if (secret_name(dk->d.env.e[i].key) && *dk->d.env.e[i].value)
			doc_add(r, "kubernetes-secrets", SEV_ERROR,
				"%sgateway.env (the gateway's ConfigMap) holds a value for %s", pre,
				dk->d.env.e[i].key)
				->remedy = xstrdup("remove it: the gateway's key is the Secret mounted as "
						   "its --key-file; the Hugging Face token is the Secret lobes-hf-token");
	if (r->n == before)
		doc_add(r, "kubernetes-secrets", SEV_OK, "%sno secret in the ConfigMap or an env literal", pre);
}

/* The overlay's files against the render of the same profiles. */
static void check_render(struct doctor_report *r, const char *tree, const struct render_out *ro,
			 const char *profile)
{
	_cleanup_free_ char *prefix = xasprintf("overlays/%s/", profile);
	_cleanup_strv_ char **differ = NULL;
	for (size_t i = 0; i < ro->n; i++) {
		if (strncmp(ro->files[i].name, prefix, strlen(prefix)) != 0)
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", tree, ro->files[i].name);
		_cleanup_free_ char *have = fs_exists(path) ? fs_read(path, 16 << 20, NULL, NULL) : NULL;
		if (!have || strcmp(have, ro->files[i].data) != 0)
			strv_push(&differ, ro->files[i].name + strlen(prefix));
	}
	if (differ) {
		_cleanup_free_ char *ds = strv_join(differ, ", ");
		doc_add(r, "kubernetes-render", SEV_WARNING,
			"overlays/%s: %s differ from the render of profile '%s' (edited, or rendered by "
			"another lobes or other knowledge)", profile, ds, profile)
			->remedy = xasprintf("compare: lobes render --target kubernetes --check %s", tree);
	} else
		doc_add(r, "kubernetes-render", SEV_OK, "overlays/%s: the render of profile '%s'", profile,
			profile);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The overlays of tree, sorted (strv; NULL when none). */
static char **overlays_of(const char *tree)
{
	_cleanup_free_ char *dir = xasprintf("%s/overlays", tree);
	DIR *dh = opendir(dir);
	char **v = NULL;
	size_t n = 0;
	struct dirent *de;
	while (dh && (de = readdir(dh))) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, de->d_name);
		if (de->d_name[0] != '.' && fs_is_dir(p)) {
			strv_push(&v, de->d_name);
			n++;
		}
	}
	if (dh)
		closedir(dh);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	return v;
}

/* Every family that reads a deployed fleet, on one overlay. */
static void overlay(struct doctor_report *r, const struct doctor_opts *o, const struct knowledge *k,
		    const struct k8s_template *kt, const struct render_out *ro, const char *name)
{
	_cleanup_free_ char *pre = xasprintf("overlays/%s: ", name);
	const struct profile *pr = knowledge_profile(k, name);
	if (!pr) {
		doc_add(r, "kubernetes", SEV_ERROR, "%sno profile '%s' in the knowledge", pre, name)->remedy =
			xasprintf("put the profile under %s/profiles/ (--dir), or remove the overlay", o->dir);
		return;
	}
	const struct card *card = knowledge_card(k, pr->card);
	struct host_facts f = { 0 };
	struct plan p = { 0 };
	host_facts_nominal(&f, card);
	struct plan_input in = { .k = k, .facts = &f, .profile = name,
				 .read_checkpoint = checkpoint_nominal };
	struct err *e = NULL;
	struct deployed_k8s dk;
	deployed_load_k8s(&dk, o->kubernetes, name);
	for (size_t i = 0; i < dk.d.n_problems; i++)
		doc_add(r, "kubernetes", SEV_ERROR, "%s%s", pre, dk.d.problems[i].msg)->remedy =
			xstrdup(dk.d.problems[i].remedy);
	if (plan_resolve(&p, &in, &e) < 0) {
		doc_add(r, "kubernetes", SEV_ERROR, "%s%s", pre, e->msg);
		err_free(e);
	} else if (dk.d.compose_ok) {
		deployed_facts(&dk.d, card);
		struct doctor_report tr = { 0 };
		struct doctor_ctx x = { .r = &tr, .o = o, .exists = true, .d = &dk.d, .f = &f, .k = k,
					.card = card, .card_why = "the overlay's profile" };
		check_image(&x);
		check_vllm_args(&x);
		check_fp8(&x);
		check_traits(&x);
		take(r, &tr, pre);
		doctor_report_free(&tr);
		check_nodes(r, pre, name, card, kt, dk.selector);
		check_sidecars(r, pre, &p, &dk);
		check_secrets(r, pre, &dk);
		if (ro)
			check_render(r, o->kubernetes, ro, name);
	}
	deployed_k8s_free(&dk);
	plan_free(&p);
	host_facts_free(&f);
}

int doctor_run_kubernetes(struct doctor_report *r, const struct doctor_opts *o, struct err **err)
{
	memset(r, 0, sizeof(*r));
	r->dir = xstrdup(o->kubernetes);
	if (!fs_is_dir(o->kubernetes))
		return err_set(err, EXIT_CONFIG, "'%s' is not a directory; expected the tree `lobes render "
			       "--target kubernetes --out DIR` wrote", o->kubernetes);
	_cleanup_strv_ char **names = overlays_of(o->kubernetes);
	if (!names) {
		doc_add(r, "kubernetes", SEV_ERROR, "no overlays in '%s/overlays'", o->kubernetes)->remedy =
			xstrdup("lobes render --target kubernetes --out DIR");
		return 0;
	}
	struct knowledge k = { 0 };
	_cleanup_free_ char *opdir = xasprintf("%s/profiles", o->dir);
	struct err *e = NULL;
	if (knowledge_load(&k, opdir, err) < 0) {
		knowledge_free(&k);
		return -1;
	}
	struct k8s_template kt;
	if (k8s_template_load(&kt, err) < 0) {
		knowledge_free(&k);
		return -1;
	}
	/* the render of the same profiles, to compare with (when it renders) */
	struct render_out ro = { 0 };
	bool rendered = render_nominal_k8s(&k, (const char *const *)names, strv_length(names), NULL,
					   &ro, &e) == 0;
	if (!rendered) {
		doc_add(r, "kubernetes-render", SEV_WARNING, "the overlays' profiles do not render: %s",
			e->msg);
		err_free(e);
	}
	for (char **n = names; *n; n++)
		overlay(r, o, &k, &kt, rendered ? &ro : NULL, *n);
	struct check *c = doc_add(r, "kubernetes-restart", SEV_INFO,
				  "an engine the kubelet restarts later does not wait for the others: it "
				  "profiles memory beside running engines, and the gateway answers 503 "
				  "backend_unavailable for its role until it is up");
	c->detail = xstrdup("native sidecars keep the bring-up order only when the pod starts (the "
			    "kubelet starts the next once the previous one's startupProbe passed)");
	c->remedy = xstrdup("if a restarted engine fails its memory check (\"Free memory on device ... "
			    "is less than desired\"), delete the pod: its DaemonSet starts the node's "
			    "engines again, in order");
	render_out_free(&ro);
	k8s_template_free(&kt);
	knowledge_free(&k);
	return 0;
}
