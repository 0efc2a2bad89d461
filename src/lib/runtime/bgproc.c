/*
 * bgproc.c — start, find, reload and stop the background processes of a
 * deploy dir, the gateway and the log collector (see bgproc.h for the
 * contract), and hold their logs to the bounds of logstore.h.
 *
 * Identity: a pid is the gateway (collector) of DIR only while
 * /proc/PID/cmdline holds the argument "gateway" ("logs") and "--pid-file"
 * followed by DIR's absolute pid file, and the process is not a zombie.
 * Everything else (no file, a pid that is gone or reused) reads as "none",
 * with `stale` set when a file was there.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "bgproc.h"
#include "logstore.h"

const char *bgproc_what(enum bgproc_kind kind)
{
	return kind == BGPROC_GATEWAY ? "gateway" : "log collector";
}

const char *bgproc_log_name(enum bgproc_kind kind)
{
	return kind == BGPROC_GATEWAY ? "gateway" : "collector";
}

static const char *verb_of(enum bgproc_kind kind)
{
	return kind == BGPROC_GATEWAY ? "gateway" : "logs";
}

/* True when pid is a live (not zombie) run of verb with pid_file. */
static bool is_ours(pid_t pid, const char *verb_arg, const char *pid_file)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	_cleanup_free_ char *stat = fs_read(path, 4096, NULL, NULL);
	if (!stat)
		return false;
	const char *rp = strrchr(stat, ')'); /* the state follows the command name */
	if (!rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X')
		return false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[8192];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	bool verb = false, file = false;
	for (const char *a = buf, *prev = ""; a < buf + n; prev = a, a += strlen(a) + 1) {
		if (!strcmp(a, verb_arg))
			verb = true;
		if (!strcmp(prev, "--pid-file") && !strcmp(a, pid_file))
			file = true;
	}
	return verb && file;
}

static pid_t read_pid(const char *pid_file)
{
	_cleanup_free_ char *t = fs_exists(pid_file) ? fs_read(pid_file, 64, NULL, NULL) : NULL;
	if (!t)
		return 0;
	char *end;
	long v = strtol(t, &end, 10);
	if (end == t || (*end && *end != '\n') || v <= 1 || v > INT_MAX)
		return -1; /* there, but not a pid */
	return (pid_t)v;
}

/* The newest start's log under DIR/logs/NAME/, else (the gateway) the
 * log an older lobes kept at DIR/gateway.log; NULL when neither. */
static char *newest_log(const char *absdir, enum bgproc_kind kind)
{
	unsigned *nos;
	size_t n;
	char *p = NULL;
	if (logstore_list(absdir, bgproc_log_name(kind), &nos, &n, NULL) == 0 && n) {
		_cleanup_free_ char *d = logstore_role_dir(absdir, bgproc_log_name(kind));
		p = xasprintf("%s/%06u.log", d, nos[n - 1]);
	}
	free(n ? nos : NULL);
	if (!p && kind == BGPROC_GATEWAY) {
		_cleanup_free_ char *old = xasprintf("%s/" BGPROC_OLD_GATEWAY_LOG, absdir);
		if (fs_exists(old))
			p = xstrdup(old);
	}
	return p;
}

int bgproc_read(struct bgproc *g, const char *dir, enum bgproc_kind kind, struct err **err)
{
	memset(g, 0, sizeof(*g));
	g->kind = kind;
	char abs[PATH_MAX];
	if (!realpath(dir, abs))
		return err_set(err, EXIT_CONFIG, "deploy dir '%s': %s", dir, strerror(errno));
	g->dir = xstrdup(abs);
	g->pid_file = xasprintf("%s/%s.pid", abs, bgproc_log_name(kind));
	g->log_file = newest_log(abs, kind);
	pid_t p = read_pid(g->pid_file);
	if (p > 0 && is_ours(p, verb_of(kind), g->pid_file))
		g->pid = p;
	else
		g->stale = p != 0;
	return 0;
}

void bgproc_free(struct bgproc *g)
{
	free(g->dir);
	free(g->pid_file);
	free(g->log_file);
	memset(g, 0, sizeof(*g));
}

/* The child: own session, stdin /dev/null, stdout+stderr to the log, no
 * inherited descriptors or blocked signals; then the gateway. */
