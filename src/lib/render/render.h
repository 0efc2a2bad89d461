/*
 * render.h — the fleet as files: a pure function of (plan, template).
 *
 * Output: docker-compose.yml (one service per feasible role; knob values flow
 * from .env as ${VAR:-default}), docker-compose.gpu.yml (the GPU attachment
 * for the card: a device reservation or `runtime: nvidia`, so the base file
 * starts on a machine without a GPU), .env (mode 0600), and
 * lobes-gateway@.service (data/template/: a systemd template unit for the
 * gateway whose instance is the deploy dir, so it needs no path of this
 * box). No file system, no clock, no host reads, no environment: the same
 * plan gives the same bytes anywhere; deploy/ writes them into a deploy
 * dir. Also here: the unified diff that dry runs show.
 *
 * The .env key names are a contract with every deploy dir ever written:
 * see env_contract_keys() and tests/cases/env_contract.t before renaming.
 */
#ifndef LOBES_RENDER_H
#define LOBES_RENDER_H

#include <stddef.h>
#include <sys/types.h>

#include "../plan/plan.h"
#include "../util/buf.h"

struct fleet_template {
	char *hf_host, *hf_container;
	char *hc_interval, *hc_timeout, *hc_start_period;
	int hc_retries;
	int ports[ROLE__COUNT];
	char *source; /* "data/template/fleet.yaml" */
};

/* Load the embedded template (data/template/fleet.yaml). */
int fleet_template_load(struct fleet_template *t, struct err **err);
/* Parse a template from YAML text (tests). */
int fleet_template_parse(struct fleet_template *t, const char *name, const char *text, size_t len,
			 struct err **err);
void fleet_template_free(struct fleet_template *t);

#define RENDER_MAX_FILES 64
#define GATEWAY_UNIT "lobes-gateway@.service"

struct render_file {
	char *name; /* "docker-compose.yml", "docker-compose.gpu.yml", ".env", GATEWAY_UNIT */
	char *data;
	size_t len;
	mode_t mode;
};

struct render_out {
	struct render_file files[RENDER_MAX_FILES];
	size_t n;
};

/* Render the plan. gpu_attach: "reservation" | "runtime" (the card's; the
 * caller passes "reservation" for an unknown card). */
int render_fleet(const struct plan *p, const struct fleet_template *t, struct render_out *out,
		 struct err **err);
void render_out_free(struct render_out *out);
const struct render_file *render_out_get(const struct render_out *out, const char *name);

/* Render a profile of k for its own card (nominal facts, no checkpoint
 * reads): the render the goldens hold (nominal.c). */
int render_nominal(const struct knowledge *k, const char *profile, struct render_out *out,
		   struct err **err);

/* The Kubernetes render (k8s.c, k8s_tree.c; docs/kubernetes.md): a
 * kustomize tree, base/ plus overlays/<profile>/ per card profile and a
 * kustomization.yaml for the whole cluster, from the same plans the compose
 * render uses. Its fixed parts come from data/template/kubernetes.yaml. */
struct k8s_template {
	char *namespace, *lobes_image, *shm_size, *hf_cache_host, *adapters_host;
	char *gpu_resource, *runtime_class, *profile_label;
	int gateway_port, grace_seconds;
};
int k8s_template_load(struct k8s_template *kt, struct err **err);
int k8s_template_parse(struct k8s_template *kt, const char *name, const char *text, size_t len,
		       struct err **err);
void k8s_template_free(struct k8s_template *kt);

struct k8s_options {
	const char *lobes_image; /* NULL: the template's */
	const char *hf_claim;    /* a PersistentVolumeClaim for the HF cache; NULL: hostPath */
};

/* One card profile of the tree: its plan, its card and the card's nominal
 * memory (bytes; 0 when unknown: no memory requests). */
struct k8s_profile {
	const struct plan *plan;
	const struct card *card; /* the profile's own card; NULL: none (base) */
	unsigned long long mem_bytes;
};

#define K8S_MAX_PROFILES 12
/* Render n (1..K8S_MAX_PROFILES) profiles, each once, into out (o NULL:
 * the template's image, a hostPath cache). */
int render_kubernetes(const struct k8s_profile *ps, size_t n, const struct fleet_template *t,
		      const struct k8s_template *kt, const struct k8s_options *o,
		      struct render_out *out, struct err **err);
/* Whether a profile's nodes are chosen by GPU Feature Discovery labels
 * (its card has them and is not unvalidated); else only nodes an operator
 * labels <profile_label>=<profile> run it. */
bool render_k8s_gfd_selects(const struct card *c);
/* render_nominal's Kubernetes twin: the profiles named (NULL/0: every
 * profile k holds, in name order) for their own cards. */
int render_nominal_k8s(const struct knowledge *k, const char *const *profiles, size_t n,
		       const struct k8s_options *o, struct render_out *out, struct err **err);

/* The .env key for a role's knob: "CORTEX_GPU_MEM_UTIL"; caller frees. */
char *env_key(enum role_id r, const char *suffix);
/* Every .env key name lobes has ever written (NULL-terminated, static). */
const char *const *env_contract_keys(void);
/* True for keys whose values must never be printed (HF_TOKEN, *_API_KEY...). */
int env_key_is_secret(const char *key);

/* Unified diffs of small text files (renders, .env), for `init` dry runs
 * and `render --check` (diff.c). Line-based LCS; files here are a few
 * hundred lines, so the quadratic table is a few hundred KiB at most.
 * Appends a unified diff (3 lines of context) of a → b to out, with the
 * given labels ("a/x", "b/x"). a may be NULL (a new file: /dev/null).
 * Returns the number of changed lines (0: identical, nothing appended). */
int diff_unified(const char *a, const char *b, const char *label_a, const char *label_b,
		 struct buf *out);

#endif
