/*
 * init.c — init: merge operator edits, render, diff, write atomically.
 * See deploy.h for the contract, deploy_int.h for the commit.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "deploy_int.h"

/* <ROLE>_<KNOB> → role, knob; false for other keys. */
static bool knob_key(const char *key, enum role_id *r, enum knob_id *k)
{
	for (int i = 0; i < ROLE__COUNT; i++)
		for (int j = 0; j < KNOB__COUNT; j++) {
			_cleanup_free_ char *x = env_key((enum role_id)i, knob_name((enum knob_id)j));
			if (strcmp(x, key) == 0) {
				*r = (enum role_id)i;
				*k = (enum knob_id)j;
				return true;
			}
		}
	return false;
}

/* --- init ----------------------------------------------------------------- */

/* Read a file of the deploy dir as committed (deploy_int.h); NULL when absent. */
static char *read_opt(const char *dir, const char *name, size_t *len, struct err **err)
{
	return deploy_read(dir, name, len, err);
}

/* init replaces the files it manages by rename, which would replace a
 * symbolic link by a regular file and leave the link's target stale. Like
 * git (which never writes through a link it tracks), lobes refuses: the
 * operator replaces the link by the file, or points --dir at the target's
 * directory. */
static int refuse_links(const char *dir, const char *const *names, struct err **err)
{
	for (const char *const *n = names; *n; n++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, *n);
		struct stat st;
		if (lstat(p, &st) < 0 || !S_ISLNK(st.st_mode))
			continue;
		char target[4096];
		ssize_t tl = readlink(p, target, sizeof(target) - 1);
		target[tl > 0 ? tl : 0] = '\0';
		return err_set(err, EXIT_CONFIG, "'%s' is a symbolic link (to '%s'); expected a regular file: "
				 "lobes replaces its files atomically, which would replace the link, so "
				 "replace the link by the file itself or use --dir on the target's directory",
			       p, target);
	}
	return 0;
}

/* The files init manages in a deploy dir: their stale temps are removed and
 * their backups pruned. */
static const char *const managed_files[] = { ".env", "docker-compose.yml", "docker-compose.gpu.yml",
					     GATEWAY_UNIT, STATE_FILE, NULL };

/* How many backups of each file to keep: --keep-backups, else the .env's
 * LOBES_KEEP_BACKUPS, else DEPLOY_KEEP_BACKUPS. */
static int keep_backups(const struct init_opts *o, const struct env_file *old, struct err **err)
{
	if (o->keep_backups >= 0)
		return o->keep_backups;
	const char *v = env_get(old, "LOBES_KEEP_BACKUPS");
	if (!v)
		return DEPLOY_KEEP_BACKUPS;
	char *end;
	long k = strtol(v, &end, 10);
	if (!*v || *end || k < 0 || k > 100000) {
		int line = 0;
		for (size_t i = 0; i < old->n; i++)
			if (strcmp(old->e[i].key, "LOBES_KEEP_BACKUPS") == 0)
				line = old->e[i].line;
		return err_set(err, EXIT_CONFIG, "%s/.env:%d:%zu: LOBES_KEEP_BACKUPS=%s is not valid; "
				 "expected a whole number of backups to keep (0 or more)",
			       o->dir, line, strlen("LOBES_KEEP_BACKUPS") + 2, v);
	}
	return (int)k;
}

/* The .env text with secret values masked, for diffs. */
static char *mask_env(const char *text)
{
	if (!text)
		return NULL;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		const char *eq = memchr(p, '=', n);
		_cleanup_free_ char *key = eq ? xasprintf("%.*s", (int)(eq - p), p) : NULL;
		if (key && *p != '#' && env_key_is_secret(key))
			buf_printf(&b, "%s=<hidden>\n", key);
		else
			buf_add(&b, p, n);
		p += n;
	}
	return buf_take(&b);
}

/* o->set: each KEY=VALUE replaces the key's last assignment in the .env
 * read (or is added), as if the operator had written it; the file's old
 * text stays the diff's left side. */
static int apply_sets(const struct init_opts *o, struct env_file *env, struct err **err)
{
	for (char *const *s = o->set; s && *s; s++) {
		const char *eq = strchr(*s, '=');
		if (!eq || eq == *s)
			return err_set(err, EXIT_USAGE, "'%s' is not KEY=VALUE", *s);
		_cleanup_free_ char *key = xasprintf("%.*s", (int)(eq - *s), *s);
		struct env_entry *e = (struct env_entry *)env_entry_get(env, key);
		if (!e) {
			env->e = xrealloc(env->e, (env->n + 1) * sizeof(*env->e));
			e = &env->e[env->n++];
			memset(e, 0, sizeof(*e));
			e->key = xstrdup(key);
		}
		free(e->value);
		free(e->raw);
		e->value = xstrdup(eq + 1);
		e->raw = xstrdup(*s);
	}
	return 0;
}

