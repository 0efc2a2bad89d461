/*
 * template.c — the fixed parts of the fleet (data/template/fleet.yaml):
 * image, Hugging Face cache mount, healthcheck timing, ports per role.
 * Parsed strictly with libfyaml; errors name file:line:column.
 */
#include <ctype.h>
#include <errno.h>
#include <libfyaml.h>
#include <string.h>

#include "../knowledge/knowledge.h"
#include "../util/cleanup.h"
#include "../util/yaml_doc.h"
#include "../util/yaml_scalar.h"
#include "render_int.h"

static int node_err(struct err **err, const char *file, struct fy_node *n, const char *what)
{
	int line = 1, col = 1;
	yaml_node_pos(n, NULL, &line, &col); /* a scalar, or a collection where a scalar belongs */
	return err_set(err, EXIT_CONFIG, "%s:%d:%d: %s", file, line, col, what);
}

/* The scalar at path, copied; NULL with *err when missing or not a scalar. */
char *template_scalar(struct fy_node *root, const char *path, const char *file, struct err **err)
{
	struct fy_node *n = fy_node_by_path(root, path, FY_NT, FYNWF_DONT_FOLLOW);
	if (!n || !fy_node_is_scalar(n)) {
		_cleanup_free_ char *m = xasprintf("'%s' missing or not a scalar; expected a value", path);
		node_err(err, file, n ? n : root, m);
		return NULL;
	}
	size_t len;
	const char *s = yaml_scalar0(n, &len);
	return xasprintf("%.*s", (int)len, s);
}

int template_int(struct fy_node *root, const char *path, const char *file, long lo, long hi,
		 int *out, struct err **err)
{
	_cleanup_free_ char *v = template_scalar(root, path, file, err);
	if (!v)
		return -1;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < lo || n > hi) {
		_cleanup_free_ char *m = xasprintf("'%s' is '%s'; expected a whole number %ld-%ld", path, v,
						   lo, hi);
		return node_err(err, file, fy_node_by_path(root, path, FY_NT, FYNWF_DONT_FOLLOW), m);
	}
	*out = (int)n;
	return 0;
}

struct fy_document *template_doc(const char *name, const char *text, size_t len,
				 struct fy_node **root, struct err **err)
{
	struct fy_document *fyd = NULL;
	if (yaml_doc_parse(name, text, len, 0, "a mapping", &fyd, err) < 0)
		return NULL;
	if (!fyd) {
		err_set(err, EXIT_CONFIG, "%s: not valid YAML", name);
		return NULL;
	}
	*root = fy_document_root(fyd);
	if (!*root || !fy_node_is_mapping(*root)) {
		node_err(err, name, *root, "expected a mapping");
		fy_document_destroy(fyd);
		return NULL;
	}
	return fyd;
}

const struct embedded_file *template_embedded(const char *path, struct err **err)
{
	for (size_t i = 0; i < embedded_files_count; i++)
		if (strcmp(embedded_files[i].path, path) == 0)
			return &embedded_files[i];
	err_set(err, EXIT_INTERNAL, "template '%s' is not embedded", path);
	return NULL;
}

int fleet_template_parse(struct fleet_template *t, const char *name, const char *text, size_t len,
			 struct err **err)
{
	memset(t, 0, sizeof(*t));
	struct fy_node *root;
	struct fy_document *fyd = template_doc(name, text, len, &root, err);
	if (!fyd)
		return -1;
	int rc = -1;
	t->source = xstrdup(name);
	if (!(t->hf_host = template_scalar(root, "/hf_cache/host", name, err)) ||
	    !(t->hf_container = template_scalar(root, "/hf_cache/container", name, err)) ||
	    !(t->hc_interval = template_scalar(root, "/healthcheck/interval", name, err)) ||
	    !(t->hc_timeout = template_scalar(root, "/healthcheck/timeout", name, err)) ||
	    !(t->hc_start_period = template_scalar(root, "/healthcheck/start_period", name, err)))
		goto out;
	/* compose takes any count of retries; more than 100 is a typo */
	if (template_int(root, "/healthcheck/retries", name, 0, 100, &t->hc_retries, err) < 0)
		goto out;
	for (int r = 0; r < ROLE__COUNT; r++) {
		_cleanup_free_ char *path = xasprintf("/ports/%s", role_name((enum role_id)r));
		if (template_int(root, path, name, 1, 65535, &t->ports[r], err) < 0)
			goto out;
	}
	rc = 0;
out:
	fy_document_destroy(fyd);
	if (rc < 0)
		fleet_template_free(t);
	return rc;
}

int fleet_template_load(struct fleet_template *t, struct err **err)
{
	const struct embedded_file *f = template_embedded("data/template/fleet.yaml", err);
	return f ? fleet_template_parse(t, f->path, f->data, f->len, err) : -1;
}

void fleet_template_free(struct fleet_template *t)
{
	free(t->hf_host);
	free(t->hf_container);
	free(t->hc_interval);
	free(t->hc_timeout);
	free(t->hc_start_period);
	free(t->source);
	memset(t, 0, sizeof(*t));
}

