/*
 * bench.c — the load generator: one point (a concurrency, a rate) against
 * one target on libcurl's multi interface, in the calling thread.
 *
 * Requests are launched while fewer than `concurrency` are in flight, at
 * Poisson arrival times when a rate is given (exponential gaps drawn from
 * the seed), until `requests` were sent or `duration_s` has passed; the
 * ones in flight then finish. Each request's stream is read as it comes:
 * the write callback stamps every SSE chunk with choices (TTFT, ITL, as
 * vLLM's bench does) and keeps the engine's usage. The figures are made in
 * summary() at the end; timing is read on the monotonic clock.
 */
#include <curl/curl.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "measure.h"
#include "measure_int.h"

#define MAX_BODY ((size_t)16 << 20)

/* What one request came to. */
struct rec {
	bool ok;
	char error[24];      /* kind when !ok */
	double ttft, e2el;   /* seconds */
	long in, out;        /* usage: prompt and completion tokens (-1: none) */
};

struct run;

/* One request in flight. */
struct slot {
	struct run *run;
	CURL *h;
	struct curl_slist *hdrs;
	char *body;
	struct buf data;     /* streaming: the unfinished line; else the whole body */
	long index;
	double t0, t_last;
	double *itl;         /* this request's gaps, pooled into the run's when it succeeds */
	size_t n_itl, a_itl;
	bool first, done, malformed;
};

struct run {
	const struct bench_target *t;
	const struct bench_opts *o;
	struct rec *recs;
	double *itl;
	size_t n_itl, a_itl;
};

static void add_itl(double **v, size_t *n, size_t *a, double x)
{
	if (*n == *a) {
		*a = *a ? 2 * *a : 256;
		*v = xrealloc(*v, *a * sizeof **v);
	}
	(*v)[(*n)++] = x;
}

/* One SSE line of a generate stream. */
static void sse_line(struct slot *s, const char *line)
{
	struct rec *rec = &s->run->recs[s->index];

	if (strncmp(line, "data:", 5))
		return; /* comments, event names, blank separators */
	line += 5;
	while (*line == ' ')
		line++;
	if (!strcmp(line, "[DONE]")) {
		s->done = true;
		return;
	}
	json_error_t je;
	json_auto_t *ev = json_loads(line, 0, &je);
	if (!json_is_object(ev)) {
		s->malformed = true;
		return;
	}
	json_t *choices = json_object_get(ev, "choices");
	if (json_is_array(choices) && json_array_size(choices)) {
		double now = measure_now();
		if (!s->first) {
			s->first = true;
			rec->ttft = now - s->t0;
		} else {
			add_itl(&s->itl, &s->n_itl, &s->a_itl, now - s->t_last);
		}
		s->t_last = now;
	}
	json_t *usage = json_object_get(ev, "usage");
	if (json_is_object(usage)) {
		json_t *pt = json_object_get(usage, "prompt_tokens");
		json_t *ct = json_object_get(usage, "completion_tokens");
		if (json_is_integer(pt) && json_is_integer(ct)) {
			rec->in = (long)json_integer_value(pt);
			rec->out = (long)json_integer_value(ct);
		}
	}
}

static size_t on_data(char *p, size_t size, size_t n, void *cls)
{
	struct slot *s = cls;
	size_t len = size * n;

	if (buf_add(&s->data, p, len) < 0)
		return 0; /* over the cap: libcurl ends the transfer */
	if (s->run->t->kind != BENCH_GENERATE)
		return len;
	char *start = s->data.data, *nl;
	while ((nl = memchr(start, '\n', s->data.len - (size_t)(start - s->data.data)))) {
		*nl = '\0';
		if (nl > start && nl[-1] == '\r')
			nl[-1] = '\0';
		sse_line(s, start);
		start = nl + 1;
	}
	size_t rest = s->data.len - (size_t)(start - s->data.data);
	memmove(s->data.data, start, rest);
	s->data.len = rest;
	s->data.data[rest] = '\0';
	return len;
}

