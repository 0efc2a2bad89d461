/*
 * switch_restart.h — `lobes switch --apply`'s restart of one role with its
 * rollback (switch_restart.c), called by switch.c once the new files are
 * committed.
 */
#ifndef LOBES_SWITCH_RESTART_H
#define LOBES_SWITCH_RESTART_H

#include <jansson.h>
#include <stdbool.h>

#include "../lib/deploy/deploy.h"

struct sw_restart {
	const char *dir;
	enum role_id role;
	const char *old_model, *new_model;
	const struct deploy_saved *before; /* the files before the write */
	const struct profile *profile;        /* for the probes' known failures */
	bool tool_parser, reasoning_parser;   /* the role's parsers are on */
	int boot_wait_s;                      /* bound on the boot (window and /health) */
	double probe_timeout_s;
	/* set by switch_restart: */
	uint64_t budget;
	const char *stage;
};

/* Restart sr->role on the committed files; on a failed boot or probe put
 * sr->before back and boot the old checkpoint. Fills res (boot, probes,
 * cause, rolled_back, rollback_boot). 0 when the new checkpoint serves and
 * answers; -1 with *err: EXIT_CHECK naming the cause after a rollback,
 * EXIT_RUNTIME/EXIT_CONFIG when docker or the dir failed. */
int switch_restart(struct sw_restart *sr, json_t *res, struct err **err);

#endif
