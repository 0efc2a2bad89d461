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

/* The box as an operator watches it (box.c): memory as the bring-up gate
 * reads it (MemFree) beside what the kernel could give (MemAvailable),
 * swap, and I/O pressure: the iowait share of CPU time (/proc/stat, as the
 * gateway's shedding reads it) and, where the kernel has PSI,
 * /proc/pressure/io's "some avg10". Everything under LOBES_SYSROOT. */
struct box_sample {
	uint64_t mem_total, mem_available, mem_free, swap_total, swap_free; /* bytes */
	unsigned long long cpu_total, cpu_iowait; /* /proc/stat jiffies; 0: unreadable */
	double io_some_avg10;                     /* percent; -1 when there is no PSI */
};
/* EXIT_RUNTIME when /proc/meminfo cannot be read or lacks MemTotal,
 * MemFree or MemAvailable; swap fields absent read as 0. */
int box_sample(struct box_sample *b, struct err **err);
/* The iowait share (percent) between two samples; since boot when prev is
 * NULL; -1 when /proc/stat was unreadable or no time passed. */
double box_iowait_pct(const struct box_sample *prev, const struct box_sample *cur);

#endif
