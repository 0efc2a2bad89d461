/*
 * bringup.c — the memory-safe bring-up sequence; see bringup.h.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "bringup.h"

void role_obs_free(struct role_obs *o)
{
	free(o->phase);
	free(o->log_tail);
	memset(o, 0, sizeof(*o));
}

const char *bringup_event_name(enum bringup_event_kind k)
{
	static const char *n[] = { "gate-wait", "drop-caches", "start", "phase", "window", "ready", "fail" };
	return n[k];
}

const char *role_outcome_name(enum role_outcome o)
{
	static const char *n[] = { "not-started", "ready", "failed", "timeout", "started" };
	return n[o];
}

struct run {
	const struct bringup_ops *ops;
	const struct bringup_opts *o;
	struct bringup_result *res;
	long long t0;
	char *last_phase[ROLE__COUNT];
};

static long long elapsed(struct run *r)
{
	return r->ops->now_ms(r->ops->ud) - r->t0;
}

static void emit(struct run *r, enum bringup_event_kind k, enum role_id role, uint64_t freeb,
		 uint64_t need, const char *text)
{
	if (!r->ops->event)
		return;
	struct bringup_event ev = { k, role, elapsed(r), freeb, need, text };
	r->ops->event(r->ops->ud, &ev);
}

static struct bringup_role_result *slot(struct run *r, enum role_id role)
{
	for (size_t i = 0; i < r->res->n; i++)
		if (r->res->roles[i].role == role)
			return &r->res->roles[i];
	return NULL;
}

static void fail(struct run *r, enum role_id role, enum role_outcome out, const char *reason,
		 const char *tail)
{
	struct bringup_role_result *s = slot(r, role);
	s->outcome = out;
	free(s->reason);
	s->reason = xstrdup(reason);
	if (tail) {
		free(s->log_tail);
		s->log_tail = xstrdup(tail);
	}
	r->res->ok = false;
	r->res->failed_role = role;
	r->res->has_failed_role = true;
	emit(r, EV_FAIL, role, 0, 0, reason);
}

/* Wait until free memory ≥ need. 1 when it is, 0 when the bound passed. */
static int gate(struct run *r, enum role_id role, uint64_t need, uint64_t *last_free,
		struct err **err)
{
	long long deadline = elapsed(r) + r->o->mem_wait_ms;
	bool dropped = false, announced = false;
	for (;;) {
		uint64_t f;
		if (r->ops->mem_free(r->ops->ud, &f, err) < 0)
			return -1;
		*last_free = f;
		if (f >= need)
			return 1;
		if (r->o->drop_caches && !dropped && r->ops->drop_caches) {
			if (r->ops->drop_caches(r->ops->ud, err) < 0)
				return -1;
			dropped = true;
			emit(r, EV_DROP_CACHES, role, f, need, NULL);
			continue;
		}
		if (!announced) {
			emit(r, EV_GATE_WAIT, role, f, need, NULL);
			announced = true;
		}
		if (elapsed(r) >= deadline)
			return 0;
		r->ops->sleep_ms(r->ops->ud, r->o->poll_ms);
	}
}

/* Look at a role; note its phase; 1 ok, 0 failed (recorded), -1 op error. */
static int look(struct run *r, enum role_id role, struct role_obs *obs, struct err **err)
{
	memset(obs, 0, sizeof(*obs));
	if (r->ops->observe(r->ops->ud, role, obs, err) < 0)
		return -1;
	if (obs->phase && (!r->last_phase[role] || strcmp(obs->phase, r->last_phase[role]) != 0)) {
		free(r->last_phase[role]);
		r->last_phase[role] = xstrdup(obs->phase);
		emit(r, EV_PHASE, role, 0, 0, obs->phase);
	}
	if (obs->exited || obs->restarts > 0) {
		_cleanup_free_ char *why = obs->restarts > 0
			? xasprintf("the engine died during start-up (restarted %d time%s)", obs->restarts,
				    obs->restarts == 1 ? "" : "s")
			: xstrdup("the engine exited during start-up");
		fail(r, role, OUT_FAILED, why, obs->log_tail);
		return 0;
	}
	return 1;
}

static void mark(struct run *r, enum role_id role, enum bringup_event_kind k)
{
	struct bringup_role_result *s = slot(r, role);
	if (k == EV_WINDOW && s->window_ms < 0) {
		s->window_ms = elapsed(r);
		emit(r, EV_WINDOW, role, 0, 0, NULL);
	}
	if (k == EV_READY && s->ready_ms < 0) {
		s->ready_ms = elapsed(r);
		s->outcome = OUT_READY;
		emit(r, EV_READY, role, 0, 0, NULL);
	}
}

