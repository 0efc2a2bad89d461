/*
 * memory.c — check "memory": the feasible roles' gpu_memory_utilization
 * summed and said in GiB of the card's memory.
 */
#include <string.h>

#include "../facts/facts.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "doctor_int.h"

void check_memory(struct doctor_ctx *x)
{
	struct doctor_report *r = x->r;
	const struct deployed *d = x->d;
	const struct host_facts *f = x->f;
	double sum = 0;
	size_t n = 0;
	_cleanup_buf_ struct buf parts, unknown;
	buf_init(&parts, 0);
	buf_init(&unknown, 0);
	for (int i = 0; i < ROLE__COUNT; i++) {
		const struct deployed_role *dr = &d->roles[i];
		if (!dr->present)
			continue;
		double u;
		const char *v = dr->knobs[KNOB_GPU_MEM_UTIL];
		if (!v || !str_to_double(v, &u) || u <= 0 || u > 1) {
			buf_printf(&unknown, "%s%s (%s)", unknown.len ? ", " : "", role_name((enum role_id)i),
				   v ? v : "no --gpu-memory-utilization");
			continue;
		}
		sum += u;
		n++;
		buf_printf(&parts, "%s%s %.2f", parts.len ? " + " : "", role_name((enum role_id)i), u);
	}
	if (unknown.len) {
		struct check *c = doc_add(r, "memory", SEV_WARNING,
				      "gpu_memory_utilization is missing or not in (0,1] for: %s",
				      buf_str(&unknown));
		c->remedy = xstrdup("set <ROLE>_GPU_MEM_UTIL in .env to a number in (0,1]");
	}
	if (!n) {
		doc_add(r, "memory", SEV_INFO, "no feasible role with a memory budget is deployed");
		return;
	}
	double gib;
	if (!host_facts_mem_gib(f, &gib)) {
		doc_add(r, "memory", SEV_INFO,
		    "feasible roles' gpu_memory_utilization sum to %.2f (%s); the card's memory is unknown, "
		    "so it cannot be said in GiB",
		    sum, buf_str(&parts));
		return;
	}
	/* utils are given to two decimals: compare with a margin for rounding */
	enum check_sev sev = sum > 1.0 + 1e-9 ? SEV_ERROR : sum > 0.9 + 1e-9 ? SEV_WARNING : SEV_OK;
	struct check *c = doc_add(r, "memory", sev,
			      "feasible roles' gpu_memory_utilization sum to %.2f (%s) = %.1f GiB of the "
			      "card's %.1f GiB%s",
			      sum, buf_str(&parts), sum * gib, gib,
			      sev == SEV_ERROR	   ? ": more than the card has; the last roles cannot start"
			      : sev == SEV_WARNING ? ": less than 10% left for the system and page cache"
						   : "");
	if (sev == SEV_ERROR)
		c->remedy = xasprintf("lower <ROLE>_GPU_MEM_UTIL in .env until they sum to at most 1.00 "
				      "(now %.2f, %.1f GiB over)",
				      sum, (sum - 1.0) * gib);
	else if (sev == SEV_WARNING)
		c->remedy = xstrdup("keep the sum at or below 0.90 on a shared unified-memory box");
}
