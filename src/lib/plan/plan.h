/*
 * plan.h — resolve(facts, profile, traits) → per-role knobs with provenance.
 *
 * Every knob value carries the chain that produced it, oldest first:
 * template default → family → profile → trait(s) → operator override. The
 * family (what follows from the model: parsers, runner/convert, overrides)
 * is matched by the checkpoint's config.json, by the model id only when no
 * config is read; a checkpoint's native context clamps max_model_len (a
 * family step after the traits, before the operator). A trait is
 * applied when its three-valued predicate is true, or unknown and the trait
 * says on_unknown: apply (the plan then records the assumption). Two traits
 * setting one knob of one role to different values is an error naming both,
 * unless one lists the other in `overrides`.
 *
 * The plan is pure data: no I/O happens in plan_resolve except reading
 * checkpoint facts through the supplied callback (so tests can stub it).
 */
#ifndef LOBES_PLAN_H
#define LOBES_PLAN_H

#include <stdbool.h>
#include <jansson.h>

#include "../facts/facts.h"
#include "../knowledge/knowledge.h"

enum prov_kind { PROV_DEFAULT, PROV_FAMILY, PROV_PROFILE, PROV_TRAIT, PROV_OVERRIDE };
/* "default" "family" "profile" "trait" "override" */
const char *prov_kind_name(enum prov_kind k);

struct prov_step {
	enum prov_kind kind;
	char *value;              /* owned */
	char *where;              /* owned: "data/profiles/thor.yaml:12:5" or ".env: CORTEX_KV_CACHE_DTYPE" */
	const struct trait *trait; /* for PROV_TRAIT */
	const struct family *family; /* for PROV_FAMILY (NULL: a native-context clamp of an unknown family) */
	enum tri truth;           /* for PROV_TRAIT: TRUE, or UNKNOWN when applied on assumption */
	char *assumption;         /* owned; set when applied on unknown */
};

struct knob_value {
	char *value;              /* owned; the final value; NULL = unset (no flag) */
	struct prov_step *chain;  /* owned array */
	size_t n_chain;
};

/* Trait decisions for one role, for explain: which traits were considered
 * and how each predicate came out. */
struct trait_eval {
	const struct trait *trait;
	enum tri truth;
	bool applied;
	char *detail; /* owned: "card.compute_cap=11.0 eq 11.0 → true; ..." */
};

struct role_plan {
	enum role_id role;
	bool present;             /* the profile names the role */
	struct knob_value knobs[KNOB__COUNT];
	struct checkpoint_facts ckpt;
	const struct family *family; /* NULL = unknown family (or the role is not feasible) */
	char *family_why;         /* owned: what matched it, or why none did */
	char *attention_path;     /* owned: derived backend this role will take; NULL = unknown */
	char *attention_path_why; /* owned */
	struct trait_eval *evals;
	size_t n_evals;
	const struct vimage *image; /* the recorded image of knob image; NULL = not recorded */
	struct vllm_reg *reg;       /* owned: its vLLM lists; NULL when the image is not recorded */
};

struct override {
	enum role_id role;
	enum knob_id knob;
	const char *value;
	const char *where;
};

struct plan_input {
	const struct knowledge *k;
	const struct host_facts *facts;
	const char *profile;            /* NULL: the detected card's profile, base when unknown */
	const struct override *overrides;
	size_t n_overrides;
	/* Checkpoint reader; NULL = checkpoint_facts_read (the HF cache). */
	int (*read_checkpoint)(const char *model, struct checkpoint_facts *c, struct err **err);
};

struct plan {
	const struct profile *profile;
	const struct card *card;   /* detected card; NULL = unknown */
	char *card_why;            /* owned: why detection chose the card (or not) */
	bool forced;               /* --profile given */
	bool unvalidated;          /* the profile is not validated for the detected card */
	struct role_plan roles[ROLE__COUNT];
	enum role_id order[ROLE__COUNT]; /* bring-up order of feasible roles */
	size_t n_order;
	struct knob_value bringup; /* "one-at-a-time" | "together" */
	char **dead_env;           /* strv: env names declared dead by applied traits */
	const struct trait **dead_env_traits; /* parallel to dead_env */
	char **warnings;           /* strv */
};

/* Resolve a plan. Errors: unknown profile (EXIT_CONFIG), conflicting traits
 * (EXIT_CONFIG, naming both traits and the knob), a feasible role without a
 * model / budget. On failure the caller still calls plan_free(). */
int plan_resolve(struct plan *p, const struct plan_input *in, struct err **err);
void plan_free(struct plan *p);

/* The explain tree: facts that selected the profile, then per role each knob
 * with value and its chain. role < 0 = all roles. */
json_t *plan_json(const struct plan *p, const struct host_facts *f, int role);

/* Facts a card declares, sources marked "nominal" (c NULL: all unknown). */
void host_facts_nominal(struct host_facts *f, const struct card *c);
/* A checkpoint reader that reads nothing: every checkpoint fact unknown. */
int checkpoint_nominal(const char *model, struct checkpoint_facts *c, struct err **err);

/* What a trait predicate reads: the box, the card, and for one role its
 * knob values, attention path and checkpoint (role -1: fleet level, every
 * role fact unknown). Borrowed pointers. */
struct fact_view {
	const struct host_facts *facts;
	const struct card *card;
	int role;
	const char *knobs[KNOB__COUNT];
	const char *attention_path;
	const struct checkpoint_facts *ckpt;
};
/* Three-valued truth of t's predicate; *detail (caller frees) names each
 * fact, its value and how its condition came out. */
enum tri trait_predicate(const struct trait *t, const struct fact_view *v, char **detail);
/* Applied: the predicate holds, or is unknown and the trait says apply. */
bool trait_applies(const struct trait *t, enum tri truth);
/* The attention backend role r will take: an explicit backend, else forced
 * TRITON_ATTN by heterogeneous head dims, else the card's auto-selection for
 * the lane; NULL when unknown. *why (caller frees) says which. */
char *attention_path_derive(const struct card *card, enum role_id r, const char *backend,
			    enum tri hetero, char **why);

bool knob_is_true(const struct knob_value *v);
bool role_feasible(const struct plan *p, enum role_id r);


/* The room's other public pieces: include this header, not them. */
#include "session.h"
#endif
