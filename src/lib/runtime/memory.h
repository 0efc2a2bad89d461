/*
 * memory.h — free memory the way vLLM reads it on a unified-memory box:
 * /proc/meminfo MemFree (page cache counts as used, which is exactly why
 * engines starting together starve each other), and the page-cache drop
 * that gives it back (FACTS.md trait 5).
 */
#ifndef LOBES_MEMORY_H
#define LOBES_MEMORY_H

#include <stdint.h>

#include "../util/err.h"

/* A field of /proc/meminfo (under LOBES_SYSROOT), in bytes. */
int meminfo_field(const char *field, uint64_t *bytes, struct err **err);
/* The device memory budgets are fractions of: the detected total (NVML on
 * a discrete card, MemTotal on a unified one), else the host's MemTotal.
 * *source (caller frees) says which. */
int device_memory(uint64_t *bytes, char **source, struct err **err);
/* sync, then write 3 to /proc/sys/vm/drop_caches (root only). */
int drop_caches(struct err **err);

#endif
