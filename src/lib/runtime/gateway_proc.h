/*
 * gateway_proc.h — the gateway as a background process of a deploy dir:
 * what `lobes serve --apply` starts after the engines and `lobes stop
 * --apply` stops before them (the other way to run it is the systemd unit
 * `lobes init` renders, data/template/lobes-gateway@.service).
 *
 * The started process is `lobes --dir DIR gateway --pid-file DIR/gateway.pid`
 * in its own session, stdin from /dev/null, stdout and stderr appended to
 * DIR/gateway.log (0600; the previous log is kept as gateway.log.1 once it
 * passes GWPROC_LOG_ROTATE bytes). The gateway writes its pid file itself,
 * atomically, once it listens, and removes it when it exits: the pid file
 * appearing is the sign it started. A pid is trusted only while
 * /proc/PID/cmdline is a gateway run with that very pid file, so a stale
 * file whose pid was reused by another program is never signalled.
 */
#ifndef LOBES_GATEWAY_PROC_H
#define LOBES_GATEWAY_PROC_H

#include <stdbool.h>
#include <sys/types.h>

#include "../util/err.h"

#define GWPROC_PID_FILE "gateway.pid"
#define GWPROC_LOG_FILE "gateway.log"
#define GWPROC_LOG_ROTATE ((off_t)64 << 20)
#define GWPROC_START_TIMEOUT_MS 30000

struct gwproc {
	char *pid_file; /* absolute: DIR/gateway.pid */
	char *log_file; /* absolute: DIR/gateway.log */
	pid_t pid;      /* the running gateway of this dir, 0 when none */
	bool stale;     /* a pid file was there but names no gateway of this dir */
};

/* Read DIR's pid file and check the process it names. No file: pid 0. */
int gwproc_read(struct gwproc *g, const char *dir, struct err **err);
void gwproc_free(struct gwproc *g);

/* Start `exe --dir DIR gateway --pid-file ...` (g from gwproc_read of DIR, with no
 * gateway running) and wait up to timeout_ms for its pid file. When the
 * gateway exits first (bad settings, port taken) the error carries the
 * last lines of its log. */
int gwproc_start(struct gwproc *g, const char *exe, int timeout_ms, struct err **err);

/* SIGHUP: the gateway re-reads the deploy dir (after `lobes init --apply`). */
int gwproc_reload(const struct gwproc *g, struct err **err);

/* SIGTERM, then wait up to timeout_ms for the process to go (it drains its
 * in-flight requests first); past that, SIGKILL. *killed says whether it
 * took SIGKILL. The pid file is removed if the gateway could not. */
int gwproc_stop(struct gwproc *g, int timeout_ms, bool *killed, struct err **err);

#endif