/* What init finds in the deploy dir before it renders. */
struct init_old {
	char *env_text; /* .env as committed; NULL: none */
	size_t env_len;
	struct env_file env;
	json_t *state;  /* the state file; NULL: none */
};

static void init_old_free(struct init_old *old)
{
	free(old->env_text);
	env_file_free(&old->env);
	json_decref(old->state);
	memset(old, 0, sizeof(*old));
}

/* A writer locks the dir, then finishes or rolls back a killed commit
 * before it reads anything; a dry run only reads (deploy_int.h). Then what
 * is there now: .env, the number of backups to keep, the state file. */
static int read_dir(struct init_result *r, const struct init_opts *o, struct init_old *old,
		    struct err **err)
{
	if (fs_exists(o->dir) && !fs_is_dir(o->dir))
		return err_set(err, EXIT_CONFIG, "deploy dir '%s' is a file; expected a directory", o->dir);
	r->dir_exists = fs_is_dir(o->dir);
	if (o->apply && r->dir_exists) {
		r->lock_fd = deploy_lock(o->dir, err);
		if (r->lock_fd < 0 || deploy_recover(o->dir, managed_files, -1, err) < 0)
			return -1;
	}
	if (r->dir_exists && refuse_links(o->dir, managed_files, err) < 0)
		return -1;
	old->env_text = r->dir_exists ? read_opt(o->dir, ".env", &old->env_len, err) : NULL;
	if (r->dir_exists && !old->env_text && err && *err)
		return -1;
	_cleanup_free_ char *state_text = r->dir_exists ? read_opt(o->dir, STATE_FILE, NULL, err) : NULL;
	if (r->dir_exists && !state_text && err && *err)
		return -1;
	if (old->env_text && env_parse_len(old->env_text, old->env_len, ".env", &old->env, err) < 0)
		return err_wrap(err, "deploy dir '%s'", o->dir);
	if (apply_sets(o, &old->env, err) < 0)
		return -1;
	r->keep_backups = keep_backups(o, &old->env, err);
	if (r->keep_backups < 0)
		return -1;
	return deploy_state_parse(o->dir, state_text, &old->state, err);
}

/* What lobes itself would write to .env for the plan, into now: {key: value}. */
static int lobes_env(const struct plan *p, const struct fleet_template *t, json_t *now,
		     struct err **err)
{
	struct render_out ro0;
	if (render_fleet(p, t, &ro0, err) < 0)
		return -1;
	struct env_file e0 = { 0 };
	if (env_parse(render_out_get(&ro0, ".env")->data, ".env", &e0, NULL) == 0)
		for (size_t i = 0; i < e0.n; i++)
			json_object_set_new(now, e0.e[i].key, json_string(e0.e[i].value));
	env_file_free(&e0);
	render_out_free(&ro0);
	return 0;
}

/* --reset names a key of .env or of the render; anything else is a typo
 * that would otherwise be ignored without a word. */
static int check_resets(const struct init_opts *o, const struct env_file *old, json_t *now,
			struct err **err)
{
	for (char *const *k = o->reset; k && *k; k++)
		if (!env_get(old, *k) && !json_object_get(now, *k))
			return err_set(err, EXIT_USAGE, "--reset: no such key '%s' in %s/.env or in the "
					 "render; expected a key of .env (e.g. CORTEX_MAX_MODEL_LEN)", *k, o->dir);
	return 0;
}

/* The operator's edits: the keys, and the knob keys among them as plan
 * overrides (where: their .env lines). */
struct edits {
	char **keys;
	struct override *ov;
	size_t n_ov;
	char **where;
};

static void edits_free(struct edits *ed)
{
	strv_free(ed->keys);
	strv_free(ed->where);
	free(ed->ov);
	memset(ed, 0, sizeof(*ed));
}

/* Operator edits: keys whose value differs from what lobes last wrote
 * (last); the ones --reset names are dropped (r->reset). */
