/*
 * doctor_int.h — what the check families of `lobes doctor` share.
 *
 * doctor is a table of check families (table.c), one file per family in
 * this directory, the way a linter registers its rules: each entry names
 * the family, says what it needs (a deploy dir, parsed compose files, a
 * resolved plan) and points at one function that appends findings to the
 * report. doctor_run (run.c) gathers the inputs once into a struct
 * doctor_ctx and runs the table in order; a family whose needs are not met
 * is skipped. Adding a family is a new file here plus one table line.
 *
 * The deployed fleet is read by deploy/ (deployed_load) the way the
 * containers get it: compose files interpolated with the .env values, vLLM
 * flags read back into knob values.
 */
#ifndef LOBES_DOCTOR_INT_H
#define LOBES_DOCTOR_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "../knowledge/knowledge.h"
#include "../deploy/deploy.h"
#include "doctor.h"

#define FP8_TRAIT "fp8-kv-needs-scales-on-triton"
#define DOCKER_TIMEOUT_MS 10000
#define PROBE_TIMEOUT_MS 120000

/* --- the deployed fleet (deploy.h reads it; deployed.c here) ----------- */

/* Read .env and the compose files of dir into d (deployed_load); its read
 * problems become deploy-dir findings in r. */
void deployed_read(struct deployed *d, const char *dir, struct doctor_report *r);
/* Read the checkpoint and derive the attention path of every deployed role. */
void deployed_facts(struct deployed *d, const struct card *card);
/* The predicate inputs of the deployed values (dr NULL: fleet level). */
void deployed_view(const struct card *card, const struct host_facts *f, int role,
		   const struct deployed_role *dr, struct fact_view *v);

/* --- the context every family gets (run.c) ------------------------------- */

struct doctor_ctx {
	struct doctor_report *r;
	const struct doctor_opts *o;
	const char *docker;            /* docker CLI */
	bool exists;                   /* the deploy dir exists */
	struct deployed *d;            /* what is deployed (empty when !exists) */
	const struct init_result *ir;  /* what init would write now */
	bool ir_ok;                    /* ... and whether it could be prepared */
	const struct host_facts *f;    /* facts of this box */
	const struct knowledge *k;     /* shipped + operator knowledge */
	const struct card *card;       /* detected card, NULL: unknown */
	const char *card_why;
};

enum doctor_needs {
	DOC_NEEDS_DIR = 1u << 0,     /* the deploy dir exists */
	DOC_NEEDS_COMPOSE = 1u << 1, /* every compose file parsed */
	DOC_NEEDS_ENV = 1u << 2,     /* .env parsed */
	DOC_NEEDS_PLAN = 1u << 3,    /* init could resolve and render */
};

struct doctor_family {
	const char *name;   /* the family, for the reader; findings carry their own ids */
	unsigned needs;     /* enum doctor_needs bits */
	void (*run)(struct doctor_ctx *x);
};

/* The table, in the order the families run (table.c). */
extern const struct doctor_family doctor_families[];
extern const size_t doctor_families_count;

/* --- the families (one file each) ---------------------------------------- */

void check_profile_family(struct doctor_ctx *x); /* profile.c */
void check_drift(struct doctor_ctx *x);          /* drift.c */
void check_files(struct doctor_ctx *x);          /* files.c */
void check_journal(struct doctor_ctx *x);        /* files.c */
void check_env(struct doctor_ctx *x);            /* env_registry.c */
void check_fp8(struct doctor_ctx *x);            /* fp8.c */
void check_traits(struct doctor_ctx *x);         /* traits.c */
void check_family(struct doctor_ctx *x);         /* family.c */
void check_memory(struct doctor_ctx *x);         /* memory.c */
void check_runtime(struct doctor_ctx *x);        /* runtime.c */
void check_image(struct doctor_ctx *x);          /* image.c */
void check_vllm_args(struct doctor_ctx *x);      /* vllm_args.c */
void check_placeholder(struct doctor_ctx *x);    /* placeholder.c */
void check_gateway(struct doctor_ctx *x);        /* gateway.c */
void check_peers(struct doctor_ctx *x);          /* peers.c */

/* --- shared helpers (findings.c) ----------------------------------------- */

/* Append a finding; the returned pointer is valid until the next add. */
__attribute__((format(printf, 4, 5))) struct check *doc_add(struct doctor_report *r, const char *id,
							     enum check_sev sev, const char *fmt, ...);
/* The evidence list of a trait as lines, NULL when it has none. */
char *trait_evidence_text(const struct trait *t);
/* A data file embedded in the binary, by its path under the source tree. */
const struct embedded_file *doc_embedded(const char *path);
/* "sha256:" followed by 64 hex digits. */
bool digest_complete(const char *d);

struct run_out {
	int rc; /* -1: could not start, -2: timed out */
	char *out, *errl, *why;
};
/* Run argv bounded by timeout_ms; o is filled whatever happens. */
void run_cmd(char *const argv[], int timeout_ms, struct run_out *o);
void run_out_free(struct run_out *o);
char *first_line(const char *s);

/* The image's own env registry, from the cache or by running the image
 * (image_probe.c). NULL with a warning finding when it cannot be had;
 * *source names where it came from. */
char **image_registry(struct doctor_report *r, const struct doctor_opts *o, const char *docker,
		      const char *image, char **source);

#endif
