/*
 * envset.c — one .env key changed for a while, then the files put back byte
 * for byte: what a verify question that compares two settings of a knob
 * does to the operator's deploy dir (verify/experiment.c). Both writes are
 * commits of the store (deploy_int.h) under the writer's lock, so a
 * concurrent `lobes init --apply` is refused instead of interleaved, and a
 * kill leaves the old file or the new one.
 *
 * A knob compose reads from .env (kv_cache_dtype: ${KEY:-...}) needs only
 * .env changed (deploy_env_set, deploy_env_put). A knob `lobes init` writes
 * literally into the compose file (speculative_config: compose cannot drop
 * a list item) needs the render too: deploy_knob_trial() sets the key in
 * .env as the operator would, renders the dir with that edit (init's
 * render, as `lobes switch` does), and commits .env and every compose file
 * the render changes as one step — no backup, the state file untouched —
 * keeping each replaced file's bytes for deploy_saved_put().
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "deploy.h"
#include "deploy_int.h"

/* Commit .env = bytes under the lock (mode 0600). */
static int put_locked(const char *dir, const char *bytes, size_t len, struct err **err)
{
	struct deploy_txn t;
	if (deploy_txn_begin(&t, dir, err) < 0)
		return -1;
	int rc = deploy_txn_add(&t, ".env", bytes, len, 0600, err);
	if (rc == 0)
		rc = deploy_txn_commit(&t, err);
	deploy_txn_end(&t);
	return rc;
}

/* .env's bytes old[len] (parsed: env) with the last assignment of key
 * replaced by KEY=VALUE, or the line appended; every other byte kept. */
