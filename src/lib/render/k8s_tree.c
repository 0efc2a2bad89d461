/*
 * k8s_tree.c — the kustomize tree of the Kubernetes render:
 *
 *   kustomization.yaml            the whole cluster: every overlay
 *   device-plugin-config.yaml     the NVIDIA device plugin's time-slicing
 *                                 config these overlays need (not an object)
 *   base/kustomization.yaml       the pod every profile shares: the gateway
 *   base/daemonset.yaml           as main container, volumes, runtime class;
 *   base/service.yaml             no engine and no node selection
 *   overlays/<profile>/kustomization.yaml   base + nameSuffix -<profile>,
 *   overlays/<profile>/daemonset.yaml       app.kubernetes.io/instance, the
 *   overlays/<profile>/gateway.env          patch (engines, node selection)
 *   overlays/<profile>/peers.yaml           and the gateway's deploy dir
 *
 * The gateway reads the same .env the compose render writes (its config
 * as a ConfigMap) and, for a role its profile cannot serve, proxies to the
 * first other rendered profile that serves it, through that profile's
 * Service with that profile's key (a Secret): per-pair keys, one hop.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "k8s_int.h"

bool render_k8s_gfd_selects(const struct card *c)
{
	return c && c->gfd_product && c->status && strcmp(c->status, "unvalidated") != 0;
}

char *k8s_key_secret(const char *profile)
{
	return xasprintf(K8S_KEY_SECRET_PREFIX "%s", profile);
}

const struct plan *k8s_peer_for(const struct k8s_ctx *c, enum role_id r)
{
	if (role_feasible(c->prof->plan, r))
		return NULL;
	/* a validated card's profile first, then a partial one; never a
	 * profile that runs only where an operator labels a node */
	const struct k8s_profile *best = NULL;
	for (size_t i = 0; i < c->n_all; i++) {
		const struct k8s_profile *q = &c->all[i];
		if (q == c->prof || !role_feasible(q->plan, r) || !render_k8s_gfd_selects(q->card))
			continue;
		if (!best || (strcmp(best->card->status, "validated") != 0 &&
			      strcmp(q->card->status, "validated") == 0))
			best = q;
	}
	return best ? best->plan : NULL;
}

void k8s_header(struct buf *b, const char *file, const struct plan *p)
{
	if (p)
		buf_printf(b, "# %s — rendered by lobes from profile '%s' (%s).\n", file,
			   p->profile->name, p->profile->status);
	else
		buf_printf(b, "# %s — rendered by lobes.\n", file);
}

void k8s_comment_infeasible(struct buf *b, const struct plan *p)
{
	bool any = false;
	for (int r = 0; r < ROLE__COUNT; r++)
		if (!role_feasible(p, (enum role_id)r)) {
			buf_printf(b, "%s %s", any ? "" : "# Not rendered (not feasible with this profile):",
				   role_name((enum role_id)r));
			any = true;
		}
	if (any)
		buf_adds(b, ".\n");
}

