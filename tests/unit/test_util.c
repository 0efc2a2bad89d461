/* test_util.c — err, buf (cap), fs (atomic write, sysroot), proc (timeout). */
#include "testutil.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/lib/util/buf.h"
#include "../../src/lib/util/fs.h"
#include "../../src/lib/util/proc.h"
#include "../../src/lib/util/strv.h"

static void test_err_wrap(void **state)
{
	(void)state;
	struct err *e = NULL;
	assert_int_equal(err_set(&e, EXIT_CONFIG, "open '%s'", "x"), -1);
	err_wrap(&e, "render '%s'", "thor");
	assert_string_equal(e->msg, "render 'thor': open 'x'");
	assert_int_equal(e->code, EXIT_CONFIG);
	err_free(e);
	/* NULL err pointer is allowed and wrap of nothing is a no-op */
	assert_int_equal(err_set(NULL, 1, "x"), -1);
	struct err *none = NULL;
	err_wrap(&none, "ctx");
	assert_null(none);
}

static void test_buf_cap(void **state)
{
	(void)state;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 8);
	assert_int_equal(buf_adds(&b, "12345678"), 0);
	assert_int_equal(buf_adds(&b, "9"), -1);
	assert_string_equal(buf_str(&b), "12345678");
	buf_reset(&b);
	assert_int_equal(buf_printf(&b, "%d-%s", 7, "ab"), 0);
	assert_string_equal(buf_str(&b), "7-ab");
}

/* fs_write_atomic(p, data) in a child killed by the fault hook once its
 * temp file is complete; the child's exit status. */
static int write_killed_after_temp(const char *p, const char *data)
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("LOBES_FAULT_AFTER_TEMP", "1", 1);
		fs_write_atomic(p, data, strlen(data), 0600, NULL);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	return WEXITSTATUS(st);
}

