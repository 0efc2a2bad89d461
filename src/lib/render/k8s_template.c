/*
 * k8s_template.c — the fixed parts of the Kubernetes render
 * (data/template/kubernetes.yaml): namespace, the lobes image, the gateway's
 * port, /dev/shm size, node paths, the GPU resource and runtime class.
 * Parsed strictly; errors name file:line:column.
 */
#include <stdlib.h>
#include <string.h>

#include "../knowledge/knowledge.h"
#include "../util/cleanup.h"
#include "render_int.h"

int k8s_template_parse(struct k8s_template *kt, const char *name, const char *text, size_t len,
		       struct err **err)
{
	memset(kt, 0, sizeof(*kt));
	struct fy_node *root;
	struct fy_document *fyd = template_doc(name, text, len, &root, err);
	if (!fyd)
		return -1;
	int rc = -1;
	struct {
		const char *path;
		char **dst;
	} s[] = { { "/namespace", &kt->namespace },	    { "/lobes_image", &kt->lobes_image },
		  { "/shm_size", &kt->shm_size },	    { "/hf_cache_host", &kt->hf_cache_host },
		  { "/adapters_host", &kt->adapters_host }, { "/gpu_resource", &kt->gpu_resource },
		  { "/runtime_class", &kt->runtime_class }, { "/profile_label", &kt->profile_label } };
	for (size_t i = 0; i < ARRAY_SIZE(s); i++)
		if (!(*s[i].dst = template_scalar(root, s[i].path, name, err)))
			goto out;
	if (template_int(root, "/gateway_port", name, 1, 65535, &kt->gateway_port, err) < 0 ||
	    template_int(root, "/termination_grace_seconds", name, 1, 3600, &kt->grace_seconds, err) < 0)
		goto out;
	rc = 0;
out:
	fy_document_destroy(fyd);
	if (rc < 0)
		k8s_template_free(kt);
	return rc;
}

int k8s_template_load(struct k8s_template *kt, struct err **err)
{
	const struct embedded_file *f = template_embedded("data/template/kubernetes.yaml", err);
	return f ? k8s_template_parse(kt, f->path, f->data, f->len, err) : -1;
}

void k8s_template_free(struct k8s_template *kt)
{
	free(kt->namespace);
	free(kt->lobes_image);
	free(kt->shm_size);
	free(kt->hf_cache_host);
	free(kt->adapters_host);
	free(kt->gpu_resource);
	free(kt->runtime_class);
	free(kt->profile_label);
	memset(kt, 0, sizeof(*kt));
}