void k8s_comment_wrapped(struct buf *b, const char *s)
{
	size_t col = 50;
	_cleanup_free_ char *copy = xstrdup(s ? s : "");
	char *save = NULL;
	for (char *w = strtok_r(copy, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
		if (col + strlen(w) > 76) {
			buf_adds(b, "\n#");
			col = 1;
		}
		buf_printf(b, " %s", w);
		col += strlen(w) + 1;
	}
	buf_adds(b, "\n");
}

static const char *LABELS = "    app.kubernetes.io/name: lobes\n"
			    "    app.kubernetes.io/component: fleet\n"
			    "    app.kubernetes.io/part-of: lobes\n"
			    "    app.kubernetes.io/managed-by: lobes\n";

static char *base_daemonset(const struct k8s_ctx *c)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	k8s_header(&b, "base/daemonset.yaml", NULL);
	buf_adds(&b, "# The pod every card profile shares: the gateway as its main container\n"
		     "# (the engines are the overlays' native sidecars), the runtime class,\n"
		     "# the Hugging Face cache and a memory-backed /dev/shm. No node\n"
		     "# selection here: each overlay selects its card's nodes.\n"
		     "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: lobes\n  labels:\n");
	buf_adds(&b, LABELS);
	buf_adds(&b, "spec:\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: lobes\n"
		     "      app.kubernetes.io/component: fleet\n"
		     "  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate:\n"
		     "      maxUnavailable: 1\n  template:\n    metadata:\n      labels:\n");
	buf_adds(&b, "        app.kubernetes.io/name: lobes\n        app.kubernetes.io/component: fleet\n"
		     "        app.kubernetes.io/part-of: lobes\n        app.kubernetes.io/managed-by: lobes\n");
	buf_printf(&b, "    spec:\n      runtimeClassName: %s\n      enableServiceLinks: false\n"
		       "      automountServiceAccountToken: false\n"
		       "      terminationGracePeriodSeconds: %d\n      containers:\n"
		       "        - name: gateway\n          image: ",
		   c->kt->runtime_class, c->kt->grace_seconds);
	k8s_q(&b, c->o->lobes_image ? c->o->lobes_image : c->kt->lobes_image);
	buf_printf(&b, "\n          args: ['--dir', '" K8S_CONFIG_DIR "', 'gateway', '--bind', '0.0.0.0', "
		       "'--port', '%d', '--key-file', '" K8S_KEY_DIR "/gateway.key']\n"
		       "          ports:\n            - name: http\n              containerPort: %d\n",
		   c->kt->gateway_port, c->kt->gateway_port);
	buf_adds(&b, "          readinessProbe:\n            httpGet:\n              path: /health\n"
		     "              port: http\n            periodSeconds: 5\n"
		     "          livenessProbe:\n            httpGet:\n              path: /health\n"
		     "              port: http\n            periodSeconds: 15\n"
		     "            failureThreshold: 3\n"
		     "          securityContext:\n            allowPrivilegeEscalation: false\n"
		     "            readOnlyRootFilesystem: true\n            capabilities:\n"
		     "              drop: ['ALL']\n"
		     "          volumeMounts:\n            - name: config\n              mountPath: '"
		     K8S_CONFIG_DIR "'\n              readOnly: true\n            - name: gateway-key\n"
		     "              mountPath: '" K8S_KEY_DIR "'\n              readOnly: true\n");
	buf_adds(&b, "      volumes:\n        - name: config\n          configMap:\n"
		     "            name: lobes-gateway\n        - name: gateway-key\n          secret:\n"
		     "            secretName: lobes-gateway-key\n"
		     "            defaultMode: 256 # 0400: the gateway refuses a key others may read\n"
		     "        - name: shm\n          emptyDir:\n            medium: Memory\n"
		     "            sizeLimit: ");
	buf_adds(&b, c->kt->shm_size);
	buf_adds(&b, "\n        - name: hf-cache\n");
	if (c->o->hf_claim) {
		buf_adds(&b, "          persistentVolumeClaim:\n            claimName: ");
		k8s_q(&b, c->o->hf_claim);
		buf_adds(&b, "\n");
	} else {
		buf_adds(&b, "          hostPath:\n            path: ");
		k8s_q(&b, c->kt->hf_cache_host);
		buf_adds(&b, "\n            type: DirectoryOrCreate\n");
	}
	return buf_take(&b);
}

static char *base_service(const struct k8s_ctx *c)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	k8s_header(&b, "base/service.yaml", NULL);
	buf_adds(&b, "# The gateway of each node of a profile, behind one name (the overlay adds\n"
		     "# its suffix and app.kubernetes.io/instance to the selector).\n"
		     "apiVersion: v1\nkind: Service\nmetadata:\n  name: lobes-gateway\n  labels:\n");
	buf_adds(&b, LABELS);
	buf_printf(&b, "spec:\n  selector:\n    app.kubernetes.io/name: lobes\n"
		       "    app.kubernetes.io/component: fleet\n  ports:\n    - name: http\n"
		       "      port: %d\n      targetPort: http\n",
		   c->kt->gateway_port);
	return buf_take(&b);
}

static char *base_kustomization(const struct k8s_ctx *c)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	k8s_header(&b, "base/kustomization.yaml", NULL);
	buf_printf(&b, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
		       "namespace: %s\nresources:\n  - daemonset.yaml\n  - service.yaml\n",
		   c->kt->namespace);
	return buf_take(&b);
}

static bool has_peers(const struct k8s_ctx *c)
{
	for (int r = 0; r < ROLE__COUNT; r++)
		if (k8s_peer_for(c, (enum role_id)r))
			return true;
	return false;
}

