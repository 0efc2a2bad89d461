/*
 * host.c — host facts: the order of the sources and the facts derived from
 * them.
 *
 * NVML answers first (name, compute capability, driver, and total memory on
 * a discrete card); nvidia-smi fills the name and compute capability only
 * when NVML could not; the Tegra/Linux files always add the device-tree
 * model, L4T release, MemTotal, driver (when still unknown) and hostname.
 * Then the memory model is decided: unified when a Tegra device-tree model
 * is present, the device name is a known integrated part, or NVML cannot
 * give a memory total; discrete only when NVML gives a nonzero total on a
 * card that is not integrated. Total memory is the NVML total on a discrete
 * card and MemTotal on a unified one, unknown otherwise — never 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "facts.h"
#include "host_sources.h"

/* Device names of GPUs that share the host's memory. A name containing one
 * of these (case-insensitive) is an integrated part. */
static const char *const integrated_parts[] = { "GB10", "Thor", "Orin" };

void facts_opts_from_env(struct facts_opts *o)
{
	memset(o, 0, sizeof(*o));
	const char *v = getenv("LOBES_NVML_LIB");
	o->nvml_lib = v && *v ? v : "libnvidia-ml.so.1";
	v = getenv("LOBES_NVIDIA_SMI");
	o->smi_path = v && *v ? v : "nvidia-smi";
	o->smi_timeout_ms = 5000;
	v = getenv("LOBES_SMI_TIMEOUT_MS");
	if (v && *v) {
		char *end;
		errno = 0;
		long ms = strtol(v, &end, 10);
		if (errno == 0 && *end == '\0' && ms > 0 && ms <= 600000)
			o->smi_timeout_ms = (int)ms;
	}
	v = getenv("LOBES_NO_NVML");
	o->no_nvml = v && strcmp(v, "1") == 0;
}

static const char *integrated_part(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(integrated_parts); i++)
		if (str_icontains(name, integrated_parts[i]))
			return integrated_parts[i];
	return NULL;
}

/* A device-tree model that names an NVIDIA Tegra board (any board has a
 * model; only these say the GPU shares the host's memory). */
static bool tegra_model(const struct host_facts *f)
{
	if (!f->dt_model.valid)
		return false;
	return f->l4t_release.valid || str_icontains(f->dt_model.value, "NVIDIA") ||
	       str_icontains(f->dt_model.value, "Jetson") || str_icontains(f->dt_model.value, "Tegra");
}

/* Decide memory_model and mem_total from what the sources said. */
static void derive_memory(struct host_facts *f, const struct nvml_info *nv, uint64_t memtotal,
			  bool has_memtotal, char ***notes)
{
	const char *part = f->gpu_name.valid ? integrated_part(f->gpu_name.value) : NULL;
	_cleanup_free_ char *why = NULL;
	bool unified = false, discrete = false;
	if (tegra_model(f)) {
		unified = true;
		why = xstrdup("Tegra device-tree model");
	} else if (part) {
		unified = true;
		why = xasprintf("device name (integrated part %s)", part);
	} else if (nv->answered && (nv->mem == NVML_MEM_UNSUPPORTED || nv->mem == NVML_MEM_ZERO)) {
		unified = true;
		why = xstrdup(nv->mem == NVML_MEM_ZERO ? "nvml (memory total 0)"
						       : "nvml (memory query not supported)");
	} else if (nv->answered && nv->mem == NVML_MEM_OK) {
		discrete = true;
		why = xstrdup("nvml (memory total reported)");
	}
	if (unified) {
		fact_set(&f->memory_model, "unified", why);
		if (has_memtotal) {
			_cleanup_free_ char *b = xasprintf("%" PRIu64, memtotal);
			fact_set(&f->mem_total, b, "/proc/meminfo");
		} else {
			facts_note(notes, "mem_total: unified memory but no MemTotal in /proc/meminfo");
		}
	} else if (discrete) {
		fact_set(&f->memory_model, "discrete", why);
		_cleanup_free_ char *b = xasprintf("%" PRIu64, nv->mem_total);
		fact_set(&f->mem_total, b, "nvml");
	} else {
		facts_note(notes, "memory_model: no Tegra device-tree model, no integrated device name, "
				  "no NVML memory answer");
		facts_note(notes, "mem_total: unknown without a memory model (host MemTotal is not "
				  "GPU memory on a discrete card)");
	}
}

