/* test_gwproc.c — the gateway process of a deploy dir (gateway_proc.c):
 * starting waits for the pid file and reports an early exit with its log;
 * a pid file is trusted only for a live gateway of this dir (a reused pid
 * is never signalled); stop drains with SIGTERM, then SIGKILL past the
 * bound, and returns only once the process is gone and reaped; a big log is
 * rotated. The "gateway" is a shell stub run with the
 * real argv (`--dir DIR gateway --pid-file F`), so the identity check sees
 * what it would see of lobes. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/lib/runtime/runtime.h"
#include "../../src/lib/util/fs.h"

static char dir[] = "/tmp/lobes-gwproc-XXXXXX";

/* a stub at DIR/stub: $1..$5 = --dir D gateway --pid-file F; mode picks
 * what it does: "ok" writes the pid and waits (exits on TERM), "deaf"
 * ignores TERM, "fail" prints an error and exits 3 */
static char *stub(const char *mode)
{
	char *p = xasprintf("%s/stub-%s", dir, mode);
	char *text = xasprintf(
		"#!/bin/sh\n"
		"mode=%s\n"
		"[ \"$mode\" = fail ] && { echo \"lobes gateway: error: port 1 is taken\" >&2; exit 3; }\n"
		"[ \"$mode\" = deaf ] && trap '' TERM\n"
		"[ \"$mode\" = ok ] && trap 'rm -f \"$5\"; exit 0' TERM\n"
		"echo \"gateway listening\"\n"
		"echo $$ > \"$5.tmp\" && mv \"$5.tmp\" \"$5\"\n"
		"while :; do sleep 0.05; done\n",
		mode);
	assert_int_equal(fs_write_atomic(p, text, strlen(text), 0755, NULL), 0);
	free(text);
	return p;
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("rm -rf '%s'", dir);
	int rc = system(cmd);
	free(cmd);
	return rc == 0 ? 0 : -1;
}

static void test_no_pid_file(void **state)
{
	(void)state;
	struct gwproc g;
	assert_int_equal(gwproc_read(&g, dir, NULL), 0);
	assert_int_equal(g.pid, 0);
	assert_false(g.stale);
	assert_non_null(strstr(g.pid_file, "/gateway.pid"));
	assert_true(g.pid_file[0] == '/');
	gwproc_free(&g);
}

/* a pid file naming a process that is not this dir's gateway: not
 * trusted, and stop leaves that process alone */
static void test_reused_pid_is_not_signalled(void **state)
{
	(void)state;
	pid_t other = fork();
	if (other == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	struct gwproc g;
	assert_int_equal(gwproc_read(&g, dir, NULL), 0);
	char *t = xasprintf("%d\n", (int)other);
	assert_int_equal(fs_write_atomic(g.pid_file, t, strlen(t), 0644, NULL), 0);
	free(t);
	gwproc_free(&g);
	assert_int_equal(gwproc_read(&g, dir, NULL), 0);
	assert_int_equal(g.pid, 0);
	assert_true(g.stale);
	bool killed = true;
	assert_int_equal(gwproc_stop(&g, 1000, &killed, NULL), 0);
	assert_false(killed);
	assert_int_equal(kill(other, 0), 0); /* still alive */
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
	gwproc_free(&g);
}

static void test_start_then_stop(void **state)
{
	(void)state;
	char *exe = stub("ok");
	struct gwproc g;
	struct err *e = NULL;
	assert_int_equal(gwproc_read(&g, dir, NULL), 0);
	assert_true(g.stale); /* the last test's file */
	assert_int_equal(gwproc_start(&g, exe, 20000, &e), 0);
	assert_true(g.pid > 0);
	assert_false(g.stale);
	pid_t pid = g.pid;
	/* a second look finds the same process, now trusted */
	struct gwproc g2;
	assert_int_equal(gwproc_read(&g2, dir, NULL), 0);
	assert_int_equal(g2.pid, pid);
	gwproc_free(&g2);
	/* its output went to the log, mode 0600 */
	char *log = fs_read(g.log_file, 0, NULL, NULL);
	assert_non_null(log);
	assert_non_null(strstr(log, "gateway listening"));
	free(log);
	struct stat st;
	assert_int_equal(stat(g.log_file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* starting twice is refused */
	assert_int_equal(gwproc_start(&g, exe, 20000, &e), -1);
	err_free(e);
	e = NULL;
	bool killed = true;
	assert_int_equal(gwproc_stop(&g, 20000, &killed, &e), 0);
	assert_false(killed);
	assert_int_equal(g.pid, 0);
	assert_int_equal(kill(pid, 0), -1); /* gone and reaped */
	assert_false(fs_exists(g.pid_file));
	assert_int_equal(gwproc_read(&g2, dir, NULL), 0);
	assert_int_equal(g2.pid, 0);
	gwproc_free(&g2);
	gwproc_free(&g);
	free(exe);
}

static void test_stop_kills_past_the_bound(void **state)
{
	(void)state;
	char *exe = stub("deaf");
	struct gwproc g;
	assert_int_equal(gwproc_read(&g, dir, NULL), 0);
	assert_int_equal(gwproc_start(&g, exe, 20000, NULL), 0);
	pid_t pid = g.pid;
	bool killed = false;
	assert_int_equal(gwproc_stop(&g, 300, &killed, NULL), 0);
	assert_true(killed);
	assert_false(fs_exists(g.pid_file)); /* removed for the killed process */
	/* stop returns once the process is gone and reaped, not while it
	 * still exits (its command line reads empty before it is a zombie) */
	assert_int_equal(kill(pid, 0), -1);
	gwproc_free(&g);
	free(exe);
}

static void test_early_exit_is_reported_with_its_log(void **state)
{
	(void)state;
	char *exe = stub("fail");
	struct gwproc g;
	struct err *e = NULL;
	assert_int_equal(gwproc_read(&g, dir, NULL), 0);
	assert_int_equal(gwproc_start(&g, exe, 20000, &e), -1);
	assert_non_null(strstr(e->msg, "exited (status 3) before it listened"));
	assert_non_null(strstr(e->msg, "port 1 is taken"));
	/* only this run's lines: the earlier runs' "gateway listening" is not quoted */
	assert_null(strstr(e->msg, "gateway listening"));
	assert_int_equal(g.pid, 0);
	err_free(e);
	gwproc_free(&g);
	free(exe);
}

static void test_big_log_is_rotated(void **state)
{
	(void)state;
	char *exe = stub("ok");
	struct gwproc g;
	assert_int_equal(gwproc_read(&g, dir, NULL), 0);
	assert_int_equal(truncate(g.log_file, GWPROC_LOG_ROTATE + 1), 0); /* sparse */
	assert_int_equal(gwproc_start(&g, exe, 20000, NULL), 0);
	char *old = xasprintf("%s.1", g.log_file);
	struct stat st;
	assert_int_equal(stat(old, &st), 0);
	assert_int_equal(st.st_size, GWPROC_LOG_ROTATE + 1);
	assert_int_equal(stat(g.log_file, &st), 0);
	assert_true(st.st_size < 4096);
	bool killed;
	assert_int_equal(gwproc_stop(&g, 20000, &killed, NULL), 0);
	free(old);
	gwproc_free(&g);
	free(exe);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_pid_file),
		cmocka_unit_test(test_reused_pid_is_not_signalled),
		cmocka_unit_test(test_start_then_stop),
		cmocka_unit_test(test_stop_kills_past_the_bound),
		cmocka_unit_test(test_early_exit_is_reported_with_its_log),
		cmocka_unit_test(test_big_log_is_rotated),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
