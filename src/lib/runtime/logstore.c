/*
 * logstore.c — per-boot log files of a role (logstore.h): numbering,
 * the size bound by moving a full part aside, the count bound by removing
 * the oldest boots, and reading a boot back whole.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "logstore.h"

char *logstore_role_dir(const char *deploy_dir, const char *role)
{
	return xasprintf("%s/logs/%s", deploy_dir, role);
}

/* "NNNNNN.log" (six digits) → NNNNNN, else 0. */
static unsigned boot_no(const char *name)
{
	if (strlen(name) != 10 || strspn(name, "0123456789") != 6 || strcmp(name + 6, ".log") != 0)
		return 0;
	return (unsigned)strtoul(name, NULL, 10);
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

int logstore_list(const char *deploy_dir, const char *role, unsigned **nos, size_t *n,
		  struct err **err)
{
	*nos = NULL;
	*n = 0;
	_cleanup_free_ char *dir = logstore_role_dir(deploy_dir, role);
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : err_errno(err, EXIT_RUNTIME, errno, "open '%s'", dir);
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		unsigned no = boot_no(de->d_name);
		if (!no)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*nos = xrealloc(*nos, cap * sizeof(**nos));
		}
		(*nos)[(*n)++] = no;
	}
	closedir(d);
	if (*n)
		qsort(*nos, *n, sizeof(**nos), cmp_uint);
	return 0;
}

static void remove_boot(const char *dir, unsigned no)
{
	_cleanup_free_ char *p = xasprintf("%s/%06u.log", dir, no);
	_cleanup_free_ char *p1 = xasprintf("%s/%06u.log.1", dir, no);
	unlink(p);
	unlink(p1);
}

int logstore_begin(struct logstore_boot *b, const char *deploy_dir, const char *role,
		   const char *container, const char *started_at, size_t part_cap, size_t keep,
		   struct err **err)
{
	_cleanup_free_ char *label = xasprintf("container %s", container);
	return logstore_begin_as(b, deploy_dir, role, label, started_at, part_cap, keep, err);
}

int logstore_begin_as(struct logstore_boot *b, const char *deploy_dir, const char *role,
		      const char *label, const char *started_at, size_t part_cap, size_t keep,
		      struct err **err)
{
	memset(b, 0, sizeof(*b));
	b->fd = -1;
	b->part_cap = part_cap ? part_cap : LOGSTORE_PART_BYTES;
	b->keep = keep ? keep : LOGSTORE_BOOTS;
	_cleanup_free_ char *logs = xasprintf("%s/logs", deploy_dir);
	b->dir = logstore_role_dir(deploy_dir, role);
	if (fs_mkdirs(b->dir, 0700, err) < 0) {
		logstore_end(b);
		return -1;
	}
	(void)chmod(logs, 0700);
	unsigned *nos;
	size_t n;
	if (logstore_list(deploy_dir, role, &nos, &n, err) < 0) {
		logstore_end(b);
		return -1;
	}
	b->no = n ? nos[n - 1] + 1 : 1;
	/* the new boot counts: keep-1 older ones stay */
	for (size_t i = 0; n >= b->keep && i + b->keep <= n; i++)
		remove_boot(b->dir, nos[i]);
	free(nos);
	_cleanup_free_ char *p = xasprintf("%s/%06u.log", b->dir, b->no);
	b->fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	if (b->fd < 0) {
		err_errno(err, EXIT_RUNTIME, errno, "create '%s'", p);
		logstore_end(b);
		return -1;
	}
	_cleanup_free_ char *hdr = xasprintf("# lobes boot %06u %s started %s\n", b->no, label,
					     started_at);
	return logstore_write(b, hdr, strlen(hdr), err);
}

int logstore_reopen(struct logstore_boot *b, const char *deploy_dir, const char *role,
		    unsigned no, size_t part_cap, size_t keep, struct err **err)
{
	memset(b, 0, sizeof(*b));
	b->part_cap = part_cap ? part_cap : LOGSTORE_PART_BYTES;
	b->keep = keep ? keep : LOGSTORE_BOOTS;
	b->dir = logstore_role_dir(deploy_dir, role);
	b->no = no;
	_cleanup_free_ char *p = xasprintf("%s/%06u.log", b->dir, no);
	b->fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	struct stat st;
	if (b->fd < 0 || fstat(b->fd, &st) < 0) {
		err_errno(err, EXIT_RUNTIME, errno, "open '%s'", p);
		logstore_end(b);
		return -1;
	}
	b->size = (size_t)st.st_size;
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The current part is full: it becomes NNNNNN.log.1, a fresh part begins. */
static int next_part(struct logstore_boot *b, struct err **err)
{
	_cleanup_free_ char *p = xasprintf("%s/%06u.log", b->dir, b->no);
	_cleanup_free_ char *p1 = xasprintf("%s/%06u.log.1", b->dir, b->no);
	close(b->fd);
	b->fd = -1;
	if (rename(p, p1) < 0)
		return err_errno(err, EXIT_RUNTIME, errno, "move '%s' aside", p);
	b->fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	if (b->fd < 0)
		return err_errno(err, EXIT_RUNTIME, errno, "create '%s'", p);
	b->size = 0;
	_cleanup_free_ char *m = xasprintf("# lobes boot %06u continues (older lines in %06u.log.1; "
					   "older parts dropped)\n", b->no, b->no);
	if (write_all(b->fd, m, strlen(m)) < 0)
		return err_errno(err, EXIT_RUNTIME, errno, "write '%s'", p);
	b->size = strlen(m);
	return 0;
}

int logstore_write(struct logstore_boot *b, const char *p, size_t n, struct err **err)
{
	while (n) {
		if (b->fd < 0)
			return err_set(err, EXIT_INTERNAL, "log of boot %06u is not open", b->no);
		if (b->size >= b->part_cap && next_part(b, err) < 0)
			return -1;
		size_t room = b->part_cap - b->size;
		size_t k = n < room ? n : room;
		if (write_all(b->fd, p, k) < 0)
			return err_errno(err, EXIT_RUNTIME, errno, "write the log of boot %06u in '%s'",
					 b->no, b->dir);
		b->size += k;
		p += k;
		n -= k;
	}
	return 0;
}

void logstore_end(struct logstore_boot *b)
{
	if (b->fd >= 0)
		close(b->fd);
	free(b->dir);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

char *logstore_read(const char *deploy_dir, const char *role, unsigned no, size_t *len,
		    struct err **err)
{
	_cleanup_free_ char *dir = logstore_role_dir(deploy_dir, role);
	_cleanup_free_ char *p = xasprintf("%s/%06u.log", dir, no);
	_cleanup_free_ char *p1 = xasprintf("%s/%06u.log.1", dir, no);
	struct err *e = NULL;
	size_t l1 = 0, l0 = 0;
	_cleanup_free_ char *old = fs_read(p1, (size_t)1 << 30, &l1, &e);
	err_free(e); /* no older part is the usual case */
	_cleanup_free_ char *cur = fs_read(p, (size_t)1 << 30, &l0, err);
	if (!cur)
		return NULL;
	_cleanup_buf_ struct buf b;
	buf_init(&b, (size_t)1 << 31);
	if ((old && buf_add(&b, old, l1) < 0) || buf_add(&b, cur, l0) < 0) {
		err_set(err, EXIT_RUNTIME, "'%s' is too large to read", p);
		return NULL;
	}
	if (len)
		*len = b.len;
	return buf_take(&b);
}
