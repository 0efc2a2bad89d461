/*
 * commit.c — the deploy dir's one-step commit: a redo journal of renames;
 * see deploy_int.h for the protocol and why.
 *
 * The journal is JSON (jansson): {"version": 1, "renames": [[TEMP, NAME], ...]}.
 * A journal is trusted only as far as it names plain files of the deploy
 * dir: a TEMP of our naming and a NAME without '/', never "." or "..".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/strv.h"
#include "../util/fs.h"
#include "deploy_int.h"

int deploy_lock(const char *dir, struct err **err)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, DEPLOY_LOCK);
	int fd = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_errno(err, EXIT_CONFIG, errno, "lock deploy dir '%s': open '%s'", dir, p);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		if (e == EWOULDBLOCK)
			return err_set(err, EXIT_CONFIG, "deploy dir '%s' is being written by another "
					 "lobes process (lock '%s'); try again when it is done", dir, p);
		return err_errno(err, EXIT_CONFIG, e, "lock deploy dir '%s'", dir);
	}
	return fd;
}

static bool plain_name(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* The journal's renames, validated; NULL when there is no journal. */
static json_t *journal_load(const char *dir, struct err **err)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, DEPLOY_JOURNAL);
	struct stat st;
	if (lstat(p, &st) < 0 && errno == ENOENT)
		return NULL;
	_cleanup_free_ char *text = fs_read(p, 1 << 20, NULL, err);
	if (!text)
		return NULL;
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	json_t *r = json_object_get(j, "renames");
	if (!json_is_array(r)) {
		/* JSON that parsed has no error position (jansson leaves -1): the
		 * document's start is where the list is missing */
		err_set(err, EXIT_CONFIG, "%s:%d:%d: %s; expected the journal lobes writes "
			"({\"version\": 1, \"renames\": [[TEMP, NAME], ...]})", p, j ? 1 : je.line,
			j ? 1 : je.column, j ? "no 'renames' list" : je.text);
		json_decref(j);
		return NULL;
	}
	size_t i;
	json_t *x;
	json_array_foreach(r, i, x) {
		const char *tmp = json_string_value(json_array_get(x, 0));
		const char *name = json_string_value(json_array_get(x, 1));
		if (json_array_size(x) != 2 || !plain_name(tmp) || !fs_is_temp_name(tmp) ||
		    !plain_name(name) || fs_is_temp_name(name)) {
			err_set(err, EXIT_CONFIG, "%s: renames[%zu]: not a rename of this dir's files; "
				"expected [TEMP, NAME]: a temp file of lobes' naming and a file name "
				"of the dir (remove the journal to drop the interrupted commit)", p, i);
			json_decref(j);
			return NULL;
		}
	}
	json_incref(r);
	json_decref(j);
	return r;
}

/* Replay the journal's renames; 1 when there was one, 0 none, -1 error. */
static int journal_replay(const char *dir, struct err **err)
{
	json_t *r = journal_load(dir, err);
	if (!r)
		return err && *err ? -1 : 0;
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		json_decref(r);
		return err_errno(err, EXIT_CONFIG, errno, "open deploy dir '%s'", dir);
	}
	size_t i;
	json_t *x;
	json_array_foreach(r, i, x) {
		const char *tmp = json_string_value(json_array_get(x, 0));
		const char *name = json_string_value(json_array_get(x, 1));
		if (renameat(dfd, tmp, dfd, name) < 0 && errno != ENOENT) {
			/* the names belong to r: the message is made before r goes */
			int rc = err_errno(err, EXIT_CONFIG, errno, "finish the interrupted commit of "
					   "'%s': rename '%s' to '%s'", dir, tmp, name);
			json_decref(r);
			return rc;
		}
		fs_fault_point("replay rename");
	}
	json_decref(r);
	(void)fsync(dfd);
	if (unlinkat(dfd, DEPLOY_JOURNAL, 0) < 0 && errno != ENOENT)
		return err_errno(err, EXIT_CONFIG, errno, "remove '%s/%s'", dir, DEPLOY_JOURNAL);
	(void)fsync(dfd);
	fs_fault_point("journal removed");
	return 1;
}

/* "NAME.tmp.PID", the temp naming of earlier versions, for a managed name. */
static int clean_legacy_temps(const char *dir, const char *const *managed)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int removed = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		for (const char *const *m = managed; m && *m; m++) {
			size_t n = strlen(*m);
			const char *t = de->d_name + n;
			if (strncmp(de->d_name, *m, n) != 0 || strncmp(t, ".tmp.", 5) != 0 || !t[5] ||
			    strspn(t + 5, "0123456789") != strlen(t + 5))
				continue;
			_cleanup_free_ char *p = xasprintf("%s/%s", dir, de->d_name);
			struct stat st;
			if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(p) == 0)
				removed++;
		}
	}
	closedir(d);
	return removed;
}