static int operator_edits(struct init_result *r, const struct init_opts *o,
			  const struct env_file *old, json_t *last, struct edits *ed, struct err **err)
{
	for (size_t i = 0; i < old->n; i++) {
		const struct env_entry *e = &old->e[i];
		if (env_entry_get(old, e->key) != e)
			continue;
		const char *was = json_string_value(json_object_get(last, e->key));
		if (last && was && strcmp(was, e->value) == 0)
			continue;
		if (strv_has(o->reset, e->key)) {
			strv_push(&r->reset, e->key);
			continue;
		}
		strv_push(&ed->keys, e->key);
		enum role_id role;
		enum knob_id knob;
		if (!knob_key(e->key, &role, &knob))
			continue;
		char *canon = NULL;
		const char *expect = NULL;
		if (knob_canon(knob, e->value, &canon, &expect) < 0)
			return err_set(err, EXIT_CONFIG, "%s/.env:%d:%zu: %s=%s is not valid; expected %s",
				       o->dir, e->line, strlen(e->key) + 2, e->key, e->value, expect);
		free(canon);
		ed->ov = xrealloc(ed->ov, (ed->n_ov + 1) * sizeof(*ed->ov));
		_cleanup_free_ char *w = xasprintf(".env:%d %s (operator edit)", e->line, e->key);
		strv_push(&ed->where, w);
		ed->ov[ed->n_ov++] = (struct override){ role, knob, e->value, NULL };
	}
	for (size_t i = 0; i < ed->n_ov; i++)
		ed->ov[i].where = ed->where[i];
	return 0;
}

/* The edited values that differ from what lobes alone would write (now). */
static void kept_values(struct init_result *r, char **edited, json_t *now,
			const struct env_file *old)
{
	for (char **k = edited; k && *k; k++) {
		const char *lobes = json_string_value(json_object_get(now, *k));
		const char *yours = env_get(old, *k);
		if (lobes && strcmp(lobes, yours) == 0)
			continue;
		r->kept = xrealloc(r->kept, (r->n_kept + 1) * sizeof(*r->kept));
		r->kept[r->n_kept++] = (struct kept_value){ xstrdup(*k), xstrdup(yours),
							    lobes ? xstrdup(lobes) : NULL,
							    env_key_is_secret(*k) };
	}
}

/* Each rendered file (the .env merged with the operator's lines) against
 * the dir's, and their diff, secrets masked. */
static int file_changes(struct init_result *r, const struct init_opts *o,
			const struct render_out *ro, const struct init_old *old, char **edited,
			const struct env_file *renv, struct err **err)
{
	_cleanup_buf_ struct buf diff;
	buf_init(&diff, 0);
	for (size_t i = 0; i < ro->n; i++) {
		struct file_change *fc = &r->files[r->n_files++];
		fc->name = xstrdup(ro->files[i].name);
		fc->mode = ro->files[i].mode;
		fc->new = strcmp(fc->name, ".env") == 0
				  ? env_merge(ro->files[i].data, old->env_text, &old->env, edited, renv)
				  : xstrdup(ro->files[i].data);
		fc->old = strcmp(fc->name, ".env") == 0 && old->env_text ? xstrdup(old->env_text)
			  : r->dir_exists ? read_opt(o->dir, fc->name, NULL, err) : NULL;
		if (!fc->old && err && *err)
			return -1;
		fc->changed = !fc->old || strcmp(fc->old, fc->new) != 0;
		r->changed |= fc->changed;
		_cleanup_free_ char *ma = strcmp(fc->name, ".env") == 0 ? mask_env(fc->old) : NULL;
		_cleanup_free_ char *mb = strcmp(fc->name, ".env") == 0 ? mask_env(fc->new) : NULL;
		_cleanup_free_ char *la = xasprintf("a/%s", fc->name);
		_cleanup_free_ char *lb = xasprintf("b/%s", fc->name);
		diff_unified(ma ? ma : fc->old, mb ? mb : fc->new, la, lb, &diff);
	}
	r->diff = buf_take(&diff);
	return 0;
}

/* The same facts and knowledge, resolved again with the operator's edits,
 * rendered, and compared with the dir. */
static int render_with_edits(struct init_result *r, const struct init_opts *o,
			     const struct fleet_template *t, const char *profile,
			     const struct init_old *old, const struct edits *ed, struct err **err)
{
	if (loaded_plan_reresolve(&r->lp, profile, ed->ov, ed->n_ov, err) < 0)
		return -1;
	struct render_out ro;
	if (render_fleet(&r->lp.plan, t, &ro, err) < 0)
		return -1;
	/* The render with the operator's knob edits, for the merge. */
	struct env_file renv = { 0 };
	const struct render_file *ef = render_out_get(&ro, ".env");
	if (env_parse(ef->data, ".env (rendered)", &renv, err) < 0) {
		render_out_free(&ro);
		return -1;
	}
	kept_values(r, ed->keys, r->lobes_env, &old->env);
	int rc = file_changes(r, o, &ro, old, ed->keys, &renv, err);
	env_file_free(&renv);
	render_out_free(&ro);
	return rc;
}

