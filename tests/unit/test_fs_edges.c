/*
 * test_fs_edges.c — util/fs.c at its edges: what each kind of file that is
 * not a regular one is called when refused, the size cap at and past its
 * bound, a /proc-style read (no size) past its cap, reads under
 * LOBES_SYSROOT, directories that cannot be made and why, the temp-name
 * rule at each of its conditions, an atomic write whose rename fails (no
 * temp left behind), and fs_clean_temps removing only what a writer would
 * have left. Each assertion checks the exact outcome or message.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/util/fs.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lobes-fs.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *path(const char *rel)
{
	return xasprintf("%s/%s", dir, rel);
}

static void put(const char *rel, const char *text)
{
	_cleanup_free_ char *p = path(rel);
	assert_int_equal(fs_write_atomic(p, text, strlen(text), 0600, NULL), 0);
}

/* fs_read's refusal of P, checked against "<P>WANT". */
static void read_refused(const char *p, size_t cap, const char *want_tail)
{
	struct err *e = NULL;
	assert_null(fs_read(p, cap, NULL, &e));
	assert_non_null(e);
	assert_int_equal(e->code, EXIT_CONFIG);
	_cleanup_free_ char *want = xasprintf("'%s'%s", p, want_tail);
	if (!strstr(e->msg, want))
		fail_msg("refusal '%s'; expected it to contain '%s'", e->msg, want);
	err_free(e);
}

static void test_read_kinds_and_cap(void **state)
{
	(void)state;
	_cleanup_free_ char *missing = path("missing");
	struct err *e = NULL;
	assert_null(fs_read(missing, 0, NULL, &e));
	_cleanup_free_ char *want = xasprintf("open '%s': No such file or directory", missing);
	assert_string_equal(e->msg, want);
	err_free(e);
	e = NULL;

	read_refused(dir, 0, " is a directory; expected a regular file");
	read_refused("/dev/null", 0, " is a character device; expected a regular file");
	_cleanup_free_ char *sock = path("s.sock");
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	/* a socket cannot even be opened: the open's reason */
	assert_null(fs_read(sock, 0, NULL, &e));
	_cleanup_free_ char *want_sock = xasprintf("open '%s': No such device or address", sock);
	assert_string_equal(e->msg, want_sock);
	err_free(e);
	e = NULL;
	close(fd);

	/* the cap: a file of exactly cap bytes is read, one more is refused */
	put("ten", "0123456789");
	_cleanup_free_ char *ten = path("ten");
	size_t len = 0;
	_cleanup_free_ char *t = fs_read(ten, 10, &len, &e);
	assert_non_null(t);
	assert_int_equal(len, 10);
	assert_string_equal(t, "0123456789");
	read_refused(ten, 9, " is 10 bytes; expected at most 9");
	/* an empty file is an empty string */
	put("empty", "");
	_cleanup_free_ char *emp = path("empty");
	_cleanup_free_ char *t0 = fs_read(emp, 0, &len, &e);
	assert_non_null(t0);
	assert_int_equal(len, 0);
	assert_string_equal(t0, "");
}