int deploy_recover(const char *dir, const char *const *managed, int keep, struct err **err)
{
	int changed = journal_replay(dir, err);
	if (changed < 0)
		return -1;
	int t = fs_clean_temps(dir, err);
	if (t < 0)
		return -1;
	changed += t + clean_legacy_temps(dir, managed);
	for (const char *const *m = managed; m && *m; m++)
		changed += deploy_prune_backups(dir, *m, keep);
	return changed;
}

char *deploy_read(const char *dir, const char *name, size_t *len, struct err **err)
{
	json_t *r = journal_load(dir, err);
	if (!r && err && *err)
		return NULL;
	_cleanup_free_ char *p = NULL;
	size_t i;
	json_t *x;
	json_array_foreach(r, i, x) {
		if (strcmp(json_string_value(json_array_get(x, 1)), name) != 0)
			continue;
		char *tp = xasprintf("%s/%s", dir, json_string_value(json_array_get(x, 0)));
		struct stat st;
		if (lstat(tp, &st) == 0 && S_ISREG(st.st_mode)) {
			free(p);
			p = tp;
		} else {
			free(tp);
		}
	}
	json_decref(r);
	if (!p)
		p = xasprintf("%s/%s", dir, name);
	struct stat st;
	if (stat(p, &st) < 0 && errno == ENOENT)
		return NULL;
	return fs_read(p, 16 << 20, len, err);
}

int deploy_txn_begin(struct deploy_txn *t, const char *dir, struct err **err)
{
	memset(t, 0, sizeof(*t));
	t->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dfd < 0)
		return err_errno(err, EXIT_CONFIG, errno, "open deploy dir '%s'", dir);
	t->dir = xstrdup(dir);
	return 0;
}

int deploy_txn_add(struct deploy_txn *t, const char *name, const void *data, size_t len,
		   mode_t mode, struct err **err)
{
	char *tmp = NULL;
	if (fs_write_temp(t->dfd, name, data, len, mode, &tmp, err) < 0)
		return err_wrap(err, "write '%s/%s'", t->dir, name);
	t->ops = xrealloc(t->ops, (t->n + 1) * sizeof(*t->ops));
	t->ops[t->n++] = (struct deploy_txn_op){ tmp, xstrdup(name) };
	return 0;
}

int deploy_txn_commit(struct deploy_txn *t, struct err **err)
{
	json_auto_t *j = json_pack("{s:i, s:[]}", "version", 1, "renames");
	json_t *r = json_object_get(j, "renames");
	for (size_t i = 0; i < t->n; i++)
		json_array_append_new(r, json_pack("[s, s]", t->ops[i].tmp, t->ops[i].name));
	_cleanup_free_ char *text = json_dumps(j, JSON_INDENT(1));
	_cleanup_free_ char *jp = xasprintf("%s/%s", t->dir, DEPLOY_JOURNAL);
	/* the commit point: once this rename is done, the new state is the state */
	if (fs_write_atomic(jp, text, strlen(text), 0600, err) < 0)
		return err_wrap(err, "commit '%s'", t->dir);
	return journal_replay(t->dir, err) < 0 ? -1 : 0;
}

void deploy_txn_end(struct deploy_txn *t)
{
	for (size_t i = 0; i < t->n; i++) {
		/* a temp still here was never committed (or the commit failed
		 * before its journal): remove it */
		if (t->dfd >= 0 && faccessat(t->dfd, DEPLOY_JOURNAL, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			unlinkat(t->dfd, t->ops[i].tmp, 0);
		free(t->ops[i].tmp);
		free(t->ops[i].name);
	}
	free(t->ops);
	free(t->dir);
	if (t->dfd >= 0)
		close(t->dfd);
	memset(t, 0, sizeof(*t));
	t->dfd = -1;
}

int deploy_journal_stale(const char *dir, char ***names, struct err **err)
{
	*names = NULL;
	json_t *r = journal_load(dir, err);
	if (!r)
		return err && *err ? -1 : 0;
	/* a writer holding the lock is in the middle of its commit: not stale */
	_cleanup_free_ char *lp = xasprintf("%s/%s", dir, DEPLOY_LOCK);
	int fd = open(lp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool busy = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	if (fd >= 0)
		close(fd);
	size_t i;
	json_t *x;
	json_array_foreach(r, i, x)
		if (!busy)
			strv_push(names, json_string_value(json_array_get(x, 1)));
	json_decref(r);
	return busy ? 0 : 1;
}
