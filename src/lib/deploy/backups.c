/*
 * backups.c — the backups of the files a commit replaces: "NAME.bak.N",
 * numbered upwards (the highest is the newest), the last `keep` of each
 * kept. A backup is written inside the commit (deploy_int.h) like any other
 * file, so a kill never leaves a backup of a file that was not replaced.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "deploy_int.h"

/* N of "NAME.bak.N" (N > 0), else 0. */
static long backup_number(const char *entry, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(entry, name, n) != 0 || strncmp(entry + n, ".bak.", 5) != 0)
		return 0;
	const char *d = entry + n + 5;
	if (*d < '1' || *d > '9' || strspn(d, "0123456789") != strlen(d) || strlen(d) > 9)
		return 0;
	return strtol(d, NULL, 10);
}

/* The backup numbers of name in dir, sorted ascending (*n set). */
static long *backup_numbers(const char *dir, const char *name, size_t *n)
{
	*n = 0;
	long *v = NULL;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		long k = backup_number(de->d_name, name);
		if (!k)
			continue;
		v = xrealloc(v, (*n + 1) * sizeof(*v));
		size_t i = (*n)++;
		while (i && v[i - 1] > k) {
			v[i] = v[i - 1];
			i--;
		}
		v[i] = k;
	}
	closedir(d);
	return v;
}

char *deploy_backup_name(const char *dir, const char *name)
{
	size_t n;
	_cleanup_free_ long *v = backup_numbers(dir, name, &n);
	return xasprintf("%s.bak.%ld", name, n ? v[n - 1] + 1 : 1);
}

int deploy_prune_backups(const char *dir, const char *name, int keep)
{
	size_t n;
	_cleanup_free_ long *v = backup_numbers(dir, name, &n);
	int removed = 0;
	for (size_t i = 0; keep >= 0 && i + (size_t)keep < n; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s.bak.%ld", dir, name, v[i]);
		if (unlink(p) == 0)
			removed++;
		fs_fault_point("backup pruned");
	}
	return removed;
}
