/* fs.c — sysroot-relative reads and atomic writes; see fs.h. */
#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/random.h>
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

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "not a regular file";
}

/* Open path for reading without blocking on a FIFO or a device (O_NONBLOCK,
 * cleared again once fstat says it is a regular file): only regular files
 * are read. A file larger than cap (when its size is known) is refused
 * before it is read. -1 with errno set when open fails; -2 with *err set
 * when the file is not one to read. */
static int open_regular(const char *path, size_t cap, struct err **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		err_errno(err, EXIT_CONFIG, errno, "stat '%s'", path);
		close(fd);
		return -2;
	}
	if (!S_ISREG(st.st_mode)) {
		err_set(err, EXIT_CONFIG, "'%s' is %s; expected a regular file", path, file_kind(st.st_mode));
		close(fd);
		return -2;
	}
	if (cap && (uint64_t)st.st_size > cap) {
		err_set(err, EXIT_CONFIG, "'%s' is %lld bytes; expected at most %zu", path,
			(long long)st.st_size, cap);
		close(fd);
		return -2;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

char *fs_read(const char *path, size_t cap, size_t *len, struct err **err)
{
	_cleanup_close_ int fd = open_regular(path, cap ? cap : BUF_DEFAULT_CAP, err);
	if (fd == -1)
		err_errno(err, EXIT_CONFIG, errno, "open '%s'", path);
	if (fd < 0)
		return NULL;
	return read_fd(fd, path, cap, len, err);
}

char *fs_read_sys(const char *path, size_t cap, struct err **err)
{
	_cleanup_free_ char *p = sysroot_path(path);
	/* no size check: /proc and /sys files report 0 */
	_cleanup_close_ int fd = open_regular(p, 0, err);
	if (fd == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return NULL;
		err_errno(err, EXIT_CONFIG, errno, "open '%s'", p);
	}
	if (fd < 0)
		return NULL;
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

/* The test hook: LOBES_FAULT_AT=N ends the process (status 99) at the Nth
 * fault point it passes; LOBES_FAULT_AFTER_TEMP (any value) at the first
 * point after a temp file is complete. */
static long fault_seen;

void fs_fault_point(const char *what)
{
	const char *v = getenv("LOBES_FAULT_AT");
	long fault_at = v && *v ? strtol(v, NULL, 10) : 0;
	fault_seen++;
	if ((fault_at > 0 && fault_seen == fault_at) ||
	    (getenv("LOBES_FAULT_AFTER_TEMP") && strcmp(what, "temp written") == 0))
		_exit(99);
}

bool fs_is_temp_name(const char *name)
{
	/* ".<name>" FS_TEMP_MARK "<16 hex digits>" */
	const char *m = strstr(name, FS_TEMP_MARK);
	if (name[0] != '.' || !m || m <= name + 1)
		return false;
	const char *h = m + strlen(FS_TEMP_MARK);
	size_t n = strspn(h, "0123456789abcdef");
	return n == 16 && h[n] == '\0';
}

int fs_temp_create(int dfd, const char *base, mode_t mode, char **name, struct err **err)
{
	for (int tries = 0; tries < 100; tries++) {
		uint64_t r;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return err_errno(err, EXIT_CONFIG, errno, "temp file for '%s': no random bytes", base);
		char *t = xasprintf(".%s" FS_TEMP_MARK "%016llx", base, (unsigned long long)r);
		/* never through a planted link, never into a file that exists */
		int fd = openat(dfd, t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0) {
			*name = t;
			return fd;
		}
		int e = errno;
		free(t);
		if (e != EEXIST)
			return err_errno(err, EXIT_CONFIG, e, "create a temp file for '%s'", base);
	}
	return err_set(err, EXIT_CONFIG, "create a temp file for '%s': every name was taken", base);
}

int fs_write_temp(int dfd, const char *base, const void *data, size_t len, mode_t mode,
		  char **name, struct err **err)
{
	char *t = NULL;
	int fd = fs_temp_create(dfd, base, mode, &t, err);
	if (fd < 0)
		return -1;
	fs_fault_point("temp created");
	if (fchmod(fd, mode) < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlinkat(dfd, t, 0);
		err_errno(err, EXIT_CONFIG, e, "write '%s'", t);
		free(t);
		return -1;
	}
	if (close(fd) < 0) {
		int e = errno;
		unlinkat(dfd, t, 0);
		err_errno(err, EXIT_CONFIG, e, "write '%s'", t);
		free(t);
		return -1;
	}
	fs_fault_point("temp written");
	*name = t;
	return 0;
}

int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		    struct err **err)
{
	_cleanup_free_ char *dcopy = xstrdup(path);
	_cleanup_free_ char *bcopy = xstrdup(path);
	const char *dir = dirname(dcopy), *base = basename(bcopy);
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return err_set(err, EXIT_CONFIG, "write '%s': directory '%s' does not exist", path, dir);
	_cleanup_free_ char *tmp = NULL;
	if (fs_write_temp(dfd, base, data, len, mode, &tmp, err) < 0)
		return err_wrap(err, "write '%s'", path);
	if (renameat(dfd, tmp, dfd, base) < 0) {
		int e = errno;
		unlinkat(dfd, tmp, 0);
		return err_errno(err, EXIT_CONFIG, e, "rename '%s/%s' to '%s'", dir, tmp, path);
	}
	fs_fault_point("renamed");
	(void)fsync(dfd);
	return 0;
}

int fs_clean_temps(const char *dir, struct err **err)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return err_errno(err, EXIT_CONFIG, errno, "open directory '%s'", dir);
	int dup_fd = dup(dfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return err_errno(err, EXIT_CONFIG, errno, "read directory '%s'", dir);
	}
	int removed = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!fs_is_temp_name(de->d_name))
			continue;
		/* only what we would have made: a regular file or a link, never a
		 * directory; unlinkat removes a link itself, not its target */
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	if (removed)
		(void)fsync(dfd);
	return removed;
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
