/*
 * image.c — check "image": each deployed role's image as the container will
 * get it (<ROLE>_IMAGE from .env, else the rendered default). A digest
 * prefix is an error (Docker rejects `name@sha256:<prefix>`); a tag is a
 * warning (it can move under the fleet); a full digest lobes has no record
 * of is a warning too (its vLLM version, and so its flags, env names and
 * parsers, cannot be checked); a recorded one names its vLLM version.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "doctor_int.h"

void check_image(struct doctor_ctx *x)
{
	for (int i = 0; i < ROLE__COUNT; i++) {
		const struct deployed_role *dr = &x->d->roles[i];
		if (!dr->present)
			continue;
		const char *role = role_name((enum role_id)i);
		_cleanup_free_ char *key = env_key((enum role_id)i, "IMAGE");
		const char *img = dr->image ? dr->image : "";
		_cleanup_free_ char *why = image_ref_problem(img);
		const struct vimage *vi = knowledge_image(x->k, img);
		struct check *c;
		if (why && strchr(img, '@')) {
			c = doc_add(x->r, "image", SEV_ERROR, "%s: image '%s' is %s", role, img, why);
			c->remedy = xasprintf("set %s in .env to the full reference name@sha256:<64 hex digits> "
					      "(or remove it to use the profile's pinned image)", key);
		} else if (why) {
			c = doc_add(x->r, "image", SEV_WARNING, "%s: image '%s' is %s", role, img, why);
			c->remedy = xasprintf("pin %s in .env by digest: name@sha256:<64 hex digits>", key);
		} else if (!vi) {
			c = doc_add(x->r, "image", SEV_WARNING,
				    "%s: image '%s' is pinned, but its vLLM version is not recorded: its flags, "
				    "VLLM_* names and parsers cannot be checked", role, img);
			c->remedy = xstrdup("use an image recorded in data/images/, or add one (with the vLLM "
					    "it carries) under <deploy-dir>/profiles/");
		} else {
			c = doc_add(x->r, "image", SEV_OK, "%s: image %s carries vLLM %s (recorded: %s)", role,
				    vi->name, vi->vllm_version, vi->registry);
		}
		c->role = xstrdup(role);
		c->name = xstrdup(key);
	}
}
