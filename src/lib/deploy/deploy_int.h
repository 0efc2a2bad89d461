/*
 * deploy_int.h — the insides of deploy/ that its files share: the deploy
 * dir's commit as one atomic step (commit.c), its backups (backups.c), the
 * state file (state.c) and the .env merge of init (env.c).
 *
 * `init --apply` changes several files (.env, the compose files, the state
 * file, backups of the replaced ones) that only make sense together: a
 * .env from the new render beside the state file of the old one turns
 * lobes' own values into "operator edits". So they change as one step, with
 * a redo journal (the git/sqlite way, on one directory):
 *
 *   1. every new file is written as a temp file of our naming (fs.h), each
 *      fsync'd; nothing visible has changed;
 *   2. the journal .lobes-journal, listing "temp → name" for each, is
 *      written atomically — its rename is the commit point;
 *   3. each temp is renamed onto its name, the directory fsync'd;
 *   4. the journal is removed; backups beyond the kept number are pruned.
 *
 * Killed before 2: the old dir plus temps, which the next writer removes.
 * Killed after 2: the next writer replays the journal (a rename already
 * done has no temp left, so replay is idempotent) before it reads anything.
 * Readers never write: deploy_read() shows a file as a pending journal will
 * leave it, so a dry run sees the committed state too.
 *
 * Writers hold an exclusive lock (flock on .lobes.lock, mode 0600) for the
 * whole of recover → read → commit; a second writer fails at once with a
 * message naming the dir instead of waiting.
 */
#ifndef LOBES_DEPLOY_INT_H
#define LOBES_DEPLOY_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../util/err.h"
#include "deploy.h"

#define DEPLOY_JOURNAL ".lobes-journal"
#define STATE_FILE ".lobes-state.json"
#define DEPLOY_LOCK ".lobes.lock"
/* Backups kept per file when neither --keep-backups nor LOBES_KEEP_BACKUPS
 * says otherwise. */
#define DEPLOY_KEEP_BACKUPS 5

/* Take the writer's lock of dir (which must exist); returns its fd (close
 * it to release) or -1 with *err set. */
int deploy_lock(const char *dir, struct err **err);

/* Under the lock: replay a committed journal, remove temp files of our
 * naming (and "NAME.tmp.PID" ones of earlier versions for the names in
 * managed, NULL-terminated), and keep the last `keep` backups of each. The
 * number of files it changed (0: the dir was clean), or -1 with *err set. */
int deploy_recover(const char *dir, const char *const *managed, int keep, struct err **err);

/* A file of dir as it is once any pending journal is replayed; NULL when
 * absent (and *err left NULL) or on error (*err set). Writes nothing. *len
 * (when len is non-NULL) gets the byte count. */
char *deploy_read(const char *dir, const char *name, size_t *len, struct err **err);

/* "NAME.bak.N" with N one more than the highest present; caller frees. */
char *deploy_backup_name(const char *dir, const char *name);

/* Remove NAME.bak.N files of dir beyond the `keep` highest N; the count
 * removed. */
int deploy_prune_backups(const char *dir, const char *name, int keep);

struct deploy_txn_op {
	char *tmp, *name;
};
struct deploy_txn {
	char *dir;
	int dfd;
	struct deploy_txn_op *ops;
	size_t n;
};

int deploy_txn_begin(struct deploy_txn *t, const char *dir, struct err **err);
/* Stage name's new content (written as a temp now; visible at commit). */
int deploy_txn_add(struct deploy_txn *t, const char *name, const void *data, size_t len,
		   mode_t mode, struct err **err);
/* Journal, rename everything, remove the journal. On an error before the
 * journal is in place nothing changed; after, the next deploy_recover()
 * finishes the commit. */
int deploy_txn_commit(struct deploy_txn *t, struct err **err);
/* Remove staged temps not committed; free t. */
void deploy_txn_end(struct deploy_txn *t);

/* The state file (state.c). Parse its text (NULL: there is none, *state
 * NULL); an error names DIR/.lobes-state.json with the position. */
int deploy_state_parse(const char *dir, const char *text, json_t **state, struct err **err);
/* The state file's text for what lobes alone writes to .env (env: {key:
 * value}); caller frees. */
char *deploy_state_text(const char *profile, json_t *env);

/* .env (env_merge.c): the rendered .env text with the edited keys' lines
 * replaced by the operator's lines from old, byte for byte, the edited keys
 * the render does not have appended, and the operator's own comment lines
 * of old_text (the text old was parsed from; NULL: none) kept before the key
 * they stood before; caller frees. */
char *env_merge(const char *rendered, const char *old_text, const struct env_file *old,
		char *const *edited,
		const struct env_file *renv);

/* Read the vLLM flags of a role's argv ("vllm" "serve" MODEL --flag...)
 * back into dr's knob values (deployed.c; deployed_k8s.c reads a rendered
 * Kubernetes overlay with it too). */
void deployed_knobs_from_args(struct deployed_role *dr, char **args);

#endif