static void test_sysroot_and_read_sys(void **state)
{
	(void)state;
	const char *saved = getenv("LOBES_SYSROOT");
	_cleanup_free_ char *keep = saved ? xstrdup(saved) : NULL;

	unsetenv("LOBES_SYSROOT");
	_cleanup_free_ char *p0 = sysroot_path("/proc/meminfo");
	assert_string_equal(p0, "/proc/meminfo");
	setenv("LOBES_SYSROOT", "", 1);
	_cleanup_free_ char *p1 = sysroot_path("/proc/meminfo");
	assert_string_equal(p1, "/proc/meminfo");
	setenv("LOBES_SYSROOT", "/r", 1);
	_cleanup_free_ char *p2 = sysroot_path("/proc/meminfo");
	assert_string_equal(p2, "/r/proc/meminfo");
	_cleanup_free_ char *p3 = sysroot_path("etc/x");
	assert_string_equal(p3, "/r/etc/x");
	setenv("LOBES_SYSROOT", "/r///", 1);
	_cleanup_free_ char *p4 = sysroot_path("/proc/meminfo");
	assert_string_equal(p4, "/r/proc/meminfo");

	/* fs_read_sys under the sysroot: absent is NULL without an error */
	setenv("LOBES_SYSROOT", dir, 1);
	put("sysfile", "42\n");
	struct err *e = NULL;
	_cleanup_free_ char *v = fs_read_sys("/sysfile", 0, &e);
	assert_non_null(v);
	assert_string_equal(v, "42\n");
	assert_null(fs_read_sys("/nothing/here", 0, &e));
	assert_null(e);
	assert_null(fs_read_sys("/sysfile/below", 0, &e)); /* ENOTDIR */
	assert_null(e);
	/* a directory is refused with the reason */
	assert_null(fs_read_sys("/", 0, &e));
	assert_non_null(e);
	assert_string_contains(e->msg, "is a directory; expected a regular file");
	err_free(e);
	e = NULL;
	/* no size check up front (a /proc file says 0), but the cap holds */
	assert_null(fs_read_sys("/sysfile", 2, &e));
	assert_non_null(e);
	_cleanup_free_ char *want = xasprintf("read '%s/sysfile': larger than 2 bytes", dir);
	assert_string_equal(e->msg, want);
	err_free(e);
	_cleanup_free_ char *v3 = fs_read_sys("/sysfile", 3, &e);
	assert_non_null(v3);

	keep ? setenv("LOBES_SYSROOT", keep, 1) : unsetenv("LOBES_SYSROOT");
}

/* With stdin closed the next file opened is fd 0: a read must take it as
 * a file like any other, not as a failure (fd < 0 is the only failure). */
static void test_reads_at_fd_zero(void **state)
{
	(void)state;
	put("zero", "at fd 0\n");
	_cleanup_free_ char *p = path("zero");
	int saved = dup(0);
	assert_true(saved > 0);
	close(0);
	struct err *e = NULL;
	char *a = fs_read(p, 0, NULL, &e);
	const char *root = getenv("LOBES_SYSROOT");
	_cleanup_free_ char *keep = root ? xstrdup(root) : NULL;
	setenv("LOBES_SYSROOT", dir, 1);
	char *b = fs_read_sys("/zero", 0, &e);
	keep ? setenv("LOBES_SYSROOT", keep, 1) : unsetenv("LOBES_SYSROOT");
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	assert_null(e);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, "at fd 0\n");
	assert_string_equal(b, "at fd 0\n");
	free(a);
	free(b);
}

static void test_mkdirs(void **state)
{
	(void)state;
	struct err *e = NULL;
	_cleanup_free_ char *deep = path("a/b/c");
	assert_int_equal(fs_mkdirs(deep, 0700, &e), 0);
	assert_true(fs_is_dir(deep));
	assert_int_equal(fs_mkdirs(deep, 0700, &e), 0); /* again: nothing to do */
	_cleanup_free_ char *slash = path("a/b/d/");
	assert_int_equal(fs_mkdirs(slash, 0700, &e), 0);
	assert_true(fs_is_dir(slash));

	put("afile", "x");
	_cleanup_free_ char *in_way = path("afile");
	assert_int_equal(fs_mkdirs(in_way, 0700, &e), -1);
	_cleanup_free_ char *want = xasprintf("create directory '%s': a file is in the way", in_way);
	assert_string_equal(e->msg, want);
	err_free(e);
	e = NULL;
	_cleanup_free_ char *below = path("afile/sub");
	assert_int_equal(fs_mkdirs(below, 0700, &e), -1);
	/* the component in the way is named, not the one asked for */
	assert_string_equal(e->msg, want);
	err_free(e);
	assert_false(fs_is_dir(in_way));
	assert_true(fs_exists(in_way));
}

