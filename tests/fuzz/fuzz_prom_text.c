/* fuzz_prom_text.c — an engine's /metrics body: the Prometheus text reader
 * (prom_parse) and the figures read through it (engine_metrics_parse with
 * the names of one recorded vLLM version). Every sample handed to the
 * callback must have a metric name and at most PROM_MAX_LABELS labels; an
 * error must carry a message. See fuzz.h. */
#include <math.h>

#include "../../src/lib/runtime/runtime.h"
#include "fuzz.h"

static int check(void *ud, const struct prom_sample *s, struct err **err)
{
	(void)ud;
	(void)err;
	if (!s->name || !*s->name || s->n_labels > PROM_MAX_LABELS || s->line == 0)
		abort();
	for (size_t i = 0; i < s->n_labels; i++)
		if (!s->label[i] || !*s->label[i] || !s->value[i])
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct engine_metric_names names;
	if (!names.folder && engine_metric_names_load(&names, "5a4c8d992", NULL) < 0)
		abort();
	struct err *e = NULL;
	int rc = prom_parse("fuzz", (const char *)data, size, check, NULL, &e);
	fuzz_check_err(rc, e); /* frees e */
	e = NULL;
	struct engine_sample s;
	rc = engine_metrics_parse("fuzz", (const char *)data, size, &names, &s, &e);
	fuzz_check_err(rc, e);
	return 0;
}
