/*
 * metrics_expo.c — the gateway's counters (metrics.c) in the Prometheus
 * text exposition format, version 0.0.4: one HELP and one TYPE line per
 * family, then its samples; counters end in _total, histograms carry
 * cumulative _bucket{le=...} samples ending in le="+Inf" (equal to _count),
 * _sum and _count. Written by hand (Debian has no C client library; the
 * C++ one, prometheus-cpp, does not fit a C program), and checked by
 * `promtool check metrics` in tests/cases/gateway_metrics.t.
 *
 * A role/route cell is shown once a request ended in it, so an idle
 * gateway shows few series; the per-role gauges are shown for every role.
 * Label values are only role names, route paths of the route table, status
 * codes, the gateway's own error codes and fixed words: nothing a client
 * chose, so nothing needs escaping.
 */
#include <stddef.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "metrics.h"

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define P "lobes_gateway_"

static const char *const bucket_le[GW_M_BUCKETS] = {
	"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5",
	"5", "10", "30", "60", "120", "300", "600",
};
static const char *const throttle_name[GW_THR__COUNT] = { "concurrency", "pressure", "rate", "key" };
static const char *const uperr_name[GW_UPERR__COUNT] = { "connect", "timeout", "read" };

static void family(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP " P "%s %s\n# TYPE " P "%s %s\n", name, help, name, type);
}

static bool shown(const struct gw_metrics *m, int r, int e)
{
	return __atomic_load_n(&m->cell[r][e].seen, __ATOMIC_ACQUIRE) > 0;
}

#define CELLS(m, r, e)                                      \
	for (int r = 0; r < GW_M_ROLES; r++)                \
		for (int e = 0; e < GW_M_ROUTES; e++)       \
			if (shown(m, r, e))

#define LBL "role=\"%s\",route=\"%s\""
#define LBLV(r, e) gw_metrics_role_label(r), gw_metrics_route_label((enum gw_endpoint)e)

static void hist(struct buf *b, const struct gw_metrics *m, const char *name, const char *help,
		 size_t off)
{
	family(b, name, "histogram", help);
	CELLS(m, r, e) {
		const struct gw_hist *h = (const struct gw_hist *)((const char *)&m->cell[r][e] + off);
		unsigned long long cum = 0;
		for (int i = 0; i <= GW_M_BUCKETS; i++) {
			cum += LD(h->n[i]);
			buf_printf(b, P "%s_bucket{" LBL ",le=\"%s\"} %llu\n", name, LBLV(r, e),
				   i < GW_M_BUCKETS ? bucket_le[i] : "+Inf", cum);
		}
		buf_printf(b, P "%s_sum{" LBL "} %.6f\n", name, LBLV(r, e), LD(h->sum_us) / 1e6);
		buf_printf(b, P "%s_count{" LBL "} %llu\n", name, LBLV(r, e), cum);
	}
}

/* A counter of every shown cell, from the field at off. */
static void counter(struct buf *b, const struct gw_metrics *m, const char *name, const char *help,
		    size_t off)
{
	family(b, name, "counter", help);
	CELLS(m, r, e) {
		const unsigned long long *v =
			(const unsigned long long *)((const char *)&m->cell[r][e] + off);
		buf_printf(b, P "%s{" LBL "} %llu\n", name, LBLV(r, e), LD(*v));
	}
}

