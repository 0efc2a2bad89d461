/*
 * deploy.c — init: merge operator edits, render, diff, write atomically.
 * See deploy.h for the contract.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "commit.h"
#include "deploy.h"
#include "diff.h"

#define STATE_FILE ".lobes-state.json"

/* --- .env ----------------------------------------------------------------- */

int env_parse(const char *text, const char *name, struct env_file *out, struct err **err)
{
	memset(out, 0, sizeof(*out));
	int line = 0;
	const char *p = text;
	while (*p) {
		line++;
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		_cleanup_free_ char *l = xasprintf("%.*s", (int)n, p);
		p += n + (nl ? 1 : 0);
		char *s = str_strip(l);
		if (!*s || *s == '#')
			continue;
		if (str_starts_with(s, "export "))
			s = str_strip(s + 7);
		char *eq = strchr(s, '=');
		bool key_ok = eq && eq != s;
		for (char *k = s; key_ok && k < eq; k++)
			if (!isalnum((unsigned char)*k) && *k != '_')
				key_ok = false;
		if (!key_ok) {
			env_file_free(out);
			return err_set(err, EXIT_CONFIG, "%s:%d:%d: '%s' is not an assignment; expected KEY=VALUE",
				       name, line, (int)(s - l) + 1, s);
		}
		*eq = '\0';
		char *v = eq + 1;
		size_t vl = strlen(v);
		if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
			v[vl - 1] = '\0';
			v++;
		}
		out->e = xrealloc(out->e, (out->n + 1) * sizeof(*out->e));
		out->e[out->n++] = (struct env_entry){ xstrdup(str_rstrip(s)), xstrdup(v), line };
	}
	return 0;
}

const char *env_get(const struct env_file *f, const char *key)
{
	const char *v = NULL;
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->e[i].key, key) == 0)
			v = f->e[i].value; /* the last assignment wins, as in compose */
	return v;
}

static const struct env_entry *env_entry_get(const struct env_file *f, const char *key)
{
	const struct env_entry *v = NULL;
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->e[i].key, key) == 0)
			v = &f->e[i];
	return v;
}

void env_file_free(struct env_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->e[i].key);
		free(f->e[i].value);
	}
	free(f->e);
	memset(f, 0, sizeof(*f));
}

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

/* --- nominal render ------------------------------------------------------- */

int render_nominal(const char *profile, const char *operator_dir, struct render_out *out,
		   struct err **err)
{
	struct knowledge k = { 0 };
	if (knowledge_load(&k, operator_dir, err) < 0)
		return -1;
	int rc = -1;
	struct host_facts f = { 0 };
	struct plan p = { 0 };
	struct fleet_template t = { 0 };
	const struct profile *pr = knowledge_profile(&k, profile);
	if (!pr) {
		/* let plan_resolve produce the "unknown profile" error text */
		struct plan_input in = { .k = &k, .facts = &f, .profile = profile,
					 .read_checkpoint = checkpoint_nominal };
		plan_resolve(&p, &in, err);
		goto out;
	}
	host_facts_nominal(&f, knowledge_card(&k, pr->card));
	struct plan_input in = { .k = &k, .facts = &f, .profile = profile,
				 .read_checkpoint = checkpoint_nominal };
	if (plan_resolve(&p, &in, err) < 0 || fleet_template_load(&t, err) < 0 ||
	    render_fleet(&p, &t, out, err) < 0)
		goto out;
	rc = 0;
out:
	fleet_template_free(&t);
	plan_free(&p);
	host_facts_free(&f);
	knowledge_free(&k);
	return rc;
}

/* --- init ----------------------------------------------------------------- */

/* Read a file of the deploy dir as committed (commit.h); NULL when absent. */
static char *read_opt(const char *dir, const char *name, struct err **err)
{
	return deploy_read(dir, name, err);
}

/* The files init manages in a deploy dir: their stale temps are removed and
 * their backups pruned. */
static const char *const managed_files[] = { ".env", "docker-compose.yml", "docker-compose.gpu.yml",
					     STATE_FILE, NULL };

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

/* Replace the value of KEY=... lines in rendered .env text by the kept
 * operator values, and append operator-only keys. */