int host_facts_gather(struct host_facts *f, const struct facts_opts *o, struct err **err)
{
	(void)err; /* every source failure is a note, not an error */
	memset(f, 0, sizeof(*f));
	struct facts_opts def;
	if (!o) {
		facts_opts_from_env(&def);
		o = &def;
	}
	const char *lib = o->nvml_lib && *o->nvml_lib ? o->nvml_lib : "libnvidia-ml.so.1";
	const char *smi = o->smi_path && *o->smi_path ? o->smi_path : "nvidia-smi";
	int timeout = o->smi_timeout_ms > 0 ? o->smi_timeout_ms : 5000;

	struct nvml_info nv = { 0 };
	if (o->no_nvml)
		facts_note(&f->notes, "nvml: skipped (LOBES_NO_NVML=1)");
	else
		nvml_query(lib, &nv, &f->notes);
	if (nv.name)
		fact_set(&f->gpu_name, nv.name, "nvml");
	if (nv.cc)
		fact_set(&f->compute_cap, nv.cc, "nvml");
	if (nv.driver)
		fact_set(&f->driver, nv.driver, "nvml");

	if (!f->gpu_name.valid || !f->compute_cap.valid)
		smi_query(smi, timeout, &f->gpu_name, &f->compute_cap, &f->notes);

	uint64_t memtotal = 0;
	bool has_memtotal = false;
	tegra_read(f, &memtotal, &has_memtotal, &f->notes);
	derive_memory(f, &nv, memtotal, has_memtotal, &f->notes);
	nvml_info_free(&nv);
	return 0;
}

void host_facts_free(struct host_facts *f)
{
	if (!f)
		return;
	fact_free(&f->gpu_name);
	fact_free(&f->compute_cap);
	fact_free(&f->mem_total);
	fact_free(&f->memory_model);
	fact_free(&f->dt_model);
	fact_free(&f->l4t_release);
	fact_free(&f->driver);
	fact_free(&f->hostname);
	strv_free(f->notes);
	f->notes = NULL;
}

/* The facts as one object keyed by fact name, in a fixed order; the notes
 * are not included (see f->notes). New reference. */
json_t *host_facts_json(const struct host_facts *f)
{
	json_t *o = json_object();
	json_object_set_new(o, "gpu_name", fact_json(&f->gpu_name));
	json_object_set_new(o, "compute_cap", fact_json(&f->compute_cap));
	json_object_set_new(o, "mem_total", fact_json(&f->mem_total));
	json_object_set_new(o, "memory_model", fact_json(&f->memory_model));
	json_object_set_new(o, "dt_model", fact_json(&f->dt_model));
	json_object_set_new(o, "l4t_release", fact_json(&f->l4t_release));
	json_object_set_new(o, "driver", fact_json(&f->driver));
	json_object_set_new(o, "hostname", fact_json(&f->hostname));
	return o;
}

bool host_facts_mem_gib(const struct host_facts *f, double *gib)
{
	if (!f->mem_total.valid || !f->mem_total.value)
		return false;
	char *end;
	errno = 0;
	unsigned long long b = strtoull(f->mem_total.value, &end, 10);
	if (errno || *end || end == f->mem_total.value || b == 0)
		return false;
	*gib = (double)b / (1024.0 * 1024.0 * 1024.0);
	return true;
}

bool host_facts_cc(const struct host_facts *f, int *major, int *minor)
{
	if (!f->compute_cap.valid || !f->compute_cap.value)
		return false;
	int a, b, n = 0;
	if (sscanf(f->compute_cap.value, "%d.%d%n", &a, &b, &n) != 2 ||
	    f->compute_cap.value[n] != '\0' || a < 0 || b < 0)
		return false;
	*major = a;
	*minor = b;
	return true;
}
