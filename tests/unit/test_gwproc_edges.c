/*
 * test_gwproc_edges.c — the gateway's pid file and process checks without a
 * real gateway: a pid file that names no pid (text, 1, past INT_MAX,
 * empty), one that names a live process that is not this dir's gateway
 * (this test), a deploy dir that does not exist; and a stand-in process
 * whose command line is a gateway's of this dir (python3 sleeping, with
 * "gateway --pid-file FILE" as its arguments): read as the running
 * gateway, reloaded with SIGHUP, stopped with SIGTERM, and, when it ignores
 * SIGTERM, killed after the bound (killed reported, the pid file removed).
 * Every process started here is stopped here, by its pid.
 */
#include "testutil.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/lib/runtime/bgproc.h"
#include "../../src/lib/util/fs.h"

static char *mkdir_tmp(void)
{
	char *d = xstrdup("/tmp/lobes-gwedges.XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void put(const char *path, const char *text)
{
	assert_int_equal(fs_write_atomic(path, text, strlen(text), 0600, NULL), 0);
}

static void test_pid_file_not_a_gateway(void **state)
{
	(void)state;
	_cleanup_free_ char *d = mkdir_tmp();
	struct bgproc g;
	struct err *e = NULL;
	/* no pid file: none running, not stale */
	assert_int_equal(bgproc_read(&g, d, BGPROC_GATEWAY, &e), 0);
	assert_int_equal(g.pid, 0);
	assert_false(g.stale);
	_cleanup_free_ char *pf = xstrdup(g.pid_file);
	bgproc_free(&g);
	_cleanup_free_ char *mine = xasprintf("%d\n", (int)getpid());
	const char *bad[] = { "abc", "1", "0", "-5", "99999999999", "", "12x", mine };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(pf, bad[i]);
		assert_int_equal(bgproc_read(&g, d, BGPROC_GATEWAY, &e), 0);
		if (g.pid != 0 || !g.stale)
			fail_msg("pid file '%s': pid %d stale %d", bad[i], (int)g.pid, g.stale);
		bgproc_free(&g);
	}
	/* reload with no gateway running */
	assert_int_equal(bgproc_read(&g, d, BGPROC_GATEWAY, &e), 0);
	assert_int_equal(bgproc_reload(&g, &e), -1);
	assert_string_equal(e->msg, "reload the gateway (pid 0): not running");
	assert_int_equal(e->code, EXIT_RUNTIME);
	err_free(e);
	e = NULL;
	/* stop with none: nothing to do */
	bool killed = true;
	assert_int_equal(bgproc_stop(&g, 100, &killed, &e), 0);
	assert_false(killed);
	/* a pid that is not ours, given to stop: left alone, the pid file
	 * naming it removed */
	put(pf, mine);
	g.pid = getpid();
	assert_int_equal(bgproc_stop(&g, 100, &killed, &e), 0);
	assert_int_equal(g.pid, 0);
	assert_false(fs_exists(pf));
	bgproc_free(&g);
	/* no such dir */
	_cleanup_free_ char *gone = xasprintf("%s/nosuch", d);
	assert_int_equal(bgproc_read(&g, gone, BGPROC_GATEWAY, &e), -1);
	_cleanup_free_ char *want = xasprintf("deploy dir '%s': No such file or directory", gone);
	assert_string_equal(e->msg, want);
	err_free(e);
	rmdir(d);
}

/* Start python3 with a gateway's command line for pid file pf; it ignores
 * SIGHUP (and SIGTERM when deaf), then writes its pid to pf. Waits (bounded)
 * for the pid file. */
static pid_t stand_in(const char *pf, bool deaf)
{
	const char *code = deaf ? "import os,signal,sys,time\n"
				  "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
				  "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
				  "open(sys.argv[3] + '.t', 'w').write(str(os.getpid()))\n"
				  "os.rename(sys.argv[3] + '.t', sys.argv[3])\n"
				  "time.sleep(120)\n"
				: "import os,signal,sys,time\n"
				  "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
				  "open(sys.argv[3] + '.t', 'w').write(str(os.getpid()))\n"
				  "os.rename(sys.argv[3] + '.t', sys.argv[3])\n"
				  "time.sleep(120)\n";
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		execlp("python3", "python3", "-c", code, "gateway", "--pid-file", pf, (char *)NULL);
		_exit(127);
	}
	/* bounded wait for the pid file: 60 s, polled */
	for (int i = 0; i < 6000 && !fs_exists(pf); i++) {
		int st;
		if (waitpid(c, &st, WNOHANG) == c)
			fail_msg("the stand-in exited early (python3 missing?)");
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	assert_true(fs_exists(pf));
	return c;
}

static void test_stand_in_gateway(void **state)
{
	(void)state;
	_cleanup_free_ char *d = mkdir_tmp();
	_cleanup_free_ char *pf = xasprintf("%s/gateway.pid", d);
	char abs[4096];
	assert_non_null(realpath(d, abs));
	_cleanup_free_ char *apf = xasprintf("%s/gateway.pid", abs);
	for (int deaf = 0; deaf <= 1; deaf++) {
		pid_t c = stand_in(apf, deaf);
		struct bgproc g;
		struct err *e = NULL;
		assert_int_equal(bgproc_read(&g, d, BGPROC_GATEWAY, &e), 0);
		assert_int_equal(g.pid, c);
		assert_false(g.stale);
		assert_int_equal(bgproc_reload(&g, &e), 0); /* SIGHUP, ignored: still there */
		assert_int_equal(kill(c, 0), 0);
		bool killed = !deaf;
		/* deaf: SIGTERM is ignored, so after the bound it is killed */
		assert_int_equal(bgproc_stop(&g, deaf ? 300 : 60000, &killed, &e), 0);
		assert_null(e);
		assert_int_equal(killed, deaf);
		assert_int_equal(g.pid, 0);
		assert_false(fs_exists(pf));
		/* reaped by the stop: no such child any more */
		assert_int_equal(waitpid(c, NULL, WNOHANG), -1);
		bgproc_free(&g);
	}
	rmdir(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pid_file_not_a_gateway),
		cmocka_unit_test(test_stand_in_gateway),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