/* The request body of request i. */
static char *request_body(const struct run *r, long i, struct err **err)
{
	const struct bench_opts *o = r->o;
	json_auto_t *body = json_pack("{s:s}", "model", r->t->model);

	if (r->t->kind == BENCH_GENERATE) {
		_cleanup_free_ char *prompt = bench_prompt(o->seed, i, o->input_len, err);
		if (!prompt)
			return NULL;
		json_object_set_new(body, "prompt", json_string(prompt));
		json_object_set_new(body, "max_tokens", json_integer(o->output_len));
		json_object_set_new(body, "temperature", json_real(0));
		json_object_set_new(body, "stream", json_true());
		json_object_set_new(body, "stream_options", json_pack("{s:b}", "include_usage", 1));
		if (o->ignore_eos)
			json_object_set_new(body, "ignore_eos", json_true());
	} else {
		json_t *inputs = json_array();
		for (int j = 0; j < o->batch; j++) {
			char *p = bench_prompt(o->seed, i * o->batch + j + 1, o->input_len, err);
			if (!p) {
				json_decref(inputs);
				return NULL;
			}
			json_array_append_new(inputs, json_string(p));
			free(p);
		}
		if (r->t->kind == BENCH_EMBED) {
			json_object_set_new(body, "input", inputs);
		} else {
			_cleanup_free_ char *q = bench_prompt(o->seed, -1 - i, 8, err);
			if (!q) {
				json_decref(inputs);
				return NULL;
			}
			json_object_set_new(body, "query", json_string(q));
			json_object_set_new(body, "documents", inputs);
		}
	}
	return json_dumps(body, JSON_COMPACT);
}

static const char *path_of(enum bench_kind k)
{
	return k == BENCH_GENERATE ? "/v1/completions" : k == BENCH_EMBED ? "/v1/embeddings"
									  : "/v1/rerank";
}

static int slot_start(struct run *r, CURLM *m, struct slot *s, long i, struct err **err)
{
	memset(s, 0, sizeof *s);
	s->run = r;
	s->index = i;
	buf_init(&s->data, MAX_BODY);
	r->recs[i] = (struct rec){ .in = -1, .out = -1 };
	if (!(s->body = request_body(r, i, err)))
		return -1;
	s->h = curl_easy_init();
	if (!s->h)
		return err_set(err, EXIT_INTERNAL, "the HTTP client cannot be set up");
	_cleanup_free_ char *url = xasprintf("%s%s", r->t->origin, path_of(r->t->kind));
	s->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	if (r->t->bearer) {
		_cleanup_free_ char *auth = xasprintf("Authorization: Bearer %s", r->t->bearer);
		s->hdrs = curl_slist_append(s->hdrs, auth);
	}
	curl_easy_setopt(s->h, CURLOPT_URL, url);
	curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdrs);
	curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->body);
	curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(s->h, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
	curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(s->h, CURLOPT_TIMEOUT_MS, (long)(r->o->timeout_s * 1000));
	curl_easy_setopt(s->h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	s->t0 = measure_now();
	if (curl_multi_add_handle(m, s->h) != CURLM_OK)
		return err_set(err, EXIT_INTERNAL, "the HTTP client cannot start a request");
	return 0;
}

/* A finished transfer: judge it into its record. */
static void slot_finish(struct slot *s, CURLcode cc)
{
	struct rec *rec = &s->run->recs[s->index];
	long status = 0;

	rec->e2el = measure_now() - s->t0;
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
	if (cc == CURLE_COULDNT_CONNECT)
		snprintf(rec->error, sizeof rec->error, "refused");
	else if (cc == CURLE_OPERATION_TIMEDOUT)
		snprintf(rec->error, sizeof rec->error, "timeout");
	else if (status >= 300 || (cc == CURLE_OK && status < 200))
		snprintf(rec->error, sizeof rec->error, "http-%ld", status);
	else if (cc == CURLE_PARTIAL_FILE || cc == CURLE_RECV_ERROR || cc == CURLE_GOT_NOTHING ||
		 cc == CURLE_SEND_ERROR)
		snprintf(rec->error, sizeof rec->error, "dropped");
	else if (cc != CURLE_OK)
		snprintf(rec->error, sizeof rec->error, "transport");
	else if (s->run->t->kind == BENCH_GENERATE) {
		if (s->malformed || !s->first)
			snprintf(rec->error, sizeof rec->error, "malformed");
		else if (!s->done)
			snprintf(rec->error, sizeof rec->error, "dropped");
		else if (rec->out < 0)
			snprintf(rec->error, sizeof rec->error, "no-usage");
		else
			rec->ok = true;
	} else {
		json_error_t je;
		json_auto_t *body = json_loads(buf_str(&s->data), 0, &je);
		const char *key = s->run->t->kind == BENCH_EMBED ? "data" : "results";
		if (!json_is_array(json_object_get(body, key)))
			snprintf(rec->error, sizeof rec->error, "malformed");
		else
			rec->ok = true;
		json_t *pt = json_object_get(json_object_get(body, "usage"), "prompt_tokens");
		if (json_is_integer(pt))
			rec->in = (long)json_integer_value(pt);
	}
	for (size_t i = 0; rec->ok && i < s->n_itl; i++)
		add_itl(&s->run->itl, &s->run->n_itl, &s->run->a_itl, s->itl[i]);
	free(s->itl);
	curl_easy_cleanup(s->h);
	curl_slist_free_all(s->hdrs);
	free(s->body);
	buf_free(&s->data);
	s->h = NULL;
}

/* Exponential gap of mean 1/rate from the run's generator. */
static double next_gap(uint64_t *state, double rate)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	double u = ((double)(*state >> 11) + 0.5) / 9007199254740992.0;
	return -log(u) / rate;
}