static void exec_child(int logfd, char *const argv[])
{
	setsid();
	int nul = open("/dev/null", O_RDONLY);
	if (nul >= 0)
		dup2(nul, 0);
	dup2(logfd, 1);
	dup2(logfd, 2);
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	execv(argv[0], argv);
	dprintf(2, "lobes: cannot run '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* What this run wrote to the log: the bytes from offset `from`, at most
 * size - 1 of them (a process that exits at once writes a line or two). */
static void run_log(const char *log_file, off_t from, char *out, size_t size)
{
	ssize_t n = -1;
	int fd = open(log_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, out, size - 1, from);
		close(fd);
	}
	out[n > 0 ? n : 0] = '\0';
}

/* DIR/gateway.log (and .1) of an older lobes become the boot before the
 * next one under DIR/logs/gateway/, once. */
static int migrate_old_log(const struct bgproc *g, struct err **err)
{
	_cleanup_free_ char *old = xasprintf("%s/" BGPROC_OLD_GATEWAY_LOG, g->dir);
	_cleanup_free_ char *old1 = xasprintf("%s.1", old);
	struct stat st;
	if (lstat(old, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	_cleanup_free_ char *d = logstore_role_dir(g->dir, "gateway");
	if (fs_mkdirs(d, 0700, err) < 0)
		return -1;
	unsigned *nos;
	size_t n;
	if (logstore_list(g->dir, "gateway", &nos, &n, err) < 0)
		return -1;
	unsigned no = n ? nos[n - 1] + 1 : 1;
	free(nos);
	_cleanup_free_ char *to = xasprintf("%s/%06u.log", d, no);
	_cleanup_free_ char *to1 = xasprintf("%s.1", to);
	if (lstat(old1, &st) == 0 && S_ISREG(st.st_mode) && rename(old1, to1) < 0)
		return err_errno(err, EXIT_CONFIG, errno, "move '%s' to '%s'", old1, to1);
	if (rename(old, to) < 0)
		return err_errno(err, EXIT_CONFIG, errno, "move '%s' to '%s'", old, to);
	(void)chmod(to, 0600);
	(void)chmod(to1, 0600);
	return 0;
}

int bgproc_start(struct bgproc *g, const char *exe, int timeout_ms, struct err **err)
{
	const char *what = bgproc_what(g->kind);
	if (g->pid)
		return err_set(err, EXIT_INTERNAL, "the %s already runs (pid %d)", what, (int)g->pid);
	if (g->stale)
		unlink(g->pid_file);
	if (g->kind == BGPROC_GATEWAY && migrate_old_log(g, err) < 0)
		return -1;
	char now[32];
	time_t t = time(NULL);
	struct tm tm;
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	_cleanup_free_ char *label = xasprintf("process lobes %s", verb_of(g->kind));
	struct logstore_boot b;
	if (logstore_begin_as(&b, g->dir, bgproc_log_name(g->kind), label, now, 0, 0, err) < 0)
		return err_wrap(err, "the %s's log", what);
	free(g->log_file);
	g->log_file = xasprintf("%s/%06u.log", b.dir, b.no);
	off_t from = (off_t)b.size;
	char *const gw_argv[] = { (char *)exe, (char *)"--dir", g->dir, (char *)"gateway",
				  (char *)"--pid-file", g->pid_file, NULL };
	char *const col_argv[] = { (char *)exe, (char *)"--dir", g->dir, (char *)"logs",
				   (char *)"--collect", (char *)"--pid-file", g->pid_file, NULL };
	pid_t c = fork();
	if (c < 0) {
		logstore_end(&b);
		return err_set(err, EXIT_RUNTIME, "fork: %s", strerror(errno));
	}
	if (c == 0)
		exec_child(b.fd, g->kind == BGPROC_GATEWAY ? gw_argv : col_argv);
	logstore_end(&b);
	long long deadline = clock_mono_ms() + timeout_ms;
	for (;;) {
		int status;
		if (waitpid(c, &status, WNOHANG) == c) {
			char mine[4096];
			run_log(g->log_file, from, mine, sizeof(mine));
			return err_set(err, EXIT_RUNTIME, "the %s exited (%s %d) before it %s%s%s", what,
				       WIFEXITED(status) ? "status" : "signal",
				       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
				       g->kind == BGPROC_GATEWAY ? "listened" : "was set up",
				       *mine ? "; its log says:\n" : "", mine);
		}
		if (read_pid(g->pid_file) == c) {
			g->pid = c;
			g->stale = false;
			return 0;
		}
		if (clock_mono_ms() >= deadline)
			break;
		clock_sleep_ms(20);
	}
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	return err_set(err, EXIT_RUNTIME, "the %s did not %s within %d s (log: %s)", what,
		       g->kind == BGPROC_GATEWAY ? "listen" : "start", timeout_ms / 1000, g->log_file);
}

int bgproc_reload(const struct bgproc *g, struct err **err)
{
	if (!g->pid || kill(g->pid, SIGHUP) < 0)
		return err_set(err, EXIT_RUNTIME, "reload the %s (pid %d): %s", bgproc_what(g->kind), (int)g->pid,
			       g->pid ? strerror(errno) : "not running");
	return 0;
}

/* From /proc/PID/stat: the state letter and the start time (clock ticks
 * after boot); false when there is no such process. */
static bool proc_stat(pid_t pid, char *state, unsigned long long *start)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	_cleanup_free_ char *stat = fs_read(path, 4096, NULL, NULL);
	const char *rp = stat ? strrchr(stat, ')') : NULL;
	/* after ") ": state, then 18 fields, then starttime */
	return rp && sscanf(rp + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
			    state, start) == 2;
}

/* Wait until the process that was pid when it started at `start` is gone:
 * reaped (it is our child), no longer there, a zombie of another parent,
 * or the pid now names a process started later (reused). Its command line
 * is not asked: a process being killed reads as an empty one before it is
 * a zombie, and stop would return while it still exits. */
static bool wait_gone(pid_t pid, unsigned long long start, int timeout_ms)
{
	long long deadline = clock_mono_ms() + timeout_ms;
	for (;;) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		char st;
		unsigned long long now;
		if (!proc_stat(pid, &st, &now) || now != start)
			return true;
		if (st == 'Z' || st == 'X') {
			waitpid(pid, NULL, WNOHANG); /* ours: reap it */
			return true;
		}
		if (clock_mono_ms() >= deadline)
			return false;
		clock_sleep_ms(50);
	}
}

int bgproc_stop(struct bgproc *g, int timeout_ms, bool *killed, struct err **err)
{
	*killed = false;
	pid_t pid = g->pid;
	if (!pid)
		return 0;
	/* the process as it is now, still ours: its start time tells it from
	 * a later process given the same pid */
	char st;
	unsigned long long start;
	if (!is_ours(pid, verb_of(g->kind), g->pid_file) || !proc_stat(pid, &st, &start)) {
		waitpid(pid, NULL, WNOHANG);
		if (read_pid(g->pid_file) == pid)
			unlink(g->pid_file);
		g->pid = 0;
		return 0;
	}
	const char *what = bgproc_what(g->kind);
	if (kill(pid, SIGTERM) < 0 && errno != ESRCH)
		return err_set(err, EXIT_RUNTIME, "stop the %s (pid %d): %s", what, (int)pid, strerror(errno));
	if (!wait_gone(pid, start, timeout_ms)) {
		*killed = true;
		kill(pid, SIGKILL);
		if (!wait_gone(pid, start, 10000))
			return err_set(err, EXIT_RUNTIME, "the %s (pid %d) did not exit after SIGKILL", what,
				       (int)pid);
	}
	if (read_pid(g->pid_file) == pid)
		unlink(g->pid_file);
	g->pid = 0;
	return 0;
}

/* The newest NNNNNN.log of DIR/logs/NAME past cap: its last cap bytes
 * (from a line's start) to NNNNNN.log.1, then it is emptied. */
static void trim_one(const char *dir, const char *name, size_t cap)
{
	unsigned *nos;
	size_t n;
	if (logstore_list(dir, name, &nos, &n, NULL) < 0 || !n)
		return;
	unsigned no = nos[n - 1];
	free(nos);
	_cleanup_free_ char *d = logstore_role_dir(dir, name);
	_cleanup_free_ char *p = xasprintf("%s/%06u.log", d, no);
	_cleanup_free_ char *p1 = xasprintf("%s.1", p);
	int fd = open(p, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size <= cap) {
		close(fd);
		return;
	}
	char *keep = xcalloc(1, cap);
	ssize_t k = pread(fd, keep, cap, st.st_size - (off_t)cap);
	const char *from = k > 0 ? memchr(keep, '\n', (size_t)k) : NULL;
	from = from ? from + 1 : keep;
	if (k > 0 && fs_write_atomic(p1, from, (size_t)(keep + k - from), 0600, NULL) == 0 &&
	    ftruncate(fd, 0) == 0) {
		_cleanup_free_ char *m = xasprintf("# lobes boot %06u continues (older lines in "
						   "%06u.log.1; older parts dropped)\n", no, no);
		(void)!write(fd, m, strlen(m));
	}
	free(keep);
	close(fd);
}

void bgproc_trim_logs(const char *dir, size_t part_cap)
{
	size_t cap = part_cap ? part_cap : LOGSTORE_PART_BYTES;
	trim_one(dir, bgproc_log_name(BGPROC_GATEWAY), cap);
	trim_one(dir, bgproc_log_name(BGPROC_COLLECTOR), cap);
}
