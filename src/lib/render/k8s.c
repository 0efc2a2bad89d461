/*
 * k8s.c — one card profile's pod for Kubernetes: the overlay's DaemonSet
 * patch (overlays/<profile>/daemonset.yaml). The tree around it (base/,
 * the kustomizations, the gateway's config) is k8s_tree.c; docs/kubernetes.md
 * says why each choice.
 *
 * Translated from the compose render, not re-invented: each feasible role's
 * arguments and environment come from args.c (role_args, role_env), in the
 * plan's bring-up order, with compose's healthcheck (curl on the engine's
 * loopback /health: engines listen on 127.0.0.1 in the pod as on the box)
 * as the startupProbe and livenessProbe. Each role is a native sidecar (an
 * init container with restartPolicy Always, Kubernetes >= 1.29): the
 * kubelet starts the next one only once this one's startupProbe passed,
 * which is compose's one-window-at-a-time bring-up kept by the kubelet.
 * Values are literal: Kubernetes has no .env, so every argument is written
 * from the plan; `$` is doubled (the kubelet's $(VAR) expansion) and
 * secrets come from Secrets by reference, never inline.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "k8s_int.h"

/* 'value' as YAML single-quoted text; `$` doubled (command, args, env). */
static void qx(struct buf *b, const char *s)
{
	buf_adds(b, "'");
	render_add_sq(b, s);
	buf_adds(b, "'");
}

/* 'value' as YAML single-quoted text (a field the kubelet does not expand). */
void k8s_q(struct buf *b, const char *s)
{
	buf_adds(b, "'");
	for (; *s; s++)
		if (*s == '\'')
			buf_adds(b, "''");
		else
			buf_add(b, s, 1);
	buf_adds(b, "'");
}

/* "15s" / "900s" / "5m" of the fleet template as seconds (0 when not). */
static long seconds(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s)
		return 0;
	if (!strcmp(end, "m"))
		return v * 60;
	return !strcmp(end, "s") || !*end ? v : 0;
}

/* The probe compose runs (healthcheck test), as an exec probe: the kubelet's
 * own httpGet would dial the pod IP, where the engine does not listen. */
static void probe(struct buf *b, const char *kind, const struct fleet_template *t, int port,
		  long failures)
{
	long period = seconds(t->hc_interval);
	buf_printf(b, "          %s:\n            exec:\n              command: ['curl', '-fsS', "
		      "'http://127.0.0.1:%d/health']\n",
		   kind, port);
	buf_printf(b, "            periodSeconds: %ld\n            timeoutSeconds: %ld\n"
		      "            failureThreshold: %ld\n",
		   period > 0 ? period : 15, seconds(t->hc_timeout) > 0 ? seconds(t->hc_timeout) : 5,
		   failures);
}

/* The memory a unified-memory card's engine takes: its budget's share of
 * the card's memory, in MiB rounded up (0: not known). */
static unsigned long long request_mib(const struct role_plan *rp, unsigned long long mem_bytes)
{
	const char *u = role_knob(rp, KNOB_GPU_MEM_UTIL);
	char *end;
	double util = strtod(u, &end);
	if (!mem_bytes || end == u || util <= 0 || util > 1)
		return 0;
	return (unsigned long long)ceil(util * (double)mem_bytes / 1048576.0);
}

/* The engine's command: compose's stack ulimit (64 MiB) raised in the
 * container, which Kubernetes has no field for, then vLLM with the
 * arguments as a list ("$@"). */
static void engine_command(struct buf *b)
{
	buf_adds(b, "          command:\n            - '/bin/sh'\n            - '-c'\n            - ");
	qx(b, "ulimit -S -s 65536 2>/dev/null || echo 'lobes: stack limit not raised' >&2; "
	      "exec vllm serve \"$@\"");
	buf_adds(b, "\n            - 'vllm'\n");
}

static void engine_env(struct buf *b, const struct fleet_template *t, const struct role_plan *rp)
{
	struct role_envvar env[ROLE_ENV_MAX];
	size_t n = role_env(t, rp, env);
	buf_adds(b, "          env:\n");
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "            - name: %s\n", env[i].name);
		if (env[i].secret) /* never inline: a Secret the operator creates */
			buf_printf(b, "              valueFrom:\n                secretKeyRef:\n"
				      "                  name: %s\n                  key: %s\n"
				      "                  optional: true\n",
				   K8S_HF_SECRET, env[i].name);
		else {
			buf_adds(b, "              value: ");
			qx(b, env[i].value);
			buf_adds(b, "\n");
		}
	}
}

static bool lora_mount(const struct role_plan *rp)
{
	return knob_is_true(&rp->knobs[KNOB_ENABLE_LORA]) && role_knob_set(rp, KNOB_LORA_DIR, "none");
}

