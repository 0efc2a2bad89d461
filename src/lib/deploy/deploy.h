/*
 * deploy.h — the deploy dir as a store: the one public face of deploy/.
 *
 * A deploy dir holds docker-compose.yml, docker-compose.gpu.yml, .env (0600),
 * the gateway unit and .lobes-state.json (the values lobes last wrote, so an
 * operator's edit can be told from a stale render). Everything that reads or
 * writes those files goes through this room: the .env reader every command
 * uses, the writer's lock, the journal that makes a commit one atomic step,
 * the backups of replaced files (NAME.bak.N, the last few kept) and the
 * state file. render/ computes the bytes; deploy/ puts them in the dir.
 *
 * init_prepare() computes everything and writes nothing; init_apply() writes
 * the changed files, the backups of the replaced ones and the state file as
 * one atomic commit (deploy_int.h): a kill at any point leaves the old dir or
 * the new one once the next writer has run.
 *
 * Operator edits to .env survive a re-init: an edited knob key
 * (<ROLE>_<KNOB>) becomes an operator override in the plan (so the compose
 * structure follows it and `explain` names it), any other edited or added
 * key is carried over as is. --reset KEY drops an edit.
 */
#ifndef LOBES_DEPLOY_H
#define LOBES_DEPLOY_H

#include <stdbool.h>

#include "../plan/plan.h"
#include "../render/render.h"

/* .env (env.c): compose's dotenv rules; every entry keeps its source line. */
struct env_entry {
	char *key, *value; /* value: as compose reads it (quotes and escapes resolved) */
	char *raw;         /* the whole source line, as written (no newline) */
	int line;
};

struct env_file {
	struct env_entry *e;
	size_t n;
};

#define ENV_FILE_CAP ((size_t)16 << 20)

/* Parse len bytes of KEY=VALUE lines (comments and blank lines skipped).
 * Errors "NAME:LINE:COL: ...; expected ..." (EXIT_CONFIG): a line that is
 * not KEY=VALUE, a NUL byte, a UTF-16/32 file, an unclosed quote, text
 * after a closing quote. */
int env_parse_len(const char *text, size_t len, const char *name, struct env_file *out,
		  struct err **err);
/* env_parse_len up to the first NUL of text. */
int env_parse(const char *text, const char *name, struct env_file *out, struct err **err);
/* The deploy dir's .env, the one reader of every command: the file as
 * committed (a pending journal's new .env, not a half-written one), a
 * regular file of at most ENV_FILE_CAP bytes, parsed with errors named
 * "DIR/.env:LINE:COL". 1: read; 0: dir has no .env (*out empty, *err not
 * set); -1: *err set, *out empty. */
int deploy_env_read(const char *dir, struct env_file *out, struct err **err);
/* The value of the last assignment of key, or NULL. */
const char *env_get(const struct env_file *f, const char *key);
const struct env_entry *env_entry_get(const struct env_file *f, const char *key);
void env_file_free(struct env_file *f);
/* Set KEY=VALUE in dir's .env (envset.c): the line of key's last assignment
 * is replaced, or the line appended; every other byte kept. One commit
 * under the writer's lock, mode 0600. *before (caller frees) gets the
 * file's bytes as they were and *before_len their count, for
 * deploy_env_put. */
int deploy_env_set(const char *dir, const char *key, const char *value, char **before,
		   size_t *before_len, struct err **err);
/* Put .env back to exactly these bytes (a commit under the lock, 0600). */
int deploy_env_put(const char *dir, const char *bytes, size_t len, struct err **err);

/* Files of the deploy dir as they were before a trial. */
struct deploy_saved_file {
	char *name, *bytes;
	size_t len;
	mode_t mode;
};
struct deploy_saved {
	struct deploy_saved_file *f;
	size_t n;
};
/* A knob `lobes init` renders into the compose file, set for a while
 * (envset.c): KEY=VALUE in .env (only that line changed), the dir rendered
 * with that edit, and .env plus every existing compose file the render
 * changes committed as one step (no backup; the state file untouched).
 * *saved gets the replaced files' bytes and modes (.env first). -1 with
 * err: nothing changed. */
int deploy_knob_trial(const char *dir, const char *key, const char *value, struct deploy_saved *saved,
		      struct err **err);
/* Put every saved file back, byte for byte, as one commit under the lock. */
int deploy_saved_put(const char *dir, const struct deploy_saved *s, struct err **err);
/* Whether each saved file now has exactly its saved bytes. */
bool deploy_saved_same(const char *dir, const struct deploy_saved *s);
void deploy_saved_free(struct deploy_saved *s);

/* A file of dir as committed (a pending journal's new file, not a
 * half-written one); NULL when absent (*err not set) or on error. */
char *deploy_file_get(const char *dir, const char *name, size_t *len, struct err **err);

/* Files of dir replaced as one commit (put.c): under the writer's lock a
 * pending journal is finished, then each file must still hold `expect`
 * (NULL: be absent) or nothing is written (EXIT_CONFIG); a replaced file
 * is kept as NAME.bak.N and the last `keep` kept (keep <= 0: no backup
 * made, none pruned). n == 0 only finishes a pending journal. */
struct deploy_put {
	const char *name, *expect, *data;
	mode_t mode;
};
int deploy_put_files(const char *dir, const struct deploy_put *p, size_t n, int keep,
		     struct err **err);
/* The files init manages (.env, the compose files, the unit, the state
 * file) as committed now, into *s for deploy_saved_put (put.c). */
