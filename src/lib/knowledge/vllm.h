/*
 * vllm.h — what one recorded vLLM version accepts: its `vllm serve` flags
 * (with their kinds), the accepted values of the flags lobes renders, its
 * tool and reasoning parsers, its env registry and the Prometheus metric
 * families its engine registers. The lists are data read
 * from vLLM's source at a pinned commit (data/vllm/<folder>/, the first line
 * of each file names the commit), embedded in the binary; an image maps to
 * a folder through data/images/ (struct vimage).
 */
#ifndef LOBES_VLLM_H
#define LOBES_VLLM_H

#include <stdbool.h>

#include "../util/err.h"

struct vllm_reg {
	char *folder;       /* "5a4c8d992" */
	char *provenance;   /* first line of flags.txt: "# vLLM 0.26.1rc1... commit ..." */
	char **flags;       /* strv: "--port", "--no-enforce-eager", "-q" ... */
	char **kinds;       /* strv parallel to flags: "int", "bool", "json:SpeculativeConfig" ... */
	char **envs, **tool_parsers, **reasoning_parsers;
	char **choice_flags; /* strv: flags with argparse choices */
	char ***choices;     /* parallel: strv of accepted values */
	char **attention_backends, **attention_config_keys, **quantizations;
	char **metrics;      /* strv: Prometheus families from metrics.txt ("vllm:prompt_tokens") */
	char **metric_kinds; /* strv parallel to metrics: "gauge", "counter", "histogram" */
};

/* Load the recorded lists of folder (data/vllm/<folder>/). EXIT_CONFIG when
 * the folder is not shipped. Free with vllm_reg_free (also on failure). */
int vllm_reg_load(struct vllm_reg *r, const char *folder, struct err **err);
void vllm_reg_free(struct vllm_reg *r);

/* The kind of flag ("--port" → "int"), NULL when vLLM has no such flag. */
const char *vllm_reg_flag_kind(const struct vllm_reg *r, const char *flag);
bool vllm_reg_has_env(const struct vllm_reg *r, const char *name);
bool vllm_reg_has_tool_parser(const struct vllm_reg *r, const char *name);
bool vllm_reg_has_reasoning_parser(const struct vllm_reg *r, const char *name);
/* The type of a Prometheus metric family this vLLM registers ("gauge",
 * "counter", "histogram"; metrics.txt), NULL when it registers no such
 * family. A counter family F is exposed as the sample F_total. */
const char *vllm_reg_metric_kind(const struct vllm_reg *r, const char *family);

/* Check one argument: flag (with its "--"), value NULL for a bare flag.
 * Returns 0 when this vLLM accepts it, else -1 with *why (caller frees)
 * saying what is wrong and what was expected. */
int vllm_reg_check_arg(const struct vllm_reg *r, const char *flag, const char *value, char **why);

/* The embedded text of data/vllm/<folder>/<name> (NULL: not shipped). */
const char *vllm_file_text(const char *folder, const char *name);
/* The shipped folders under data/vllm/ (strv; free with strv_free). */
char **vllm_folders(void);

/* Parse a one-name-a-line list ('#' comments and blank lines skipped; the
 * first word of a line is the name). Returns a NULL-terminated strv. */
char **vllm_list_parse(const char *text);

#endif
