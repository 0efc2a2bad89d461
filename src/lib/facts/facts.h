/*
 * facts.h — what is true of this box, gathered read-only.
 *
 * Every fact carries its source and a validity bit: an unknown fact is
 * `valid == false` with value NULL, never a zero. Host facts come from, in
 * order, NVML (dlopen of libnvidia-ml.so.1, no build-time dependency), then
 * `nvidia-smi --query-gpu=name,compute_cap` (never a memory field: they read
 * [N/A] on Thor), then Tegra files; total memory on unified boards comes
 * from /proc/meminfo MemTotal. Every path is read under LOBES_SYSROOT.
 *
 * Checkpoint facts are read offline from the local Hugging Face cache.
 */
#ifndef LOBES_FACTS_H
#define LOBES_FACTS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "../util/err.h"

/* Three-valued truth for predicates over facts. */
enum tri { TRI_UNKNOWN = 0, TRI_FALSE = 1, TRI_TRUE = 2 };
const char *tri_name(enum tri t); /* "unknown" | "false" | "true" */

struct fact {
	bool valid;
	char *value;  /* owned; NULL when !valid */
	char *source; /* owned; where it came from ("nvml", "nvidia-smi",
		       * "/proc/meminfo", ...); NULL when nothing answered */
};

struct host_facts {
	struct fact gpu_name;     /* "NVIDIA GB10" */
	struct fact compute_cap;  /* "12.1" */
	struct fact mem_total;    /* bytes, decimal string */
	struct fact memory_model; /* "unified" | "discrete" */
	struct fact dt_model;     /* /proc/device-tree/model, NUL stripped */
	struct fact l4t_release;  /* "R38.2.0" from /etc/nv_tegra_release */
	struct fact driver;       /* driver version from NVML or /proc/driver/nvidia/version */
	struct fact hostname;
	char **notes;             /* strv (may be NULL): what was tried and why it failed */
};

struct facts_opts {
	const char *nvml_lib;   /* dlopen name; default "libnvidia-ml.so.1"; env LOBES_NVML_LIB */
	const char *smi_path;   /* default "nvidia-smi" (PATH); env LOBES_NVIDIA_SMI */
	int smi_timeout_ms;     /* default 5000; env LOBES_SMI_TIMEOUT_MS */
	bool no_nvml;           /* skip NVML (env LOBES_NO_NVML=1) */
};

/* Fill opts from the environment (the documented LOBES_* variables). */
void facts_opts_from_env(struct facts_opts *o);

/* Gather host facts. Never fails for a missing source: absent sources leave
 * facts invalid and add a note. Returns -1 only for internal errors. */
int host_facts_gather(struct host_facts *f, const struct facts_opts *o, struct err **err);
void host_facts_free(struct host_facts *f);
json_t *host_facts_json(const struct host_facts *f);

/* Numeric accessors; return false when the fact is unknown. */
bool host_facts_mem_gib(const struct host_facts *f, double *gib);
bool host_facts_cc(const struct host_facts *f, int *major, int *minor);

void fact_set(struct fact *f, const char *value, const char *source);
void fact_free(struct fact *f);
json_t *fact_json(const struct fact *f);

/* Checkpoint facts for one model id ("org/name"), read from the HF cache
 * ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub). */
struct checkpoint_facts {
	bool found;            /* the model is in the cache */
	char *snapshot;        /* snapshot directory used, when found */
	char *quant_method;    /* quantization_config.quant_method or "modelopt"; NULL if none */
	enum tri kv_scales;    /* TRUE ships KV scales, FALSE ships none, UNKNOWN not readable */
	char *kv_scales_why;   /* the file and key that decided kv_scales */
	enum tri hetero_head_dim; /* head_dim != global_head_dim (Gemma 4) */
	bool has_config;       /* config.json was read: the family is matched by it */
	char **architectures;  /* strv: config.json architectures (NULL: none stated) */
	char *model_type;      /* config.json model_type; NULL when not stated */
	long long native_context; /* the context the checkpoint was built for; 0 = unknown */
	char *native_context_why; /* the key(s) that gave it */
};
int checkpoint_facts_read(const char *model_id, struct checkpoint_facts *c, struct err **err);
/* The same under an explicit hub directory (hub NULL: the default above). */
int checkpoint_facts_read_in(const char *hub, const char *model_id, struct checkpoint_facts *c,
			     struct err **err);
void checkpoint_facts_free(struct checkpoint_facts *c);
/* The model ids ("org/name") with a snapshot in the hub (NULL: the default
 * hub), sorted; NULL when there are none. Caller frees with strv_free. */
char **checkpoint_cache_list(const char *hub);
/* The bytes of the *.safetensors files of a snapshot (symlinks into the
 * cache's blobs followed), *files their count; -1 when there are none. */
long long checkpoint_weights_bytes(const char *snapshot, size_t *files);
json_t *checkpoint_facts_json(const struct checkpoint_facts *c);

#endif
