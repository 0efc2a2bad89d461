/*
 * box.c — the box's memory, swap and I/O pressure for `lobes top` (see
 * memory.h). One read of /proc/meminfo, /proc/stat and /proc/pressure/io
 * per sample; the iowait share needs two samples, as the gateway's
 * shedding computes it, so both show the same figure.
 */
#include <stdio.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "memory.h"

/* "KEY:   123 kB" in /proc/meminfo text, in bytes; false when absent. */
static bool meminfo_bytes(const char *text, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long kb;
		if (strncmp(p, key, kl) == 0 && p[kl] == ':' && sscanf(p + kl + 1, "%llu", &kb) == 1) {
			*out = (uint64_t)kb * 1024;
			return true;
		}
	}
	return false;
}

int box_sample(struct box_sample *b, struct err **err)
{
	memset(b, 0, sizeof(*b));
	b->io_some_avg10 = -1;
	struct err *e = NULL;
	_cleanup_free_ char *mi = fs_read_sys("/proc/meminfo", 1 << 20, &e);
	if (!mi) {
		if (e) {
			if (err)
				*err = e;
			else
				err_free(e);
			return -1;
		}
		_cleanup_free_ char *p = sysroot_path("/proc/meminfo");
		return err_set(err, EXIT_RUNTIME, "'%s' does not exist", p);
	}
	if (!meminfo_bytes(mi, "MemTotal", &b->mem_total) ||
	    !meminfo_bytes(mi, "MemFree", &b->mem_free) ||
	    !meminfo_bytes(mi, "MemAvailable", &b->mem_available)) {
		_cleanup_free_ char *p = sysroot_path("/proc/meminfo");
		return err_set(err, EXIT_RUNTIME, "'%s' lacks MemTotal, MemFree or MemAvailable", p);
	}
	(void)meminfo_bytes(mi, "SwapTotal", &b->swap_total);
	(void)meminfo_bytes(mi, "SwapFree", &b->swap_free);
	_cleanup_free_ char *st = fs_read_sys("/proc/stat", 1 << 20, NULL);
	unsigned long long v[8] = { 0 };
	if (st && sscanf(st, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			 &v[3], &v[4], &v[5], &v[6], &v[7]) >= 5) {
		for (int i = 0; i < 8; i++)
			b->cpu_total += v[i];
		b->cpu_iowait = v[4];
	}
	_cleanup_free_ char *psi = fs_read_sys("/proc/pressure/io", 4096, NULL);
	double avg;
	if (psi && sscanf(psi, "some avg10=%lf", &avg) == 1 && avg >= 0)
		b->io_some_avg10 = avg;
	return 0;
}

double box_iowait_pct(const struct box_sample *prev, const struct box_sample *cur)
{
	if (!cur->cpu_total)
		return -1;
	if (!prev || !prev->cpu_total)
		return 100.0 * (double)cur->cpu_iowait / (double)cur->cpu_total;
	if (cur->cpu_total <= prev->cpu_total || cur->cpu_iowait < prev->cpu_iowait)
		return -1;
	return 100.0 * (double)(cur->cpu_iowait - prev->cpu_iowait) /
	       (double)(cur->cpu_total - prev->cpu_total);
}
