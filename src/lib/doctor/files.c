/*
 * files.c — the deploy-dir findings that have one safe fix (doctor --fix,
 * fix.c): a file `lobes init` renders that is missing (a compose file, the
 * gateway unit), a key the render writes that .env lacks, and a journal of
 * an interrupted commit that no writer is finishing (.lobes-journal).
 * drift.c says the dir differs as a whole; these name each piece, so each
 * can be healed alone without re-rendering what the operator wrote.
 */
#include <string.h>

#include "../render/render.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/strv.h"
#include "doctor_int.h"

/* A missing file: the read problem deployed_read reported for it (a
 * compose file listed in COMPOSE_FILE) takes the fix, else a new finding. */
static void missing_file(struct doctor_report *r, const char *name)
{
	_cleanup_free_ char *q = xasprintf("'%s'", name);
	for (size_t i = 0; i < r->n; i++) {
		struct check *c = &r->c[i];
		if (strcmp(c->id, "deploy-dir") == 0 && !c->name && strstr(c->message, q) &&
		    strstr(c->message, "is missing")) {
			c->name = xstrdup(name);
			c->fix = DOCTOR_FIX_WRITE_FILE;
			return;
		}
	}
	struct check *c = doc_add(r, "deploy-dir", SEV_WARNING, "'%s' is missing from the deploy dir",
				  name);
	c->name = xstrdup(name);
	c->fix = DOCTOR_FIX_WRITE_FILE;
	c->remedy = xstrdup("`lobes doctor --fix --apply` writes it as `lobes init` renders it");
}

void check_files(struct doctor_ctx *x)
{
	const struct init_result *ir = x->ir;
	for (size_t i = 0; i < ir->n_files; i++) {
		const struct file_change *fc = &ir->files[i];
		if (fc->old || strcmp(fc->name, ".env") == 0)
			continue;
		missing_file(x->r, fc->name);
	}
	for (size_t i = 0; i < ir->n_files; i++) {
		const struct file_change *fc = &ir->files[i];
		if (strcmp(fc->name, ".env") != 0)
			continue;
		struct env_file renv = { 0 };
		if (env_parse(fc->new, ".env (rendered)", &renv, NULL) < 0)
			continue;
		for (size_t k = 0; k < renv.n; k++) {
			const struct env_entry *e = &renv.e[k];
			if (env_entry_get(&renv, e->key) != e || env_get(&x->d->env, e->key))
				continue;
			struct check *c = doc_add(x->r, "deploy-dir", SEV_WARNING,
						  ".env has no %s; `lobes init` writes %s=%s", e->key, e->key,
						  env_key_is_secret(e->key) ? "<hidden>" : e->value);
			c->name = xstrdup(e->key);
			c->fix = DOCTOR_FIX_ADD_KEY;
			c->remedy = xstrdup("`lobes doctor --fix --apply` appends the line (nothing else "
					    "in .env changes), or `lobes init --apply`");
		}
		env_file_free(&renv);
	}
}

void check_journal(struct doctor_ctx *x)
{
	_cleanup_strv_ char **names = NULL;
	struct err *e = NULL;
	int st = deploy_journal_stale(x->o->dir, &names, &e);
	if (st < 0) {
		struct check *c = doc_add(x->r, "deploy-dir", SEV_ERROR, "%s", e->msg);
		c->name = xstrdup(".lobes-journal");
		err_free(e);
		return;
	}
	if (st == 0)
		return;
	_cleanup_buf_ struct buf list;
	buf_init(&list, 0);
	for (char **n = names; n && *n; n++)
		buf_printf(&list, "%s%s", list.len ? ", " : "", *n);
	struct check *c = doc_add(x->r, "deploy-dir", SEV_WARNING,
				  "an interrupted commit is pending (.lobes-journal, replacing %s): "
				  "readers see its new files, the files on disk are still the old ones",
				  list.len ? buf_str(&list) : "nothing");
	c->name = xstrdup(".lobes-journal");
	c->fix = DOCTOR_FIX_FINISH_COMMIT;
	c->remedy = xstrdup("`lobes doctor --fix --apply` finishes it (as the next `lobes init "
			    "--apply` would)");
}