static char *merge_env(const char *rendered, const struct env_file *old, char *const *edited,
		       const struct env_file *renv)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	const char *p = rendered;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		const char *eq = memchr(p, '=', n);
		bool replaced = false;
		if (eq && *p != '#') {
			_cleanup_free_ char *key = xasprintf("%.*s", (int)(eq - p), p);
			if (strv_has(edited, key)) {
				buf_printf(&b, "%s=%s\n", key, env_get(old, key));
				replaced = true;
			}
		}
		if (!replaced)
			buf_add(&b, p, n);
		p += n;
	}
	bool header = false;
	for (size_t i = 0; i < old->n; i++) {
		const char *key = old->e[i].key;
		if (!strv_has(edited, key) || env_get(renv, key))
			continue;
		if (env_entry_get(old, key) != &old->e[i])
			continue; /* only the last assignment */
		if (!header) {
			buf_adds(&b, "\n# operator keys (kept by lobes init)\n");
			header = true;
		}
		buf_printf(&b, "%s=%s\n", key, old->e[i].value);
	}
	return buf_take(&b);
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

int init_prepare(struct init_result *r, const struct init_opts *o, struct err **err)
{
	memset(r, 0, sizeof(*r));
	r->lock_fd = -1;
	r->keep_backups = -1;
	r->dir = xstrdup(o->dir);
	if (fs_exists(o->dir) && !fs_is_dir(o->dir))
		return err_set(err, EXIT_CONFIG, "deploy dir '%s' is a file; expected a directory", o->dir);
	r->dir_exists = fs_is_dir(o->dir);
	/* A writer locks the dir, then finishes or rolls back a killed commit
	 * before it reads anything. A dry run only reads (commit.h). */
	if (o->apply && r->dir_exists) {
		r->lock_fd = deploy_lock(o->dir, err);
		if (r->lock_fd < 0 || deploy_recover(o->dir, managed_files, -1, err) < 0)
			return -1;
	}
	/* What is there now. */
	_cleanup_free_ char *old_env_text = r->dir_exists ? read_opt(o->dir, ".env", err) : NULL;
	if (r->dir_exists && !old_env_text && err && *err)
		return -1;
	_cleanup_free_ char *state_text = r->dir_exists ? read_opt(o->dir, STATE_FILE, err) : NULL;
	if (r->dir_exists && !state_text && err && *err)
		return -1;
	struct env_file old = { 0 };
	if (old_env_text && env_parse(old_env_text, ".env", &old, err) < 0)
		return err_wrap(err, "deploy dir '%s'", o->dir);
	r->keep_backups = keep_backups(o, &old, err);
	if (r->keep_backups < 0) {
		env_file_free(&old);
		return -1;
	}
	json_auto_t *state = NULL;
	if (state_text) {
		json_error_t je;
		state = json_loads(state_text, 0, &je);
		if (!state || !json_is_object(json_object_get(state, "env"))) {
			env_file_free(&old);
			return err_set(err, EXIT_CONFIG, "%s/%s:%d:%d: %s; expected the state lobes wrote "
					 "(delete it to treat every .env value as yours)",
				       o->dir, STATE_FILE, je.line, je.column,
				       state ? "no 'env' object" : je.text);
		}
	}
	/* A profile chosen before sticks until --profile says otherwise. */
	const char *profile = o->profile;
	if (!profile && env_get(&old, "LOBES_PROFILE") && !strv_has(o->reset, "LOBES_PROFILE")) {
		profile = env_get(&old, "LOBES_PROFILE");
		r->profile_from_dir = true;
	}
	json_t *last = json_object_get(state, "env");
	/* What lobes itself would write now, without any operator edit: the
	 * reference for "lobes would write" and for the state file. Without a
	 * state file, every value that differs from it counts as the operator's. */
	json_t *now = json_object();
	r->lobes_env = now;
	struct fleet_template t;
	if (loaded_plan_init(&r->lp, o->dir, profile, err) < 0 || fleet_template_load(&t, err) < 0) {
		env_file_free(&old);
		return -1;
	}
	{
		struct render_out ro0;
		if (render_fleet(&r->lp.plan, &t, &ro0, err) < 0) {
			fleet_template_free(&t);
			env_file_free(&old);
			return -1;
		}
		struct env_file e0 = { 0 };
		if (env_parse(render_out_get(&ro0, ".env")->data, ".env", &e0, NULL) == 0)
			for (size_t i = 0; i < e0.n; i++)
				json_object_set_new(now, e0.e[i].key, json_string(e0.e[i].value));
		env_file_free(&e0);
		render_out_free(&ro0);
	}
	if (!state)
		last = now;
	/* Operator edits: keys whose value differs from what lobes last wrote. */
	char **edited = NULL;
	struct override *ov = NULL;
	size_t n_ov = 0;
	char **where = NULL;
	int rc = -1;
	/* before the first goto: the cleanup must never see it uninitialised */
	_cleanup_buf_ struct buf diff;
	buf_init(&diff, 0);
	for (size_t i = 0; i < old.n; i++) {
		const struct env_entry *e = &old.e[i];
		if (env_entry_get(&old, e->key) != e)
			continue;
		const char *was = json_string_value(json_object_get(last, e->key));
		if (last && was && strcmp(was, e->value) == 0)
			continue;
		if (strv_has(o->reset, e->key)) {
			strv_push(&r->reset, e->key);
			continue;
		}
		strv_push(&edited, e->key);
		enum role_id role;
		enum knob_id knob;
		if (knob_key(e->key, &role, &knob)) {
			char *canon = NULL;
			const char *expect = NULL;
			if (knob_canon(knob, e->value, &canon, &expect) < 0) {
				err_set(err, EXIT_CONFIG, "%s/.env:%d:%zu: %s=%s is not valid; expected %s",
					o->dir, e->line, strlen(e->key) + 2, e->key, e->value, expect);
				goto out;
			}
			free(canon);
			ov = xrealloc(ov, (n_ov + 1) * sizeof(*ov));
			_cleanup_free_ char *w = xasprintf(".env:%d %s (operator edit)", e->line, e->key);
			strv_push(&where, w);
			ov[n_ov++] = (struct override){ role, knob, e->value, NULL };
		}
	}
	for (size_t i = 0; i < n_ov; i++)
		ov[i].where = where[i];
	/* The same facts and knowledge, resolved again with the operator's edits. */
	if (loaded_plan_reresolve(&r->lp, profile, ov, n_ov, err) < 0)
		goto out;
	struct render_out ro;
	if (render_fleet(&r->lp.plan, &t, &ro, err) < 0)
		goto out;
	/* The render with the operator's knob edits, for the merge. */
	struct env_file renv = { 0 };
	const struct render_file *ef = render_out_get(&ro, ".env");
	if (env_parse(ef->data, ".env (rendered)", &renv, err) < 0) {
		render_out_free(&ro);
		goto out;
	}
	for (char **k = edited; k && *k; k++) {
		const char *lobes = json_string_value(json_object_get(now, *k));
		const char *yours = env_get(&old, *k);
		if (lobes && strcmp(lobes, yours) == 0)
			continue;
		r->kept = xrealloc(r->kept, (r->n_kept + 1) * sizeof(*r->kept));
		r->kept[r->n_kept++] = (struct kept_value){ xstrdup(*k), xstrdup(yours),
							    lobes ? xstrdup(lobes) : NULL,
							    env_key_is_secret(*k) };
	}
	for (size_t i = 0; i < ro.n; i++) {
		struct file_change *fc = &r->files[r->n_files++];
		fc->name = xstrdup(ro.files[i].name);
		fc->mode = ro.files[i].mode;
		fc->new = strcmp(fc->name, ".env") == 0
				  ? merge_env(ro.files[i].data, &old, edited, &renv)
				  : xstrdup(ro.files[i].data);
		fc->old = strcmp(fc->name, ".env") == 0 && old_env_text ? xstrdup(old_env_text)
			  : r->dir_exists ? read_opt(o->dir, fc->name, err) : NULL;
		if (!fc->old && err && *err) {
			env_file_free(&renv);
			render_out_free(&ro);
			goto out;
		}
		fc->changed = !fc->old || strcmp(fc->old, fc->new) != 0;
		r->changed |= fc->changed;
		_cleanup_free_ char *ma = strcmp(fc->name, ".env") == 0 ? mask_env(fc->old) : NULL;
		_cleanup_free_ char *mb = strcmp(fc->name, ".env") == 0 ? mask_env(fc->new) : NULL;
		_cleanup_free_ char *la = xasprintf("a/%s", fc->name);
		_cleanup_free_ char *lb = xasprintf("b/%s", fc->name);
		diff_unified(ma ? ma : fc->old, mb ? mb : fc->new, la, lb, &diff);
	}
	env_file_free(&renv);
	render_out_free(&ro);
	r->diff = buf_take(&diff);
	rc = 0;
out:
	fleet_template_free(&t);
	strv_free(edited);
	strv_free(where);
	free(ov);
	env_file_free(&old);
	return rc;
}

static char *state_json(const struct init_result *r)
{
	json_auto_t *o = json_object();
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "profile", json_string(r->lp.plan.profile->name));
	json_object_set(o, "env", r->lobes_env);
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
	char *out = xasprintf("%s\n", s);
	free(s);
	return out;
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
		for (size_t i = 0; rc == 0 && i < r->n_files; i++) {
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
		_cleanup_free_ char *st = state_json(r);
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
