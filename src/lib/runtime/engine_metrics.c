/*
 * engine_metrics.c — the engine's figures out of its own /metrics
 * (engine_metrics.h): which sample names to read for a vLLM version, the
 * scrape, and rates from two scrapes.
 *
 * Names are data, not code: each figure lists the families vLLM has used
 * for it, newest first (vLLM renamed vllm:gpu_cache_usage_perc to
 * vllm:kv_cache_usage_perc when the V1 engine replaced V0), and the one the
 * version's recorded metrics.txt holds wins. The two versions recorded so
 * far (93d8f834d, 5a4c8d992) register the same core families; a version
 * that renames one only needs its metrics.txt.
 *
 * A counter is read from its exposed sample (family + "_total", what
 * prometheus_client writes); "_created" samples and every other family are
 * ignored. vLLM labels each sample with engine and model_name; a
 * data-parallel server has one label set per engine, so figures are summed
 * over label sets (KV usage: the fullest engine's).
 */
#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "../knowledge/knowledge.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "engine_metrics.h"

#define METRICS_BODY_CAP ((size_t)16 << 20)

static const struct {
	const char *key, *kind;
	bool required;
	const char *families[3]; /* newest name first */
} figures[EM__COUNT] = {
	[EM_RUNNING] = { "running", "gauge", true, { "vllm:num_requests_running" } },
	[EM_WAITING] = { "waiting", "gauge", true, { "vllm:num_requests_waiting" } },
	[EM_KV_USAGE] = { "kv_usage", "gauge", true,
			  { "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc" } },
	[EM_PROMPT_TOKENS] = { "prompt_tokens", "counter", true, { "vllm:prompt_tokens" } },
	[EM_GENERATION_TOKENS] = { "generation_tokens", "counter", true,
				   { "vllm:generation_tokens" } },
	[EM_SPEC_DRAFTS] = { "spec_drafts", "counter", false, { "vllm:spec_decode_num_drafts" } },
	[EM_SPEC_DRAFT_TOKENS] = { "spec_draft_tokens", "counter", false,
				   { "vllm:spec_decode_num_draft_tokens" } },
	[EM_SPEC_ACCEPTED] = { "spec_accepted_tokens", "counter", false,
			       { "vllm:spec_decode_num_accepted_tokens" } },
};

const char *engine_metric_key(enum engine_metric m)
{
	return m < EM__COUNT ? figures[m].key : "?";
}

int engine_metric_names_load(struct engine_metric_names *n, const char *folder,
			     struct err **err)
{
	memset(n, 0, sizeof(*n));
	struct vllm_reg reg;
	int rc = vllm_reg_load(&reg, folder, err);
	if (rc == 0 && (!reg.metrics || !reg.metrics[0]))
		rc = err_set(err, EXIT_CONFIG, "data/vllm/%s/metrics.txt: no metric families recorded",
			     folder);
	for (int m = 0; rc == 0 && m < EM__COUNT; m++) {
		for (size_t i = 0; !n->sample[m] && i < ARRAY_SIZE(figures[m].families); i++) {
			const char *fam = figures[m].families[i];
			const char *kind = fam ? vllm_reg_metric_kind(&reg, fam) : NULL;
			if (!kind)
				continue;
			if (strcmp(kind, figures[m].kind) != 0) {
				rc = err_set(err, EXIT_CONFIG,
					     "data/vllm/%s/metrics.txt: %s is recorded as a %s; the %s "
					     "figure needs a %s", folder, fam, kind, figures[m].key,
					     figures[m].kind);
				break;
			}
			n->sample[m] = strcmp(kind, "counter") == 0 ? xasprintf("%s_total", fam)
								    : xstrdup(fam);
		}
		if (rc == 0 && !n->sample[m] && figures[m].required)
			rc = err_set(err, EXIT_CONFIG,
				     "data/vllm/%s/metrics.txt: no family for the %s figure (expected "
				     "%s)", folder, figures[m].key, figures[m].families[0]);
	}
	if (rc == 0)
		n->folder = xstrdup(folder);
	vllm_reg_free(&reg);
	if (rc < 0)
		engine_metric_names_free(n);
	return rc;
}

void engine_metric_names_free(struct engine_metric_names *n)
{
	free(n->folder);
	for (int m = 0; m < EM__COUNT; m++)
		free(n->sample[m]);
	memset(n, 0, sizeof(*n));
}

struct collect {
	const struct engine_metric_names *n;
	struct engine_sample *s;
};

static int on_sample(void *ud, const struct prom_sample *ps, struct err **err)
{
	(void)err;
	struct collect *c = ud;
	for (int m = 0; m < EM__COUNT; m++) {
		if (!c->n->sample[m] || strcmp(ps->name, c->n->sample[m]) != 0)
			continue;
		double *v = &c->s->v[m];
		if (isnan(*v))
			*v = ps->v;
		else if (m == EM_KV_USAGE)
			*v = ps->v > *v ? ps->v : *v;
		else
			*v += ps->v;
	}
	return 0;
}

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int engine_metrics_parse(const char *what, const char *text, size_t len,
			 const struct engine_metric_names *n, struct engine_sample *s,
			 struct err **err)
{
	for (int m = 0; m < EM__COUNT; m++)
		s->v[m] = NAN;
	s->at = now_mono();
	struct collect c = { n, s };
	return prom_parse(what, text, len, on_sample, &c, err) < 0 ? -1 : 0;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	return buf_add(ud, p, size * nmemb) < 0 ? 0 : size * nmemb;
}