static void test_atomic_write(void **state)
{
	(void)state;
	char dir[] = "/tmp/lobes-ut.XXXXXX";
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *p = xasprintf("%s/f", dir);
	struct err *e = NULL;
	assert_int_equal(fs_write_atomic(p, "old", 3, 0600, &e), 0);
	/* a write killed after the temp file leaves the old content */
	assert_int_equal(write_killed_after_temp(p, "new"), 99);
	_cleanup_free_ char *got = fs_read(p, 0, NULL, &e);
	assert_string_equal(got, "old");
	struct stat sb;
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	/* a missing directory is an error, nothing written */
	_cleanup_free_ char *bad = xasprintf("%s/nodir/f", dir);
	assert_int_equal(fs_write_atomic(bad, "x", 1, 0644, &e), -1);
	assert_string_contains(e->msg, "does not exist");
	err_free(e);
	_cleanup_free_ char *cmd = xasprintf("rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* A link planted where a temp file would go is never written through, and
 * the temp files a killed writer leaves are recognised and removed. */
static void test_atomic_write_hostile(void **state)
{
	(void)state;
	char dir[] = "/tmp/lobes-ut.XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct err *e = NULL;
	_cleanup_free_ char *victim = xasprintf("%s/victim", dir);
	assert_int_equal(fs_write_atomic(victim, "precious", 8, 0600, &e), 0);
	_cleanup_free_ char *p = xasprintf("%s/f", dir);
	/* the temp name earlier versions used, planted as a link to the victim */
	_cleanup_free_ char *planted = xasprintf("%s/f.tmp.%ld", dir, (long)getpid());
	assert_int_equal(symlink(victim, planted), 0);
	assert_int_equal(fs_write_atomic(p, "new", 3, 0600, &e), 0);
	_cleanup_free_ char *v = fs_read(victim, 0, NULL, &e);
	assert_string_equal(v, "precious");
	struct stat sb;
	assert_int_equal(lstat(p, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	_cleanup_free_ char *got = fs_read(p, 0, NULL, &e);
	assert_string_equal(got, "new");
	/* temp names: ours only */
	assert_true(fs_is_temp_name(".env.lobes-tmp-0123456789abcdef"));
	assert_false(fs_is_temp_name(".env.lobes-tmp-0123456789abcdeg"));
	assert_false(fs_is_temp_name(".env.lobes-tmp-0123"));
	assert_false(fs_is_temp_name("env.lobes-tmp-0123456789abcdef"));
	assert_false(fs_is_temp_name(".lobes-tmp-0123456789abcdef"));
	/* a writer killed after its temp is complete */
	assert_int_equal(write_killed_after_temp(p, "torn"), 99);
	_cleanup_free_ char *got2 = fs_read(p, 0, NULL, &e);
	assert_string_equal(got2, "new");
	/* stale temps: the killed one, a link of our naming (removed, not its
	 * target), and things that are not ours (kept) */
	_cleanup_free_ char *l = xasprintf("%s/.g.lobes-tmp-fedcba9876543210", dir);
	assert_int_equal(symlink(victim, l), 0);
	_cleanup_free_ char *notours = xasprintf("%s/.f.lobes-tmp-xyz", dir);
	assert_int_equal(fs_write_atomic(notours, "x", 1, 0600, &e), 0);
	_cleanup_free_ char *d2 = xasprintf("%s/.d.lobes-tmp-0000000000000000", dir);
	assert_int_equal(mkdir(d2, 0700), 0);
	assert_int_equal(fs_clean_temps(dir, &e), 2);
	assert_int_equal(lstat(l, &sb), -1);
	assert_int_equal(lstat(notours, &sb), 0);
	assert_int_equal(lstat(d2, &sb), 0);
	_cleanup_free_ char *v2 = fs_read(victim, 0, NULL, &e);
	assert_string_equal(v2, "precious");
	assert_int_equal(fs_clean_temps(dir, &e), 0);
	_cleanup_free_ char *cmd = xasprintf("rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_sysroot(void **state)
{
	(void)state;
	setenv("LOBES_SYSROOT", "/fix/root/", 1);
	_cleanup_free_ char *p = sysroot_path("/proc/meminfo");
	assert_string_equal(p, "/fix/root/proc/meminfo");
	unsetenv("LOBES_SYSROOT");
	_cleanup_free_ char *q = sysroot_path("/proc/meminfo");
	assert_string_equal(q, "/proc/meminfo");
}

static bool no_x(char *line)
{
	line[strcspn(line, " ")] = '\0';
	return line[0] != 'x';
}

static bool keep_all(char *line)
{
	(void)line;
	return true;
}

static void test_strv_lines(void **state)
{
	(void)state;
	/* each line stripped, blank and '#' lines skipped, keep cuts or drops */
	_cleanup_strv_ char **v = strv_lines(" one two\n\n\t# a comment\n  \nxray 1\r\nthree\n#\nfour", no_x);
	assert_non_null(v);
	assert_string_equal(v[0], "one");
	assert_string_equal(v[1], "three");
	assert_string_equal(v[2], "four");
	assert_null(v[3]);
	/* a '#' after the start is text; the line keeps its inner spaces */
	_cleanup_strv_ char **w = strv_lines("a # b  \n", keep_all);
	assert_string_equal(w[0], "a # b");
	assert_null(w[1]);
	/* nothing kept, or no text: an empty vector, not NULL */
	_cleanup_strv_ char **e1 = strv_lines("xa\n# c\n", no_x);
	assert_non_null(e1);
	assert_null(e1[0]);
	_cleanup_strv_ char **e2 = strv_lines(NULL, keep_all);
	assert_non_null(e2);
	assert_null(e2[0]);
}

static void test_proc_timeout(void **state)
{
	(void)state;
	char *argv[] = { "sleep", "10", NULL };
	struct proc_result r;
	struct err *e = NULL;
	assert_int_equal(proc_run(argv, 200, 0, &r, &e), 0);
	assert_true(r.timed_out);
	proc_result_free(&r);
	char *argv2[] = { "echo", "hi", NULL };
	assert_int_equal(proc_run(argv2, 5000, 0, &r, &e), 0);
	assert_false(r.timed_out);
	assert_int_equal(r.status, 0);
	assert_string_equal(buf_str(&r.out), "hi\n");
	proc_result_free(&r);
	char *argv3[] = { "/nonexistent/prog", NULL };
	assert_int_equal(proc_run(argv3, 1000, 0, &r, &e), -1);
	assert_int_equal(e->code, EXIT_CONFIG);
	err_free(e);
	proc_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_wrap),     cmocka_unit_test(test_buf_cap),
		cmocka_unit_test(test_atomic_write), cmocka_unit_test(test_sysroot),
		cmocka_unit_test(test_atomic_write_hostile),
		cmocka_unit_test(test_proc_timeout),
		cmocka_unit_test(test_strv_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
