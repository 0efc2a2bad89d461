/*
 * drift.c — check "deploy-dir" (drift): the deploy dir against what `lobes
 * init` would write now, and the operator's kept .env values.
 */
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "doctor_int.h"

void check_drift(struct doctor_ctx *x)
{
	struct doctor_report *r = x->r;
	const struct init_result *ir = x->ir;
	if (!ir->changed) {
		doc_add(r, "deploy-dir", SEV_OK, "'%s' parses and matches what `lobes init` would write now",
		    ir->dir);
	} else {
		_cleanup_buf_ struct buf names;
		buf_init(&names, 0);
		for (size_t i = 0; i < ir->n_files; i++)
			if (ir->files[i].changed)
				buf_printf(&names, "%s%s%s", names.len ? ", " : "", ir->files[i].name,
					   ir->files[i].old ? "" : " (missing)");
		struct check *c = doc_add(r, "deploy-dir", SEV_WARNING,
				      "'%s' differs from what `lobes init` would write now: %s", ir->dir,
				      buf_str(&names));
		c->detail = xstrdup(ir->diff ? ir->diff : "");
		c->remedy = xstrdup("review the diff; `lobes init --apply` re-renders (your .env edits are "
				    "kept; replaced files are kept as NAME.bak.N)");
	}
	for (size_t i = 0; i < ir->n_kept; i++) {
		const struct kept_value *k = &ir->kept[i];
		struct check *c;
		if (k->lobes)
			c = doc_add(r, "deploy-dir", SEV_INFO, "operator override kept: %s=%s (lobes would write %s)",
				k->key, k->secret ? "<hidden>" : k->yours, k->lobes);
		else
			c = doc_add(r, "deploy-dir", SEV_INFO, "operator key kept: %s=%s (yours only)", k->key,
				k->secret ? "<hidden>" : k->yours);
		c->name = xstrdup(k->key);
	}
}
