/*
 * doctor.h — read-only checks of a deploy dir before a boot (`lobes doctor`).
 *
 * Every check compares what is deployed (the deploy dir's compose files with
 * their ${VAR:-default} references resolved from its .env: the values the
 * containers would really get) against what is true of this box (detected
 * card, checkpoint facts, the shipped traits) and against what `lobes init`
 * would write now. Nothing is written, except the --image-probe cache
 * (<deploy-dir>/cache/vllm-env/<digest>.txt), and nothing is pulled.
 *
 * The result is a flat list of findings, each {id, severity, message,
 * remedy}; one check id may give several findings (one per role, per env
 * name, per trait). The library never prints: the command renders the list.
 *
 * Finding ids, in the order the families of table.c run: profile,
 * deploy-dir (parse problems and drift), image, env-registry, vllm-args,
 * placeholder, fp8-kv, traits, family, memory, gateway, docker, compose,
 * gpu-runtime, peers, peer-reachable, peer-key, peer-proxy; with
 * --kubernetes also kubernetes, kubernetes-nodes, -sidecars, -secrets,
 * -render, -restart. A finding with one safe fix names it (check.fix):
 * `lobes doctor --fix` plans and writes those (fix.c).
 */
#ifndef LOBES_DOCTOR_H
#define LOBES_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#include "../util/err.h"

enum check_sev { SEV_OK, SEV_INFO, SEV_WARNING, SEV_ERROR };
const char *check_sev_name(enum check_sev s); /* "ok" "info" "warning" "error" */

struct check {
	char *id;       /* "fp8-kv" */
	enum check_sev sev;
	char *message;  /* one line */
	char *remedy;   /* NULL when nothing is to be done */
	char *detail;   /* NULL or multi-line text: a diff, evidence */
	char *role;     /* NULL or the role the finding is about */
	char *trait;    /* NULL or the trait that backs it */
	char *name;     /* NULL or the env name (or file) it is about */
	const char *fix; /* the one safe fix `doctor --fix` has for it (DOCTOR_FIX_*), or NULL */
	int line;       /* the .env line the finding names, 0: none */
};

/* The safe fixes (doctor --fix; fix.c). */
#define DOCTOR_FIX_WRITE_FILE "write-file"       /* a missing file lobes renders */
#define DOCTOR_FIX_ADD_KEY "add-key"             /* a missing .env key, appended */
#define DOCTOR_FIX_SET_VALUE "set-value"         /* a placeholder/empty value: lobes' value */
#define DOCTOR_FIX_COMMENT_OUT "comment-out"     /* an unknown VLLM_* line of .env */
#define DOCTOR_FIX_FINISH_COMMIT "finish-commit" /* a stale .lobes-journal, replayed */

struct doctor_report {
	struct check *c;
	size_t n;
	char *dir;
	bool no_dir; /* there is no deploy dir at all (a finding; the command exits 3) */
};

struct doctor_opts {
	const char *dir;       /* deploy dir */
	const char *profile;   /* NULL: the deploy dir's LOBES_PROFILE, else by detection */
	bool image_probe;      /* ask the image for its env registry (cached by digest) */
	const char *docker;    /* docker CLI; NULL: $LOBES_DOCKER, else "docker" */
	int probe_timeout_ms;  /* bound on the image probe; 0: 120000 */
	const char *kubernetes; /* doctor_run_kubernetes: the rendered tree */
};

/* Run every check. Returns 0 with the findings in r (free with
 * doctor_report_free, also on failure), whatever they say. Returns -1
 * (EXIT_CONFIG) only when the deploy dir exists but cannot be read at all
 * (not a directory, no permission); a missing deploy dir is a finding
 * (r->no_dir is set), and every check that needs no deploy dir still runs. */
int doctor_run(struct doctor_report *r, const struct doctor_opts *o, struct err **err);
void doctor_report_free(struct doctor_report *r);

/* Check a tree `lobes render --target kubernetes` wrote (o->kubernetes;
 * operator knowledge from o->dir/profiles) overlay by overlay, with the
 * compose checks that read a deployed fleet plus the Kubernetes ones
 * (kubernetes.c). -1 (EXIT_CONFIG) when the tree is not a directory or the
 * knowledge does not load. */
int doctor_run_kubernetes(struct doctor_report *r, const struct doctor_opts *o, struct err **err);

/* The worst severity of all findings (SEV_OK for none). */
enum check_sev doctor_worst(const struct doctor_report *r);
/* {"dir", "healthy", "summary": {ok, info, warning, error}, "checks": [...]}. */
json_t *doctor_report_json(const struct doctor_report *r);

/* `lobes doctor --fix` (fix.c): for each finding of r with a safe fix,
 * the edit that heals it. Only the lines a finding names change; an added
 * key is appended; a missing file is written as `lobes init` renders it.
 * The plan is computed from the files as committed; nothing is written. */
struct doctor_fix {
	char *finding, *severity, *message; /* the finding it heals */
	char *name, *role;                  /* the finding's env name or file, role */
	const char *action;                 /* DOCTOR_FIX_* */
	char *file;                         /* the file it changes */
	int line;                           /* the .env line it rewrites, 0: none (added, written) */
	char *before, *after;               /* the line as it is / will be, secrets masked */
	char *what;                         /* one sentence */
};
struct doctor_fix_put {
	char *name, *expect, *data; /* expect: the bytes planned against, NULL: absent */
	mode_t mode;
};
struct doctor_fix_plan {
	char *dir;
	struct doctor_fix *f;
	size_t n;
	struct doctor_fix_put *put;
	size_t n_put;
	bool journal;   /* a stale journal to finish */
	int keep;       /* backups kept per file */
	char *diff;     /* unified diff of the changed files, secrets masked */
	json_t *unfixed; /* the error and warning findings without a safe fix */
};
int doctor_fix_plan(struct doctor_fix_plan *p, const struct doctor_opts *o,
		    const struct doctor_report *r, struct err **err);
/* Write the plan as one commit of the deploy dir (deploy_put_files):
 * refused with nothing written when a file changed since the plan. */
int doctor_fix_apply(const struct doctor_fix_plan *p, struct err **err);
/* {"dir", "fixes": [...], "unfixed": [...], "diff"}. */
json_t *doctor_fix_json(const struct doctor_fix_plan *p);
void doctor_fix_plan_free(struct doctor_fix_plan *p);

/* Parse a registry list: one name a line, '#' comments and blank lines
 * skipped. Returns a NULL-terminated strv (caller frees with strv_free). */
char **vllm_env_list_parse(const char *text);

#endif
