/*
 * knowledge.h — cards, traits, profiles, images, model families and the
 * template defaults: data, not code.
 *
 * Files live in data/ (embedded in the binary at build time) and, for an
 * operator, under <deploy-dir>/profiles/. An operator file whose `name`
 * matches a shipped one replaces it whole (never field-merged); two files of
 * one origin with the same name are an error. Validation is strict: every
 * error names file:line:column and what was expected.
 *
 * File kinds are told apart by a top-level `kind:` key: card, trait, profile,
 * family, image and defaults (the template defaults: one shipped file, which
 * an operator's `kind: defaults` file replaces whole).
 */
#ifndef LOBES_KNOWLEDGE_H
#define LOBES_KNOWLEDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "../util/err.h"

enum role_id { ROLE_CORTEX, ROLE_SENSES, ROLE_HAND, ROLE_EMBEDDER, ROLE_RERANKER, ROLE__COUNT };
enum lane { LANE_GENERATE, LANE_POOLING, LANE__COUNT };

enum knob_id {
	KNOB_MODEL,
	KNOB_FEASIBLE,          /* "true" | "false" */
	KNOB_GPU_MEM_UTIL,      /* (0,1], canonical "%.2f" */
	KNOB_MAX_MODEL_LEN,     /* positive integer */
	KNOB_QUANTIZATION,      /* method name, or "none" (no flag at all) */
	KNOB_KV_CACHE_DTYPE,    /* "auto" | "fp8" | "fp8_e4m3" | "fp8_e5m2" | "bfloat16" */
	KNOB_ATTENTION_BACKEND, /* "auto" (no flag) or a backend name, e.g. TRITON_ATTN */
	KNOB_ENFORCE_EAGER,     /* "true" | "false" */
	KNOB_MAX_NUM_SEQS,      /* positive integer or "auto" (no flag) */
	KNOB_IMAGE,             /* container image; profiles pin name@sha256:<64 hex> */
	KNOB_SERVED_NAMES,      /* comma list of "role", "model" or literal names */
	KNOB_RUNNER,            /* "auto" (no flag) or a runner: pooling, generate */
	KNOB_CONVERT,           /* "auto" (no flag) or a conversion: embed, classify */
	KNOB_REASONING_PARSER,  /* "none" (no flag) or a registered reasoning parser */
	KNOB_TOOL_CALL_PARSER,  /* "none" (no flag) or a registered tool parser (+ auto tool choice) */
	KNOB_ENABLE_PREFIX_CACHING, /* "auto" (no flag) | "true" | "false" */
	KNOB_SPECULATIVE_CONFIG, /* "none" (no flag) or a JSON object */
	KNOB_HF_OVERRIDES,      /* "none" (no flag) or a JSON object */
	KNOB_TRUST_REMOTE_CODE, /* "true" | "false" (no flag) */
	KNOB_ENABLE_LORA,       /* "true" | "false" (no flag) */
	KNOB_MAX_LORAS,         /* positive integer or "auto" (no flag) */
	KNOB_MAX_LORA_RANK,     /* positive integer or "auto" (no flag) */
	KNOB_LORA_DIR,          /* host dir of LoRA adapters, mounted read-only when LoRA is on */
	KNOB__COUNT
};

const char *role_name(enum role_id r);
int role_from_name(const char *s); /* -1 when unknown */
enum lane role_lane(enum role_id r);
const char *lane_name(enum lane l); /* "generate" | "pooling" */
const char *knob_name(enum knob_id k);
int knob_from_name(const char *s); /* -1 when unknown */
/* Validate and canonicalise a knob value (gpu_mem_util "0.3" → "0.30").
 * Returns 0 with *out (caller frees), or -1 with *expect naming what a valid
 * value is ("a number in (0,1]"). */
int knob_canon(enum knob_id k, const char *in, char **out, const char **expect);

/* The flag a knob renders as, for a check against a vLLM's lists (NULL:
 * no value check): "--tool-call-parser" for tool_call_parser (images.c). */
const char *knob_vllm_flag(enum knob_id kn);

struct src_pos {
	char *file; /* "data/traits/x.yaml" or the operator path */
	int line, col;
};

struct evidence {
	char *kind; /* "measured" | "declared" */
	char *date, *box, *image, *observation, *ref;
};