/* One feasible role as a native sidecar. */
static void engine(struct buf *b, const struct k8s_ctx *c, const struct role_plan *rp)
{
	enum role_id r = rp->role;
	buf_printf(b, "        - name: %s\n          image: ", role_name(r));
	k8s_q(b, role_knob(rp, KNOB_IMAGE));
	buf_adds(b, "\n          restartPolicy: Always\n");
	engine_command(b);
	struct role_args a;
	role_args(c->t, rp, &a);
	buf_adds(b, "          args:\n");
	for (size_t i = 0; i < a.n; i++) {
		_cleanup_free_ char *s = xasprintf("%s%s", a.v[i].prefix, a.v[i].value);
		buf_adds(b, "            - ");
		qx(b, s);
		buf_adds(b, "\n");
	}
	role_args_free(&a);
	engine_env(b, c->t, rp);
	unsigned long long mib = request_mib(rp, c->prof->mem_bytes);
	buf_adds(b, "          resources:\n");
	if (mib)
		buf_printf(b, "            requests:\n              memory: %lluMi\n", mib);
	buf_printf(b, "            limits:\n              %s: 1\n", c->kt->gpu_resource);
	/* start_period / interval tries before the kubelet restarts it, as
	 * long as compose waits; then compose's retries while it runs */
	long period = seconds(c->t->hc_interval);
	long start = seconds(c->t->hc_start_period);
	probe(b, "startupProbe", c->t, c->t->ports[r], period > 0 && start > 0 ? start / period : 60);
	probe(b, "livenessProbe", c->t, c->t->ports[r], c->t->hc_retries > 0 ? c->t->hc_retries : 3);
	buf_adds(b, "          volumeMounts:\n            - name: hf-cache\n              mountPath: ");
	k8s_q(b, c->t->hf_container);
	buf_adds(b, "\n            - name: shm\n              mountPath: /dev/shm\n");
	if (lora_mount(rp))
		buf_adds(b, "            - name: adapters\n              mountPath: /adapters\n"
			    "              readOnly: true\n");
}

/* nodeSelector (and the affinity that keeps two overlays off one node). */
static void node_selection(struct buf *b, const struct k8s_ctx *c)
{
	const struct plan *p = c->prof->plan;
	buf_adds(b, "      nodeSelector:\n");
	if (!render_k8s_gfd_selects(c->prof->card)) {
		buf_printf(b, "        %s: ", c->kt->profile_label);
		k8s_q(b, p->profile->name);
		buf_adds(b, "\n");
		return;
	}
	const struct card *cd = c->prof->card;
	buf_adds(b, "        nvidia.com/gpu.product: ");
	k8s_q(b, cd->gfd_product);
	buf_adds(b, "\n        nvidia.com/gpu.compute.major: ");
	k8s_q(b, cd->gfd_compute_major);
	buf_adds(b, "\n        nvidia.com/gpu.compute.minor: ");
	k8s_q(b, cd->gfd_compute_minor);
	buf_adds(b, "\n");
	if (c->n_others == 0)
		return;
	buf_printf(b, "      affinity:\n        nodeAffinity:\n"
		      "          requiredDuringSchedulingIgnoredDuringExecution:\n"
		      "            nodeSelectorTerms:\n              - matchExpressions:\n"
		      "                  - key: %s\n                    operator: NotIn\n"
		      "                    values:\n",
		   c->kt->profile_label);
	for (size_t i = 0; i < c->n_others; i++) {
		buf_adds(b, "                      - ");
		k8s_q(b, c->others[i]);
		buf_adds(b, "\n");
	}
}

static void pod_comment(struct buf *b, const struct k8s_ctx *c)
{
	const struct plan *p = c->prof->plan;
	buf_adds(b, "# The card's engines are native sidecars (init containers with\n"
		    "# restartPolicy: Always, Kubernetes >= 1.29) in the bring-up order:\n#");
	for (size_t i = 0; i < p->n_order; i++)
		buf_printf(b, "%s %s", i ? "," : "", role_name(p->order[i]));
	buf_adds(b, ".\n# The kubelet starts each one only once the one before it has started\n"
		    "# (its startupProbe passed), so they profile memory one at a time.\n"
		    "# A sidecar restarted later does not wait for the others: the gateway\n"
		    "# answers 503 backend_unavailable for its role until it is up again.\n");
	k8s_comment_infeasible(b, p);
	if (render_k8s_gfd_selects(c->prof->card)) {
		buf_adds(b, "# Nodes: GPU Feature Discovery labels of the card;");
		k8s_comment_wrapped(b, c->prof->card->gfd_note);
	} else
		buf_printf(b, "# Nodes: only those an operator labels %s=%s (this card has no\n"
			      "# validated GPU Feature Discovery labels: never chosen silently).\n",
			   c->kt->profile_label, p->profile->name);
}

char *k8s_render_workload(const struct k8s_ctx *c)
{
	const struct plan *p = c->prof->plan;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	k8s_header(&b, "daemonset.yaml", p);
	pod_comment(&b, c);
	buf_adds(&b, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: lobes\n"
		     "spec:\n  template:\n    spec:\n");
	node_selection(&b, c);
	buf_adds(&b, "      initContainers:\n");
	for (size_t i = 0; i < p->n_order; i++)
		engine(&b, c, &p->roles[p->order[i]]);
	k8s_gateway_patch(&b, c);
	bool lora = false;
	for (size_t i = 0; i < p->n_order; i++)
		lora = lora || lora_mount(&p->roles[p->order[i]]);
	buf_adds(&b, "      volumes:\n        - name: gateway-key\n          secret:\n"
		     "            secretName: ");
	_cleanup_free_ char *key = k8s_key_secret(p->profile->name);
	k8s_q(&b, key);
	buf_adds(&b, "\n            defaultMode: 256 # 0400: the gateway refuses a key others may read\n");
	k8s_peer_volumes(&b, c);
	if (lora) {
		buf_adds(&b, "        - name: adapters\n          hostPath:\n            path: ");
		k8s_q(&b, c->kt->adapters_host);
		buf_adds(&b, "\n            type: Directory\n");
	}
	return buf_take(&b);
}
