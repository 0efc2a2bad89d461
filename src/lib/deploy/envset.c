/*
 * envset.c — one .env key changed for a while, then the file put back byte
 * for byte: what a verify question that compares two settings of a knob
 * does to the operator's deploy dir (verify/experiment.c). Both writes are
 * commits of the store (deploy_int.h) under the writer's lock, so a
 * concurrent `lobes init --apply` is refused instead of interleaved, and a
 * kill leaves the old file or the new one.
 */
#include <string.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
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
	const struct env_entry *last = env_entry_get(&env, key);
	int line = 0;
	bool replaced = false;
	/* copy line by line; the last assignment of key becomes KEY=VALUE */
	for (const char *p = old; p < old + len;) {
		const char *nl = memchr(p, '\n', (size_t)(old + len - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(old + len - p);
		line++;
		if (last && line == last->line) {
			buf_printf(&b, "%s=%s\n", key, value);
			replaced = true;
		} else {
			buf_add(&b, p, n);
		}
		p += n;
	}
	if (!replaced) {
		if (b.len && b.data[b.len - 1] != '\n')
			buf_adds(&b, "\n");
		buf_printf(&b, "%s=%s\n", key, value);
	}
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
