/*
 * metrics.c — an engine's speculative-decoding counters, read from its
 * Prometheus GET /metrics, so a measurement of MTP on against off can say
 * how many draft tokens were accepted over the run (the difference of two
 * reads, before and after).
 *
 * The names are the ones vLLM registers in vllm/v1/spec_decode/metrics.py
 * (SpecDecodingProm), exposed by prometheus_client with the "_total"
 * suffix of a counter: vllm:spec_decode_num_drafts_total,
 * vllm:spec_decode_num_draft_tokens_total and
 * vllm:spec_decode_num_accepted_tokens_total; a sample per engine and model
 * label set, summed here. vLLM registers them only when speculative
 * decoding is configured: their absence is "no speculative decoding", not
 * zero. Acceptance rate = accepted / draft tokens (vLLM's own log line
 * "SpecDecoding metrics: ... Draft acceptance rate" divides the same two).
 *
 * The Prometheus text format (one sample a line: NAME{LABELS} VALUE
 * [TIMESTAMP], '#' lines are comments) is read line by line; a label value
 * may hold '}' or spaces inside its quotes, so the label set is skipped
 * quote-aware. This is a reader of the engine's metrics for measure/ only:
 * what `lobes top` shows of an engine is runtime/'s business.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "measure.h"
#include "measure_int.h"

static const char *const names[] = {
	"vllm:spec_decode_num_drafts_total",
	"vllm:spec_decode_num_draft_tokens_total",
	"vllm:spec_decode_num_accepted_tokens_total",
};

/* Past a label set starting at p ('{'); NULL when it does not close. */
static const char *skip_labels(const char *p, const char *end)
{
	bool quoted = false;
	for (p++; p < end; p++) {
		if (quoted && *p == '\\' && p + 1 < end)
			p++;
		else if (*p == '"')
			quoted = !quoted;
		else if (!quoted && *p == '}')
			return p + 1;
	}
	return NULL;
}

int measure_spec_parse(const char *text, struct spec_counters *out)
{
	double *v[] = { &out->drafts, &out->draft_tokens, &out->accepted };
	bool seen[3] = { false, false, false };
	int samples = 0;
	memset(out, 0, sizeof(*out));
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		const char *next = nl ? nl + 1 : end;
		if (*line == '#') {
			line = next;
			continue;
		}
		for (size_t i = 0; i < 3; i++) {
			size_t n = strlen(names[i]);
			if ((size_t)(end - line) <= n || strncmp(line, names[i], n) != 0 ||
			    (line[n] != '{' && line[n] != ' '))
				continue;
			const char *p = line[n] == '{' ? skip_labels(line + n, end) : line + n;
			char *stop;
			double x = p ? strtod(p, &stop) : NAN;
			if (!p || stop == p || !isfinite(x) || x < 0)
				return -1;
			*v[i] += x;
			seen[i] = true;
			samples++;
		}
		line = next;
	}
	out->present = seen[0] || seen[1] || seen[2];
	if (out->present && !(seen[1] && seen[2]))
		return -1; /* draft and accepted tokens come together */
	return samples;
}

int measure_spec_decode(const char *origin, const char *bearer, double timeout_s,
			struct spec_counters *out, struct err **err)
{
	_cleanup_free_ char *text = NULL;
	memset(out, 0, sizeof(*out));
	long status = measure_get_text(origin, "/metrics", bearer, timeout_s, &text, err);
	if (status < 0)
		return -1;
	if (status != 200)
		return err_set(err, EXIT_RUNTIME, "'%s/metrics' answered %ld", origin, status);
	if (measure_spec_parse(text, out) < 0)
		return err_set(err, EXIT_RUNTIME, "'%s/metrics': a spec-decode counter is not a "
						  "Prometheus sample (NAME{LABELS} VALUE), or draft "
						  "tokens come without accepted tokens", origin);
	return 0;
}

json_t *measure_spec_delta(const struct spec_counters *before, const struct spec_counters *after)
{
	if (!after->present)
		return json_null();
	double drafts = after->drafts - before->drafts;
	double draft_tokens = after->draft_tokens - before->draft_tokens;
	double accepted = after->accepted - before->accepted;
	json_t *j = json_pack("{s:f, s:f, s:f}", "drafts", drafts, "draft_tokens", draft_tokens,
			      "accepted_tokens", accepted);
	json_object_set_new(j, "acceptance_rate",
			    draft_tokens > 0 ? json_real(accepted / draft_tokens) : json_null());
	json_object_set_new(j, "mean_acceptance_length",
			    drafts > 0 ? json_real(1 + accepted / drafts) : json_null());
	return j;
}
