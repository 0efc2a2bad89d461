/*
 * images.c — the image schema (a container image lobes knows, pinned by
 * full digest, and the vLLM it carries), image reference checks, and the
 * cross-check of every profile's serving knobs against the recorded lists
 * of its role's image (parsers registered in that vLLM, runner/convert
 * choices, LoRA rank choices).
 *
 *   kind: image
 *   name: vllm-0.26.1rc1.dev942
 *   ref: vllm/vllm-openai@sha256:<64 hex>
 *   vllm: 0.26.1rc1.dev942+g5a4c8d992
 *   registry: 5a4c8d992          (data/vllm/<registry>/)
 *   description: ..
 *   evidence: [..]
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "vllm.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"

void vimage_free(struct vimage *m)
{
	free(m->name);
	pos_free(&m->pos);
	free(m->ref);
	free(m->vllm_version);
	free(m->registry);
	free(m->description);
	evidence_free(m->evidence, m->n_evidence);
	memset(m, 0, sizeof(*m));
}

static size_t hex_run(const char *s)
{
	size_t n = 0;
	while (isxdigit((unsigned char)s[n]) && !isupper((unsigned char)s[n]))
		n++;
	return n;
}

bool image_ref_pinned(const char *ref)
{
	if (!ref)
		return false;
	const char *at = strchr(ref, '@');
	if (!at || at == ref || strpbrk(ref, " \t") || !str_starts_with(at + 1, "sha256:"))
		return false;
	const char *h = at + 8;
	return hex_run(h) == 64 && !h[64];
}

char *image_ref_problem(const char *ref)
{
	if (!ref || !*ref)
		return xstrdup("empty; expected name@sha256:<64 hex digits>");
	if (image_ref_pinned(ref))
		return NULL;
	/* each reason reads after "image 'REF' is " */
	const char *at = strchr(ref, '@');
	if (strpbrk(ref, " \t"))
		return xstrdup("a reference with a space in it; expected name@sha256:<64 hex digits>");
	if (!at)
		return xstrdup("not pinned: a tag can move; expected name@sha256:<64 hex digits>");
	if (at == ref)
		return xstrdup("a digest without an image name; expected name@sha256:<64 hex digits>");
	if (!str_starts_with(at + 1, "sha256:"))
		return xstrdup("pinned by a digest that is not sha256; expected name@sha256:<64 hex digits>");
	size_t n = hex_run(at + 8);
	if (n < 64 && !at[8 + n])
		return xasprintf("a digest prefix (%zu of the 64 hex digits), which Docker rejects; expected "
				 "the full digest", n);
	return xstrdup("pinned by a digest that is not 64 lower-case hex digits; expected "
		       "name@sha256:<64 hex digits>");
}

static bool registry_ok(const char *s)
{
	return name_ok(s);
}

int image_parse(const struct pctx *c, struct fy_node *root, struct vimage *out, struct err **err)
{
	static const char *const keys[] = { "kind", "name", "ref", "vllm", "registry", "description",
					    "evidence", NULL };
	const char *w = "an image";
	if (yhead(c, root, "image", w, keys, &out->name, &out->pos, err) < 0 ||
	    ystr(c, root, NULL, "ref", w, true, "name@sha256:<64 hex digits>", &out->ref, err) < 0)
		return -1;
	struct yval rv = map_find(root, "ref");
	_cleanup_free_ char *why = image_ref_problem(out->ref);
	if (why)
		return perr(c, rv.val, rv.key, err, "image ref '%s' is %s", out->ref, why);
	if (ystr(c, root, NULL, "vllm", w, true, "the vLLM version the image carries",
		 &out->vllm_version, err) < 0 ||
	    ystr(c, root, NULL, "registry", w, true, "a folder under data/vllm/", &out->registry,
		 err) < 0 ||
	    ystr(c, root, NULL, "description", w, false, "a sentence", &out->description, err) < 0)
		return -1;
	struct yval gv = map_find(root, "registry");
	struct vllm_reg reg = { 0 }; /* freed below whether or not it was loaded */
	struct err *e = NULL;
	int rc = registry_ok(out->registry) ? vllm_reg_load(&reg, out->registry, &e) : -1;
	vllm_reg_free(&reg);
	if (rc < 0) {
		perr(c, gv.val, gv.key, err, "registry '%s' is not a shipped vLLM list; expected a folder "
		     "under data/vllm/", out->registry);
		err_free(e);
		return -1;
	}
	return yevidence(c, root, NULL, w, true, &out->evidence, &out->n_evidence, err);
}

