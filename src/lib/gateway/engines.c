/*
 * engines.c — the engines' own figures for /status (engines.h): one thread
 * that, every ENGINE_POLL_MS, scrapes the /metrics of each feasible role
 * served on this box (not one proxied to a peer) with a bounded time, and
 * turns the last two samples into running, waiting, KV-cache usage,
 * prompt and generation tokens/s and the MTP acceptance over the interval
 * (engine_rates, as Prometheus's rate() reads counters).
 *
 * Which names to read depends on the engine's vLLM: the role's image
 * (<ROLE>_IMAGE in .env) is looked up in the shipped knowledge
 * (data/images/, loaded once by this thread, with the operator's files of
 * the deploy dir), whose registry folder names data/vllm/<folder>/
 * metrics.txt. A role whose image is unset or unknown has no figures and
 * says why; so does one whose scrape fails (its previous sample is
 * dropped: a restarted engine's rates start again).
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "../runtime/runtime.h"
#include "../util/cleanup.h"
#include "engines.h"

struct role_poll {
	char folder[32];
	struct engine_metric_names names;
	bool loaded;
	bool have_prev;
	struct engine_sample prev;
};

struct engine_poll {
	struct gw_live *live;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	struct engine_view view[ROLE__COUNT]; /* under mu */
	struct role_poll rp[ROLE__COUNT];     /* the thread's own */
	struct knowledge k;
	bool k_loaded;
	char k_error[128];
};

static void set_view(struct engine_poll *p, int r, const struct engine_view *v)
{
	pthread_mutex_lock(&p->mu);
	p->view[r] = *v;
	pthread_mutex_unlock(&p->mu);
}

/* The registry folder of role r's image, or NULL with why. */
static const char *folder_of(struct engine_poll *p, const struct gw_role *gr, char *why, size_t n)
{
	if (!gr->image || !*gr->image) {
		snprintf(why, n, "no image in .env: the engine's metric names are unknown");
		return NULL;
	}
	if (!p->k_loaded && !*p->k_error) {
		struct err *e = NULL;
		struct gw_config *c = gw_live_get(p->live);
		if (knowledge_load(&p->k, c->dir, &e) < 0)
			snprintf(p->k_error, sizeof(p->k_error), "%s", e ? e->msg : "knowledge did not load");
		else
			p->k_loaded = true;
		gw_config_unref(c);
		err_free(e);
	}
	const struct vimage *vi = p->k_loaded ? knowledge_image(&p->k, gr->image) : NULL;
	if (!vi)
		snprintf(why, n, "%s", p->k_loaded ? "the image is not in data/images/" : p->k_error);
	return vi ? vi->registry : NULL;
}

static void poll_role(struct engine_poll *p, const struct gw_config *c, int r)
{
	const struct gw_role *gr = &c->roles[r];
	struct role_poll *rp = &p->rp[r];
	struct engine_view v = { .running = NAN, .waiting = NAN, .kv_usage = NAN, .prompt_tps = NAN,
				 .generation_tps = NAN, .accept = NAN };
	if (!gr->feasible || gw_role_proxy_peer(c, r)) {
		rp->have_prev = false;
		set_view(p, r, &v);
		return;
	}
	const char *folder = folder_of(p, gr, v.error, sizeof(v.error));
	if (folder && (!rp->loaded || strcmp(rp->folder, folder) != 0)) {
		if (rp->loaded)
			engine_metric_names_free(&rp->names);
		struct err *e = NULL;
		rp->loaded = engine_metric_names_load(&rp->names, folder, &e) == 0;
		if (!rp->loaded) {
			engine_metric_names_free(&rp->names);
			snprintf(v.error, sizeof(v.error), "%s", e ? e->msg : "no metric names");
		}
		snprintf(rp->folder, sizeof(rp->folder), "%s", rp->loaded ? folder : "");
		rp->have_prev = false;
		err_free(e);
	}
	struct engine_sample cur;
	struct err *e = NULL;
	if (!folder || !rp->loaded || engine_metrics_scrape(gr->port, 1000, &rp->names, &cur, &e) < 0) {
		if (e)
			snprintf(v.error, sizeof(v.error), "%s", e->msg);
		err_free(e);
		rp->have_prev = false;
		set_view(p, r, &v);
		return;
	}
	v.have = true;
	v.running = cur.v[EM_RUNNING];
	v.waiting = cur.v[EM_WAITING];
	v.kv_usage = cur.v[EM_KV_USAGE];
	snprintf(v.folder, sizeof(v.folder), "%s", rp->folder);
	if (rp->have_prev) {
		struct engine_rates rt;
		engine_rates(&rp->prev, &cur, &rt);
		v.prompt_tps = rt.prompt_tps;
		v.generation_tps = rt.generation_tps;
		v.accept = isnan(rt.accept) ? rt.accept_total : rt.accept;
	}
	rp->prev = cur;
	rp->have_prev = true;
	set_view(p, r, &v);
}

static void *run(void *arg)
{
	struct engine_poll *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		pthread_mutex_unlock(&p->mu);
		struct gw_config *c = gw_live_get(p->live);
		for (int r = 0; r < ROLE__COUNT; r++)
			poll_role(p, c, r);
		gw_config_unref(c);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += ENGINE_POLL_MS / 1000;
		ts.tv_nsec += (ENGINE_POLL_MS % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&p->mu);
		if (!p->stop)
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct engine_poll *engine_poll_start(struct gw_live *live, struct err **err)
{
	struct engine_poll *p = xcalloc(1, sizeof(*p));
	p->live = live;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (int r = 0; r < ROLE__COUNT; r++)
		p->view[r] = (struct engine_view){ .running = NAN, .waiting = NAN, .kv_usage = NAN,
						   .prompt_tps = NAN, .generation_tps = NAN, .accept = NAN };
	int e = pthread_create(&p->th, NULL, run, p);
	if (e) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		free(p);
		err_errno(err, EXIT_RUNTIME, e, "engine metrics thread");
		return NULL;
	}
	return p;
}

void engine_poll_view(struct engine_poll *p, int r, struct engine_view *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->view[r];
	pthread_mutex_unlock(&p->mu);
}

void engine_poll_stop(struct engine_poll *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	for (int r = 0; r < ROLE__COUNT; r++)
		if (p->rp[r].loaded)
			engine_metric_names_free(&p->rp[r].names);
	if (p->k_loaded)
		knowledge_free(&p->k);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
