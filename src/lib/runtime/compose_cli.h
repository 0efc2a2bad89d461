/*
 * compose_cli.h — the compose CLI, found at run time, run in a deploy dir.
 *
 * Lifecycle goes through compose (never re-implemented here). Boxes carry
 * either `docker compose` (v2) or `docker-compose` (v1); LOBES_COMPOSE (a
 * command line split on spaces) overrides the probe. Each run is started in
 * the deploy dir with `--project-directory DIR`, and the project name and
 * files are passed as `-p`/`-f` from DIR/.env (COMPOSE_PROJECT_NAME,
 * COMPOSE_FILE split on COMPOSE_PATH_SEPARATOR, default ':'), so v1 and v2
 * read the same .env and files, and a COMPOSE_FILE exported in the caller's
 * shell cannot point a run at another project. Every run is bounded.
 */
#ifndef LOBES_COMPOSE_CLI_H
#define LOBES_COMPOSE_CLI_H

#include "../util/proc.h"

#define COMPOSE_PROBE_TIMEOUT_MS 10000
#define COMPOSE_UP_TIMEOUT_MS 180000
#define COMPOSE_DOWN_TIMEOUT_MS 180000
#define COMPOSE_QUERY_TIMEOUT_MS 30000
#define COMPOSE_OUTPUT_CAP ((size_t)4 << 20)

struct compose {
	char **cmd;      /* the compose command, NULL-terminated: {"docker", "compose"} */
	int cli;         /* 2: docker compose, 1: docker-compose, 0: from LOBES_COMPOSE */
	char *version;   /* "": compose_open does not probe (compose_detect) */
	char *dir;       /* the deploy dir */
	char *project;   /* COMPOSE_PROJECT_NAME of DIR/.env, NULL when unset */
	char **files;    /* COMPOSE_FILE entries of DIR/.env, NULL-terminated (maybe empty) */
};

/* Find the compose command: LOBES_COMPOSE when set and not blank (not
 * probed), else the first of `docker compose version` and `docker-compose
 * version` that exits 0 (the v1 answer is cached per program path, size
 * and mtime in $XDG_CACHE_HOME/lobes/compose.json: it starts a Python
 * interpreter). *cmd (NULL-terminated, owned) and *cli are set.
 * *version, when non-NULL, gets the first output line ("" when not probed).
 * With version NULL (every command but doctor), v1 is not run: a
 * docker-compose executable in PATH is enough. Its `version` is a Python
 * start-up, about 0.5 s of CPU: on a box loaded 15 deep it took over the
 * probe's bound, and serve, stop and switch said "no compose CLI" of an
 * installed one (the CI flake of tests/integration/serve.t and others).
 * Neither working is EXIT_CONFIG naming both and LOBES_COMPOSE; a probe
 * that ran past its bound (slow, not absent) makes that EXIT_RUNTIME
 * saying so. */
int compose_detect(char ***cmd, int *cli, char **version, struct err **err);

/* Detect the CLI and read DIR/.env (a missing .env leaves project and
 * files unset: compose then uses its defaults in DIR). A .env that does not
 * parse is EXIT_CONFIG. Release with compose_free(). */
int compose_open(struct compose *c, const char *dir, struct err **err);
void compose_free(struct compose *c);

/* The full argv for `compose ... VERB ARGS` (NULL-terminated, owned):
 * cmd, --project-directory DIR, -p, -f..., then args. */
char **compose_argv(const struct compose *c, const char *const *args);

/* Run compose with args (NULL-terminated) in the deploy dir, bounded by
 * timeout_ms. 0 when it ran, whatever its exit status (res->status,
 * res->timed_out; res->out, res->errb captured, capped); -1 when it could
 * not be started. res is initialised by the call; free it with
 * proc_result_free(). */
int compose_run(const struct compose *c, const char *const *args, int timeout_ms,
		struct proc_result *res, struct err **err);

/* `up -d --no-deps SERVICE...` (services NULL-terminated; empty: all). */
int compose_up(const struct compose *c, const char *const *services, struct proc_result *res,
	       struct err **err);
/* `up --no-start --no-deps SERVICE...`: create (or recreate, when their
 * configuration changed) the services' containers without starting any
 * (services NULL-terminated; empty: all). */
int compose_create(const struct compose *c, const char *const *services, struct proc_result *res,
		   struct err **err);
/* `down` (containers stop with compose's own timeout). */
int compose_down(const struct compose *c, struct proc_result *res, struct err **err);
/* `ps` (human-readable; the Engine API is the structured view). */
int compose_ps(const struct compose *c, struct proc_result *res, struct err **err);
/* `config -q`: the files and .env form a valid project. */
int compose_config_check(const struct compose *c, struct proc_result *res, struct err **err);

/* When res is a failure (non-zero exit or timed out), set *err (EXIT_RUNTIME)
 * to "compose VERB: exit N: LAST STDERR LINE" (or "... timed out") and
 * return -1; else 0. */
int compose_result_check(const char *verb, const struct proc_result *res, struct err **err);

#endif
