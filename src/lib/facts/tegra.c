/*
 * tegra.c — facts from files: the device-tree model and L4T release of a
 * Jetson, MemTotal, the kernel driver version and the hostname.
 *
 * Every path is read under the sysroot (LOBES_SYSROOT) so tests run on
 * fixture trees of real boxes. The hostname falls back to gethostname()
 * only when no sysroot is set: under a fixture tree the machine running the
 * test is not the box being described.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "host_sources.h"

/* Read one file under the sysroot; NULL when absent (with a note) or
 * unreadable (with the error as the note). */
static char *read_note(const char *path, const char *what, char ***notes)
{
	_cleanup_err_ struct err *e = NULL;
	char *s = fs_read_sys(path, 0, &e);
	if (!s && e)
		facts_note(notes, "%s: %s", what, e->msg);
	else if (!s)
		facts_note(notes, "%s: %s absent", what, path);
	return s;
}

/* "# R38 (release), REVISION: 2.0, GCID: ..." → "R38.2.0"; NULL when the
 * line has another shape. */
static char *l4t_parse(const char *s)
{
	const char *r = strchr(s, 'R');
	if (!r || !isdigit((unsigned char)r[1]))
		return NULL;
	char *end;
	long major = strtol(r + 1, &end, 10);
	const char *rev = strstr(end, "REVISION:");
	if (!rev)
		return xasprintf("R%ld", major);
	rev += strlen("REVISION:");
	while (*rev == ' ')
		rev++;
	size_t n = strspn(rev, "0123456789.");
	while (n && rev[n - 1] == '.')
		n--;
	if (!n)
		return xasprintf("R%ld", major);
	return xasprintf("R%ld.%.*s", major, (int)n, rev);
}

/* "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05
 * Release Build ..." → "580.95.05": the first token of the first line made
 * of digits and dots with at least one dot. */
static char *driver_parse(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	char *save = NULL;
	for (char *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		size_t n = strlen(t);
		if (n > 2 && isdigit((unsigned char)t[0]) && strspn(t, "0123456789.") == n &&
		    strchr(t, '.'))
			return xstrdup(t);
	}
	return NULL;
}

/* MemTotal from /proc/meminfo, kB → bytes. */
static bool memtotal_parse(const char *s, uint64_t *bytes)
{
	const char *m = strstr(s, "MemTotal:");
	if (!m)
		return false;
	m += strlen("MemTotal:");
	char *end;
	errno = 0;
	unsigned long long kb = strtoull(m, &end, 10);
	if (errno || end == m || kb == 0 || kb > UINT64_MAX / 1024)
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	if (strncmp(end, "kB", 2) != 0)
		return false;
	*bytes = (uint64_t)kb * 1024;
	return true;
}

void tegra_read(struct host_facts *f, uint64_t *memtotal, bool *has_memtotal, char ***notes)
{
	*has_memtotal = false;
	_cleanup_free_ char *dt = read_note("/proc/device-tree/model", "dt_model", notes);
	if (dt) {
		char *m = str_strip(dt); /* the file ends in NUL, which the read stops at */
		if (*m)
			fact_set(&f->dt_model, m, "/proc/device-tree/model");
		else
			facts_note(notes, "dt_model: /proc/device-tree/model is empty");
	}

	_cleanup_free_ char *rel = read_note("/etc/nv_tegra_release", "l4t_release", notes);
	if (rel) {
		_cleanup_free_ char *v = l4t_parse(rel);
		if (v)
			fact_set(&f->l4t_release, v, "/etc/nv_tegra_release");
		else
			facts_note(notes, "l4t_release: /etc/nv_tegra_release has no R<major> line");
	}

	_cleanup_free_ char *mi = read_note("/proc/meminfo", "mem_total", notes);
	if (mi) {
		*has_memtotal = memtotal_parse(mi, memtotal);
		if (!*has_memtotal)
			facts_note(notes, "mem_total: no MemTotal line in /proc/meminfo");
	}

	if (!f->driver.valid) {
		_cleanup_free_ char *dv = read_note("/proc/driver/nvidia/version", "driver", notes);
		if (dv) {
			_cleanup_free_ char *v = driver_parse(dv);
			if (v)
				fact_set(&f->driver, v, "/proc/driver/nvidia/version");
			else
				facts_note(notes, "driver: no version in /proc/driver/nvidia/version");
		}
	}

	_cleanup_free_ char *hn = read_note("/etc/hostname", "hostname", notes);
	char *h = hn ? str_strip(hn) : NULL;
	if (h && *h) {
		h[strcspn(h, "\n")] = '\0';
		fact_set(&f->hostname, h, "/etc/hostname");
		return;
	}
	const char *root = getenv("LOBES_SYSROOT");
	if (root && *root)
		return;
	char buf[256] = "";
	if (gethostname(buf, sizeof(buf) - 1) == 0 && buf[0])
		fact_set(&f->hostname, buf, "gethostname");
	else
		facts_note(notes, "hostname: gethostname failed");
}
