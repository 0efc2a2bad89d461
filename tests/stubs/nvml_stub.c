/*
 * nvml_stub.c — a stand-in for libnvidia-ml.so.1, built by the tests so the
 * dlopen path of detection runs on machines without the NVIDIA driver. It is
 * a test double: it exports the entry points detection resolves and answers
 * from the environment:
 *
 *   STUB_NVML_FAIL_INIT=1   nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED (9)
 *   STUB_NVML_NO_DEVICE=1   nvmlDeviceGetHandleByIndex_v2 returns NOT_FOUND (6)
 *   STUB_NVML_NAME          device name (default "NVIDIA Stub")
 *   STUB_NVML_CC            compute capability "major.minor" (unset: NOT_SUPPORTED)
 *   STUB_NVML_MEM           "NOT_SUPPORTED", "0" or a total in bytes (unset: NOT_SUPPORTED)
 *   STUB_NVML_DRIVER        driver version (unset: NOT_SUPPORTED)
 *   STUB_NVML_LOG           file to which each call's name is appended
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct stub_device *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
};

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);

static int initialised;
static int the_device; /* its address is the one handle */

static void trace(const char *call)
{
	const char *p = getenv("STUB_NVML_LOG");
	if (!p || !*p)
		return;
	FILE *f = fopen(p, "a");
	if (f) {
		fprintf(f, "%s\n", call);
		fclose(f);
	}
}

static const char *env(const char *k)
{
	const char *v = getenv(k);
	return v && *v ? v : NULL;
}

static nvmlReturn_t copy_out(const char *s, char *dst, unsigned int len)
{
	if (!dst)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	snprintf(dst, len, "%s", s);
	return NVML_SUCCESS;
}

static nvmlReturn_t check_device(nvmlDevice_t d)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	return d == (nvmlDevice_t)(void *)&the_device ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlInit_v2(void)
{
	trace("nvmlInit_v2");
	if (env("STUB_NVML_FAIL_INIT"))
		return NVML_ERROR_DRIVER_NOT_LOADED;
	initialised = 1;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	trace("nvmlShutdown");
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	initialised = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	trace("nvmlDeviceGetHandleByIndex_v2");
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	if (env("STUB_NVML_NO_DEVICE") || index != 0)
		return NVML_ERROR_NOT_FOUND;
	*device = (nvmlDevice_t)(void *)&the_device;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	trace("nvmlDeviceGetName");
	nvmlReturn_t r = check_device(device);
	if (r != NVML_SUCCESS)
		return r;
	return copy_out(env("STUB_NVML_NAME") ? env("STUB_NVML_NAME") : "NVIDIA Stub", name, length);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
	trace("nvmlDeviceGetCudaComputeCapability");
	nvmlReturn_t r = check_device(device);
	if (r != NVML_SUCCESS)
		return r;
	const char *cc = env("STUB_NVML_CC");
	if (!cc || sscanf(cc, "%d.%d", major, minor) != 2)
		return NVML_ERROR_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	trace("nvmlDeviceGetMemoryInfo");
	nvmlReturn_t r = check_device(device);
	if (r != NVML_SUCCESS)
		return r;
	const char *m = env("STUB_NVML_MEM");
	if (!m || strcmp(m, "NOT_SUPPORTED") == 0)
		return NVML_ERROR_NOT_SUPPORTED;
	char *end;
	unsigned long long total = strtoull(m, &end, 10);
	if (*end)
		return NVML_ERROR_NOT_SUPPORTED;
	memory->total = total;
	memory->used = total / 100;
	memory->free = total - memory->used;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	trace("nvmlSystemGetDriverVersion");
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	const char *v = env("STUB_NVML_DRIVER");
	if (!v)
		return NVML_ERROR_NOT_SUPPORTED;
	return copy_out(v, version, length);
}