static void env_with(const char *old, size_t len, const struct env_file *env, const char *key,
		     const char *value, struct buf *b)
{
	const struct env_entry *last = env_entry_get(env, key);
	int line = 0;
	bool replaced = false;
	for (const char *p = old; p < old + len;) {
		const char *nl = memchr(p, '\n', (size_t)(old + len - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(old + len - p);
		line++;
		if (last && line == last->line) {
			buf_printf(b, "%s=%s\n", key, value);
			replaced = true;
		} else {
			buf_add(b, p, n);
		}
		p += n;
	}
	if (!replaced) {
		if (b->len && b->data[b->len - 1] != '\n')
			buf_adds(b, "\n");
		buf_printf(b, "%s=%s\n", key, value);
	}
}

int deploy_env_put(const char *dir, const char *bytes, size_t len, struct err **err)
{
	int fd = deploy_lock(dir, err);
	if (fd < 0)
		return -1;
	int rc = deploy_recover(dir, NULL, -1, err) < 0 ? -1 : put_locked(dir, bytes, len, err);
	close(fd);
	return rc < 0 ? err_wrap(err, "put back '%s/.env'", dir) : 0;
}

int deploy_env_set(const char *dir, const char *key, const char *value, char **before,
		   size_t *before_len, struct err **err)
{
	*before = NULL;
	int fd = deploy_lock(dir, err);
	if (fd < 0)
		return -1;
	size_t len = 0;
	_cleanup_free_ char *old = NULL;
	_cleanup_free_ char *name = xasprintf("%s/.env", dir);
	struct env_file env = { 0 };
	struct buf b;
	buf_init(&b, ENV_FILE_CAP);
	int rc = -1;
	if (deploy_recover(dir, NULL, -1, err) < 0)
		goto out;
	old = deploy_read(dir, ".env", &len, err);
	if (!old) {
		if (!*err)
			err_set(err, EXIT_CONFIG, "no deploy dir at '%s' ('%s' is missing)", dir, name);
		goto out;
	}
	if (env_parse_len(old, len, name, &env, err) < 0)
		goto out;
	env_with(old, len, &env, key, value, &b);
	if (put_locked(dir, b.data, b.len, err) < 0)
		goto out;
	*before = TAKE_PTR(old);
	*before_len = len;
	rc = 0;
out:
	env_file_free(&env);
	buf_free(&b);
	close(fd);
	return rc;
}

/* Keep name's bytes (and mode) in s before it is replaced. */
static void save(struct deploy_saved *s, const char *dir, const char *name, const char *bytes,
		 size_t len)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	struct stat st;
	s->f = xrealloc(s->f, (s->n + 1) * sizeof(*s->f));
	struct deploy_saved_file *f = &s->f[s->n++];
	f->name = xstrdup(name);
	f->bytes = xcalloc(len + 1, 1);
	memcpy(f->bytes, bytes, len);
	f->len = len;
	f->mode = stat(path, &st) == 0 ? st.st_mode & 07777 : 0600;
}

int deploy_knob_trial(const char *dir, const char *key, const char *value, struct deploy_saved *saved,
		      struct err **err)
{
	memset(saved, 0, sizeof(*saved));
	_cleanup_free_ char *kv = xasprintf("%s=%s", key, value);
	char *set[] = { kv, NULL };
	struct init_opts io = { .dir = dir, .apply = true, .keep_backups = -1, .set = set };
	struct init_result r = { 0 };
	struct env_file env = { 0 };
	struct buf b;
	buf_init(&b, ENV_FILE_CAP);
	size_t len = 0;
	_cleanup_free_ char *old = NULL;
	_cleanup_free_ char *name = xasprintf("%s/.env", dir);
	int rc = -1;
	r.lock_fd = -1;
	if (!fs_exists(name)) { /* before the lock: nothing is written to a dir that is not one */
		err_set(err, EXIT_CONFIG, "no deploy dir at '%s' ('%s' is missing)", dir, name);
		goto out;
	}
	if (init_prepare(&r, &io, err) < 0) /* takes the lock, finishes a killed commit */
		goto out;
	if (!r.dir_exists || !(old = deploy_read(dir, ".env", &len, err))) {
		if (!*err)
			err_set(err, EXIT_CONFIG, "no deploy dir at '%s' ('%s/.env' is missing)", dir, dir);
		goto out;
	}
	if (env_parse_len(old, len, name, &env, err) < 0)
		goto out;
	env_with(old, len, &env, key, value, &b);
	struct deploy_txn t;
	if (deploy_txn_begin(&t, dir, err) < 0)
		goto out;
	rc = deploy_txn_add(&t, ".env", b.data, b.len, 0600, err);
	save(saved, dir, ".env", old, len);
	for (size_t i = 0; rc == 0 && i < r.n_files; i++) {
		const struct file_change *fc = &r.files[i];
		/* a compose file the edit changes; one the dir does not have stays away */
		if (!strcmp(fc->name, ".env") || strncmp(fc->name, "docker-compose", 14) != 0 ||
		    !fc->changed || !fc->old)
			continue;
		save(saved, dir, fc->name, fc->old, strlen(fc->old));
		rc = deploy_txn_add(&t, fc->name, fc->new, strlen(fc->new), saved->f[saved->n - 1].mode,
				    err);
	}
	if (rc == 0)
		rc = deploy_txn_commit(&t, err);
	deploy_txn_end(&t);
out:
	if (rc < 0)
		deploy_saved_free(saved);
	env_file_free(&env);
	buf_free(&b);
	init_result_free(&r); /* releases the lock */
	return rc < 0 ? err_wrap(err, "set %s for a trial in '%s'", key, dir) : 0;
}

int deploy_saved_put(const char *dir, const struct deploy_saved *s, struct err **err)
{
	int fd = deploy_lock(dir, err);
	if (fd < 0)
		return -1;
	int rc = deploy_recover(dir, NULL, -1, err);
	struct deploy_txn t;
	if (rc >= 0 && (rc = deploy_txn_begin(&t, dir, err)) == 0) {
		for (size_t i = 0; rc == 0 && i < s->n; i++)
			rc = deploy_txn_add(&t, s->f[i].name, s->f[i].bytes, s->f[i].len, s->f[i].mode, err);
		if (rc == 0)
			rc = deploy_txn_commit(&t, err);
		deploy_txn_end(&t);
	}
	close(fd);
	return rc < 0 ? err_wrap(err, "put back the files of '%s'", dir) : 0;
}

bool deploy_saved_same(const char *dir, const struct deploy_saved *s)
{
	for (size_t i = 0; i < s->n; i++) {
		size_t len = 0;
		struct err *e = NULL;
		_cleanup_free_ char *now = deploy_read(dir, s->f[i].name, &len, &e);
		err_free(e);
		if (!now || len != s->f[i].len || memcmp(now, s->f[i].bytes, len) != 0)
			return false;
	}
	return true;
}

void deploy_saved_free(struct deploy_saved *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->f[i].name);
		free(s->f[i].bytes);
	}
	free(s->f);
	memset(s, 0, sizeof(*s));
}