/* Wait for one role's memory window to close (or for it to be ready). */
static int wait_window(struct run *r, enum role_id role, struct err **err)
{
	long long deadline = elapsed(r) + r->o->window_wait_ms;
	for (;;) {
		struct role_obs obs;
		int k = look(r, role, &obs, err);
		if (k <= 0) {
			role_obs_free(&obs);
			return k;
		}
		if (obs.window_closed || obs.ready) {
			mark(r, role, EV_WINDOW);
			if (obs.ready)
				mark(r, role, EV_READY);
			role_obs_free(&obs);
			return 1;
		}
		if (elapsed(r) >= deadline) {
			_cleanup_free_ char *why = xasprintf("did not finish memory profiling within %d s",
							     r->o->window_wait_ms / 1000);
			fail(r, role, OUT_TIMEOUT, why, obs.log_tail);
			role_obs_free(&obs);
			return 0;
		}
		role_obs_free(&obs);
		r->ops->sleep_ms(r->ops->ud, r->o->poll_ms);
	}
}

static int start(struct run *r, enum role_id role, struct err **err)
{
	struct bringup_role_result *s = slot(r, role);
	long long asked = elapsed(r); /* the start request, not its return: a start may
				       * do more work (serve creates the other roles) */
	if (r->ops->start(r->ops->ud, role, err) < 0)
		return -1;
	s->start_ms = asked;
	s->outcome = OUT_STARTED;
	emit(r, EV_START, role, 0, 0, NULL);
	return 0;
}

static int wait_ready(struct run *r, const struct bringup_role *roles, size_t n, struct err **err)
{
	long long deadline = elapsed(r) + r->o->ready_wait_ms;
	for (;;) {
		bool all = true;
		for (size_t i = 0; i < n; i++) {
			struct bringup_role_result *s = slot(r, roles[i].role);
			if (s->outcome == OUT_READY)
				continue;
			struct role_obs obs;
			int k = look(r, roles[i].role, &obs, err);
			if (k <= 0) {
				role_obs_free(&obs);
				return k;
			}
			if (obs.window_closed)
				mark(r, roles[i].role, EV_WINDOW);
			if (obs.ready)
				mark(r, roles[i].role, EV_READY);
			else
				all = false;
			if (!obs.ready && elapsed(r) >= deadline) {
				_cleanup_free_ char *why = xasprintf("not healthy within %d s",
								     r->o->ready_wait_ms / 1000);
				fail(r, roles[i].role, OUT_TIMEOUT, why, obs.log_tail);
				role_obs_free(&obs);
				return 0;
			}
			role_obs_free(&obs);
		}
		if (all)
			return 1;
		r->ops->sleep_ms(r->ops->ud, r->o->poll_ms);
	}
}

int bringup_run(const struct bringup_role *roles, size_t n, const struct bringup_ops *ops,
		const struct bringup_opts *o, struct bringup_result *res, struct err **err)
{
	memset(res, 0, sizeof(*res));
	struct run r = { .ops = ops, .o = o, .res = res };
	r.t0 = ops->now_ms(ops->ud);
	res->ok = true;
	for (size_t i = 0; i < n; i++) {
		struct bringup_role_result *s = &res->roles[res->n++];
		s->role = roles[i].role;
		s->outcome = OUT_NOT_STARTED;
		s->start_ms = s->window_ms = s->ready_ms = -1;
	}
	int rc = 0;
	if (!o->one_at_a_time) {
		uint64_t need = o->margin, f = 0;
		for (size_t i = 0; i < n; i++)
			need += roles[i].budget;
		if (ops->mem_free(ops->ud, &f, err) < 0) {
			rc = -1;
			goto out;
		}
		if (f >= need) {
			for (size_t i = 0; i < n; i++)
				if (start(&r, roles[i].role, err) < 0) {
					rc = -1;
					goto out;
				}
			if (wait_ready(&r, roles, n, err) < 0)
				rc = -1;
			goto out;
		}
		/* The budgets do not fit together: one window at a time instead. */
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t f = 0, need = roles[i].budget + o->margin;
		int g = gate(&r, roles[i].role, need, &f, err);
		if (g < 0) {
			rc = -1;
			goto out;
		}
		if (g == 0) {
			_cleanup_free_ char *why = xasprintf(
				"not enough free memory to start: %.1f GiB free, %.1f GiB needed (budget "
				"%.1f GiB + margin %.1f GiB) after %d s",
				f / 1073741824.0, need / 1073741824.0, roles[i].budget / 1073741824.0,
				o->margin / 1073741824.0, o->mem_wait_ms / 1000);
			fail(&r, roles[i].role, OUT_NOT_STARTED, why, NULL);
			goto out;
		}
		if (start(&r, roles[i].role, err) < 0) {
			rc = -1;
			goto out;
		}
		int w = wait_window(&r, roles[i].role, err);
		if (w < 0)
			rc = -1;
		if (w <= 0)
			goto out;
	}
	if (wait_ready(&r, roles, n, err) < 0)
		rc = -1;
out:
	for (int i = 0; i < ROLE__COUNT; i++)
		free(r.last_phase[i]);
	res->total_ms = elapsed(&r);
	if (rc < 0)
		res->ok = false;
	return rc;
}

void bringup_result_free(struct bringup_result *res)
{
	for (size_t i = 0; i < res->n; i++) {
		free(res->roles[i].reason);
		free(res->roles[i].log_tail);
	}
	memset(res, 0, sizeof(*res));
}
