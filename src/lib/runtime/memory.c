/* memory.c — /proc/meminfo fields and drop_caches; see memory.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../facts/facts.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "memory.h"

int meminfo_field(const char *field, uint64_t *bytes, struct err **err)
{
	_cleanup_free_ char *path = sysroot_path("/proc/meminfo");
	_cleanup_free_ char *text = fs_read(path, 1 << 20, NULL, err);
	if (!text)
		return -1;
	size_t fl = strlen(field);
	for (char *p = text; p && *p;) {
		if (strncmp(p, field, fl) == 0 && p[fl] == ':') {
			char *end;
			unsigned long long kb = strtoull(p + fl + 1, &end, 10);
			if (end == p + fl + 1)
				break;
			*bytes = (uint64_t)kb * 1024;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return err_set(err, EXIT_RUNTIME, "'%s' has no %s field", path, field);
}

int drop_caches(struct err **err)
{
	sync();
	_cleanup_free_ char *path = sysroot_path("/proc/sys/vm/drop_caches");
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return err_errno(err, EXIT_RUNTIME, errno, "drop caches: open '%s'", path);
	if (write(fd, "3\n", 2) != 2)
		return err_errno(err, EXIT_RUNTIME, errno, "drop caches: write '%s'", path);
	return 0;
}

int device_memory(uint64_t *bytes, char **source, struct err **err)
{
	struct host_facts hf = { 0 };
	struct facts_opts fo;
	facts_opts_from_env(&fo);
	double gib;
	int rc = 0;
	if (host_facts_gather(&hf, &fo, NULL) == 0 && host_facts_mem_gib(&hf, &gib)) {
		*bytes = (uint64_t)(gib * 1073741824.0);
		*source = xstrdup(hf.mem_total.source ? hf.mem_total.source : "detected");
	} else {
		rc = meminfo_field("MemTotal", bytes, err);
		*source = xstrdup("/proc/meminfo MemTotal (no GPU memory detected)");
	}
	host_facts_free(&hf);
	return rc;
}
