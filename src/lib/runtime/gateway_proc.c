/*
 * gateway_proc.c — start, find, reload and stop the gateway process of a
 * deploy dir (see gateway_proc.h for the contract).
 *
 * Identity: a pid is the gateway of DIR only while /proc/PID/cmdline holds
 * the argument "gateway" and "--pid-file" followed by DIR's absolute pid
 * file, and the process is not a zombie. Everything else (no file, a pid
 * that is gone or reused) reads as "no gateway", with `stale` set when a
 * file was there.
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
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "gateway_proc.h"

/* True when pid is a live (not zombie) gateway run with pid_file. */
static bool is_our_gateway(pid_t pid, const char *pid_file)
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
		if (!strcmp(a, "gateway"))
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

int gwproc_read(struct gwproc *g, const char *dir, struct err **err)
{
	memset(g, 0, sizeof(*g));
	char abs[PATH_MAX];
	if (!realpath(dir, abs))
		return err_set(err, EXIT_CONFIG, "deploy dir '%s': %s", dir, strerror(errno));
	g->pid_file = xasprintf("%s/" GWPROC_PID_FILE, abs);
	g->log_file = xasprintf("%s/" GWPROC_LOG_FILE, abs);
	pid_t p = read_pid(g->pid_file);
	if (p > 0 && is_our_gateway(p, g->pid_file))
		g->pid = p;
	else
		g->stale = p != 0;
	return 0;
}

void gwproc_free(struct gwproc *g)
{
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
 * size - 1 of them (a gateway that exits at once writes a line or two). */
static void run_log(const struct gwproc *g, off_t from, char *out, size_t size)
{
	ssize_t n = -1;
	int fd = open(g->log_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, out, size - 1, from);
		close(fd);
	}
	out[n > 0 ? n : 0] = '\0';
}

int gwproc_start(struct gwproc *g, const char *exe, int timeout_ms, struct err **err)
{
	if (g->pid)
		return err_set(err, EXIT_INTERNAL, "the gateway already runs (pid %d)", (int)g->pid);
	if (g->stale)
		unlink(g->pid_file);
	struct stat st;
	if (lstat(g->log_file, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > GWPROC_LOG_ROTATE) {
		_cleanup_free_ char *old = xasprintf("%s.1", g->log_file);
		if (rename(g->log_file, old) < 0)
			return err_set(err, EXIT_CONFIG, "rotate '%s': %s", g->log_file, strerror(errno));
	}
	int logfd = open(g->log_file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (logfd < 0)
		return err_set(err, EXIT_CONFIG, "open '%s': %s", g->log_file, strerror(errno));
	fchmod(logfd, 0600);
	off_t from = lseek(logfd, 0, SEEK_END);
	/* the deploy dir of the pid file, so the child reads the same dir */
	_cleanup_free_ char *absdir = xstrdup(g->pid_file);
	*strrchr(absdir, '/') = '\0';
	char *const argv[] = { (char *)exe, (char *)"--dir", absdir, (char *)"gateway",
			       (char *)"--pid-file", g->pid_file, NULL };
	pid_t c = fork();
	if (c < 0) {
		close(logfd);
		return err_set(err, EXIT_RUNTIME, "fork: %s", strerror(errno));
	}
	if (c == 0)
		exec_child(logfd, argv);
	close(logfd);
	long long deadline = clock_mono_ms() + timeout_ms;
	for (;;) {
		int status;
		if (waitpid(c, &status, WNOHANG) == c) {
			char mine[4096];
			run_log(g, from, mine, sizeof(mine));
			return err_set(err, EXIT_RUNTIME, "the gateway exited (%s %d) before it listened%s%s",
				       WIFEXITED(status) ? "status" : "signal",
				       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
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
	return err_set(err, EXIT_RUNTIME, "the gateway did not listen within %d s (log: %s)",
		       timeout_ms / 1000, g->log_file);
}

int gwproc_reload(const struct gwproc *g, struct err **err)
{
	if (!g->pid || kill(g->pid, SIGHUP) < 0)
		return err_set(err, EXIT_RUNTIME, "reload the gateway (pid %d): %s", (int)g->pid,
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
 * a zombie, and stop would return while the gateway still exits. */
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

int gwproc_stop(struct gwproc *g, int timeout_ms, bool *killed, struct err **err)
{
	*killed = false;
	pid_t pid = g->pid;
	if (!pid)
		return 0;
	/* the process as it is now, still the gateway of this dir: its start
	 * time tells it from a later process given the same pid */
	char st;
	unsigned long long start;
	if (!is_our_gateway(pid, g->pid_file) || !proc_stat(pid, &st, &start)) {
		waitpid(pid, NULL, WNOHANG);
		if (read_pid(g->pid_file) == pid)
			unlink(g->pid_file);
		g->pid = 0;
		return 0;
	}
	if (kill(pid, SIGTERM) < 0 && errno != ESRCH)
		return err_set(err, EXIT_RUNTIME, "stop the gateway (pid %d): %s", (int)pid, strerror(errno));
	if (!wait_gone(pid, start, timeout_ms)) {
		*killed = true;
		kill(pid, SIGKILL);
		if (!wait_gone(pid, start, 10000))
			return err_set(err, EXIT_RUNTIME, "the gateway (pid %d) did not exit after SIGKILL",
				       (int)pid);
	}
	if (read_pid(g->pid_file) == pid)
		unlink(g->pid_file);
	g->pid = 0;
	return 0;
}
