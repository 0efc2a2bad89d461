/*
 * deployed_k8s.c — one overlay of a rendered Kubernetes tree, read into the
 * same `struct deployed` the compose reader fills (deployed.c), so doctor's
 * checks run on it unchanged: overlays/<profile>/gateway.env is the .env
 * (what the gateway's ConfigMap holds), and each init container of
 * overlays/<profile>/daemonset.yaml is a role: its image, and `vllm serve`
 * followed by its args (the kubelet's `$$` read back as `$`), knobs read
 * back by deployed_knobs_from_args. What only Kubernetes has (sidecar
 * order and kind, startupProbes, node selection, env literals under
 * secret names) is kept beside it for doctor's kubernetes checks.
 */
#include <libfyaml.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/secret.h"
#include "../util/strv.h"
#include "../util/yaml_doc.h"
#include "../util/yaml_scalar.h"
#include "deploy_int.h"

static char *text_at(struct fy_node *n, const char *path)
{
	struct fy_node *x = n ? fy_node_by_path(n, path, FY_NT, FYNWF_DONT_FOLLOW) : NULL;
	size_t len;
	const char *s = x && fy_node_is_scalar(x) ? yaml_scalar0(x, &len) : NULL;
	return s ? xasprintf("%.*s", (int)len, s) : NULL;
}

static void problem(struct deployed *d, char *msg)
{
	d->problems = xrealloc(d->problems, (d->n_problems + 1) * sizeof(*d->problems));
	d->problems[d->n_problems++] = (struct deployed_problem){ .msg = msg,
		.remedy = xstrdup("render the tree again: `lobes render --target kubernetes --out DIR`") };
}

/* "$$" -> "$": what the kubelet hands the container. */
static char *unescape(const char *s)
{
	char *o = xstrdup(s), *w = o;
	for (const char *p = s; *p; p++) {
		*w++ = *p;
		if (p[0] == '$' && p[1] == '$')
			p++;
	}
	*w = 0;
	return o;
}

static void secret_literals(struct deployed_k8s *k, const char *cname, struct fy_node *c)
{
	struct fy_node *env = fy_node_by_path(c, "/env", FY_NT, FYNWF_DONT_FOLLOW);
	void *it = NULL;
	struct fy_node *e;
	while (env && fy_node_is_sequence(env) && (e = fy_node_sequence_iterate(env, &it))) {
		_cleanup_free_ char *name = text_at(e, "/name");
		if (name && secret_name(name) && fy_node_by_path(e, "/value", FY_NT, FYNWF_DONT_FOLLOW)) {
			_cleanup_free_ char *s = xasprintf("%s: %s", cname, name);
			strv_push(&k->literals, s);
		}
	}
}

static void read_container(struct deployed_k8s *k, struct fy_node *c)
{
	_cleanup_free_ char *name = text_at(c, "/name");
	if (!name)
		return;
	strv_push(&k->order, name);
	_cleanup_free_ char *rp = text_at(c, "/restartPolicy");
	if (!rp || strcmp(rp, "Always") != 0)
		strv_push(&k->not_sidecar, name);
	if (!fy_node_by_path(c, "/startupProbe", FY_NT, FYNWF_DONT_FOLLOW))
		strv_push(&k->no_startup, name);
	secret_literals(k, name, c);
	int role = role_from_name(name);
	if (role < 0)
		return;
	struct deployed_role *dr = &k->d.roles[role];
	dr->present = true;
	free(dr->service);
	dr->service = xstrdup(name);
	free(dr->image);
	dr->image = text_at(c, "/image");
	_cleanup_strv_ char **args = NULL;
	strv_push(&args, "vllm");
	strv_push(&args, "serve");
	struct fy_node *a = fy_node_by_path(c, "/args", FY_NT, FYNWF_DONT_FOLLOW);
	void *it = NULL;
	struct fy_node *x;
	while (a && fy_node_is_sequence(a) && (x = fy_node_sequence_iterate(a, &it))) {
		size_t len;
		const char *s = fy_node_is_scalar(x) ? yaml_scalar0(x, &len) : NULL;
		if (!s)
			continue;
		_cleanup_free_ char *raw = xasprintf("%.*s", (int)len, s);
		_cleanup_free_ char *v = unescape(raw);
		strv_push(&args, v);
	}
	deployed_knobs_from_args(dr, args);
	strv_free(dr->args);
	dr->args = TAKE_PTR(args);
}

