/* test_bgproc.c — the background processes of a deploy dir (bgproc.c):
 * starting waits for the pid file and reports an early exit with its log;
 * a pid file is trusted only for a live process of its kind of this dir (a
 * reused pid, or the gateway's pid in the collector's file, is never
 * signalled); stop drains with SIGTERM, then SIGKILL past the bound, and
 * returns only once the process is gone and reaped; each start logs to its
 * own file under DIR/logs/NAME/ (0600, the 10 latest kept), an older
 * DIR/gateway.log is moved there once, and a log past its part bound is
 * trimmed to two parts. The processes are a shell stub run with the real
 * argv (`--dir DIR gateway --pid-file F`, `--dir DIR logs --collect
 * --pid-file F`), so the identity check sees what it would see of lobes;
 * the collector is also started and stopped again after a SIGKILL (a crash)
 * left its pid file behind. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/lib/runtime/runtime.h"
#include "../../src/lib/util/fs.h"

static char dir[] = "/tmp/lobes-bgproc-XXXXXX";

/* a stub at DIR/stub: --dir D gateway|logs [--collect] --pid-file F; mode picks
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
		"for a; do [ \"$prev\" = --pid-file ] && pf=$a; prev=$a; done\n"
		"[ \"$mode\" = ok ] && trap 'rm -f \"$pf\"; exit 0' TERM\n"
		"echo \"$3 listening\"\n"
		"echo $$ > \"$pf.tmp\" && mv \"$pf.tmp\" \"$pf\"\n"
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
	struct bgproc g;
	assert_int_equal(bgproc_read(&g, dir, BGPROC_GATEWAY, NULL), 0);
	assert_int_equal(g.pid, 0);
	assert_false(g.stale);
	assert_non_null(strstr(g.pid_file, "/gateway.pid"));
	assert_true(g.pid_file[0] == '/');
	bgproc_free(&g);
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
	struct bgproc g;
	assert_int_equal(bgproc_read(&g, dir, BGPROC_GATEWAY, NULL), 0);
	char *t = xasprintf("%d\n", (int)other);
	assert_int_equal(fs_write_atomic(g.pid_file, t, strlen(t), 0644, NULL), 0);
	free(t);
	bgproc_free(&g);
	assert_int_equal(bgproc_read(&g, dir, BGPROC_GATEWAY, NULL), 0);
	assert_int_equal(g.pid, 0);
	assert_true(g.stale);
	bool killed = true;
	assert_int_equal(bgproc_stop(&g, 1000, &killed, NULL), 0);
	assert_false(killed);
	assert_int_equal(kill(other, 0), 0); /* still alive */
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
	bgproc_free(&g);
}

