/*
 * put.c — a few files of the deploy dir replaced as one commit, each only
 * if it still holds the bytes the caller planned against: what `lobes
 * doctor --fix --apply` writes (doctor/fix.c). Under the writer's lock a
 * pending journal is finished first (deploy_recover; finishing a stale one
 * is itself a fix doctor offers), then every file is compared with what
 * the plan read: one that changed in between refuses the whole commit and
 * nothing is written. A replaced file is kept as NAME.bak.N, as init keeps
 * it, and the backups beyond `keep` are pruned.
 *
 * deploy_save keeps the files init manages, as committed, before a change
 * that may have to be undone (`lobes switch --apply` when the new
 * checkpoint does not boot), for deploy_saved_put.
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "deploy.h"
#include "deploy_int.h"

char *deploy_file_get(const char *dir, const char *name, size_t *len, struct err **err)
{
	return deploy_read(dir, name, len, err);
}

/* Under the lock: every file still as planned. */
static int unchanged(const char *dir, const struct deploy_put *p, size_t n, struct err **err)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		_cleanup_free_ char *now = deploy_read(dir, p[i].name, &len, err);
		if (!now && *err)
			return -1;
		bool same = p[i].expect ? now && len == strlen(p[i].expect) &&
						  memcmp(now, p[i].expect, len) == 0
					: !now;
		if (!same)
			return err_set(err, EXIT_CONFIG, "'%s/%s' changed since the plan was made; "
					 "nothing written; run it again", dir, p[i].name);
	}
	return 0;
}

int deploy_put_files(const char *dir, const struct deploy_put *p, size_t n, int keep,
		     struct err **err)
{
	int fd = deploy_lock(dir, err);
	if (fd < 0)
		return -1;
	int rc = -1;
	struct deploy_txn t = { .dfd = -1 };
	if (deploy_recover(dir, NULL, -1, err) < 0 || unchanged(dir, p, n, err) < 0)
		goto out;
	if (!n) {
		rc = 0;
		goto out;
	}
	if (deploy_txn_begin(&t, dir, err) < 0)
		goto out;
	rc = 0;
	for (size_t i = 0; rc == 0 && keep > 0 && i < n; i++) {
		if (!p[i].expect)
			continue;
		_cleanup_free_ char *b = deploy_backup_name(dir, p[i].name);
		rc = deploy_txn_add(&t, b, p[i].expect, strlen(p[i].expect), p[i].mode, err);
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = deploy_txn_add(&t, p[i].name, p[i].data, strlen(p[i].data), p[i].mode, err);
	if (rc == 0)
		rc = deploy_txn_commit(&t, err);
	deploy_txn_end(&t);
	for (size_t i = 0; rc == 0 && keep > 0 && i < n; i++)
		deploy_prune_backups(dir, p[i].name, keep);
out:
	close(fd);
	return rc;
}

static const char *const snap_names[] = { ".env", "docker-compose.yml", "docker-compose.gpu.yml",
					  GATEWAY_UNIT, STATE_FILE };

int deploy_save(const char *dir, struct deploy_saved *s, struct err **err)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(snap_names) / sizeof(*snap_names); i++) {
		size_t len = 0;
		char *data = deploy_read(dir, snap_names[i], &len, err);
		if (!data && *err) {
			deploy_saved_free(s);
			return -1;
		}
		if (!data)
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, snap_names[i]);
		struct stat st;
		mode_t mode = stat(path, &st) == 0 ? st.st_mode & 0777 : 0600;
		s->f = xrealloc(s->f, (s->n + 1) * sizeof(*s->f));
		s->f[s->n++] = (struct deploy_saved_file){ xstrdup(snap_names[i]), data, len, mode };
	}
	return 0;
}
