/*
 * metrics.c — an engine's speculative-decoding counters, read from its
 * Prometheus GET /metrics, so a measurement of MTP on against off can say
 * how many draft tokens were accepted over the run (the difference of two
 * reads, before and after).
 *
 * The page is read by runtime/'s engine_metrics_parse with the sample names
 * of the engine's vLLM (engine_metric_names_load: the families its
 * recorded data/vllm/<commit>/metrics.txt holds, which vLLM registers in
 * vllm/v1/spec_decode/metrics.py and exposes with a counter's "_total"),
 * summed over the engine and model label sets. This file keeps only what
 * a measurement adds: vLLM registers the counters only when speculative
 * decoding is configured, so their absence is "no speculative decoding",
 * not zero; a count must be one; draft tokens come with accepted ones; and
 * the delta of two reads. Acceptance rate = accepted / draft tokens (vLLM's
 * own log line "SpecDecoding metrics: ... Draft acceptance rate" divides
 * the same two).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/runtime.h"
#include "../util/cleanup.h"
#include "measure.h"
#include "measure_int.h"

int measure_spec_parse(const char *what, const char *text, const struct engine_metric_names *n,
		       struct spec_counters *out, struct err **err)
{
	static const enum engine_metric m[3] = { EM_SPEC_DRAFTS, EM_SPEC_DRAFT_TOKENS,
						 EM_SPEC_ACCEPTED };
	memset(out, 0, sizeof(*out));
	struct engine_sample s;
	if (engine_metrics_parse(what, text, strlen(text), n, &s, err) < 0)
		return -1;
	double *v[3] = { &out->drafts, &out->draft_tokens, &out->accepted };
	bool seen[3];
	for (size_t i = 0; i < 3; i++) {
		double x = s.v[m[i]];
		seen[i] = !isnan(x);
		if (seen[i] && (!isfinite(x) || x < 0)) {
			memset(out, 0, sizeof(*out));
			return err_set(err, EXIT_RUNTIME, "%s: %s is %g; expected a count", what,
				       n->sample[m[i]], x);
		}
		*v[i] = seen[i] ? x : 0;
	}
	out->present = seen[0] || seen[1] || seen[2];
	if (out->present && !(seen[1] && seen[2])) {
		const char *have = n->sample[m[seen[1] ? 1 : 2]], *lack = n->sample[m[seen[1] ? 2 : 1]];
		memset(out, 0, sizeof(*out));
		return err_set(err, EXIT_RUNTIME, "%s: %s without %s", what, have,
			       lack ? lack : "accepted tokens (this vLLM records no such counter)");
	}
	return 0;
}

int measure_spec_decode(const char *origin, const char *bearer, double timeout_s,
			const struct engine_metric_names *n, struct spec_counters *out,
			struct err **err)
{
	_cleanup_free_ char *text = NULL;
	memset(out, 0, sizeof(*out));
	long status = measure_get_text(origin, "/metrics", bearer, timeout_s, &text, err);
	if (status < 0)
		return -1;
	if (status != 200)
		return err_set(err, EXIT_RUNTIME, "'%s/metrics' answered %ld", origin, status);
	_cleanup_free_ char *what = xasprintf("'%s/metrics'", origin);
	return measure_spec_parse(what, text, n, out, err);
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
