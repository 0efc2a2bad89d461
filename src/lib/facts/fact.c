/*
 * fact.c — one fact (a value and the source it was read from), its JSON,
 * and the notes a source leaves for what it could not read. Below host.c
 * and every source (nvml.c, smi.c, tegra.c, checkpoint.c), which all use
 * them, so host.c calls the sources and no source calls host.c back.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "../util/cleanup.h"
#include "facts.h"
#include "host_sources.h"

const char *tri_name(enum tri t)
{
	switch (t) {
	case TRI_TRUE:
		return "true";
	case TRI_FALSE:
		return "false";
	default:
		return "unknown";
	}
}

void fact_set(struct fact *f, const char *value, const char *source)
{
	fact_free(f);
	f->valid = value != NULL;
	f->value = value ? xstrdup(value) : NULL;
	f->source = source ? xstrdup(source) : NULL;
}

void fact_free(struct fact *f)
{
	free(f->value);
	free(f->source);
	f->value = NULL;
	f->source = NULL;
	f->valid = false;
}

/* {"value": "..."|null, "source": "..."|null, "valid": bool}; new reference. */
json_t *fact_json(const struct fact *f)
{
	return json_pack("{s:o, s:o, s:b}", "value",
			 f->valid && f->value ? json_string(f->value) : json_null(), "source",
			 f->source ? json_string(f->source) : json_null(), "valid", f->valid ? 1 : 0);
}

void facts_note(char ***notes, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	size_t n = 0;
	while (*notes && (*notes)[n])
		n++;
	*notes = xrealloc(*notes, (n + 2) * sizeof(char *));
	(*notes)[n] = s;
	(*notes)[n + 1] = NULL;
}
