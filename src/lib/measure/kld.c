/*
 * kld.c — the distribution comparison of `lobes eval compare`, pure: two
 * sides' prompt_logprobs over the same text (vLLM's shape: per prompt token
 * null or {token_id: {logprob, rank, decoded_token}}, the top-k plus the
 * prompt's own token) and the prompt's token ids (from /tokenize) in; the
 * figures llama.cpp's `perplexity --kl-divergence` reports out.
 *
 * A server returns only its top-k, so the KL divergence is taken on the
 * tokens BOTH sides returned at a position, with the rest of each
 * distribution (1 - the listed mass) as one more bucket:
 *   KL(a||b) = sum_s pa(s) log(pa(s)/pb(s)) + ra log(ra/rb)
 * Merging tokens into one bucket never raises a KL divergence, so this is a
 * lower bound of the full-vocabulary figure, and 0 exactly when the two
 * sides returned the same numbers. The output says so (kld_note).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "measure_int.h"

#define REST_FLOOR 1e-12

const char *const eval_kld_note =
	"KL divergence on the top-k tokens both sides returned at each position, the rest of "
	"each distribution as one bucket (a lower bound of the full-vocabulary KLD)";

static double lp(const json_t *entry)
{
	const json_t *v = json_object_get(entry, "logprob");
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The id of the most likely entry of pos (rank 1, else the largest logprob). */
static const char *top(const json_t *pos)
{
	const char *k, *best = NULL;
	json_t *e;
	double bl = -INFINITY;
	json_object_foreach((json_t *)pos, k, e) {
		if (json_integer_value(json_object_get(e, "rank")) == 1)
			return k;
		if (lp(e) > bl) {
			bl = lp(e);
			best = k;
		}
	}
	return best;
}

/* KL(a||b) at one position, see the top of the file. */
static double kld_at(const json_t *pa, const json_t *pb)
{
	const char *k;
	json_t *ea;
	double sa = 0, sb = 0, kl = 0;
	json_object_foreach((json_t *)pa, k, ea) {
		const json_t *eb = json_object_get(pb, k);
		if (!eb)
			continue;
		double la = lp(ea), lb = lp(eb);
		sa += exp(la);
		sb += exp(lb);
		kl += exp(la) * (la - lb);
	}
	double ra = 1 - sa, rb = 1 - sb;
	if (ra > REST_FLOOR)
		kl += ra * log(ra / (rb > REST_FLOOR ? rb : REST_FLOOR));
	return kl > 0 ? kl : 0; /* rounding of equal inputs */
}

json_t *eval_logprob_figures(const json_t *a, const json_t *b, const json_t *ids, struct err **err)
{
	size_t n = json_array_size(a);
	if (!json_is_array(a) || !json_is_array(b) || n != json_array_size(b) ||
	    n != json_array_size(ids)) {
		err_set(err, EXIT_RUNTIME, "the two sides' prompt_logprobs do not line up (%zu and %zu "
					   "positions, %zu prompt tokens): compare servers of the same "
					   "tokenizer", json_array_size(a), json_array_size(b),
			json_array_size(ids));
		return NULL;
	}
	double *kld = xcalloc(n + 1, sizeof *kld);
	double sum_kld = 0, max_kld = 0, sum_d = 0, max_d = 0, nll_a = 0, nll_b = 0;
	size_t m = 0, same = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *pa = json_array_get(a, i), *pb = json_array_get(b, i);
		if (json_is_null(pa) && json_is_null(pb))
			continue;
		char key[32];
		snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_array_get(ids, i)));
		const json_t *ra = json_object_get(pa, key), *rb = json_object_get(pb, key);
		if (!json_is_object(pa) || !json_is_object(pb) || !isfinite(lp(ra)) || !isfinite(lp(rb))) {
			free(kld);
			err_set(err, EXIT_RUNTIME, "prompt_logprobs position %zu: the prompt token %s is "
						   "missing on a side (not vLLM's prompt_logprobs shape?)",
				i, key);
			return NULL;
		}
		double k = kld_at(pa, pb), d = fabs(lp(ra) - lp(rb));
		kld[m++] = k;
		sum_kld += k;
		max_kld = k > max_kld ? k : max_kld;
		sum_d += d;
		max_d = d > max_d ? d : max_d;
		nll_a -= lp(ra);
		nll_b -= lp(rb);
		const char *ta = top(pa), *tb = top(pb);
		same += ta && tb && !strcmp(ta, tb);
	}
	if (!m) {
		free(kld);
		err_set(err, EXIT_RUNTIME, "prompt_logprobs hold no position to compare");
		return NULL;
	}
	json_t *s = measure_summary_ms(kld, m); /* sorts; the "ms" scale is undone below */
	double p99 = json_number_value(json_object_get(s, "p99")) / 1e3;
	json_decref(s);
	free(kld);
	double ppl_a = exp(nll_a / (double)m), ppl_b = exp(nll_b / (double)m);
	return json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "positions",
			 (json_int_t)m, "kld_mean", sum_kld / (double)m, "kld_p99", p99, "kld_max",
			 max_kld, "same_top", (double)same / (double)m, "dlogp_mean", sum_d / (double)m,
			 "dlogp_max", max_d, "ppl_a", ppl_a, "ppl_b", ppl_b, "ppl_ratio", ppl_b / ppl_a,
			 "kld_note", eval_kld_note);
}
