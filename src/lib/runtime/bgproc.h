/*
 * bgproc.h — the background processes of a deploy dir that `lobes serve
 * --apply` starts and `lobes stop --apply` stops: the gateway (started
 * after the engines, stopped before them; the other way to run it is the
 * systemd unit `lobes init` renders, data/template/lobes-gateway@.service)
 * and the log collector (`lobes logs --collect`, which keeps the engines'
 * logs per boot under DIR/logs/ROLE/, docs/observe.md).
 *
 * The started process is `lobes --dir DIR gateway --pid-file DIR/gateway.pid`
 * or `lobes --dir DIR logs --collect --pid-file DIR/collector.pid`, in its
 * own session, stdin from /dev/null, stdout and stderr appended to this
 * start's log, DIR/logs/gateway/NNNNNN.log or DIR/logs/collector/NNNNNN.log
 * (one file per start, 0600 in 0700 directories, the 10 latest starts kept
 * and each start's file held to two 8 MiB parts by the collector: the
 * bounds of logstore.h, so `lobes logs gateway` reads them as it reads a
 * role's boots). A DIR/gateway.log of an older lobes is moved there once,
 * as the boot before the first new one. The process writes its pid file
 * itself, atomically, once it is set up (the gateway: once it listens), and
 * removes it when it exits: the pid file appearing is the sign it started.
 * A pid is trusted only while /proc/PID/cmdline is such a run with that
 * very pid file, so a stale file whose pid was reused by another program is
 * never signalled; stop waits on the process's /proc start time, so a pid
 * reused while it waits is not taken for it.
 */
#ifndef LOBES_BGPROC_H
#define LOBES_BGPROC_H

#include <stdbool.h>
#include <sys/types.h>

#include "../util/err.h"

enum bgproc_kind { BGPROC_GATEWAY, BGPROC_COLLECTOR };

#define GWPROC_START_TIMEOUT_MS 30000
#define BGPROC_COLLECTOR_STOP_MS 10000
/* an older lobes's gateway log, moved under DIR/logs/gateway/ at a start */
#define BGPROC_OLD_GATEWAY_LOG "gateway.log"

struct bgproc {
	enum bgproc_kind kind;
	char *dir;      /* the deploy dir, absolute */
	char *pid_file; /* absolute: DIR/gateway.pid, DIR/collector.pid */
	char *log_file; /* the newest start's log (NULL before the first) */
	pid_t pid;      /* the running process of this dir, 0 when none */
	bool stale;     /* a pid file was there but names no such process */
};

/* "gateway", "log collector": for messages. */
const char *bgproc_what(enum bgproc_kind kind);
/* "gateway", "collector": the name of its log dir under DIR/logs/. */
const char *bgproc_log_name(enum bgproc_kind kind);

/* Read DIR's pid file and check the process it names. No file: pid 0. */
int bgproc_read(struct bgproc *g, const char *dir, enum bgproc_kind kind, struct err **err);
void bgproc_free(struct bgproc *g);

/* Start the process (g from bgproc_read, with none running) and wait up to
 * timeout_ms for its pid file. When it exits first (bad settings, port
 * taken) the error carries what it wrote to its log. */
int bgproc_start(struct bgproc *g, const char *exe, int timeout_ms, struct err **err);

/* SIGHUP: the gateway re-reads the deploy dir (after `lobes init --apply`). */
int bgproc_reload(const struct bgproc *g, struct err **err);

/* SIGTERM, then wait up to timeout_ms for the process to go (the gateway
 * drains its in-flight requests first; the collector makes one last pass);
 * past that, SIGKILL. *killed says whether it took SIGKILL. The pid file is
 * removed if the process could not. */
int bgproc_stop(struct bgproc *g, int timeout_ms, bool *killed, struct err **err);

/* The log of the current start of each background process, held to
 * part_cap (0: LOGSTORE_PART_BYTES) by copying it to NNNNNN.log.1 and
 * truncating it (its writer appends, so it writes on at the new end; lines
 * written between the copy and the truncation are lost). The collector
 * calls this each pass. */
void bgproc_trim_logs(const char *dir, size_t part_cap);

#endif
