/*
 * k8s_int.h — what k8s.c (one profile's pod) and k8s_tree.c (the kustomize
 * tree around it) share.
 */
#ifndef LOBES_K8S_INT_H
#define LOBES_K8S_INT_H

#include "render_int.h"

/* Secrets the operator creates (never rendered): the Hugging Face token
 * (key HF_TOKEN) and one gateway key per profile (key gateway.key). */
#define K8S_HF_SECRET "lobes-hf-token"
#define K8S_KEY_SECRET_PREFIX "lobes-gateway-key-"
#define K8S_KEY_DIR "/etc/lobes-key"
#define K8S_PEER_KEY_DIR "/etc/lobes-peers"
#define K8S_CONFIG_DIR "/etc/lobes"

struct k8s_ctx {
	const struct fleet_template *t;
	const struct k8s_template *kt;
	const struct k8s_options *o;
	const struct k8s_profile *all; /* every profile of the render */
	size_t n_all;
	const struct k8s_profile *prof; /* the one being rendered */
	const char *others[K8S_MAX_PROFILES];
	size_t n_others; /* other rendered profiles whose nodes GFD selects */
};

/* The profile whose gateway serves role r for c->prof (it is infeasible
 * there), or NULL: an other rendered profile where r is feasible, on a
 * validated card first, then a partial one; never an opt-in profile. */
const struct plan *k8s_peer_for(const struct k8s_ctx *c, enum role_id r);
/* "lobes-gateway-key-<profile>"; caller frees. */
char *k8s_key_secret(const char *profile);

void k8s_q(struct buf *b, const char *s);
void k8s_header(struct buf *b, const char *file, const struct plan *p);
void k8s_comment_infeasible(struct buf *b, const struct plan *p);
/* s as "# " comment lines of at most ~76 columns, ending with a newline;
 * the first line continues the current one. */
void k8s_comment_wrapped(struct buf *b, const char *s);

/* overlays/<profile>/daemonset.yaml (k8s.c). */
char *k8s_render_workload(const struct k8s_ctx *c);
/* The gateway container's part of the overlay patch: peers' key mounts. */
void k8s_gateway_patch(struct buf *b, const struct k8s_ctx *c);
void k8s_peer_volumes(struct buf *b, const struct k8s_ctx *c);

#endif
