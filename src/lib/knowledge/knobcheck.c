/*
 * knobcheck.c — the one definition of what a valid knob value is, shared by
 * the YAML loader's callers and by .env operator overrides: canonicalises
 * the text (0.3 → "0.30", true/false) or says what was expected.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "../util/err.h"
#include "knowledge.h"

static bool upper_ident(const char *s)
{
	if (!*s || !isupper((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isupper((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

int knob_canon(enum knob_id k, const char *in, char **out, const char **expect)
{
	*out = NULL;
	char *end;
	switch (k) {
	case KNOB_MODEL:
		*expect = "a model id such as org/name";
		if (!*in || strchr(in, ' ') || strchr(in, '\'') || strchr(in, '$') || strstr(in, ".."))
			return -1;
		break;
	case KNOB_FEASIBLE:
	case KNOB_ENFORCE_EAGER:
		*expect = "true or false";
		if (strcmp(in, "true") != 0 && strcmp(in, "false") != 0)
			return -1;
		break;
	case KNOB_GPU_MEM_UTIL: {
		*expect = "a number in (0,1]";
		errno = 0;
		double d = strtod(in, &end);
		if (end == in || *end || errno || !isfinite(d) || d <= 0 || d > 1)
			return -1;
		/* two decimals when that is exact (0.3 → "0.30"), else the shortest form */
		double cents = d * 100;
		*out = fabs(cents - round(cents)) < 1e-9 ? xasprintf("%.2f", d) : xasprintf("%g", d);
		return 0;
	}
	case KNOB_MAX_NUM_SEQS:
		if (strcmp(in, "auto") == 0)
			break;
		/* fall through */
	case KNOB_MAX_MODEL_LEN: {
		*expect = k == KNOB_MAX_NUM_SEQS ? "a positive integer or auto" : "a positive integer";
		errno = 0;
		long long v = strtoll(in, &end, 10);
		if (end == in || *end || errno || v <= 0)
			return -1;
		*out = xasprintf("%lld", v);
		return 0;
	}
	case KNOB_QUANTIZATION:
		*expect = "a quantization method name or none";
		for (const char *p = in; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
				return -1;
		if (!*in)
			return -1;
		break;
	case KNOB_KV_CACHE_DTYPE: {
		static const char *const ok[] = { "auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16" };
		*expect = "one of auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16";
		bool hit = false;
		for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			hit = hit || strcmp(in, ok[i]) == 0;
		if (!hit)
			return -1;
		break;
	}
	case KNOB_ATTENTION_BACKEND:
		*expect = "auto or a backend name such as TRITON_ATTN";
		if (strcmp(in, "auto") != 0 && !upper_ident(in))
			return -1;
		break;
	default:
		*expect = "a known knob";
		return -1;
	}
	*out = xstrdup(in);
	return 0;
}