int init_prepare(struct init_result *r, const struct init_opts *o, struct err **err)
{
	memset(r, 0, sizeof(*r));
	r->lock_fd = -1;
	r->keep_backups = -1;
	r->dir = xstrdup(o->dir);
	struct init_old old = { 0 };
	if (read_dir(r, o, &old, err) < 0) {
		init_old_free(&old);
		return -1;
	}
	/* A profile chosen before sticks until --profile says otherwise. */
	const char *profile = o->profile;
	if (!profile && env_get(&old.env, "LOBES_PROFILE") && !strv_has(o->reset, "LOBES_PROFILE")) {
		profile = env_get(&old.env, "LOBES_PROFILE");
		r->profile_from_dir = true;
	}
	json_t *last = json_object_get(old.state, "env");
	/* What lobes itself would write now, without any operator edit: the
	 * reference for "lobes would write" and for the state file. Without a
	 * state file, every value that differs from it counts as the operator's. */
	json_t *now = json_object();
	r->lobes_env = now;
	struct fleet_template t;
	if (loaded_plan_init(&r->lp, o->dir, profile, err) < 0 || fleet_template_load(&t, err) < 0) {
		init_old_free(&old);
		return -1;
	}
	struct edits ed = { 0 };
	int rc = -1;
	if (lobes_env(&r->lp.plan, &t, now, err) < 0)
		goto out;
	if (!old.state)
		last = now;
	if (check_resets(o, &old.env, now, err) < 0 || operator_edits(r, o, &old.env, last, &ed, err) < 0)
		goto out;
	rc = render_with_edits(r, o, &t, profile, &old, &ed, err);
out:
	fleet_template_free(&t);
	edits_free(&ed);
	init_old_free(&old);
	return rc;
}

int init_apply(struct init_result *r, struct err **err)
{
	if (!r->dir_exists) {
		if (!r->changed)
			return 0;
		if (fs_mkdirs(r->dir, 0700, err) < 0)
			return err_wrap(err, "deploy dir");
	}
	if (access(r->dir, W_OK) < 0)
		return err_errno(err, EXIT_CONFIG, errno, "deploy dir '%s' is not writable", r->dir);
	if (r->lock_fd < 0 && (r->lock_fd = deploy_lock(r->dir, err)) < 0)
		return -1;
	int rc = 0;
	if (r->changed) {
		/* Every file, its backup and the state change as one step. */
		struct deploy_txn t;
		if (deploy_txn_begin(&t, r->dir, err) < 0)
			return -1;
		/* No backup when none is to be kept (--keep-backups 0): it would
		 * be pruned at once, after init had said it was kept. */
		for (size_t i = 0; rc == 0 && r->keep_backups != 0 && i < r->n_files; i++) {
			struct file_change *fc = &r->files[i];
			if (!fc->changed || !fc->old)
				continue;
			_cleanup_free_ char *b = deploy_backup_name(r->dir, fc->name);
			fc->backup = xasprintf("%s/%s", r->dir, b);
			rc = deploy_txn_add(&t, b, fc->old, strlen(fc->old), fc->mode, err);
		}
		for (size_t i = 0; rc == 0 && i < r->n_files; i++) {
			struct file_change *fc = &r->files[i];
			if (fc->changed)
				rc = deploy_txn_add(&t, fc->name, fc->new, strlen(fc->new), fc->mode, err);
		}
		_cleanup_free_ char *st = deploy_state_text(r->lp.plan.profile->name, r->lobes_env);
		if (rc == 0)
			rc = deploy_txn_add(&t, STATE_FILE, st, strlen(st), 0600, err);
		if (rc == 0)
			rc = deploy_txn_commit(&t, err);
		deploy_txn_end(&t);
	}
	if (rc == 0)
		for (const char *const *m = managed_files; *m; m++)
			deploy_prune_backups(r->dir, *m, r->keep_backups);
	return rc;
}

void init_result_free(struct init_result *r)
{
	loaded_plan_free(&r->lp);
	for (size_t i = 0; i < r->n_files; i++) {
		free(r->files[i].name);
		free(r->files[i].old);
		free(r->files[i].new);
		free(r->files[i].backup);
	}
	for (size_t i = 0; i < r->n_kept; i++) {
		free(r->kept[i].key);
		free(r->kept[i].yours);
		free(r->kept[i].lobes);
	}
	free(r->kept);
	strv_free(r->reset);
	free(r->diff);
	free(r->dir);
	json_decref(r->lobes_env);
	if (r->lock_fd >= 0)
		close(r->lock_fd);
	memset(r, 0, sizeof(*r));
	r->lock_fd = -1;
}
