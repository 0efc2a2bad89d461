/*
 * proc.h — run a child process with a wall-clock bound and capped output.
 *
 * Used for nvidia-smi (which hangs on some boxes) and the compose CLI. The
 * child gets its own process group so a timeout kills it and anything it
 * spawned. Never goes through a shell.
 */
#ifndef LOBES_PROC_H
#define LOBES_PROC_H

#include "buf.h"
#include "err.h"

struct proc_result {
	int status;      /* exit status, or 128+signal */
	int timed_out;   /* 1 when killed for exceeding the bound */
	struct buf out;  /* stdout, capped */
	struct buf errb; /* stderr, capped */
};

/* Run argv[0] (PATH lookup) with a timeout in milliseconds. Returns 0 when
 * the child ran (whatever its status), -1 with *err when it could not be
 * started (ENOENT is EXIT_CONFIG, others EXIT_RUNTIME). res is initialised
 * by the call; release it with proc_result_free(). */
int proc_run(char *const argv[], int timeout_ms, size_t cap, struct proc_result *res,
	     struct err **err);
/* As proc_run, with the child started in directory cwd (NULL: the caller's
 * own). A cwd that is not a directory is an EXIT_CONFIG error naming it,
 * reported before anything is started. */
int proc_run_in(const char *cwd, char *const argv[], int timeout_ms, size_t cap,
		struct proc_result *res, struct err **err);
void proc_result_free(struct proc_result *res);

#endif
