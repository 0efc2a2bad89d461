/*
 * knobcheck.c — the one definition of what a valid knob value is, shared by
 * the YAML loader's callers and by .env operator overrides: canonicalises
 * the text (0.3 → "0.30", true/false) or says what was expected.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <jansson.h>
#include <stdio.h>
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

/* A plain word: letters, digits, '-', '_', '.'. */
static bool word_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return false;
	return true;
}

static bool served_names_ok(const char *s)
{
	if (!*s)
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_./,", *p))
			return false;
	return !strstr(s, ",,") && s[0] != ',' && s[strlen(s) - 1] != ',';
}

/* A JSON object, canonical as jansson writes it (key order kept, ", " and
 * ": " separators). The reason it is not one goes into a static buffer. */
static int json_canon(const char *in, char **out, const char **expect)
{
	static __thread char msg[256];
	json_error_t je;
	json_t *j = json_loads(in, JSON_REJECT_DUPLICATES, &je);
	if (!j || !json_is_object(j)) {
		snprintf(msg, sizeof(msg), "none or a JSON object (%s%s at column %d)",
			 j ? "not an object" : "invalid JSON: ", j ? "" : je.text, j ? 1 : je.column);
		*expect = msg;
		json_decref(j);
		return -1;
	}
	*out = json_dumps(j, JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!*out)
		return -1;
	if (strchr(*out, '\'') || strchr(*out, '$')) {
		free(*out);
		*out = NULL;
		*expect = "none or a JSON object without ' or $";
		return -1;
	}
	return 0;
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
	case KNOB_TRUST_REMOTE_CODE:
	case KNOB_ENABLE_LORA:
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
	case KNOB_MAX_LORAS:
	case KNOB_MAX_LORA_RANK:
		if (strcmp(in, "auto") == 0)
			break;
		/* fall through */
	case KNOB_MAX_MODEL_LEN: {
		*expect = k == KNOB_MAX_MODEL_LEN ? "a positive integer" : "a positive integer or auto";
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
	case KNOB_IMAGE:
		/* a tag passes here (an operator's .env may hold one: init and
		 * doctor warn), but a profile refuses it (images.c): so the
		 * expectation offers only what every reader accepts */
		*expect = "an image reference pinned by digest: name@sha256:<64 hex digits>";
		if (!*in || strpbrk(in, " \t'$") || (strchr(in, '@') && !image_ref_pinned(in)))
			return -1;
		break;
	case KNOB_SERVED_NAMES:
		*expect = "a comma-separated list of role, model or plain names";
		if (!served_names_ok(in))
			return -1;
		break;
	case KNOB_RUNNER:
	case KNOB_CONVERT:
	case KNOB_REASONING_PARSER:
	case KNOB_TOOL_CALL_PARSER:
		*expect = k == KNOB_RUNNER || k == KNOB_CONVERT ? "auto or a name such as pooling, embed"
							       : "none or a parser name such as qwen3";
		if (!word_ok(in))
			return -1;
		break;
	case KNOB_ENABLE_PREFIX_CACHING:
		*expect = "auto, true or false";
		if (strcmp(in, "auto") != 0 && strcmp(in, "true") != 0 && strcmp(in, "false") != 0)
			return -1;
		break;
	case KNOB_SPECULATIVE_CONFIG:
	case KNOB_HF_OVERRIDES:
		*expect = "none or a JSON object";
		if (strcmp(in, "none") == 0)
			break;
		return json_canon(in, out, expect);
	case KNOB_LORA_DIR:
		*expect = "a directory path without blanks, quotes or $";
		if (!*in || strpbrk(in, " \t'\"$"))
			return -1;
		break;
	default:
		*expect = "a known knob";
		return -1;
	}
	*out = xstrdup(in);
	return 0;
}