const struct vimage *knowledge_image(const struct knowledge *k, const char *ref)
{
	for (size_t i = 0; k && ref && i < k->n_images; i++)
		if (strcmp(k->images[i].ref, ref) == 0)
			return &k->images[i];
	return NULL;
}

const char *knob_vllm_flag(enum knob_id kn)
{
	switch (kn) {
	case KNOB_RUNNER: return "--runner";
	case KNOB_CONVERT: return "--convert";
	case KNOB_REASONING_PARSER: return "--reasoning-parser";
	case KNOB_TOOL_CALL_PARSER: return "--tool-call-parser";
	case KNOB_MAX_LORA_RANK: return "--max-lora-rank";
	case KNOB_QUANTIZATION: return "--quantization";
	case KNOB_KV_CACHE_DTYPE: return "--kv-cache-dtype";
	default: return NULL;
	}
}

static bool no_flag_value(enum knob_id kn, const char *v)
{
	return strcmp(v, "none") == 0 || strcmp(v, "auto") == 0 ||
	       (kn == KNOB_KV_CACHE_DTYPE && strcmp(v, "auto") == 0);
}

/* One role of one profile: its image (profile value, else the template
 * default) must be a known image, and each serving knob it sets must be
 * accepted by that image's vLLM. */
static int check_role(const struct knowledge *k, const struct profile *p, enum role_id r,
		      struct err **err)
{
	const struct role_spec *rs = &p->roles[r];
	const struct role_spec *d = &k->defaults[r];
	const char *img = rs->knobs[KNOB_IMAGE] ? rs->knobs[KNOB_IMAGE] : d->knobs[KNOB_IMAGE];
	const struct src_pos *ipos = rs->knobs[KNOB_IMAGE] ? &rs->knob_pos[KNOB_IMAGE] : &p->pos;
	const char *feas = rs->knobs[KNOB_FEASIBLE] ? rs->knobs[KNOB_FEASIBLE] : d->knobs[KNOB_FEASIBLE];
	if (!rs->present || (feas && strcmp(feas, "false") == 0))
		return 0;
	if (!img)
		return pos_err(ipos, err, "profile '%s' role '%s' has no image; expected image: "
			      "name@sha256:<64 hex digits>", p->name, role_name(r));
	_cleanup_free_ char *why = image_ref_problem(img);
	if (why)
		return pos_err(ipos, err, "profile '%s' role '%s': image '%s' is %s", p->name, role_name(r),
			      img, why);
	const struct vimage *vi = knowledge_image(k, img);
	if (!vi)
		return pos_err(ipos, err, "profile '%s' role '%s': image '%s' is not a known image; expected "
			      "one recorded in data/images/ (with the vLLM it carries)",
			      p->name, role_name(r), img);
	struct vllm_reg reg;
	if (vllm_reg_load(&reg, vi->registry, err) < 0) {
		vllm_reg_free(&reg);
		return -1;
	}
	int rc = 0;
	for (int kn = 0; kn < KNOB__COUNT && rc == 0; kn++) {
		const char *flag = knob_vllm_flag((enum knob_id)kn);
		const char *v = rs->knobs[kn];
		if (!flag || !v || no_flag_value((enum knob_id)kn, v))
			continue;
		_cleanup_free_ char *bad = NULL;
		if (vllm_reg_check_arg(&reg, flag, v, &bad) < 0)
			rc = pos_err(&rs->knob_pos[kn], err, "profile '%s' role '%s': %s (image %s)", p->name,
				    role_name(r), bad, vi->name);
	}
	vllm_reg_free(&reg);
	return rc;
}

int knowledge_check_serving(const struct knowledge *k, struct err **err)
{
	for (size_t i = 0; i < k->n_profiles; i++)
		for (int r = 0; r < ROLE__COUNT; r++)
			if (check_role(k, &k->profiles[i], (enum role_id)r, err) < 0)
				return -1;
	return 0;
}
