/*
 * report.c — bench's markdown report: what was run (the command, when, the
 * box: card, profile, the engine's vLLM version, the load average), one
 * table of every point, a side-by-side table where a role was measured both
 * directly and through the gateway, and an ASCII plot of the median
 * latencies against concurrency. Pure: a result object in, text out.
 */
#include <math.h>
#include <string.h>

#include "../util/buf.h"
#include "measure.h"
#include "measure_int.h"

static const char *s_or(const json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s && *s ? s : def;
}

static double stat(const json_t *run, const char *metric, const char *which)
{
	const json_t *v = json_object_get(json_object_get(run, metric), which);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static double num(const json_t *run, const char *key)
{
	const json_t *v = json_object_get(run, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A cell: the number or "-". */
static void cell(struct buf *b, double v, const char *fmt)
{
	buf_adds(b, " | ");
	if (isfinite(v))
		buf_printf(b, fmt, v);
	else
		buf_adds(b, "-");
}

static bool is_gen(const json_t *run)
{
	return !strcmp(s_or(run, "kind", ""), "generate");
}

static void errors_cell(struct buf *b, const json_t *run)
{
	const char *k;
	json_t *v;
	bool any = false;
	buf_adds(b, " | ");
	json_object_foreach(json_object_get(run, "errors"), k, v) {
		buf_printf(b, "%s%s %lld", any ? ", " : "", k, (long long)json_integer_value(v));
		any = true;
	}
	if (!any)
		buf_adds(b, "none");
}

static void table(struct buf *b, const json_t *runs)
{
	size_t i;
	json_t *run;
	buf_adds(b, "| target | concurrency | rate | batch | completed/sent | req/s | output tok/s "
		    "| TTFT median ms | TTFT p99 ms | TPOT median ms | TPOT p99 ms | ITL median ms "
		    "| E2EL (latency) median ms | E2EL p99 ms | errors |\n"
		    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	json_array_foreach(runs, i, run) {
		bool gen = is_gen(run);
		const char *lat = gen ? "e2el_ms" : "latency_ms";
		buf_printf(b, "| %s | %lld", s_or(run, "target", "?"),
			   (long long)json_integer_value(json_object_get(run, "concurrency")));
		if (isfinite(num(run, "rate")))
			buf_printf(b, " | %g/s", num(run, "rate"));
		else
			buf_adds(b, " | inf");
		if (gen)
			buf_adds(b, " | -");
		else
			buf_printf(b, " | %lld", (long long)json_integer_value(json_object_get(run, "batch")));
		buf_printf(b, " | %lld/%lld", (long long)json_integer_value(json_object_get(run, "completed")),
			   (long long)json_integer_value(json_object_get(run, "sent")));
		cell(b, num(run, "request_throughput"), "%.2f");
		cell(b, num(run, "output_throughput"), "%.1f");
		cell(b, stat(run, "ttft_ms", "median"), "%.1f");
		cell(b, stat(run, "ttft_ms", "p99"), "%.1f");
		cell(b, stat(run, "tpot_ms", "median"), "%.1f");
		cell(b, stat(run, "tpot_ms", "p99"), "%.1f");
		cell(b, stat(run, "itl_ms", "median"), "%.1f");
		cell(b, stat(run, lat, "median"), "%.1f");
		cell(b, stat(run, lat, "p99"), "%.1f");
		errors_cell(b, run);
		buf_adds(b, " |\n");
	}
}

/* Two members equal, both absent counting as equal (json_equal says no). */
static bool same(const json_t *x, const json_t *y, const char *key)
{
	const json_t *a = json_object_get(x, key), *b = json_object_get(y, key);
	return (!a && !b) || (a && b && json_equal(a, b));
}

/* The run of target label at the concurrency and batch of like, or NULL. */
static const json_t *find(const json_t *runs, const char *label, const json_t *like)
{
	size_t i;
	json_t *run;
	json_array_foreach(runs, i, run)
		if (!strcmp(s_or(run, "target", ""), label) && same(run, like, "concurrency") &&
		    same(run, like, "rate") && same(run, like, "batch"))
			return run;
	return NULL;
}

/* Direct against through the gateway, where both were measured. */
static void side_by_side(struct buf *b, const json_t *runs)
{
	size_t i;
	json_t *run;
	bool header = false;
	json_array_foreach(runs, i, run) {
		const char *label = s_or(run, "target", "");
		if (strstr(label, " via gateway"))
			continue;
		char *gw_label = xasprintf("%s via gateway", label);
		const json_t *gw = find(runs, gw_label, run);
		free(gw_label);
		if (!gw)
			continue;
		if (!header) {
			buf_adds(b, "\n## Direct and through the gateway, side by side\n\n"
				    "| role | concurrency | direct req/s | gateway req/s | gateway/direct "
				    "| direct TTFT median ms | gateway TTFT median ms | direct E2EL median ms "
				    "| gateway E2EL median ms |\n"
				    "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
			header = true;
		}
		const char *lat = is_gen(run) ? "e2el_ms" : "latency_ms";
		buf_printf(b, "| %s | %lld", label,
			   (long long)json_integer_value(json_object_get(run, "concurrency")));
		cell(b, num(run, "request_throughput"), "%.2f");
		cell(b, num(gw, "request_throughput"), "%.2f");
		cell(b, num(gw, "request_throughput") / num(run, "request_throughput"), "%.2fx");
		cell(b, stat(run, "ttft_ms", "median"), "%.1f");
		cell(b, stat(gw, "ttft_ms", "median"), "%.1f");
		cell(b, stat(run, lat, "median"), "%.1f");
		cell(b, stat(gw, lat, "median"), "%.1f");
		buf_adds(b, " |\n");
	}
}

/* One bar per point: the median E2EL (latency), scaled to the largest. */
static void plot(struct buf *b, const json_t *runs)
{
	size_t i;
	json_t *run;
	double max = 0;
	json_array_foreach(runs, i, run) {
		double v = stat(run, is_gen(run) ? "e2el_ms" : "latency_ms", "median");
		if (isfinite(v) && v > max)
			max = v;
	}
	buf_adds(b, "\n## Median latency (E2EL) against concurrency\n\n```\n");
	json_array_foreach(runs, i, run) {
		const char *metric = is_gen(run) ? "e2el_ms" : "latency_ms";
		double v = stat(run, metric, "median"), ttft = stat(run, "ttft_ms", "median");
		int w = isfinite(v) && max > 0 ? (int)lround(50.0 * v / max) : 0;
		buf_printf(b, "%-22.22s c=%-5lld |", s_or(run, "target", "?"),
			   (long long)json_integer_value(json_object_get(run, "concurrency")));
		for (int k = 0; k < w; k++)
			buf_adds(b, isfinite(ttft) && k < (int)lround(50.0 * ttft / max) ? "=" : "#");
		if (isfinite(v))
			buf_printf(b, " %.1f ms\n", v);
		else
			buf_adds(b, " (no completed request)\n");
	}
	buf_adds(b, "```\n\n`=` the median time to first token, `#` the rest of the median "
		    "end-to-end latency; one bar per target and concurrency.\n");
}

char *bench_report_md(const json_t *result)
{
	const json_t *box = json_object_get(result, "box"), *runs = json_object_get(result, "runs");
	struct buf b;
	buf_init(&b, 0);
	buf_printf(&b, "# lobes bench\n\nCommand: `%s`\n\n", s_or(result, "command", "lobes bench"));
	if (json_object_get(result, "date"))
		buf_printf(&b, "Date: %s\n\n", s_or(result, "date", "?"));
	buf_printf(&b, "Box: card %s, profile %s, vLLM %s", s_or(box, "card", "(unknown)"),
		   s_or(box, "profile", "(none)"), s_or(box, "vllm_version", "(not reported)"));
	if (json_object_get(box, "loadavg"))
		buf_printf(&b, ", load average %s", s_or(box, "loadavg", "?"));
	buf_adds(&b, "\n\nMetrics as vLLM's `bench serve` defines them: TTFT (time to first token), "
		     "TPOT (time per output token after the first), ITL (inter-token latency), E2EL "
		     "(end-to-end latency); token counts from the engine's `usage`.\n\n");
	table(&b, runs);
	side_by_side(&b, runs);
	plot(&b, runs);
	return buf_take(&b);
}
