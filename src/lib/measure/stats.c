/*
 * stats.c — summaries of samples: the mean, the median and percentiles by
 * numpy's default (linear) rule, which vLLM's `bench serve` reports, so the
 * figures of the two tools read alike.
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "measure.h"
#include "measure_int.h"

double measure_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double measure_percentile(const double *sorted, size_t n, double p)
{
	if (n == 0)
		return NAN;
	double rank = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)floor(rank), hi = lo + 1 < n ? lo + 1 : lo;
	return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - (double)lo);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

json_t *measure_summary_ms(double *v, size_t n)
{
	if (n == 0)
		return json_pack("{s:n, s:n, s:n, s:n}", "mean", "median", "p90", "p99");
	qsort(v, n, sizeof *v, cmp_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return json_pack("{s:f, s:f, s:f, s:f}", "mean", sum / (double)n * 1e3, "median",
			 measure_percentile(v, n, 50) * 1e3, "p90", measure_percentile(v, n, 90) * 1e3,
			 "p99", measure_percentile(v, n, 99) * 1e3);
}
