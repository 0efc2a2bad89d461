/* proc.c — bounded child processes; see proc.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "proc.h"

extern char **environ;

void proc_result_free(struct proc_result *res)
{
	buf_free(&res->out);
	buf_free(&res->errb);
}

int proc_run(char *const argv[], int timeout_ms, size_t cap, struct proc_result *res,
	     struct err **err)
{
	return proc_run_in(NULL, argv, timeout_ms, cap, res, err);
}

int proc_run_in(const char *cwd, char *const argv[], int timeout_ms, size_t cap,
		struct proc_result *res, struct err **err)
{
	memset(res, 0, sizeof(*res));
	buf_init(&res->out, cap);
	buf_init(&res->errb, cap);
	/* Checked here: a failed chdir in the child would read as "no such
	 * program" (posix_spawn reports both as ENOENT). */
	struct stat st;
	if (cwd && stat(cwd, &st) < 0)
		return err_errno(err, EXIT_CONFIG, errno, "directory '%s'", cwd);
	if (cwd && !S_ISDIR(st.st_mode))
		return err_set(err, EXIT_CONFIG, "directory '%s': not a directory", cwd);
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0)
		return err_errno(err, EXIT_RUNTIME, errno, "pipe");
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return err_errno(err, EXIT_RUNTIME, errno, "pipe");
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(po[1]);
	close(pe[1]);
	if (rc != 0) {
		close(po[0]);
		close(pe[0]);
		return err_errno(err, rc == ENOENT ? EXIT_CONFIG : EXIT_RUNTIME, rc, "run '%s'",
				 argv[0]);
	}
	long long deadline = clock_mono_ms() + timeout_ms;
	struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	int open_fds = 2;
	while (open_fds > 0) {
		long long left = deadline - clock_mono_ms();
		if (left <= 0) {
			res->timed_out = 1;
			break;
		}
		int n = poll(fds, 2, (int)(left > 1000 ? 1000 : left));
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char chunk[4096];
			ssize_t r = read(fds[i].fd, chunk, sizeof(chunk));
			if (r <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			(void)buf_add(i == 0 ? &res->out : &res->errb, chunk, (size_t)r);
		}
	}
	int status = 0;
	if (res->timed_out) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	} else {
		/* Output closed; the child may still be running: bound the wait too. */
		for (;;) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid)
				break;
			if (clock_mono_ms() >= deadline) {
				res->timed_out = 1;
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
				break;
			}
			clock_sleep_ms(10);
		}
	}
	if (res->timed_out)
		waitpid(pid, &status, 0);
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	if (WIFEXITED(status))
		res->status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->status = 128 + WTERMSIG(status);
	return 0;
}