struct card {
	char *name;
	struct src_pos pos;
	bool from_operator;
	char *description;
	char **name_markers;  /* strv: case-insensitive substrings of the device name */
	char **dt_markers;    /* strv: substrings of /proc/device-tree/model */
	char **dt_exclude;    /* strv: a dt model containing one of these is not this card */
	char *compute_cap;    /* "12.1"; NULL = any */
	bool has_mem_band;
	double mem_min_gib, mem_max_gib;
	char *memory_model;   /* "unified" | "discrete" */
	char *gpu_attach;     /* "reservation" | "runtime" */
	char *status;         /* "validated" | "partial" | "unvalidated" */
	char *profile;        /* default profile name */
	char *attention_path[LANE__COUNT]; /* auto-selected backend per lane; NULL = unknown */
	struct evidence *evidence;
	size_t n_evidence;
	struct src_pos profile_pos; /* of the `profile:` value (cross-checks) */
	/* GPU Feature Discovery labels a Kubernetes node with this card carries
	 * (kubernetes: in the card file); NULL = not known */
	char *gfd_product;          /* nvidia.com/gpu.product */
	char *gfd_compute_major;    /* nvidia.com/gpu.compute.major */
	char *gfd_compute_minor;    /* nvidia.com/gpu.compute.minor */
	char *gfd_note;             /* how sure the values are, said in the render */
};

/* One conjunct of a trait predicate: fact `op` values.
 * Facts: card.id card.compute_cap card.memory_model card.mem_gib
 * role.name role.lane role.model role.attention_path role.<knob>
 * checkpoint.kv_scales (present|absent) checkpoint.quant_method
 * checkpoint.hetero_head_dim (true|false).
 * Ops: eq, ne, in (values list), lt, ge (numeric). */
struct condition {
	char *fact;
	char *op;
	char **values; /* strv, at least one */
	struct src_pos pos;
};

struct knob_set {
	enum knob_id knob;
	char *value;
};

struct trait {
	char *name;
	struct src_pos pos;
	bool from_operator;
	char *cause;
	unsigned roles_mask;  /* bit per role_id it may apply to; all roles when 0 */
	struct condition *when;
	size_t n_when;
	char *on_unknown;     /* "apply" | "skip": what to do when the predicate is unknown */
	char *assume;         /* sentence the plan prints when it applied on unknown */
	struct knob_set *set; /* per-role knobs */
	size_t n_set;
	char *bringup;        /* fleet knob: "one-at-a-time" | "together"; NULL = not set */
	char **dead_env;      /* strv: env names this trait declares dead */
	char *dead_env_replacement;
	char **overrides;     /* strv: trait names this one takes precedence over */
	struct evidence *evidence;
	size_t n_evidence;
	struct src_pos *overrides_pos; /* one per overrides entry (cross-checks) */
};

/* A container image lobes knows: the vLLM it carries selects the flag
 * list, env registry and parsers it is checked against (data/images/,
 * data/vllm/<registry>/). */
struct vimage {
	char *name;          /* short name: "vllm-0.26.1rc1.dev942" */
	struct src_pos pos;
	bool from_operator;
	char *ref;           /* "vllm/vllm-openai@sha256:<64 hex>" */
	char *vllm_version;  /* "0.26.1rc1.dev942+g5a4c8d992" */
	char *registry;      /* folder under data/vllm/: "5a4c8d992" */
	char *description;
	struct evidence *evidence;
	size_t n_evidence;
};

/* A model family: the knobs that follow from the checkpoint, not the card
 * (parsers, runner/convert, overrides), matched by the checkpoint's
 * config.json and, only without one, by its model id (data/families/). */
struct family {
	char *name;
	struct src_pos pos;
	bool from_operator;
	char *description;
	char **architectures;  /* strv: config.json architectures, any of */
	char **model_types;    /* strv: config.json model_type, any of */
	char **model_ids;      /* strv: case-insensitive fnmatch patterns of the model id */
	bool id_always;        /* model_id_when: always — the id must match with a config too */
	int lane;              /* -1: any lane, else enum lane */
	struct knob_set *set;  /* the knobs it sets */
	size_t n_set;
	struct src_pos set_pos[KNOB__COUNT]; /* of each set value */
	struct evidence *evidence;
	size_t n_evidence;
};

/* The knobs a family may set. */
bool family_knob(enum knob_id k);
struct knowledge;