/* A GET of http://127.0.0.1:PORT/PATH (never through a proxy, within
 * timeout_ms) whose body goes to b; NULL when curl cannot start one. */
static CURL *loopback_get(int port, const char *path, long timeout_ms, struct buf *b)
{
	pthread_once(&curl_once, curl_init_once);
	CURL *h = curl_easy_init();
	if (!h)
		return NULL;
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	return h;
}

int engine_metrics_scrape(int port, long timeout_ms, const struct engine_metric_names *n,
			  struct engine_sample *s, struct err **err)
{
	_cleanup_free_ char *what = xasprintf("engine on port %d: /metrics", port);
	if (port <= 0 || port > 65535)
		return err_set(err, EXIT_INTERNAL, "%s: not a port", what);
	_cleanup_buf_ struct buf body;
	buf_init(&body, METRICS_BODY_CAP);
	CURL *h = loopback_get(port, "/metrics", timeout_ms, &body);
	if (!h)
		return err_set(err, EXIT_INTERNAL, "curl_easy_init failed");
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	CURLcode rc = curl_easy_perform(h);
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	if (rc == CURLE_WRITE_ERROR)
		return err_set(err, EXIT_RUNTIME, "%s: answer larger than %zu bytes", what,
			       METRICS_BODY_CAP);
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return err_set(err, EXIT_RUNTIME, "%s: no answer within %ld ms", what, timeout_ms);
	if (rc != CURLE_OK)
		return err_set(err, EXIT_RUNTIME, "%s: %s", what,
			       *errbuf ? errbuf : curl_easy_strerror(rc));
	if (code != 200)
		return err_set(err, EXIT_RUNTIME, "%s: HTTP %ld", what, code);
	return engine_metrics_parse(what, buf_str(&body), body.len, n, s, err);
}

/* GET /version of the engine on port: its "version", or NULL. */
static char *engine_version(int port, long timeout_ms)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 64 << 10);
	CURL *h = loopback_get(port, "/version", timeout_ms, &b);
	if (!h)
		return NULL;
	long code = 0;
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	if (code != 200)
		return NULL;
	json_auto_t *j = json_loads(buf_str(&b), 0, NULL);
	const char *v = json_string_value(json_object_get(j, "version"));
	return v ? xstrdup(v) : NULL;
}

/* "0.26." of "0.26.1rc1..." into out; false when v is not MAJOR.MINOR.x. */
static bool minor_prefix(const char *v, char *out, size_t n)
{
	size_t a = strspn(v, "0123456789");
	if (!a || v[a] != '.')
		return false;
	size_t b = strspn(v + a + 1, "0123456789");
	if (!b || v[a + 1 + b] != '.' || a + b + 3 > n)
		return false;
	snprintf(out, n, "%.*s", (int)(a + b + 2), v);
	return true;
}

char *engine_metric_folder(const struct knowledge *k, const char *image, int port, long timeout_ms,
			   char **from)
{
	*from = NULL;
	const struct vimage *newest = NULL;
	for (size_t i = 0; i < k->n_images; i++) {
		const struct vimage *im = &k->images[i];
		if (image && *image && strcmp(im->ref, image) == 0) {
			*from = xstrdup("image");
			return xstrdup(im->registry);
		}
		if (!newest || strcmp(im->vllm_version, newest->vllm_version) > 0)
			newest = im;
	}
	_cleanup_free_ char *ver = port > 0 ? engine_version(port, timeout_ms) : NULL;
	char want[32], have[32];
	for (size_t i = 0; ver && i < k->n_images; i++) {
		const struct vimage *im = &k->images[i];
		if (minor_prefix(ver, want, sizeof(want)) &&
		    minor_prefix(im->vllm_version, have, sizeof(have)) && strcmp(want, have) == 0) {
			*from = xasprintf("version %s", ver);
			return xstrdup(im->registry);
		}
	}
	if (!newest)
		return NULL;
	*from = xstrdup("assumed");
	return xstrdup(newest->registry);
}

/* Increase of a counter from a to b; a reset (b < a) counts from zero. */
static double increase(double a, double b)
{
	if (isnan(a) || isnan(b))
		return NAN;
	return b >= a ? b - a : b;
}

void engine_rates(const struct engine_sample *prev, const struct engine_sample *cur,
		  struct engine_rates *r)
{
	r->prompt_tps = r->generation_tps = r->accept = r->accept_total = NAN;
	const double *c = cur->v;
	if (c[EM_SPEC_DRAFT_TOKENS] > 0 && !isnan(c[EM_SPEC_ACCEPTED]))
		r->accept_total = c[EM_SPEC_ACCEPTED] / c[EM_SPEC_DRAFT_TOKENS];
	if (!prev)
		return;
	const double *p = prev->v;
	double dt = cur->at - prev->at;
	if (!(dt > 0))
		return;
	r->prompt_tps = increase(p[EM_PROMPT_TOKENS], c[EM_PROMPT_TOKENS]) / dt;
	r->generation_tps = increase(p[EM_GENERATION_TOKENS], c[EM_GENERATION_TOKENS]) / dt;
	double drafted = increase(p[EM_SPEC_DRAFT_TOKENS], c[EM_SPEC_DRAFT_TOKENS]);
	double accepted = increase(p[EM_SPEC_ACCEPTED], c[EM_SPEC_ACCEPTED]);
	if (drafted > 0 && !isnan(accepted))
		r->accept = accepted / drafted;
}