static void per_cell(struct buf *b, const struct gw_metrics *m)
{
	family(b, "requests_total", "counter", "Requests answered, by role, route and HTTP status code.");
	CELLS(m, r, e) {
		for (int i = 0; i <= GW_M_CODES; i++) {
			unsigned long long v = LD(m->cell[r][e].codes[i]);
			if (!v)
				continue;
			char code[8];
			snprintf(code, sizeof(code), i ? "%d" : "other", i + 99);
			buf_printf(b, P "requests_total{" LBL ",code=\"%s\"} %llu\n", LBLV(r, e), code, v);
		}
	}
	hist(b, m, "request_duration_seconds", "Time from a request's arrival to its last byte.",
	     offsetof(struct gw_mcell, dur));
	hist(b, m, "time_to_first_byte_seconds",
	     "Time from a request's arrival to the first byte of its answer's body (a stream: its first frame).",
	     offsetof(struct gw_mcell, ttfb));
	family(b, "requests_in_flight", "gauge", "Requests relayed to an engine or a peer right now.");
	CELLS(m, r, e)
		buf_printf(b, P "requests_in_flight{" LBL "} %lld\n", LBLV(r, e), LD(m->cell[r][e].inflight));
	family(b, "throttled_total", "counter",
	       "429 answers by reason: concurrency (the role's in-flight cap), pressure (alias requests shed under swap or iowait), rate (an engine's or peer's own 429).");
	CELLS(m, r, e)
		for (int i = 0; i < GW_THR__COUNT; i++)
			buf_printf(b, P "throttled_total{" LBL ",reason=\"%s\"} %llu\n", LBLV(r, e),
				   throttle_name[i], LD(m->cell[r][e].throttled[i]));
	family(b, "error_answers_total", "counter",
	       "Errors the gateway answered itself (not an engine's), by OpenAI error code: 404 role_infeasible and model_not_found, 503 backend_unavailable, ...");
	CELLS(m, r, e)
		for (int i = 0; gw_metrics_own_codes[i]; i++) {
			unsigned long long v = LD(m->cell[r][e].own[i]);
			if (v)
				buf_printf(b, P "error_answers_total{" LBL ",code=\"%s\"} %llu\n", LBLV(r, e),
					   gw_metrics_own_codes[i], v);
		}
	family(b, "upstream_errors_total", "counter",
	       "Relays an engine or peer failed: connect (no connection), timeout (silent past the read timeout), read (broke off).");
	CELLS(m, r, e)
		for (int i = 0; i < GW_UPERR__COUNT; i++)
			buf_printf(b, P "upstream_errors_total{" LBL ",kind=\"%s\"} %llu\n", LBLV(r, e),
				   uperr_name[i], LD(m->cell[r][e].upstream_err[i]));
	counter(b, m, "stream_cancels_total", "Streams whose client went away before the engine finished (the engine's request is cancelled).",
		offsetof(struct gw_mcell, stream_cancels));
	counter(b, m, "request_bytes_total", "Request body bytes received.",
		offsetof(struct gw_mcell, req_bytes));
	counter(b, m, "response_bytes_total", "Response body bytes sent.",
		offsetof(struct gw_mcell, resp_bytes));
	counter(b, m, "prompt_tokens_total", "Prompt tokens, from the usage object of the engines' answers.",
		offsetof(struct gw_mcell, prompt_tokens));
	counter(b, m, "completion_tokens_total", "Completion tokens, from the usage object of the engines' answers.",
		offsetof(struct gw_mcell, completion_tokens));
}

char *gw_metrics_render(const struct gw_metrics *m, const struct gw_expo_state *st)
{
	struct buf b;
	buf_init(&b, 0);
	per_cell(&b, m);
	family(&b, "role_ready", "gauge", "1 when the role's engine answered its last /health poll with 200.");
	for (int r = 0; r < ROLE__COUNT; r++)
		buf_printf(&b, P "role_ready{role=\"%s\"} %d\n", role_name((enum role_id)r), st->ready[r] ? 1 : 0);
	family(&b, "role_feasible", "gauge", "1 when the profile serves the role on this box.");
	for (int r = 0; r < ROLE__COUNT; r++)
		buf_printf(&b, P "role_feasible{role=\"%s\"} %d\n", role_name((enum role_id)r),
			   st->feasible[r] ? 1 : 0);
	family(&b, "open_requests", "gauge", "Requests the gateway holds right now, on every route.");
	buf_printf(&b, P "open_requests %lld\n", st->open_requests);
	family(&b, "workers", "gauge", "Worker loops serving the port.");
	buf_printf(&b, P "workers %d\n", st->workers);
	family(&b, "build_info", "gauge", "The gateway's build: always 1.");
	buf_printf(&b, P "build_info{version=\"%s\"} 1\n", m->version[0] ? m->version : "unknown");
	family(&b, "start_time_seconds", "gauge", "When the gateway started, seconds since the Unix epoch.");
	buf_printf(&b, P "start_time_seconds %.3f\n", m->start_s);
	family(&b, "config_reloads_total", "counter", "Settings swapped in by a reload (SIGHUP).");
	buf_printf(&b, P "config_reloads_total %llu\n", LD(((struct gw_metrics *)m)->reloads));
	return buf_take(&b);
}
