/*
 * yaml.c — the one YAML document reader of the gateway's files (settings,
 * aliases, peers): below both config.c and peers.c, which each read their
 * file through it, so neither calls the other for it. One document per
 * file: a second one is an error at its position, never silently dropped.
 */
#include <libfyaml.h>

#include "../util/yaml_doc.h"
#include "gateway.h"

/* A syntax error is "NAME:L:C: invalid YAML: ..." (gateway.h). */
struct fy_document *gw_yaml_parse(const char *text, size_t len, const char *name,
				  struct err **err)
{
	struct fy_document *d = NULL;
	if (yaml_doc_parse(name, text, len, YAML_DOC_ONLY_ONE, "a mapping", &d, err) < 0)
		return NULL;
	if (!d)
		err_set(err, EXIT_CONFIG, "%s:1:1: invalid YAML: parse error; expected a mapping", name);
	return d;
}
