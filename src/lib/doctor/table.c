/*
 * table.c — the check families of `lobes doctor`, in the order they run.
 *
 * One line per family; the family lives in its own file in this directory
 * (see doctor_int.h). Findings of a family keep their own ids (the runtime
 * family reports "docker", "compose" and "gpu-runtime").
 */
#include "doctor_int.h"

const struct doctor_family doctor_families[] = {
	{ "profile", 0, check_profile_family },
	{ "journal", DOC_NEEDS_DIR, check_journal },
	{ "files", DOC_NEEDS_PLAN | DOC_NEEDS_DIR | DOC_NEEDS_ENV, check_files },
	{ "drift", DOC_NEEDS_PLAN | DOC_NEEDS_DIR | DOC_NEEDS_ENV | DOC_NEEDS_COMPOSE, check_drift },
	{ "image", DOC_NEEDS_DIR | DOC_NEEDS_COMPOSE, check_image },
	{ "env-registry", DOC_NEEDS_DIR, check_env },
	{ "vllm-args", DOC_NEEDS_DIR | DOC_NEEDS_COMPOSE, check_vllm_args },
	{ "placeholder", DOC_NEEDS_DIR | DOC_NEEDS_ENV | DOC_NEEDS_COMPOSE, check_placeholder },
	{ "fp8-kv", DOC_NEEDS_DIR | DOC_NEEDS_COMPOSE, check_fp8 },
	{ "traits", DOC_NEEDS_DIR | DOC_NEEDS_COMPOSE, check_traits },
	{ "family", DOC_NEEDS_DIR | DOC_NEEDS_COMPOSE, check_family },
	{ "memory", DOC_NEEDS_DIR | DOC_NEEDS_COMPOSE, check_memory },
	{ "gateway", DOC_NEEDS_DIR | DOC_NEEDS_ENV, check_gateway },
	{ "runtime", 0, check_runtime },
	{ "peers", DOC_NEEDS_DIR, check_peers },
};

const size_t doctor_families_count = sizeof(doctor_families) / sizeof(doctor_families[0]);