/* Each peer profile once, in render order: calls fn for each. */
static void each_peer(const struct k8s_ctx *c, struct buf *b,
		      void (*fn)(struct buf *, const struct k8s_ctx *, const char *))
{
	for (size_t i = 0; i < c->n_all; i++) {
		const struct plan *q = c->all[i].plan;
		bool used = false;
		for (int r = 0; r < ROLE__COUNT; r++)
			used = used || k8s_peer_for(c, (enum role_id)r) == q;
		if (used)
			fn(b, c, q->profile->name);
	}
}

static void peer_mount(struct buf *b, const struct k8s_ctx *c, const char *peer)
{
	(void)c;
	buf_printf(b, "            - name: peer-key-%s\n              mountPath: '" K8S_PEER_KEY_DIR
		      "/%s'\n              readOnly: true\n",
		   peer, peer);
}

static void peer_volume(struct buf *b, const struct k8s_ctx *c, const char *peer)
{
	(void)c;
	_cleanup_free_ char *s = k8s_key_secret(peer);
	buf_printf(b, "        - name: peer-key-%s\n          secret:\n            secretName: ", peer);
	k8s_q(b, s);
	buf_adds(b, "\n            defaultMode: 256 # 0400\n");
}

void k8s_gateway_patch(struct buf *b, const struct k8s_ctx *c)
{
	if (!has_peers(c))
		return;
	buf_adds(b, "      containers:\n        - name: gateway\n          volumeMounts:\n");
	each_peer(c, b, peer_mount);
}

void k8s_peer_volumes(struct buf *b, const struct k8s_ctx *c)
{
	each_peer(c, b, peer_volume);
}

static void peer_entry(struct buf *b, const struct k8s_ctx *c, const char *peer)
{
	buf_printf(b, "  %s:\n    origin: http://lobes-gateway-%s.%s.svc:%d\n"
		      "    key_file: " K8S_PEER_KEY_DIR "/%s/gateway.key\n",
		   peer, peer, c->kt->namespace, c->kt->gateway_port, peer);
}

/* peers.yaml (docs/peers.md) of the profile's gateway, or NULL. */
static char *peers_yaml(const struct k8s_ctx *c)
{
	if (!has_peers(c))
		return NULL;
	const struct plan *p = c->prof->plan;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	k8s_header(&b, "peers.yaml", p);
	buf_adds(&b, "# Roles this profile cannot serve, proxied to the Service of a profile\n"
		     "# that serves them, with the key that profile's gateways accept.\n");
	buf_printf(&b, "box: %s\npeers:\n", p->profile->name);
	each_peer(c, &b, peer_entry);
	buf_adds(&b, "roles:\n");
	for (int r = 0; r < ROLE__COUNT; r++) {
		const struct plan *q = k8s_peer_for(c, (enum role_id)r);
		if (q)
			buf_printf(&b, "  %s: {proxy: %s}\n", role_name((enum role_id)r),
				   q->profile->name);
	}
	return buf_take(&b);
}

static char *overlay_kustomization(const struct k8s_ctx *c, bool peers)
{
	const char *name = c->prof->plan->profile->name;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	k8s_header(&b, "kustomization.yaml", c->prof->plan);
	buf_printf(&b, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
		       "namespace: %s\nresources:\n  - ../../base\nnameSuffix: -%s\nlabels:\n"
		       "  - pairs:\n      app.kubernetes.io/instance: %s\n    includeSelectors: true\n"
		       "patches:\n  - path: daemonset.yaml\nconfigMapGenerator:\n"
		       "  - name: lobes-gateway\n    files:\n      - .env=gateway.env\n",
		   c->kt->namespace, name, name);
	if (peers)
		buf_adds(&b, "      - peers.yaml\n");
	return buf_take(&b);
}

static void put(struct render_out *out, char *name, char *data, mode_t mode)
{
	struct render_file *f = &out->files[out->n++];
	f->name = name;
	f->data = data;
	f->len = strlen(data);
	f->mode = mode;
}

static char *root_kustomization(const struct k8s_profile *ps, size_t n)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	k8s_header(&b, "kustomization.yaml", NULL);
	buf_adds(&b, "# The whole cluster: one overlay per card profile, each selecting its\n"
		     "# card's nodes. Secrets are yours to create (docs/kubernetes.md).\n"
		     "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n");
	for (size_t i = 0; i < n; i++)
		buf_printf(&b, "  - overlays/%s\n", ps[i].plan->profile->name);
	return buf_take(&b);
}