static void read_pod(struct deployed_k8s *k, struct fy_node *spec)
{
	struct fy_node *sel = fy_node_by_path(spec, "/nodeSelector", FY_NT, FYNWF_DONT_FOLLOW);
	void *it = NULL;
	struct fy_node_pair *p;
	while (sel && fy_node_is_mapping(sel) && (p = fy_node_mapping_iterate(sel, &it))) {
		size_t kl, vl;
		const char *ks = yaml_scalar0(fy_node_pair_key(p), &kl);
		const char *vs = yaml_scalar0(fy_node_pair_value(p), &vl);
		if (ks && vs) {
			_cleanup_free_ char *kv = xasprintf("%.*s=%.*s", (int)kl, ks, (int)vl, vs);
			strv_push(&k->selector, kv);
		}
	}
	const char *lists[] = { "/initContainers", "/containers" };
	for (size_t l = 0; l < 2; l++) {
		struct fy_node *cs = fy_node_by_path(spec, lists[l], FY_NT, FYNWF_DONT_FOLLOW);
		struct fy_node *c;
		it = NULL;
		while (cs && fy_node_is_sequence(cs) && (c = fy_node_sequence_iterate(cs, &it))) {
			if (l == 0)
				read_container(k, c);
			else {
				_cleanup_free_ char *n = text_at(c, "/name");
				secret_literals(k, n ? n : "?", c);
			}
		}
	}
}

void deployed_load_k8s(struct deployed_k8s *k, const char *tree, const char *profile)
{
	memset(k, 0, sizeof(*k));
	struct deployed *d = &k->d;
	_cleanup_free_ char *env = xasprintf("%s/overlays/%s/gateway.env", tree, profile);
	struct err *e = NULL;
	_cleanup_free_ char *etext = fs_read(env, ENV_FILE_CAP, NULL, &e);
	if (!etext || env_parse(etext, env, &d->env, &e) < 0) {
		problem(d, xasprintf("%s", e ? e->msg : env));
		err_free(e);
		e = NULL;
	} else
		d->env_ok = true;
	_cleanup_free_ char *path = xasprintf("%s/overlays/%s/daemonset.yaml", tree, profile);
	size_t len = 0;
	_cleanup_free_ char *text = fs_read(path, 16 << 20, &len, &e);
	struct fy_document *fyd = NULL;
	if (!text || yaml_doc_parse(path, text, len, 0, "a mapping", &fyd, &e) < 0 || !fyd) {
		problem(d, xasprintf("%s", e ? e->msg : path));
		err_free(e);
		return;
	}
	struct fy_node *spec = fy_node_by_path(fy_document_root(fyd), "/spec/template/spec", FY_NT,
					       FYNWF_DONT_FOLLOW);
	if (!spec || !fy_node_is_mapping(spec))
		problem(d, xasprintf("%s: no spec.template.spec; expected the DaemonSet patch lobes renders",
				     path));
	else {
		read_pod(k, spec);
		d->compose_ok = true;
	}
	fy_document_destroy(fyd);
}

void deployed_k8s_free(struct deployed_k8s *k)
{
	deployed_free(&k->d);
	strv_free(k->order);
	strv_free(k->not_sidecar);
	strv_free(k->no_startup);
	strv_free(k->selector);
	strv_free(k->literals);
	memset(k, 0, sizeof(*k));
}
