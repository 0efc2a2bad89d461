/*
 * pressure.c — the shedding policy: while swap use or iowait is above its
 * threshold, requests that came by alias answer 429 server_busy (the ones
 * naming a role or a checkpoint are served). Thresholds come from
 * data/gateway/pressure.yaml or .env; the iowait threshold is off on cards
 * where iowait lies (FACTS trait 7: Orin reads ~59% with no disk I/O).
 * Readings come from /proc/meminfo and /proc/stat under LOBES_SYSROOT, so
 * tests drive them with fixture files.
 */
#include <stdio.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "gateway.h"

static unsigned long long meminfo_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	unsigned long long v = 0;
	if (p && sscanf(p + strlen(key), " %llu", &v) != 1)
		v = 0;
	return p ? v : 0;
}

void gw_pressure_sample(struct gw_pressure *p)
{
	_cleanup_free_ char *mi = fs_read_sys("/proc/meminfo", 1 << 16, NULL);
	p->swap_pct = -1;
	if (mi) {
		unsigned long long tot = meminfo_kb(mi, "SwapTotal:"), fr = meminfo_kb(mi, "SwapFree:");
		p->swap_pct = tot ? 100.0 * (double)(tot - (fr < tot ? fr : tot)) / (double)tot : 0;
	}
	_cleanup_free_ char *st = fs_read_sys("/proc/stat", 1 << 16, NULL);
	unsigned long long v[10] = { 0 };
	if (!st || sscanf(st, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			  &v[3], &v[4], &v[5], &v[6], &v[7]) < 5) {
		p->iowait_pct = -1;
		return;
	}
	unsigned long long total = 0;
	for (int i = 0; i < 8; i++)
		total += v[i];
	unsigned long long dt = total - p->last_total, dio = v[4] - p->last_iowait;
	if (p->last_total && total > p->last_total && v[4] >= p->last_iowait)
		p->iowait_pct = 100.0 * (double)dio / (double)dt;
	else if (!p->last_total)
		/* first sample: the share since boot */
		p->iowait_pct = total ? 100.0 * (double)v[4] / (double)total : 0;
	p->last_total = total;
	p->last_iowait = v[4];
}

bool gw_pressure_shed(const struct gw_config *c, double swap_pct, double iowait_pct,
		      const char **why)
{
	if (c->swap_max < 100 && swap_pct > c->swap_max) {
		*why = "swap";
		return true;
	}
	if (!c->iowait_off_by_card && c->iowait_max < 100 && iowait_pct > c->iowait_max) {
		*why = "iowait";
		return true;
	}
	return false;
}
