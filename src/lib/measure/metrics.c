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
 * The page is read by runtime/'s strict Prometheus text reader (prom_parse,
 * the one lobes has); this file only picks the three counters out of it. The
 * names are checked against data/vllm/<commit>/metrics.txt, recorded from
 * vLLM's source, by tests/unit/test_measure.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/runtime.h"
#include "../util/cleanup.h"
#include "measure.h"
#include "measure_int.h"

const char *const measure_spec_names[3] = {
	"vllm:spec_decode_num_drafts_total",
	"vllm:spec_decode_num_draft_tokens_total",
	"vllm:spec_decode_num_accepted_tokens_total",
};

struct pick {
	struct spec_counters *out;
	bool seen[3];
	int samples;
};

static int on_sample(void *ud, const struct prom_sample *sm, struct err **err)
{
	struct pick *p = ud;
	double *v[] = { &p->out->drafts, &p->out->draft_tokens, &p->out->accepted };
	for (size_t i = 0; i < 3; i++) {
		if (strcmp(sm->name, measure_spec_names[i]) != 0)
			continue;
		if (!isfinite(sm->v) || sm->v < 0)
			return err_set(err, EXIT_RUNTIME, "line %u: %s is %g; expected a count", sm->line,
				       measure_spec_names[i], sm->v);
		*v[i] += sm->v;
		p->seen[i] = true;
		p->samples++;
	}
	return 0;
}

int measure_spec_parse(const char *what, const char *text, struct spec_counters *out, struct err **err)
{
	struct pick p = { .out = out };
	memset(out, 0, sizeof(*out));
	if (prom_parse(what, text, strlen(text), on_sample, &p, err) < 0) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	out->present = p.seen[0] || p.seen[1] || p.seen[2];
	const char *const *n = measure_spec_names;
	if (out->present && !(p.seen[1] && p.seen[2]))
		return err_set(err, EXIT_RUNTIME, "%s: %s without %s", what, p.seen[1] ? n[1] : n[2],
			       p.seen[1] ? n[2] : n[1]);
	return p.samples;
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
	_cleanup_free_ char *what = xasprintf("'%s/metrics'", origin);
	return measure_spec_parse(what, text, out, err) < 0 ? -1 : 0;
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
