/*
 * nominal.c — the facts a card declares, as if detected on it. `lobes render`
 * uses these so a profile's render is a pure function of the data: the same
 * bytes on any machine, whatever GPU (or none) the machine has. Every fact's
 * source says "nominal" so nothing mistakes them for a measurement.
 */
#include <stdio.h>
#include <string.h>

#include "../util/cleanup.h"
#include "plan.h"

void host_facts_nominal(struct host_facts *f, const struct card *c)
{
	memset(f, 0, sizeof(*f));
	if (!c)
		return; /* base: every fact unknown */
	_cleanup_free_ char *src = xasprintf("nominal (card %s)", c->name);
	if (c->name_markers && c->name_markers[0]) {
		_cleanup_free_ char *n = xasprintf("NVIDIA %s", c->name_markers[0]);
		fact_set(&f->gpu_name, n, src);
	}
	if (c->dt_markers && c->dt_markers[0]) {
		_cleanup_free_ char *n = xasprintf("NVIDIA %s", c->dt_markers[0]);
		fact_set(&f->dt_model, n, src);
	}
	if (c->compute_cap)
		fact_set(&f->compute_cap, c->compute_cap, src);
	if (c->has_mem_band) {
		char b[32];
		double gib = (c->mem_min_gib + c->mem_max_gib) / 2;
		snprintf(b, sizeof(b), "%.0f", gib * 1024 * 1024 * 1024);
		fact_set(&f->mem_total, b, src);
	}
	if (c->memory_model)
		fact_set(&f->memory_model, c->memory_model, src);
}

int checkpoint_nominal(const char *model, struct checkpoint_facts *c, struct err **err)
{
	(void)err;
	memset(c, 0, sizeof(*c));
	c->kv_scales = TRI_UNKNOWN;
	c->hetero_head_dim = TRI_UNKNOWN;
	c->kv_scales_why = xasprintf("nominal render: the checkpoint of '%s' is not read", model);
	return 0;
}
