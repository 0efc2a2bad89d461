/*
 * tree.c — a rendered tree of files in subdirectories (the Kubernetes
 * render) written into the deploy dir under DIR/<sub>/, through the same
 * store as the compose files: the deploy dir's writer lock for the whole
 * write, and in each directory of the tree the journal commit of
 * commit.c (a killed write leaves each directory old or new, and the next
 * writer finishes it). The tree is regenerable, so replaced files keep no
 * backups.
 */
#include <string.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "deploy_int.h"

void tree_result_free(struct tree_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->files[i].name);
	free(r->files);
	free(r->diff);
	free(r->root);
	memset(r, 0, sizeof(*r));
}

/* The directory part of name ("" for none); caller frees. */
static char *dir_of(const char *name)
{
	const char *s = strrchr(name, '/');
	return s ? xasprintf("%.*s", (int)(s - name), name) : xstrdup("");
}

/* Commit the changed files of one directory d of the tree. */
static int commit_dir(const char *root, const char *d, const struct render_out *ro,
		      const struct tree_result *r, struct err **err)
{
	_cleanup_free_ char *path = *d ? xasprintf("%s/%s", root, d) : xstrdup(root);
	if (fs_mkdirs(path, 0755, err) < 0 || deploy_recover(path, NULL, DEPLOY_KEEP_BACKUPS, err) < 0)
		return -1;
	struct deploy_txn t;
	if (deploy_txn_begin(&t, path, err) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < ro->n && rc == 0; i++) {
		_cleanup_free_ char *fd = dir_of(ro->files[i].name);
		if (!r->files[i].changed || strcmp(fd, d) != 0)
			continue;
		const char *base = ro->files[i].name + (*d ? strlen(d) + 1 : 0);
		rc = deploy_txn_add(&t, base, ro->files[i].data, ro->files[i].len, ro->files[i].mode, err);
	}
	if (rc == 0)
		rc = deploy_txn_commit(&t, err);
	deploy_txn_end(&t);
	return rc;
}

int deploy_tree_sync(const char *dir, const char *sub, const struct render_out *ro, bool apply,
		     struct tree_result *r, struct err **err)
{
	memset(r, 0, sizeof(*r));
	r->root = xasprintf("%s/%s", dir, sub);
	int lock = -1;
	if (apply) {
		if (fs_mkdirs(dir, 0755, err) < 0 || (lock = deploy_lock(dir, err)) < 0)
			return -1;
	}
	_cleanup_buf_ struct buf diff;
	buf_init(&diff, 0);
	r->files = xcalloc(ro->n ? ro->n : 1, sizeof(*r->files));
	r->n = ro->n;
	for (size_t i = 0; i < ro->n; i++) {
		const struct render_file *f = &ro->files[i];
		_cleanup_free_ char *p = xasprintf("%s/%s", r->root, f->name);
		_cleanup_free_ char *d = dir_of(p);
		_cleanup_free_ char *base = xstrdup(p + strlen(d) + 1);
		/* as the directory is once a pending journal is replayed */
		struct err *e = NULL;
		_cleanup_free_ char *old = fs_is_dir(d) ? deploy_read(d, base, NULL, &e) : NULL;
		if (e) {
			if (lock >= 0)
				close(lock);
			*err = e;
			return -1;
		}
		r->files[i].name = xstrdup(f->name);
		r->files[i].existed = old != NULL;
		r->files[i].changed = !old || strcmp(old, f->data) != 0;
		if (r->files[i].changed) {
			_cleanup_free_ char *la = xasprintf("a/%s/%s", sub, f->name);
			_cleanup_free_ char *lb = xasprintf("b/%s/%s", sub, f->name);
			diff_unified(old, f->data, la, lb, &diff);
			r->changed = true;
		}
	}
	r->diff = xstrdup(buf_str(&diff));
	int rc = 0;
	for (size_t i = 0; apply && rc == 0 && i < ro->n; i++) {
		_cleanup_free_ char *d = dir_of(ro->files[i].name);
		bool first = true; /* each directory once, at its first file */
		for (size_t j = 0; j < i && first; j++) {
			_cleanup_free_ char *dj = dir_of(ro->files[j].name);
			first = strcmp(dj, d) != 0;
		}
		if (first)
			rc = commit_dir(r->root, d, ro, r, err);
	}
	if (lock >= 0)
		close(lock);
	return rc;
}
