/*
 * view.c — one look at the running fleet (view.h): the containers of the
 * compose project (one Engine API list), then per feasible role /health,
 * /metrics with its version's names, and the rates against the previous
 * look; the box's memory and pressure; and, for a role that is not ready,
 * what its log says (through the caller's explain: triage is above this
 * room).
 */
#include <math.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "engine_api.h"
#include "view.h"

#define EXPLAIN_TAIL 4000 /* log lines handed to explain */

/* Which recorded list role's metric names come from (see view.h). */
static void pick_names(struct view_role *vr, const struct knowledge *k, long timeout_ms,
		       const struct view_role *before)
{
	if (before && before->folder && strcmp(before->image, vr->image) == 0) {
		vr->folder = xstrdup(before->folder);
		vr->names_from = xstrdup(before->names_from);
		return;
	}
	char *from = NULL;
	vr->folder = engine_metric_folder(k, vr->image, vr->port, timeout_ms, &from);
	vr->names_from = from;
}

static void look_role(struct view_role *vr, const struct engine_container *c,
		      const struct knowledge *k, const struct view_role *before, long timeout_ms)
{
	vr->have_container = c != NULL;
	vr->state = xstrdup(c ? c->state : "not running");
	vr->health = xstrdup(c ? c->health : "none");
	vr->image = xstrdup(c ? c->image : "");
	vr->container = xstrdup(c ? c->id : "");
	vr->restart_count = c ? c->restart_count : 0;
	vr->exit_code = c ? c->exit_code : 0;
	vr->oom_killed = c && c->oom_killed;
	for (int m = 0; m < EM__COUNT; m++)
		vr->sample.v[m] = NAN;
	engine_rates(NULL, &vr->sample, &vr->rates);
	if (!c || strcmp(c->state, "running") != 0 || vr->port <= 0)
		return;
	vr->ready = http_health(vr->port, (int)timeout_ms) == 200;
	pick_names(vr, k, timeout_ms, before);
	struct engine_metric_names names = { 0 };
	struct err *e = NULL;
	if (!vr->folder)
		vr->scrape_error = xstrdup("no recorded vLLM metric names");
	else if (engine_metric_names_load(&names, vr->folder, &e) < 0 ||
		 engine_metrics_scrape(vr->port, timeout_ms, &names, &vr->sample, &e) < 0)
		vr->scrape_error = xstrdup(e->msg);
	else
		vr->scraped = true;
	err_free(e);
	engine_metric_names_free(&names);
	bool same_boot = before && before->scraped && strcmp(before->container, vr->container) == 0;
	engine_rates(same_boot ? &before->sample : NULL, &vr->sample, &vr->rates);
}

void view_sample(struct view *v, const struct fleet *f, const struct knowledge *k,
		 const struct view *prev, long timeout_ms, view_explain_fn explain, void *ud)
{
	memset(v, 0, sizeof(*v));
	v->at = time(NULL);
	struct err *e = NULL;
	struct engine en = { 0 };
	struct engine_container_list l = { 0 };
	if (engine_open(&en, &e) == 0) {
		en.timeout_ms = timeout_ms;
		v->engine_ok = engine_list_project(&en, f->project, &l, &e) == 0;
	}
	if (e)
		v->engine_error = xstrdup(e->msg);
	err_free(e);
	e = NULL;
	for (size_t i = 0; i < f->n_order; i++) {
		enum role_id r = f->order[i];
		struct view_role *vr = &v->roles[v->n++];
		const struct view_role *before = NULL;
		for (size_t j = 0; prev && j < prev->n; j++)
			if (prev->roles[j].role == r)
				before = &prev->roles[j];
		vr->role = r;
		vr->feasible = f->roles[r].feasible;
		vr->port = f->roles[r].port;
		vr->model = xstrdup(f->roles[r].model ? f->roles[r].model : "");
		const struct engine_container *c = v->engine_ok ? engine_container_for_role(&l, role_name(r)) : NULL;
		look_role(vr, c, k, before, timeout_ms);
		if (vr->ready || !c || !explain)
			continue;
		struct engine_log_opts lo = { .tail = EXPLAIN_TAIL };
		_cleanup_free_ char *log = NULL;
		if (engine_logs(&en, c->id, &lo, &log, &e) == 0)
			vr->why = explain(log, ud);
		err_free(e);
		e = NULL;
	}
	engine_container_list_free(&l);
	if (v->engine_ok || en.sock)
		engine_close(&en);
	v->box_ok = box_sample(&v->box, &e) == 0;
	if (e)
		v->box_error = xstrdup(e->msg);
	err_free(e);
	v->iowait_pct = box_iowait_pct(prev && prev->box_ok ? &prev->box : NULL, &v->box);
}

