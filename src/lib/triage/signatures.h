/*
 * signatures.h — boot-log signatures: data files mapping a log line to a
 * cause, a remedy and the traits it implicates.
 *
 * The shipped set is data/signatures/NAME.yaml (embedded in the binary; the
 * schema is documented in data/signatures/README). An operator adds or
 * replaces signatures with <deploy-dir>/signatures/NAME.yaml: an operator
 * signature whose id is a shipped one replaces it whole. Validation is
 * strict and every error is EXIT_CONFIG with "file:line:col: ...; expected
 * ...". Regexes are compiled (and JIT-compiled where the platform allows)
 * once, at load; the matcher (triage.h) borrows the compiled code.
 */
#ifndef LOBES_SIGNATURES_H
#define LOBES_SIGNATURES_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/err.h"

enum sig_severity { SEV_INFO, SEV_WARNING, SEV_FATAL };

struct signature {
	char *id;
	char *literal;       /* exactly one of literal / regex is non-NULL */
	size_t literal_len;
	char *regex;
	void *code;          /* pcre2_code_8 * for regex signatures, owned */
	enum sig_severity severity;
	char *cause;
	char *remedy;
	char **traits;       /* strv (may be NULL): trait names it implicates */
	char **captures;     /* strv (may be NULL): named groups shown */
	int *capture_groups; /* group number of each name in captures */
	size_t n_captures;
	bool generic;        /* a fatal line that does not say why */
	char *parent;        /* id of the more general signature (may be NULL) */
	char *family;        /* the cause id it reports (its own id when NULL) */
	char **versions;     /* strv (may be NULL): vLLM version ranges printing it */
	char **excerpts;     /* strv (may be NULL): real excerpts of the corpus showing it
			      * (paths under tests/fixtures/logs/) */
	int parent_line, parent_col;
	bool from_operator;
	char *file;          /* where it was defined, for messages */
	int line, col;
};

struct sigset {
	struct signature *sigs;
	size_t n;
	/* what triage derives from the signatures (its prefilter), built on
	 * first use; dropped when a signature is added, freed with the set */
	void *cache;
	void (*cache_free)(void *);
};

/* Load the shipped signatures, then <operator_dir>/signatures/NAME.yaml in name
 * order (operator_dir may be NULL; a missing directory is not an error).
 * set is initialised here (what it held before is not freed).
 * On failure set is left empty-or-partial and must still be freed. */
int sigset_load(struct sigset *set, const char *operator_dir, struct err **err);

/* Parse one signatures file (text of len bytes; `file` names it in
 * messages) into set. Shipped trait names must be files in data/traits/;
 * an operator file may also name traits the shipped data does not have. */
int sigset_add_yaml(struct sigset *set, const char *file, const char *text, size_t len,
		    bool from_operator, struct err **err);

void sigset_free(struct sigset *set);

/* Check what needs every file loaded: each parent names a signature and
 * the parents form no cycle. sigset_load calls it; after sigset_add_yaml
 * call it yourself. */
int sigset_link(const struct sigset *set, struct err **err);

/* The cause id a signature reports: its family, else its id. */
static inline const char *sig_cause_id(const struct signature *s)
{
	return s->family ? s->family : s->id;
}

/* The signature with this id, or NULL. */
const struct signature *sigset_find(const struct sigset *set, const char *id);
/* "fatal" | "warning" | "info" */
const char *sig_severity_name(enum sig_severity s);

#endif
