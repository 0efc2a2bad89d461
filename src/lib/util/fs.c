/* fs.c — sysroot-relative reads and atomic writes; see fs.h. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "fs.h"

char *sysroot_path(const char *path)
{
	const char *root = getenv("LOBES_SYSROOT");
	if (!root || !*root)
		return xstrdup(path);
	size_t rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	return xasprintf("%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/", path);
}

static char *read_fd(int fd, const char *path, size_t cap, size_t *len, struct err **err)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, cap);
	char chunk[65536];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err_errno(err, EXIT_CONFIG, errno, "read '%s'", path);
			return NULL;
		}
		if (n == 0)
			break;
		if (buf_add(&b, chunk, (size_t)n) < 0) {
			err_set(err, EXIT_CONFIG, "read '%s': larger than %zu bytes", path, b.cap);
			return NULL;
		}
	}
	if (len)
		*len = b.len;
	return buf_take(&b);
}

char *fs_read(const char *path, size_t cap, size_t *len, struct err **err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_errno(err, EXIT_CONFIG, errno, "open '%s'", path);
		return NULL;
	}
	return read_fd(fd, path, cap, len, err);
}

char *fs_read_sys(const char *path, size_t cap, struct err **err)
{
	_cleanup_free_ char *p = sysroot_path(path);
	_cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return NULL;
		err_errno(err, EXIT_CONFIG, errno, "open '%s'", p);
		return NULL;
	}
	return read_fd(fd, p, cap ? cap : (1 << 20), NULL, err);
}

bool fs_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

bool fs_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fs_mkdirs(const char *path, mode_t mode, struct err **err)
{
	_cleanup_free_ char *p = xstrdup(path);
	size_t n = strlen(p);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char c = p[i];
		p[i] = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return err_errno(err, EXIT_CONFIG, errno, "create directory '%s'", p);
		if (!fs_is_dir(p))
			return err_set(err, EXIT_CONFIG, "create directory '%s': a file is in the way", p);
		p[i] = c;
	}
	return 0;
}

static int write_all(int fd, const char *d, size_t len)
{
	while (len) {
		ssize_t w = write(fd, d, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		d += w;
		len -= (size_t)w;
	}
	return 0;
}

int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		    struct err **err)
{
	_cleanup_free_ char *dcopy = xstrdup(path);
	const char *dir = dirname(dcopy);
	if (!fs_is_dir(dir))
		return err_set(err, EXIT_CONFIG, "write '%s': directory '%s' does not exist", path, dir);
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return err_errno(err, EXIT_CONFIG, errno, "write '%s'", path);
	if (fchmod(fd, mode) < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return err_errno(err, EXIT_CONFIG, e, "write '%s'", tmp);
	}
	if (close(fd) < 0) {
		int e = errno;
		unlink(tmp);
		return err_errno(err, EXIT_CONFIG, e, "write '%s'", tmp);
	}
	if (getenv("LOBES_FAULT_AFTER_TEMP"))
		_exit(99);
	if (rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return err_errno(err, EXIT_CONFIG, e, "rename '%s' to '%s'", tmp, path);
	}
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return 0;
}

char *str_rstrip(char *s)
{
	size_t n = strlen(s);
	while (n && (isspace((unsigned char)s[n - 1]) || s[n - 1] == '\0'))
		s[--n] = '\0';
	return s;
}

char *str_strip(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return str_rstrip(s);
}

bool str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_to_double(const char *s, double *out)
{
	char *end;
	double d = strtod(s, &end);
	if (end == s || *end)
		return false;
	*out = d;
	return true;
}

bool str_icontains(const char *haystack, const char *needle)
{
	return strcasestr(haystack, needle) != NULL;
}