void view_free(struct view *v)
{
	for (size_t i = 0; i < v->n; i++) {
		struct view_role *r = &v->roles[i];
		free(r->model);
		free(r->state);
		free(r->health);
		free(r->image);
		free(r->container);
		free(r->folder);
		free(r->names_from);
		free(r->scrape_error);
		free(r->why);
	}
	free(v->engine_error);
	free(v->box_error);
	memset(v, 0, sizeof(*v));
}

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *role_json(const struct view_role *r)
{
	json_t *o = json_pack("{s:s, s:i, s:s, s:s, s:s, s:b, s:i}", "role", role_name(r->role),
			      "port", r->port, "model", r->model, "state", r->state, "health",
			      r->health, "ready", r->ready, "restart_count", r->restart_count);
	if (r->have_container) {
		json_object_set_new(o, "image", json_string(r->image));
		if (strcmp(r->state, "running") != 0) {
			json_object_set_new(o, "exit_code", json_integer(r->exit_code));
			json_object_set_new(o, "oom_killed", json_boolean(r->oom_killed));
		}
	}
	json_t *m = json_object();
	for (int i = 0; i < EM__COUNT; i++)
		json_object_set_new(m, engine_metric_key((enum engine_metric)i), num(r->sample.v[i]));
	json_object_set_new(o, "metrics", m);
	json_object_set_new(o, "rates",
			    json_pack("{s:o, s:o, s:o, s:o}", "prompt_tokens_per_s",
				      num(r->rates.prompt_tps), "generation_tokens_per_s",
				      num(r->rates.generation_tps), "mtp_acceptance",
				      num(r->rates.accept), "mtp_acceptance_total",
				      num(r->rates.accept_total)));
	if (r->folder)
		json_object_set_new(o, "metric_names",
				    json_pack("{s:s, s:s}", "vllm", r->folder, "from", r->names_from));
	if (r->scrape_error)
		json_object_set_new(o, "metrics_error", json_string(r->scrape_error));
	if (r->why)
		json_object_set_new(o, "why", json_string(r->why));
	return o;
}

json_t *view_json(const struct view *v)
{
	json_t *roles = json_array();
	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(roles, role_json(&v->roles[i]));
	json_t *box = json_object();
	if (v->box_ok) {
		const struct box_sample *b = &v->box;
		uint64_t used = b->swap_total > b->swap_free ? b->swap_total - b->swap_free : 0;
		json_object_set_new(box, "mem_total", json_integer((json_int_t)b->mem_total));
		json_object_set_new(box, "mem_available", json_integer((json_int_t)b->mem_available));
		json_object_set_new(box, "mem_free", json_integer((json_int_t)b->mem_free));
		json_object_set_new(box, "swap_total", json_integer((json_int_t)b->swap_total));
		json_object_set_new(box, "swap_used", json_integer((json_int_t)used));
		json_object_set_new(box, "iowait_pct", v->iowait_pct >= 0 ? json_real(v->iowait_pct)
									 : json_null());
		json_object_set_new(box, "io_pressure_some_avg10",
				    b->io_some_avg10 >= 0 ? json_real(b->io_some_avg10) : json_null());
	} else {
		json_object_set_new(box, "error", json_string(v->box_error ? v->box_error : ""));
	}
	json_t *docker = json_pack("{s:b}", "reachable", v->engine_ok);
	if (v->engine_error)
		json_object_set_new(docker, "error", json_string(v->engine_error));
	return json_pack("{s:I, s:o, s:o, s:o}", "at", (json_int_t)v->at, "roles", roles, "box",
			 box, "docker", docker);
}