/* The figures of a finished run (the records, the pooled ITL). */
static json_t *summary(struct run *r, long sent, double duration)
{
	const struct bench_opts *o = r->o;
	long completed = 0, in = 0, out = 0, good = 0;
	bool any_in = false;
	double *ttft = xcalloc((size_t)sent + 1, sizeof *ttft), *tpot = xcalloc((size_t)sent + 1, sizeof *tpot);
	double *e2el = xcalloc((size_t)sent + 1, sizeof *e2el);
	size_t n_tpot = 0;
	json_t *errors = json_object();

	for (long i = 0; i < sent; i++) {
		struct rec *rec = &r->recs[i];
		if (!rec->ok) {
			json_int_t c = json_integer_value(json_object_get(errors, rec->error));
			json_object_set_new(errors, rec->error, json_integer(c + 1));
			continue;
		}
		double tp = 0;
		if (rec->out > 1)
			tpot[n_tpot++] = tp = (rec->e2el - rec->ttft) / (double)(rec->out - 1);
		ttft[completed] = rec->ttft;
		e2el[completed++] = rec->e2el;
		if (rec->in >= 0) {
			in += rec->in;
			any_in = true;
		}
		if (rec->out > 0)
			out += rec->out;
		bool ok = !(o->slo_ttft_ms > 0 && rec->ttft * 1e3 > o->slo_ttft_ms) &&
			  !(o->slo_tpot_ms > 0 && tp * 1e3 > o->slo_tpot_ms) &&
			  !(o->slo_e2el_ms > 0 && rec->e2el * 1e3 > o->slo_e2el_ms);
		good += ok;
	}
	bool slo = o->slo_ttft_ms > 0 || o->slo_tpot_ms > 0 || o->slo_e2el_ms > 0;
	double d = duration > 0 ? duration : NAN;
	json_t *res = json_pack("{s:s, s:s, s:s, s:s, s:i, s:o, s:i, s:i, s:i, s:i, s:i, s:o, s:f}",
				"target", r->t->label, "url", r->t->origin, "model", r->t->model,
				"kind", r->t->kind == BENCH_GENERATE ? "generate"
					: r->t->kind == BENCH_EMBED ? "embed" : "rerank",
				"concurrency", o->concurrency,
				"rate", o->rate > 0 ? json_real(o->rate) : json_null(),
				"input_len", o->input_len, "output_len", o->output_len,
				"sent", (json_int_t)sent, "completed", (json_int_t)completed,
				"failed", (json_int_t)(sent - completed), "errors", errors,
				"duration_s", duration);
	json_object_set_new(res, "input_tokens", any_in ? json_integer(in) : json_null());
	json_object_set_new(res, "request_throughput", json_real(completed / d));
	if (r->t->kind == BENCH_GENERATE) {
		json_object_set_new(res, "output_tokens", json_integer(out));
		json_object_set_new(res, "output_throughput", json_real(out / d));
		json_object_set_new(res, "total_token_throughput", json_real((in + out) / d));
		json_object_set_new(res, "goodput", slo ? json_real(good / d) : json_null());
		json_object_set_new(res, "ttft_ms", measure_summary_ms(ttft, (size_t)completed));
		json_object_set_new(res, "tpot_ms", measure_summary_ms(tpot, n_tpot));
		json_object_set_new(res, "itl_ms", measure_summary_ms(r->itl, r->n_itl));
		json_object_set_new(res, "e2el_ms", measure_summary_ms(e2el, (size_t)completed));
	} else {
		json_object_set_new(res, "batch", json_integer(o->batch));
		json_object_set_new(res, "input_throughput", json_real(completed * o->batch / d));
		json_object_set_new(res, "latency_ms", measure_summary_ms(e2el, (size_t)completed));
	}
	/* a rate over no time is not a number: null, never zero */
	const char *rates[] = { "request_throughput", "output_throughput", "total_token_throughput",
				"goodput", "input_throughput" };
	for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
		json_t *v = json_object_get(res, rates[i]);
		if (json_is_real(v) && !isfinite(json_real_value(v)))
			json_object_set_new(res, rates[i], json_null());
	}
	free(ttft);
	free(tpot);
	free(e2el);
	return res;
}