static void test_temp_names(void **state)
{
	(void)state;
	const char *hex = "0123456789abcdef";
	_cleanup_free_ char *good = xasprintf(".env" FS_TEMP_MARK "%s", hex);
	assert_true(fs_is_temp_name(good));
	_cleanup_free_ char *nodot = xasprintf("env" FS_TEMP_MARK "%s", hex);
	assert_false(fs_is_temp_name(nodot));
	_cleanup_free_ char *noname = xasprintf("." FS_TEMP_MARK "%s", hex);
	assert_false(fs_is_temp_name(noname));
	_cleanup_free_ char *onechar = xasprintf(".e" FS_TEMP_MARK "%s", hex);
	assert_true(fs_is_temp_name(onechar));
	_cleanup_free_ char *short15 = xasprintf(".env" FS_TEMP_MARK "%.15s", hex);
	assert_false(fs_is_temp_name(short15));
	_cleanup_free_ char *long17 = xasprintf(".env" FS_TEMP_MARK "%s0", hex);
	assert_false(fs_is_temp_name(long17));
	_cleanup_free_ char *upper = xasprintf(".env" FS_TEMP_MARK "0123456789ABCDEF");
	assert_false(fs_is_temp_name(upper));
	_cleanup_free_ char *tail = xasprintf(".env" FS_TEMP_MARK "%s~", hex);
	assert_false(fs_is_temp_name(tail));
	assert_false(fs_is_temp_name(".env"));

	/* what fs_temp_create makes is a temp name, mode as asked */
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	char *name = NULL;
	struct err *e = NULL;
	mode_t old = umask(0);
	int fd = fs_temp_create(dfd, "base", 0640, &name, &e);
	umask(old);
	assert_true(fd >= 0);
	close(fd);
	assert_true(fs_is_temp_name(name));
	assert_true(str_starts_with(name, ".base"));
	struct stat st;
	assert_int_equal(fstatat(dfd, name, &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	unlinkat(dfd, name, 0);
	free(name);

	/* in a directory that is gone: the reason */
	_cleanup_free_ char *gone = path("gone");
	assert_int_equal(mkdir(gone, 0700), 0);
	_cleanup_close_ int gfd = open(gone, O_RDONLY | O_DIRECTORY);
	assert_int_equal(rmdir(gone), 0);
	assert_int_equal(fs_temp_create(gfd, "x", 0600, &name, &e), -1);
	assert_string_equal(e->msg, "create a temp file for 'x': No such file or directory");
	err_free(e);
}

static size_t count_temps(const char *d)
{
	DIR *dd = opendir(d);
	assert_non_null(dd);
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(dd)))
		n += fs_is_temp_name(de->d_name);
	closedir(dd);
	return n;
}

