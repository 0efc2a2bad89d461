/*
 * logstore.h — each role's engine log kept per boot under DIR/logs/ROLE/,
 * so the boot that failed first survives Docker recycling the container
 * (docs/observe.md says how the lines get here).
 *
 * One file per boot: NNNNNN.log (NNNNNN counts the role's boots, 000001
 * first), mode 0600; its first line names the container and its start:
 *   # lobes boot 000003 container 5e5e... started 2026-12-03T14:02:11.48Z
 * Bounds: a boot's file that reaches LOGSTORE_PART_BYTES is moved aside to
 * NNNNNN.log.1 (replacing an older one) and the boot goes on in a fresh
 * NNNNNN.log, so a boot holds at most twice that and keeps its latest lines
 * (where a cause is); a role keeps its LOGSTORE_BOOTS latest boots. The
 * gateway's and the collector's own logs live beside the roles, one file
 * per start, in DIR/logs/gateway/ and DIR/logs/collector/ (bgproc.h).
 */
#ifndef LOBES_LOGSTORE_H
#define LOBES_LOGSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../util/err.h"

#define LOGSTORE_PART_BYTES ((size_t)8 << 20)
#define LOGSTORE_BOOTS 10

/* A role's boot being written. */
struct logstore_boot {
	char *dir;        /* DIR/logs/ROLE */
	unsigned no;      /* its number */
	int fd;           /* NNNNNN.log, open for append; -1 when closed */
	size_t size;      /* bytes in the current part */
	size_t part_cap;  /* LOGSTORE_PART_BYTES, or smaller in tests */
	size_t keep;      /* boots kept, LOGSTORE_BOOTS or fewer in tests */
};

/* DIR/logs/ROLE (not created). Caller frees. */
char *logstore_role_dir(const char *deploy_dir, const char *role);

/* Start the role's next boot: create DIR/logs/ROLE (0700) if needed, open
 * the next NNNNNN.log (0600) with its header line, and remove the oldest
 * boots beyond b->keep (set part_cap and keep first, or 0 for the
 * defaults). */
int logstore_begin(struct logstore_boot *b, const char *deploy_dir, const char *role,
		   const char *container, const char *started_at, size_t part_cap, size_t keep,
		   struct err **err);
/* logstore_begin with the header's "container ID" given whole as label
 * (the gateway's and the collector's own logs: "process lobes gateway"). */
int logstore_begin_as(struct logstore_boot *b, const char *deploy_dir, const char *role,
		      const char *label, const char *started_at, size_t part_cap, size_t keep,
		      struct err **err);
/* Open boot no of the role again for append (a collector that restarted
 * and finds the same container boot still running). */
int logstore_reopen(struct logstore_boot *b, const char *deploy_dir, const char *role,
		    unsigned no, size_t part_cap, size_t keep, struct err **err);
/* Append n bytes of the boot's log (whole lines or not), moving a full part
 * aside as described above. */
int logstore_write(struct logstore_boot *b, const char *p, size_t n, struct err **err);
void logstore_end(struct logstore_boot *b);

/* The role's boot numbers, oldest first (a NULL-free array of n; caller
 * frees). 0 boots is not an error. */
int logstore_list(const char *deploy_dir, const char *role, unsigned **nos, size_t *n,
		  struct err **err);
/* The whole text of boot no (its moved-aside part, then the current one),
 * header line included. Caller frees. */
char *logstore_read(const char *deploy_dir, const char *role, unsigned no, size_t *len,
		    struct err **err);

/* ---- the collector (logkeep.c) ----
 *
 * One pass asks the Docker Engine for each feasible role's container and the
 * log lines it wrote since the last pass (timestamps on, since the last
 * line's time): a container whose start time (or id) changed is a new boot,
 * and the lines stamped before that start still go to the boot before it —
 * so the last lines of a boot Docker restarted are kept. A role that logged
 * more than a pass reads (64 MiB) is read on from its last line by the
 * next passes. `lobes logs --collect` runs passes every second until
 * SIGTERM; `serve --apply` starts it in the background (bgproc.h). */
struct logkeep_role {
	char *key;            /* "ID@StartedAt" of the boot being written */
	char *id;
	long long start_s, last_s; /* its start; the last line's time (s, ns) */
	long start_ns, last_ns;
	struct logstore_boot boot;
};
struct logkeep {
	char *dir, *project;
	char *roles[16];      /* role names */
	size_t n;
	struct logkeep_role r[16];
	size_t part_cap, keep;
};
struct engine;
void logkeep_init(struct logkeep *k, const char *deploy_dir, const char *project,
		  const char *const *roles, size_t n, size_t part_cap, size_t keep);
/* One pass. Lines written are counted in *lines (may be NULL). */
int logkeep_pass(struct logkeep *k, struct engine *en, size_t *lines, struct err **err);
void logkeep_free(struct logkeep *k);

#endif