static char *device_plugin_config(const struct k8s_profile *ps, size_t n,
				  const struct k8s_template *kt)
{
	size_t most = 1;
	for (size_t i = 0; i < n; i++)
		if (ps[i].plan->n_order > most)
			most = ps[i].plan->n_order;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	k8s_header(&b, "device-plugin-config.yaml", NULL);
	buf_printf(&b, "# The NVIDIA device plugin's config these overlays need (a config file,\n"
		       "# not a Kubernetes object: not in kustomization.yaml). Each engine asks\n"
		       "# for one %s and the plugin hands one whole device per request,\n"
		       "# so a node running %zu engines needs %zu time-slicing replicas.\n"
		       "version: v1\nsharing:\n  timeSlicing:\n    resources:\n      - name: %s\n"
		       "        replicas: %zu\n",
		   kt->gpu_resource, most, most, kt->gpu_resource, most);
	return buf_take(&b);
}

static void render_overlay(struct k8s_ctx *c, struct render_out *out)
{
	const char *name = c->prof->plan->profile->name;
	char *peers = peers_yaml(c);
	put(out, xasprintf("overlays/%s/kustomization.yaml", name), overlay_kustomization(c, peers), 0644);
	put(out, xasprintf("overlays/%s/daemonset.yaml", name), k8s_render_workload(c), 0644);
	put(out, xasprintf("overlays/%s/gateway.env", name), render_env_text(c->prof->plan, c->t), 0644);
	if (peers)
		put(out, xasprintf("overlays/%s/peers.yaml", name), peers, 0644);
}

static bool same_gfd(const struct card *a, const struct card *b)
{
	return render_k8s_gfd_selects(a) && render_k8s_gfd_selects(b) &&
	       !strcmp(a->gfd_product, b->gfd_product) &&
	       !strcmp(a->gfd_compute_major, b->gfd_compute_major) &&
	       !strcmp(a->gfd_compute_minor, b->gfd_compute_minor);
}

int render_kubernetes(const struct k8s_profile *ps, size_t n, const struct fleet_template *t,
		      const struct k8s_template *kt, const struct k8s_options *o,
		      struct render_out *out, struct err **err)
{
	static const struct k8s_options defaults = { 0 };
	memset(out, 0, sizeof(*out));
	if (!o)
		o = &defaults;
	if (n < 1 || n > K8S_MAX_PROFILES)
		return err_set(err, EXIT_USAGE, "render: %zu profiles; expected 1 to %d", n,
			       K8S_MAX_PROFILES);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++) {
			if (ps[i].plan->profile == ps[j].plan->profile ||
			    !strcmp(ps[i].plan->profile->name, ps[j].plan->profile->name))
				return err_set(err, EXIT_USAGE, "profile '%s' is named twice",
					       ps[i].plan->profile->name);
			if (same_gfd(ps[i].card, ps[j].card))
				return err_set(err, EXIT_CONFIG,
					       "profiles '%s' and '%s' would select the same nodes (GPU "
					       "Feature Discovery labels of card '%s'); render one of them",
					       ps[j].plan->profile->name, ps[i].plan->profile->name,
					       ps[i].card->name);
		}
	struct k8s_ctx c = { .t = t, .kt = kt, .o = o, .all = ps, .n_all = n };
	put(out, xstrdup("kustomization.yaml"), root_kustomization(ps, n), 0644);
	put(out, xstrdup("device-plugin-config.yaml"), device_plugin_config(ps, n, kt), 0644);
	put(out, xstrdup("base/kustomization.yaml"), base_kustomization(&c), 0644);
	put(out, xstrdup("base/daemonset.yaml"), base_daemonset(&c), 0644);
	put(out, xstrdup("base/service.yaml"), base_service(&c), 0644);
	for (size_t i = 0; i < n; i++) {
		c.prof = &ps[i];
		c.n_others = 0;
		for (size_t j = 0; j < n; j++)
			if (j != i)
				c.others[c.n_others++] = ps[j].plan->profile->name;
		render_overlay(&c, out);
	}
	return 0;
}