/* Which family a checkpoint belongs to. With config (have_config), a
 * family matches when one of its architectures is among archs or its
 * model_type equals model_type (and, for id_always, its model id pattern
 * holds too); without a config only the model id patterns decide. A
 * family restricted to a lane matches only that lane. The most specific
 * match wins (a config hit, plus one for an id that must also hold, plus
 * one for a lane); two at the same level is an EXIT_CONFIG error naming
 * both. *out NULL = unknown family; *why (caller frees) says what decided
 * ("config.json architectures X"), or what matched nothing. */
int family_match(const struct knowledge *k, const char *model, bool have_config,
		 char *const *archs, const char *model_type, enum lane lane,
		 const struct family **out, char **why, struct err **err);

struct known_failure {
	char *role, *probe, *reason, *ref;
};

struct role_spec {
	bool present;                 /* the profile names this role */
	char *knobs[KNOB__COUNT];     /* NULL = not set here */
	struct src_pos knob_pos[KNOB__COUNT];
};

struct profile {
	char *name;
	struct src_pos pos;
	bool from_operator;
	char *card;        /* card name it is validated for; "any" for base */
	char *status;      /* "validated" | "partial" | "unvalidated" */
	char *description;
	struct role_spec roles[ROLE__COUNT];
	char **traits;     /* strv: trait names considered */
	char **order;      /* strv: bring-up order (role names); NULL = role order */
	struct known_failure *known_failures;
	size_t n_known_failures;
	struct src_pos card_pos;    /* of the `card:` value (cross-checks) */
	struct src_pos *traits_pos; /* one per traits entry */
	struct src_pos *order_pos;  /* one per order entry */
};

struct knowledge {
	struct card *cards;
	size_t n_cards;
	struct trait *traits;
	size_t n_traits;
	struct profile *profiles;
	size_t n_profiles;
	struct vimage *images;
	size_t n_images;
	struct family *families;
	size_t n_families;
	struct role_spec defaults[ROLE__COUNT]; /* template defaults */
	struct src_pos defaults_pos;            /* file NULL = no defaults loaded */
	bool defaults_from_operator;
};

/* Load the embedded data, then operator files from operator_dir (may be
 * NULL or a missing directory; YAML files directly in it and in its
 * cards/, traits/, profiles/ subdirectories, plus template/defaults.yaml),
 * then run knowledge_check. Errors are EXIT_CONFIG with
 * "file:line:col: message"; on failure k is freed (left zeroed). */
int knowledge_load(struct knowledge *k, const char *operator_dir, struct err **err);
/* Load only from a directory tree laid out like data/ (tests). */
int knowledge_load_dir(struct knowledge *k, const char *dir, bool operator, struct err **err);
/* Parse one YAML document into k (for tests and for the loaders). `name` is
 * the file name used in messages. */
int knowledge_add_yaml(struct knowledge *k, const char *name, const char *text, size_t len,
		       bool operator, struct err **err);
/* Cross-checks after everything is loaded: profile→card, profile→traits,
 * trait overrides exist. */
int knowledge_check(const struct knowledge *k, struct err **err);
void knowledge_free(struct knowledge *k);

const struct card *knowledge_card(const struct knowledge *k, const char *name);
const struct trait *knowledge_trait(const struct knowledge *k, const char *name);
const struct profile *knowledge_profile(const struct knowledge *k, const char *name);
/* The image whose ref equals ref, or NULL (an unrecorded image). */
const struct vimage *knowledge_image(const struct knowledge *k, const char *ref);

/* True for "name@sha256:<64 hex>" (name non-empty, no blanks). */
bool image_ref_pinned(const char *ref);
/* Why ref is not a pinned digest ("a digest prefix: 8 of the 64 hex
 * digits", "no digest: a tag can move", "empty"), or NULL when it is.
 * Caller frees. */
char *image_ref_problem(const char *ref);

json_t *evidence_json(const struct evidence *e);
char *src_pos_str(const struct src_pos *p); /* "file:line:col" */

/* Card detection: match facts against every card. Returns the card or NULL
 * (unknown) and sets *why to a sentence naming the facts that decided
 * (caller frees). Never guesses: a card matches only when every signal it
 * declares that is known agrees and at least its name or dt marker hit. */
struct host_facts;
const struct card *card_match(const struct knowledge *k, const struct host_facts *f, char **why);


/* The room's other public pieces: include this header, not them. */
#include "embedded.h"
#include "vllm.h"
#endif