int deploy_save(const char *dir, struct deploy_saved *s, struct err **err);
/* A journal of an interrupted commit that no writer holds the lock for
 * (commit.c): 1 (*names: the files it replaces, strv), 0 none or a writer
 * at work, -1 a journal lobes cannot read (*err says why). Writes nothing. */
int deploy_journal_stale(const char *dir, char ***names, struct err **err);

struct kept_value {
	char *key, *yours, *lobes; /* lobes: what the render alone would write (NULL: no such key) */
	bool secret;
};

struct file_change {
	char *name;
	char *old; /* NULL: the file does not exist */
	char *new;
	mode_t mode;
	bool changed;
	char *backup; /* set by init_apply when a file was kept aside */
};

struct init_result {
	struct loaded_plan lp;
	struct file_change files[RENDER_MAX_FILES];
	size_t n_files;
	struct kept_value *kept;
	size_t n_kept;
	char **reset;     /* keys --reset dropped */
	char *diff;       /* unified diff of every file, secrets masked */
	bool changed;
	bool dir_exists;
	bool profile_from_dir; /* no --profile: the LOBES_PROFILE of the deploy dir was used */
	char *dir;
	json_t *lobes_env; /* what lobes alone would write to .env: {key: value} */
	int lock_fd;       /* the writer's lock (apply), or -1 */
	int keep_backups;  /* backups of each file to keep */
};

struct init_opts {
	const char *dir;
	const char *profile; /* NULL: by detection */
	char *const *reset;       /* NULL-terminated keys, or NULL */
	bool apply;               /* init_apply() follows: lock and recover first */
	int keep_backups;         /* -1: LOBES_KEEP_BACKUPS of .env, else DEPLOY_KEEP_BACKUPS */
	char *const *set;         /* NULL-terminated "KEY=VALUE": taken as if the operator had
				   * written them in .env (lobes switch), or NULL */
};

/* Compute what init would write. With o->apply, takes the deploy dir's lock
 * (held until init_result_free) and finishes a killed commit first. */
int init_prepare(struct init_result *r, const struct init_opts *o, struct err **err);
/* Write what init_prepare computed as one commit (nothing when nothing
 * changed), then prune backups beyond the number kept. */
int init_apply(struct init_result *r, struct err **err);
void init_result_free(struct init_result *r);

/* --- what is deployed (deployed.c) ----------------------------------------
 * The fleet as the containers will get it: every compose file of .env
 * COMPOSE_FILE parsed, each role service's entrypoint + command
 * interpolated with the .env values, its vLLM flags read back into knob
 * values. */

struct env_use {
	char *name, *value, *where;
	int role; /* the service's role; -1: .env or a service that is not a role */
};

struct deployed_problem {
	char *msg, *remedy; /* remedy: NULL when there is none to offer */
};

struct deployed_role {
	bool present;
	char *service;               /* compose service name */
	char *image;                 /* its image, interpolated; NULL when not set */
	char **args;                 /* entrypoint + command, interpolated (strv) */
	char *knobs[KNOB__COUNT];    /* effective values; NULL = unknown */
	/* derived by the reader's user (doctor), freed by deployed_free: */
	struct checkpoint_facts ck;
	bool ck_read;
	char *attn, *attn_why;       /* derived attention path */
};

struct deployed {
	bool env_ok;
	struct env_file env;
	char **files;                /* compose files, as listed */
	struct deployed_role roles[ROLE__COUNT];
	struct env_use *uses;
	size_t n_uses;
	bool compose_ok;             /* every compose file parsed */
	char *interp_err;            /* the first ${...} that could not be interpolated */
	struct deployed_problem *problems; /* what could not be read, in the order met */
	size_t n_problems;
};

/* Read .env and the compose files of dir into d (zeroed by the caller); what
 * cannot be read is a problem in d->problems, never an error: the rest is
 * still read. */
void deployed_load(struct deployed *d, const char *dir);
void deployed_free(struct deployed *d);

/* One overlay of a rendered Kubernetes tree (`lobes render --target
 * kubernetes`), read as deployed_load reads a compose dir: d.env from its
 * gateway.env (the gateway's ConfigMap), d.roles from the DaemonSet
 * patch's init containers (image, `vllm serve` + args with the kubelet's
 * `$$` unescaped, knobs read back), plus what only Kubernetes has. Read
 * problems go to d.problems; nothing is an error. */
struct deployed_k8s {
	struct deployed d;
	char **order;        /* the init containers' names, in order */
	char **not_sidecar;  /* ... of those without restartPolicy: Always */
	char **no_startup;   /* ... of those without a startupProbe */
	char **selector;     /* nodeSelector as "key=value" (strv) */
	char **literals;     /* "container: NAME" for each env literal whose name is a secret's */
};
void deployed_load_k8s(struct deployed_k8s *k, const char *tree, const char *profile);
void deployed_k8s_free(struct deployed_k8s *k);

/* A rendered tree (render_out names with '/': the Kubernetes render)
 * under DIR/<sub>/ (tree.c): what differs from the files there (a unified
 * diff) and, with apply, those files written under the deploy dir's lock,
 * each directory of the tree as one journal commit. */
struct tree_file {
	char *name;   /* relative to DIR/<sub> */
	bool existed, changed;
};
struct tree_result {
	char *root;   /* DIR/<sub> */
	struct tree_file *files;
	size_t n;
	char *diff;
	bool changed;
};
int deploy_tree_sync(const char *dir, const char *sub, const struct render_out *ro, bool apply,
		     struct tree_result *r, struct err **err);
void tree_result_free(struct tree_result *r);

#endif