static void test_start_then_stop(void **state)
{
	(void)state;
	char *exe = stub("ok");
	struct bgproc g;
	struct err *e = NULL;
	assert_int_equal(bgproc_read(&g, dir, BGPROC_GATEWAY, NULL), 0);
	assert_true(g.stale); /* the last test's file */
	assert_int_equal(bgproc_start(&g, exe, 20000, &e), 0);
	assert_true(g.pid > 0);
	assert_false(g.stale);
	pid_t pid = g.pid;
	/* a second look finds the same process, now trusted */
	struct bgproc g2;
	assert_int_equal(bgproc_read(&g2, dir, BGPROC_GATEWAY, NULL), 0);
	assert_int_equal(g2.pid, pid);
	bgproc_free(&g2);
	/* its output went to the log, mode 0600 */
	char *log = fs_read(g.log_file, 0, NULL, NULL);
	assert_non_null(log);
	assert_non_null(strstr(log, "gateway listening"));
	free(log);
	struct stat st;
	assert_int_equal(stat(g.log_file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* starting twice is refused */
	assert_int_equal(bgproc_start(&g, exe, 20000, &e), -1);
	err_free(e);
	e = NULL;
	bool killed = true;
	assert_int_equal(bgproc_stop(&g, 20000, &killed, &e), 0);
	assert_false(killed);
	assert_int_equal(g.pid, 0);
	assert_int_equal(kill(pid, 0), -1); /* gone and reaped */
	assert_false(fs_exists(g.pid_file));
	assert_int_equal(bgproc_read(&g2, dir, BGPROC_GATEWAY, NULL), 0);
	assert_int_equal(g2.pid, 0);
	bgproc_free(&g2);
	bgproc_free(&g);
	free(exe);
}

static void test_stop_kills_past_the_bound(void **state)
{
	(void)state;
	char *exe = stub("deaf");
	struct bgproc g;
	assert_int_equal(bgproc_read(&g, dir, BGPROC_GATEWAY, NULL), 0);
	assert_int_equal(bgproc_start(&g, exe, 20000, NULL), 0);
	pid_t pid = g.pid;
	bool killed = false;
	assert_int_equal(bgproc_stop(&g, 300, &killed, NULL), 0);
	assert_true(killed);
	assert_false(fs_exists(g.pid_file)); /* removed for the killed process */
	/* stop returns once the process is gone and reaped, not while it
	 * still exits (its command line reads empty before it is a zombie) */
	assert_int_equal(kill(pid, 0), -1);
	bgproc_free(&g);
	free(exe);
}

static void test_early_exit_is_reported_with_its_log(void **state)
{
	(void)state;
	char *exe = stub("fail");
	struct bgproc g;
	struct err *e = NULL;
	assert_int_equal(bgproc_read(&g, dir, BGPROC_GATEWAY, NULL), 0);
	assert_int_equal(bgproc_start(&g, exe, 20000, &e), -1);
	assert_non_null(strstr(e->msg, "exited (status 3) before it listened"));
	assert_non_null(strstr(e->msg, "port 1 is taken"));
	/* only this run's lines: the earlier runs' "gateway listening" is not quoted */
	assert_null(strstr(e->msg, "gateway listening"));
	assert_int_equal(g.pid, 0);
	err_free(e);
	bgproc_free(&g);
	free(exe);
}

static int count_boots(const char *name)
{
	unsigned *nos;
	size_t n;
	assert_int_equal(logstore_list(dir, name, &nos, &n, NULL), 0);
	free(nos);
	return (int)n;
}

/* each start logs to the next DIR/logs/gateway/NNNNNN.log (0600, in 0700
 * dirs), an older DIR/gateway.log becomes the boot before it, once; the
 * 10 latest starts are kept */
static void test_log_per_start_and_old_log_moved(void **state)
{
	(void)state;
	char *exe = stub("ok");
	char *old = xasprintf("%s/gateway.log", dir);
	char *old1 = xasprintf("%s/gateway.log.1", dir);
	assert_int_equal(fs_write_atomic(old, "an old line\n", 12, 0644, NULL), 0);
	assert_int_equal(fs_write_atomic(old1, "an older line\n", 14, 0644, NULL), 0);
	int before = count_boots("gateway");
	struct bgproc g;
	assert_int_equal(bgproc_read(&g, dir, BGPROC_GATEWAY, NULL), 0);
	if (!before) /* the old path is read until a start moves it */
		assert_string_equal(g.log_file, old);
	assert_int_equal(bgproc_start(&g, exe, 20000, NULL), 0);
	assert_false(fs_exists(old));
	assert_false(fs_exists(old1));
	assert_int_equal(count_boots("gateway"), before + 2);
	char *moved = xasprintf("%s/logs/gateway/%06d.log", dir, before + 1);
	char *moved1 = xasprintf("%s.1", moved);
	char *t = fs_read(moved, 0, NULL, NULL), *t1 = fs_read(moved1, 0, NULL, NULL);
	assert_string_equal(t, "an old line\n");
	assert_string_equal(t1, "an older line\n");
	free(t);
	free(t1);
	char *mine = xasprintf("%s/logs/gateway/%06d.log", dir, before + 2);
	assert_string_equal(g.log_file, mine);
	t = fs_read(mine, 0, NULL, NULL);
	assert_non_null(strstr(t, "# lobes boot"));
	assert_non_null(strstr(t, "process lobes gateway started"));
	free(t);
	struct stat st;
	assert_int_equal(stat(mine, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(moved, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	char *ld = xasprintf("%s/logs/gateway", dir);
	assert_int_equal(stat(ld, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	bool killed;
	assert_int_equal(bgproc_stop(&g, 20000, &killed, NULL), 0);
	/* a later look names the newest start's log */
	struct bgproc g2;
	assert_int_equal(bgproc_read(&g2, dir, BGPROC_GATEWAY, NULL), 0);
	assert_string_equal(g2.log_file, mine);
	bgproc_free(&g2);
	/* twelve more starts: ten are kept */
	for (int i = 0; i < 12; i++) {
		assert_int_equal(bgproc_start(&g, exe, 20000, NULL), 0);
		assert_int_equal(bgproc_stop(&g, 20000, &killed, NULL), 0);
	}
	assert_int_equal(count_boots("gateway"), 10);
	free(ld);
	free(mine);
	free(moved);
	free(moved1);
	free(old);
	free(old1);
	bgproc_free(&g);
	free(exe);
}

/* a current log past the part bound keeps its latest lines in .log.1 and
 * goes on empty (the writer appends at the new end) */
static void test_trim(void **state)
{
	(void)state;
	struct bgproc g;
	assert_int_equal(bgproc_read(&g, dir, BGPROC_GATEWAY, NULL), 0);
	assert_non_null(g.log_file);
	char *big = xcalloc(1, 3001);
	for (int i = 0; i < 100; i++)
		snprintf(big + i * 30, 31, "line %03u xxxxxxxxxxxxxxxxxxxx\n", (unsigned)i % 1000u);
	assert_int_equal(fs_write_atomic(g.log_file, big, 3000, 0600, NULL), 0);
	bgproc_trim_logs(dir, 4096); /* within the bound: left alone */
	struct stat st;
	assert_int_equal(stat(g.log_file, &st), 0);
	assert_int_equal(st.st_size, 3000);
	bgproc_trim_logs(dir, 1000);
	char *p1 = xasprintf("%s.1", g.log_file);
	size_t n1 = 0;
	char *t1 = fs_read(p1, 0, &n1, NULL);
	assert_non_null(t1);
	assert_true(n1 <= 1000 && n1 > 900);
	assert_true(strncmp(t1, "line ", 5) == 0);                  /* from a line's start */
	assert_non_null(strstr(t1, "line 099 xxxxxxxxxxxxxxxxxxxx\n")); /* the latest kept */
	assert_null(strstr(t1, "line 000"));
	char *t = fs_read(g.log_file, 0, NULL, NULL);
	assert_non_null(strstr(t, "continues (older lines in"));
	assert_true(strlen(t) < 200);
	assert_int_equal(stat(p1, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	free(t);
	free(t1);
	free(p1);
	free(big);
	bgproc_free(&g);
}

/* the collector: its own pid file and log; not taken for the gateway (nor
 * the gateway for it); after a SIGKILL left its pid file, it reads as
 * stale and starts again */
static void test_collector_start_crash_restart(void **state)
{
	(void)state;
	char *exe = stub("ok");
	struct bgproc c, gw;
	assert_int_equal(bgproc_read(&c, dir, BGPROC_COLLECTOR, NULL), 0);
	assert_int_equal(c.pid, 0);
	assert_non_null(strstr(c.pid_file, "/collector.pid"));
	assert_int_equal(bgproc_start(&c, exe, 20000, NULL), 0);
	pid_t pid = c.pid;
	assert_non_null(strstr(c.log_file, "/logs/collector/"));
	char *t = fs_read(c.log_file, 0, NULL, NULL);
	assert_non_null(strstr(t, "process lobes logs started"));
	assert_non_null(strstr(t, "logs listening")); /* its argv: --dir D logs --collect */
	free(t);
	/* the gateway's pid file naming the collector: not the gateway */
	assert_int_equal(bgproc_read(&gw, dir, BGPROC_GATEWAY, NULL), 0);
	char *s = xasprintf("%d\n", (int)pid);
	assert_int_equal(fs_write_atomic(gw.pid_file, s, strlen(s), 0644, NULL), 0);
	free(s);
	bgproc_free(&gw);
	assert_int_equal(bgproc_read(&gw, dir, BGPROC_GATEWAY, NULL), 0);
	assert_int_equal(gw.pid, 0);
	assert_true(gw.stale);
	unlink(gw.pid_file);
	bgproc_free(&gw);
	/* a crash: its pid file stays */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	bgproc_free(&c);
	assert_int_equal(bgproc_read(&c, dir, BGPROC_COLLECTOR, NULL), 0);
	assert_int_equal(c.pid, 0);
	assert_true(c.stale);
	assert_int_equal(bgproc_start(&c, exe, 20000, NULL), 0);
	assert_true(c.pid > 0 && c.pid != pid);
	struct bgproc c2;
	assert_int_equal(bgproc_read(&c2, dir, BGPROC_COLLECTOR, NULL), 0);
	assert_int_equal(c2.pid, c.pid);
	bgproc_free(&c2);
	bool killed = true;
	pid = c.pid;
	assert_int_equal(bgproc_stop(&c, 20000, &killed, NULL), 0);
	assert_false(killed);
	assert_int_equal(kill(pid, 0), -1);
	assert_false(fs_exists(c.pid_file));
	bgproc_free(&c);
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
		cmocka_unit_test(test_log_per_start_and_old_log_moved),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_collector_start_crash_restart),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
