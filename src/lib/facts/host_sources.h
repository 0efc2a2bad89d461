/*
 * host_sources.h — private to the host-fact sources (host.c, nvml.c, smi.c,
 * tegra.c). host.c orders the sources and decides the derived facts (memory
 * model, total memory); each source only reports what it read and appends a
 * note for what it tried and could not get. Nothing here prints or exits.
 */
#ifndef LOBES_HOST_SOURCES_H
#define LOBES_HOST_SOURCES_H

#include <stdbool.h>
#include <stdint.h>

#include "facts.h"

/* Append a formatted note to the NULL-terminated strv *notes. */
void facts_note(char ***notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum nvml_mem {
	NVML_MEM_UNKNOWN,       /* not asked, or the query failed for another reason */
	NVML_MEM_UNSUPPORTED,   /* NVML_ERROR_NOT_SUPPORTED: integrated GPU */
	NVML_MEM_ZERO,          /* success with total 0: integrated GPU */
	NVML_MEM_OK,            /* success with a nonzero total */
};

/* What NVML said about device 0. Strings are owned; NULL when not read. */
struct nvml_info {
	bool answered;          /* the library loaded, initialised and gave device 0 */
	char *name;
	char *cc;               /* "major.minor" */
	char *driver;
	enum nvml_mem mem;
	uint64_t mem_total;     /* bytes; meaningful only with NVML_MEM_OK */
};

/* dlopen lib (a soname or a path), query device 0, shut NVML down and close
 * the library. Never fails: whatever could not be read is left unset and a
 * note says why ("nvml: libnvidia-ml.so.1 not found"). */
void nvml_query(const char *lib, struct nvml_info *out, char ***notes);
void nvml_info_free(struct nvml_info *n);

/* Run `<smi> --query-gpu=name,compute_cap --format=csv,noheader` bounded by
 * timeout_ms and fill whichever of name/cc is still invalid. Never asks for
 * a memory field. Never fails: a missing program, a hang, a failure exit or
 * [N/A] leaves the fact unknown with a note. */
void smi_query(const char *smi, int timeout_ms, struct fact *name, struct fact *cc, char ***notes);

/* Read the Tegra/Linux files under the sysroot: device-tree model, L4T
 * release, the kernel driver version (only when driver is still unknown),
 * hostname. MemTotal (bytes) goes to *memtotal, *has_memtotal says whether it
 * was read; it becomes a fact only once host.c knows the memory model. */
void tegra_read(struct host_facts *f, uint64_t *memtotal, bool *has_memtotal, char ***notes);

#endif
