/*
 * serve_ops.c — bringup's ops on the real box; see serve_ops.h.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "../util/clock.h"
#include "memory.h"
#include "serve_ops.h"

static long long mono_ms(void *ud)
{
	(void)ud;
	return clock_mono_ms();
}

static void sleep_ms(void *ud, int ms)
{
	(void)ud;
	clock_sleep_ms(ms);
}

/* compose `up -d --no-deps ROLE` (create if needed, and start). */
static int compose_start(struct serve_rt *s, enum role_id r, struct err **err)
{
	const char *svc[] = { role_name(r), NULL };
	struct proc_result res;
	if (compose_up(&s->compose, svc, &res, err) < 0)
		return -1;
	int rc = compose_result_check("up", &res, err);
	proc_result_free(&res);
	return rc;
}

/* Start role r. The first call starts r through compose (`up -d`), then,
 * while r loads and profiles, has compose create every other role of the
 * plan without starting it (`up --no-start`, one compose run). Each later
 * role is started through the Engine API: milliseconds, where a compose run
 * costs about a second (a Python start-up) between two memory windows. A
 * role whose container is gone by then is started by compose again. */
static int op_start(void *ud, enum role_id r, struct err **err)
{
	struct serve_rt *s = ud;
	if (!s->created) {
		s->created = true;
		if (compose_start(s, r, err) < 0)
			return -1;
		const char *rest[ROLE__COUNT + 1];
		size_t k = 0;
		for (size_t i = 0; s->services[i]; i++)
			if (strcmp(s->services[i], role_name(r)) != 0)
				rest[k++] = s->services[i];
		rest[k] = NULL;
		if (!k)
			return 0;
		struct proc_result res;
		if (compose_create(&s->compose, rest, &res, err) < 0)
			return -1;
		int rc = compose_result_check("up --no-start", &res, err);
		proc_result_free(&res);
		return rc;
	}
	struct engine_container_list l;
	if (engine_list_project(&s->engine, s->fleet->project, &l, err) < 0)
		return -1;
	_cleanup_free_ char *id = NULL;
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.c[i].service, role_name(r)) == 0)
			id = xstrdup(l.c[i].id);
	engine_container_list_free(&l);
	if (!id)
		return compose_start(s, r, err);
	if (engine_start_container(&s->engine, id, err) < 0)
		return err_wrap(err, "start '%s'", role_name(r));
	return 0;
}

static int op_observe(void *ud, enum role_id r, struct role_obs *o, struct err **err)
{
	struct serve_rt *s = ud;
	struct engine_container_list l;
	if (engine_list_project(&s->engine, s->fleet->project, &l, err) < 0)
		return -1;
	const struct engine_container *c = NULL;
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.c[i].service, role_name(r)) == 0)
			c = &l.c[i];
	if (c) {
		o->exists = true;
		o->running = strcmp(c->state, "running") == 0;
		o->restarts = c->restart_count;
		o->exited = strcmp(c->state, "exited") == 0 || strcmp(c->state, "dead") == 0;
		struct engine_log_opts lo = { .tail = -1, .since = 0, .cap = 32u << 20 };
		char *log = NULL;
		if (engine_logs(&s->engine, c->id, &lo, &log, err) < 0) {
			engine_container_list_free(&l);
			return -1;
		}
		struct log_phase ph;
		log_phase_scan(log, &ph);
		o->phase = xstrdup(ph.phase);
		o->window_closed = ph.window_closed;
		o->ready = ph.startup_complete && o->running &&
			   http_health(s->fleet->roles[r].port, 1000) == 200;
		o->log_tail = log; /* the whole boot log: triage reads it, the text shows its end */
	}
	engine_container_list_free(&l);
	return 0;
}

static int op_free(void *ud, uint64_t *f, struct err **err)
{
	(void)ud;
	return meminfo_field("MemFree", f, err);
}

static int op_drop(void *ud, struct err **err)
{
	(void)ud;
	return drop_caches(err);
}

static void op_event(void *ud, const struct bringup_event *ev)
{
	struct serve_rt *s = ud;
	if (s->event)
		s->event(s->event_cls, ev);
}

int serve_rt_open(struct serve_rt *s, struct fleet *f, struct err **err)
{
	s->fleet = f;
	if (compose_open(&s->compose, f->dir, err) < 0 || engine_open(&s->engine, err) < 0 ||
	    engine_ping(&s->engine, err) < 0) {
		serve_rt_close(s);
		return -1;
	}
	return 0;
}

void serve_rt_close(struct serve_rt *s)
{
	compose_free(&s->compose);
	engine_close(&s->engine);
}

struct bringup_ops serve_rt_ops(struct serve_rt *s)
{
	return (struct bringup_ops){ s, op_start, op_observe, op_free, op_drop, op_event, mono_ms, sleep_ms };
}

int serve_rt_stop_role(struct serve_rt *s, enum role_id r, struct err **err)
{
	const char *args[] = { "stop", "-t", "30", role_name(r), NULL };
	struct proc_result res;
	if (compose_run(&s->compose, args, 120000, &res, err) < 0)
		return -1;
	int rc = compose_result_check("stop", &res, err);
	proc_result_free(&res);
	return rc;
}