static void test_write_atomic_failures(void **state)
{
	(void)state;
	struct err *e = NULL;
	_cleanup_free_ char *nodir = path("no/such/file");
	assert_int_equal(fs_write_atomic(nodir, "x", 1, 0600, &e), -1);
	_cleanup_free_ char *want = xasprintf("write '%s': directory '%s/no/such' does not exist", nodir, dir);
	assert_string_equal(e->msg, want);
	err_free(e);
	e = NULL;

	/* the target is a directory that is not empty: the rename fails, the
	 * temp is removed, the directory is untouched */
	_cleanup_free_ char *w = path("w");
	assert_int_equal(mkdir(w, 0700), 0);
	_cleanup_free_ char *target = path("w/target");
	_cleanup_free_ char *inner = path("w/target/keep");
	assert_int_equal(fs_mkdirs(target, 0700, NULL), 0);
	assert_int_equal(fs_write_atomic(inner, "k", 1, 0600, NULL), 0);
	assert_int_equal(fs_write_atomic(target, "data", 4, 0600, &e), -1);
	assert_non_null(e);
	assert_string_contains(e->msg, "rename '");
	_cleanup_free_ char *to = xasprintf("' to '%s'", target);
	assert_string_contains(e->msg, to);
	err_free(e);
	assert_int_equal(count_temps(w), 0);
	assert_true(fs_is_dir(target));

	/* a write replaces the whole file, mode as asked */
	_cleanup_free_ char *f = path("w/f");
	assert_int_equal(fs_write_atomic(f, "long old text", 13, 0644, NULL), 0);
	assert_int_equal(fs_write_atomic(f, "new", 3, 0600, NULL), 0);
	_cleanup_free_ char *back = fs_read(f, 0, NULL, NULL);
	assert_string_equal(back, "new");
	struct stat st;
	assert_int_equal(stat(f, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_clean_temps(void **state)
{
	(void)state;
	_cleanup_free_ char *c = path("clean");
	assert_int_equal(mkdir(c, 0700), 0);
	struct err *e = NULL;
	assert_int_equal(fs_clean_temps(c, &e), 0);
	const char *hex = "00112233445566ff";
	_cleanup_free_ char *t1 = xasprintf("%s/.env" FS_TEMP_MARK "%s", c, hex);
	_cleanup_free_ char *t2 = xasprintf("%s/.compose" FS_TEMP_MARK "%s", c, hex);
	_cleanup_free_ char *tl = xasprintf("%s/.link" FS_TEMP_MARK "%s", c, hex);
	_cleanup_free_ char *td = xasprintf("%s/.dir" FS_TEMP_MARK "%s", c, hex);
	_cleanup_free_ char *keep = xasprintf("%s/.env", c);
	_cleanup_free_ char *target = path("target-of-link");
	assert_int_equal(fs_write_atomic(t1, "a", 1, 0600, NULL), 0);
	assert_int_equal(fs_write_atomic(t2, "b", 1, 0600, NULL), 0);
	assert_int_equal(fs_write_atomic(keep, "c", 1, 0600, NULL), 0);
	assert_int_equal(fs_write_atomic(target, "t", 1, 0600, NULL), 0);
	assert_int_equal(symlink(target, tl), 0);
	assert_int_equal(mkdir(td, 0700), 0);
	assert_int_equal(fs_clean_temps(c, &e), 3);
	assert_false(fs_exists(t1));
	assert_false(fs_exists(t2));
	struct stat st;
	assert_int_equal(lstat(tl, &st), -1);  /* the link itself went */
	assert_true(fs_exists(target));        /* not what it pointed at */
	assert_true(fs_is_dir(td));            /* a directory is never removed */
	assert_true(fs_exists(keep));
	assert_int_equal(fs_clean_temps(c, &e), 0);

	_cleanup_free_ char *missing = path("nowhere");
	assert_int_equal(fs_clean_temps(missing, &e), -1);
	_cleanup_free_ char *want = xasprintf("open directory '%s': No such file or directory", missing);
	assert_string_equal(e->msg, want);
	err_free(e);
}

static void test_strings(void **state)
{
	(void)state;
	char a[] = "  \t a b \n\r ";
	assert_string_equal(str_strip(a), "a b");
	char b[] = "x  ";
	assert_string_equal(str_rstrip(b), "x");
	char c[] = "   ";
	assert_string_equal(str_strip(c), "");
	char d[] = "";
	assert_string_equal(str_rstrip(d), "");
	assert_true(str_starts_with("VLLM_X", "VLLM_"));
	assert_true(str_starts_with("VLLM_", "VLLM_"));
	assert_false(str_starts_with("VLLM", "VLLM_"));
	assert_true(str_starts_with("anything", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_kinds_and_cap),
		cmocka_unit_test(test_sysroot_and_read_sys),
		cmocka_unit_test(test_reads_at_fd_zero),
		cmocka_unit_test(test_mkdirs),
		cmocka_unit_test(test_temp_names),
		cmocka_unit_test(test_write_atomic_failures),
		cmocka_unit_test(test_clean_temps),
		cmocka_unit_test(test_strings),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
