/*
 * question.h — recorded questions (data/questions/ (YAML)) and their routing.
 *
 * A question names the role to look at and a list of routes; each route is
 * a conjunction of conditions over observations (strings collected from the
 * live fleet: `args.kv_cache_dtype`, `env.NAME`, `log.<signature id>` =
 * present|absent, `checkpoint.kv_scales`, `container.restarts`,
 * `container.state`, `probe.status`, `image.vllm_version`,
 * `args.speculative_config`, and for an experiment `eval.kld_mean` and the
 * other figures of eval compare, or `mtp.tpot_speedup`,
 * `mtp.throughput_ratio`, `mtp.acceptance`). An observation
 * that could not be made is unknown, and a condition over it is unknown: a
 * route is taken only when every condition holds. The first route that
 * holds decides; none → undecided, with the question's advice.
 */
#ifndef LOBES_QUESTION_H
#define LOBES_QUESTION_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "../util/err.h"

struct q_cond {
	char *obs;
	char *op;      /* eq | ne | in | lt | le | gt | ge (the last four: numbers) */
	char **values; /* strv */
};

struct q_route {
	char *id, *answer, *action;
	struct q_cond *when;
	size_t n_when;
};

/* Where a question's thresholds come from (`evidence:`, as knowledge's
 * entries): kind "measured" or "declared" (judgement, not measured), what
 * backs them, and an optional date and reference. */
struct q_evidence {
	char *kind, *observation, *date, *ref;
};

struct question {
	char *id, *title, *role, *undecided, *file;
	struct q_evidence *evidence;
	size_t n_evidence;
	char *experiment; /* NULL: read-only; "kv-cache-dtype" or "speculative-config":
			   * boot the role with each setting in turn and compare them
			   * (verify/experiment.c, experiment_spec.c) */
	bool probe;
	struct q_route *routes;
	size_t n_routes;
};

struct question_set {
	struct question *q;
	size_t n;
};

/* The shipped questions plus the YAML files of <operator_dir>/questions/ (same id
 * replaces). Errors "FILE:LINE:COL: ...; expected ..." (EXIT_CONFIG). */
int questions_load(struct question_set *s, const char *operator_dir, struct err **err);
int question_add_yaml(struct question_set *s, const char *file, const char *text, size_t len,
		      struct err **err);
const struct question *question_find(const struct question_set *s, const char *id);
/* What its thresholds are: "declared" when any evidence entry is declared,
 * "measured" when every one is measured, NULL when it has none. */
const char *question_thresholds(const struct question *q);
/* Its evidence entries as JSON ([{kind, observation, date?, ref?}]); new
 * reference. */
json_t *question_evidence_json(const struct question *q);
void questions_free(struct question_set *s);

/* Observations: a small string map. */
struct obs_set {
	char **keys, **values; /* values[i] NULL = could not be observed */
	size_t n;
};
void obs_put(struct obs_set *o, const char *key, const char *value);
const char *obs_get(const struct obs_set *o, const char *key, bool *known);
void obs_free(struct obs_set *o);

/* The route the observations take, or NULL (undecided). For each condition
 * of the chosen route (or, undecided, of every route) the detail lines say
 * how it came out; *detail is owned by the caller. */
const struct q_route *question_route(const struct question *q, const struct obs_set *o,
				     char **detail);

#endif