json_t *bench_run(const struct bench_target *t, const struct bench_opts *o, struct err **err)
{
	if (o->concurrency < 1 || (o->requests <= 0 && o->duration_s <= 0) || o->timeout_s <= 0 ||
	    (t->kind != BENCH_GENERATE && o->batch < 1)) {
		err_set(err, EXIT_INTERNAL, "bench: a run needs concurrency, a bound and a timeout");
		return NULL;
	}
	/* records grow with the requests sent (a --duration run has no count) */
	size_t cap = o->requests > 0 ? (size_t)o->requests : 1024;
	struct run r = { .t = t, .o = o, .recs = xcalloc(cap, sizeof *r.recs) };
	struct slot *slots = xcalloc((size_t)o->concurrency, sizeof *slots);
	CURLM *m = curl_multi_init();
	uint64_t rng = o->seed ^ 0x243f6a8885a308d3ULL;
	long sent = 0;
	int inflight = 0;
	double start = measure_now(), end = start, next = start;
	json_t *res = NULL;

	if (!m) {
		err_set(err, EXIT_INTERNAL, "the HTTP client cannot be set up");
		goto out;
	}
	if (o->rate > 0)
		next += next_gap(&rng, o->rate);
	for (;;) {
		double now = measure_now();
		bool more = (o->requests <= 0 || sent < o->requests) &&
			    (o->duration_s <= 0 || now - start < o->duration_s);
		while (more && inflight < o->concurrency && (o->rate <= 0 || now >= next)) {
			int k = 0;
			while (slots[k].h)
				k++;
			if ((size_t)sent == cap) {
				cap *= 2;
				r.recs = xrealloc(r.recs, cap * sizeof *r.recs);
			}
			if (slot_start(&r, m, &slots[k], sent, err) < 0)
				goto out;
			sent++;
			inflight++;
			if (o->rate > 0)
				next += next_gap(&rng, o->rate);
			more = (o->requests <= 0 || sent < o->requests) &&
			       (o->duration_s <= 0 || now - start < o->duration_s);
		}
		if (!more && !inflight)
			break;
		int running, left;
		curl_multi_perform(m, &running);
		CURLMsg *msg;
		bool freed = false;
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			struct slot *s = NULL;
			CURLcode cc = msg->data.result;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
			curl_multi_remove_handle(m, s->h);
			slot_finish(s, cc);
			inflight--;
			freed = true;
			end = measure_now();
			if (o->progress)
				o->progress(o->progress_cls, (size_t)(sent - inflight),
					    o->requests > 0 ? (size_t)o->requests : 0, end - start);
		}
		int wait_ms = freed ? 0 : 50; /* a freed slot takes the next request at once */
		if (more && o->rate > 0 && inflight < o->concurrency) {
			double gap = (next - measure_now()) * 1e3;
			wait_ms = gap < 0 ? 0 : gap < wait_ms ? (int)gap : wait_ms;
		}
		curl_multi_poll(m, NULL, 0, wait_ms, NULL);
	}
	res = summary(&r, sent, end - start);
out:
	for (int k = 0; k < o->concurrency; k++)
		if (slots[k].h) {
			curl_multi_remove_handle(m, slots[k].h);
			slot_finish(&slots[k], CURLE_ABORTED_BY_CALLBACK);
		}
	if (m)
		curl_multi_cleanup(m);
	free(slots);
	free(r.recs);
	free(r.itl);
	return res;
}

int bench_shape(const char *name, int *input_len, int *output_len)
{
	static const struct {
		const char *name;
		int in, out;
	} shapes[] = { { "balanced", 256, 256 }, { "prompt-heavy", 1024, 64 },
		       { "decode-heavy", 64, 512 } };

	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
		if (!strcmp(name, shapes[i].name)) {
			*input_len = shapes[i].in;
			*output_len = shapes[i].out;
			return 0;
		}
	return -1;
}
