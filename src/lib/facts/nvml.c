/*
 * nvml.c — GPU facts from NVML, loaded at run time with dlopen so lobes
 * builds and runs without the NVIDIA driver (CI has none).
 *
 * Only the few entry points detection needs are resolved by dlsym, and the
 * types they use are declared here (no NVML headers at build time). Memory
 * is reported only when nvmlDeviceGetMemoryInfo succeeds with a nonzero
 * total: integrated GPUs (GB10, Thor, Orin) answer NOT_SUPPORTED or 0, and
 * that answer is kept distinct so host.c can read it as "unified".
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "host_sources.h"

typedef int nvml_return;            /* nvmlReturn_t */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t: opaque handle */
struct nvml_memory {                /* nvmlMemory_t (v1) */
	unsigned long long total, free, used;
};

#define NVML_OK 0
#define NVML_NOT_SUPPORTED 3
#define NVML_NAME_LEN 96   /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NVML_DRIVER_LEN 80 /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */

struct nvml_api {
	nvml_return (*init)(void);
	nvml_return (*handle)(unsigned int, nvml_device *);
	nvml_return (*name)(nvml_device, char *, unsigned int);
	nvml_return (*cc)(nvml_device, int *, int *);
	nvml_return (*mem)(nvml_device, struct nvml_memory *);
	nvml_return (*driver)(char *, unsigned int);
	nvml_return (*shutdown)(void);
};

void nvml_info_free(struct nvml_info *n)
{
	free(n->name);
	free(n->cc);
	free(n->driver);
	memset(n, 0, sizeof(*n));
}

static void *sym(void *h, const char *name, bool *missing, char ***notes)
{
	void *p = dlsym(h, name);
	if (!p) {
		facts_note(notes, "nvml: symbol %s missing", name);
		*missing = true;
	}
	return p;
}

/* Resolve every entry point; false (with a note per missing symbol) when any
 * is absent. Function pointers are copied out of the void * dlsym gives,
 * the documented POSIX way. */
static bool resolve(void *h, struct nvml_api *a, char ***notes)
{
	bool missing = false;
	void *p;
#define RESOLVE(field, name)                              \
	p = sym(h, name, &missing, notes);                \
	memcpy(&a->field, &p, sizeof(a->field));
	RESOLVE(init, "nvmlInit_v2");
	RESOLVE(handle, "nvmlDeviceGetHandleByIndex_v2");
	RESOLVE(name, "nvmlDeviceGetName");
	RESOLVE(cc, "nvmlDeviceGetCudaComputeCapability");
	RESOLVE(mem, "nvmlDeviceGetMemoryInfo");
	RESOLVE(driver, "nvmlSystemGetDriverVersion");
	RESOLVE(shutdown, "nvmlShutdown");
#undef RESOLVE
	return !missing;
}

/* Copy a fixed-size C string out of an NVML buffer, stripped; NULL when
 * empty. */
static char *nvml_str(char *buf, size_t len)
{
	buf[len - 1] = '\0';
	char *s = str_strip(buf);
	return *s ? xstrdup(s) : NULL;
}

static void query_device(const struct nvml_api *a, struct nvml_info *out, char ***notes)
{
	nvml_device dev = NULL;
	nvml_return r = a->handle(0, &dev);
	if (r != NVML_OK) {
		facts_note(notes, "nvml: no device at index 0 (error %d)", r);
		return;
	}
	out->answered = true;
	char name[NVML_NAME_LEN] = "";
	r = a->name(dev, name, sizeof(name));
	if (r == NVML_OK)
		out->name = nvml_str(name, sizeof(name));
	if (!out->name)
		facts_note(notes, "nvml: nvmlDeviceGetName failed (error %d)", r);
	int major = -1, minor = -1;
	r = a->cc(dev, &major, &minor);
	if (r == NVML_OK && major > 0 && minor >= 0)
		out->cc = xasprintf("%d.%d", major, minor);
	else
		facts_note(notes, "nvml: nvmlDeviceGetCudaComputeCapability failed (error %d)", r);
	struct nvml_memory m = { 0 };
	r = a->mem(dev, &m);
	if (r == NVML_OK && m.total > 0) {
		out->mem = NVML_MEM_OK;
		out->mem_total = m.total;
	} else if (r == NVML_OK) {
		out->mem = NVML_MEM_ZERO;
		facts_note(notes, "nvml: memory total is 0 (integrated GPU)");
	} else if (r == NVML_NOT_SUPPORTED) {
		out->mem = NVML_MEM_UNSUPPORTED;
		facts_note(notes, "nvml: memory query not supported (integrated GPU)");
	} else {
		out->mem = NVML_MEM_UNKNOWN;
		facts_note(notes, "nvml: nvmlDeviceGetMemoryInfo failed (error %d)", r);
	}
}

void nvml_query(const char *lib, struct nvml_info *out, char ***notes)
{
	memset(out, 0, sizeof(*out));
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		if (!why || strstr(why, "No such file"))
			facts_note(notes, "nvml: %s not found", lib);
		else
			facts_note(notes, "nvml: %s could not be loaded: %s", lib, why);
		return;
	}
	struct nvml_api a;
	if (!resolve(h, &a, notes)) {
		dlclose(h);
		return;
	}
	nvml_return r = a.init();
	if (r != NVML_OK) {
		facts_note(notes, "nvml: nvmlInit_v2 failed (error %d)", r);
		dlclose(h);
		return;
	}
	query_device(&a, out, notes);
	char drv[NVML_DRIVER_LEN] = "";
	if (a.driver(drv, sizeof(drv)) == NVML_OK)
		out->driver = nvml_str(drv, sizeof(drv));
	(void)a.shutdown();
	dlclose(h);
}
