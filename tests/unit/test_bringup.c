/* test_bringup.c — the bring-up sequence against a simulated unified box:
 * one window at a time, memory gates (wait, drop caches, give up), crash and
 * timeout handling, and "together" when budgets fit. Virtual clock. */
#include "testutil.h"

#include "../../src/lib/runtime/runtime.h"

#define GiB (1ull << 30)

struct sim {
	long long now;
	uint64_t free;          /* free memory now */
	uint64_t cache;         /* page cache droppable */
	uint64_t returns_at_ms; /* memory comes back (+returns) at this time */
	uint64_t returns;
	bool drops;
	long long started[ROLE__COUNT];
	int load_ms, warm_ms;
	uint64_t budget;
	int crash_role;         /* -1 none */
	int hang_role;          /* never closes its window */
	int fail_role;          /* its observation fails once its window closed (-1 none) */
	int n_events[8];
	int concurrent_windows, max_concurrent;
	int stray_bytes;        /* events other than the gate's that carry bytes */
	uint64_t gate_need;     /* the last gate event's need */
};

static int s_start(void *ud, enum role_id r, struct err **err)
{
	(void)err;
	struct sim *s = ud;
	s->started[r] = s->now;
	s->free -= s->budget; /* engine takes its budget while profiling */
	return 0;
}

static int s_observe(void *ud, enum role_id r, struct role_obs *o, struct err **err)
{
	struct sim *s = ud;
	o->exists = s->started[r] >= 0;
	if (!o->exists)
		return 0;
	long long age = s->now - s->started[r];
	if ((int)r == s->fail_role && age > s->load_ms)
		return err_set(err, EXIT_RUNTIME, "inspect '%s': the engine went away", role_name(r));
	o->running = true;
	if ((int)r == s->crash_role && age >= s->load_ms / 2) {
		o->restarts = 1;
		o->log_tail = xstrdup("assert layer.k_scale > 0.0");
		return 0;
	}
	o->phase = xstrdup(age < s->load_ms ? "loading weights" : "warming up");
	o->window_closed = (int)r != s->hang_role && age >= s->load_ms;
	o->ready = (int)r != s->hang_role && age >= s->load_ms + s->warm_ms;
	return 0;
}

static int s_free(void *ud, uint64_t *f, struct err **err)
{
	(void)err;
	struct sim *s = ud;
	if (s->returns && s->now >= (long long)s->returns_at_ms) {
		s->free += s->returns;
		s->returns = 0;
	}
	*f = s->free;
	return 0;
}

static int s_drop(void *ud, struct err **err)
{
	(void)err;
	struct sim *s = ud;
	s->free += s->cache;
	s->cache = 0;
	s->drops = true;
	return 0;
}

static void s_event(void *ud, const struct bringup_event *ev)
{
	struct sim *s = ud;
	s->n_events[ev->kind]++;
	/* only the gate's events carry memory figures (serve --json prints
	 * need_bytes when it is not 0) */
	if (ev->kind == EV_GATE_WAIT || ev->kind == EV_DROP_CACHES)
		s->gate_need = ev->need_bytes;
	else if (ev->free_bytes || ev->need_bytes)
		s->stray_bytes++;
}

static long long s_now(void *ud) { return ((struct sim *)ud)->now; }
static void s_sleep(void *ud, int ms) { ((struct sim *)ud)->now += ms; }

static struct sim sim_new(void)
{
	struct sim s = { 0 };
	s.fail_role = -1;
	for (int i = 0; i < ROLE__COUNT; i++)
		s.started[i] = -1;
	s.free = 100 * GiB;
	s.load_ms = 5000;
	s.warm_ms = 3000;
	s.budget = 10 * GiB;
	s.crash_role = s.hang_role = -1;
	return s;
}

static const struct bringup_role roles[] = {
	{ ROLE_CORTEX, 10 * GiB }, { ROLE_SENSES, 10 * GiB }, { ROLE_EMBEDDER, 10 * GiB },
	{ ROLE_RERANKER, 10 * GiB },
};

static struct bringup_opts opts(void)
{
	return (struct bringup_opts){ .one_at_a_time = true, .margin = 1 * GiB, .mem_wait_ms = 20000,
				      .window_wait_ms = 60000, .ready_wait_ms = 60000,
				      .poll_ms = 100, .drop_caches = false };
}

static int run(struct sim *s, const struct bringup_opts *o, struct bringup_result *res)
{
	struct bringup_ops ops = { s, s_start, s_observe, s_free, s_drop, s_event, s_now, s_sleep };
	struct err *e = NULL;
	int rc = bringup_run(roles, ARRAY_SIZE(roles), &ops, o, res, &e);
	err_free(e);
	return rc;
}

static void test_one_window_at_a_time(void **state)
{
	(void)state;
	struct sim s = sim_new();
	struct bringup_opts o = opts();
	struct bringup_result res;
	assert_int_equal(run(&s, &o, &res), 0);
	assert_true(res.ok);
	for (size_t i = 1; i < res.n; i++)
		/* the next role starts only once the previous window has closed */
		assert_true(res.roles[i].start_ms >= res.roles[i - 1].window_ms);
	for (size_t i = 0; i < res.n; i++)
		assert_int_equal(res.roles[i].outcome, OUT_READY);
	/* the warm-up of one role overlaps the next role's window: faster than
	 * strictly sequential (sum of load + warm) */
	assert_true(res.total_ms < (long long)res.n * (s.load_ms + s.warm_ms));
	assert_int_equal(s.n_events[EV_START], 4);
	bringup_result_free(&res);
}

static void test_gate_waits_for_memory(void **state)
{
	(void)state;
	struct sim s = sim_new();
	s.free = 5 * GiB;           /* not enough for the first role */
	s.returns = 50 * GiB;       /* a previous fleet's memory comes back */
	s.returns_at_ms = 7000;
	struct bringup_opts o = opts();
	struct bringup_result res;
	assert_int_equal(run(&s, &o, &res), 0);
	assert_true(res.ok);
	assert_true(res.roles[0].start_ms >= 7000);
	assert_int_equal(s.n_events[EV_GATE_WAIT], 1);
	assert_int_equal(s.gate_need, 11 * GiB);
	bringup_result_free(&res);
}

static void test_gate_gives_up_and_keeps_started(void **state)
{
	(void)state;
	struct sim s = sim_new();
	s.free = 25 * GiB; /* room for two roles only */
	struct bringup_opts o = opts();
	struct bringup_result res;
	assert_int_equal(run(&s, &o, &res), 0);
	assert_false(res.ok);
	assert_int_equal(res.roles[0].outcome, OUT_STARTED);
	assert_int_equal(res.roles[1].outcome, OUT_STARTED);
	assert_int_equal(res.roles[2].outcome, OUT_NOT_STARTED);
	assert_int_equal(res.roles[3].outcome, OUT_NOT_STARTED);
	assert_string_contains(res.roles[2].reason, "not enough free memory to start: 5.0 GiB free, 11.0 GiB needed");
	assert_true(res.has_failed_role);
	assert_int_equal(res.failed_role, ROLE_EMBEDDER);
	/* bounded: gave up after mem_wait_ms, not forever */
	assert_true(res.total_ms < 2 * 5000 + o.mem_wait_ms + 1000);
	bringup_result_free(&res);
}

static void test_drop_caches(void **state)
{
	(void)state;
	struct sim s = sim_new();
	s.free = 5 * GiB;
	s.cache = 60 * GiB;
	struct bringup_opts o = opts();
	o.drop_caches = true;
	struct bringup_result res;
	assert_int_equal(run(&s, &o, &res), 0);
	assert_true(res.ok);
	assert_true(s.drops);
	assert_int_equal(s.n_events[EV_DROP_CACHES], 1);
	assert_int_equal(s.n_events[EV_GATE_WAIT], 0);
	bringup_result_free(&res);
}

static void test_crash_stops_with_cause(void **state)
{
	(void)state;
	struct sim s = sim_new();
	s.crash_role = ROLE_SENSES;
	struct bringup_opts o = opts();
	struct bringup_result res;
	assert_int_equal(run(&s, &o, &res), 0);
	assert_false(res.ok);
	assert_int_equal(res.roles[1].outcome, OUT_FAILED);
	assert_string_contains(res.roles[1].reason, "restarted 1 time");
	assert_string_contains(res.roles[1].log_tail, "k_scale");
	assert_int_equal(res.roles[2].outcome, OUT_NOT_STARTED);
	assert_int_equal(s.started[ROLE_EMBEDDER], -1);
	bringup_result_free(&res);
}

static void test_window_timeout_is_bounded(void **state)
{
	(void)state;
	struct sim s = sim_new();
	s.hang_role = ROLE_CORTEX;
	struct bringup_opts o = opts();
	o.window_wait_ms = 9000;
	struct bringup_result res;
	assert_int_equal(run(&s, &o, &res), 0);
	assert_false(res.ok);
	assert_int_equal(res.roles[0].outcome, OUT_TIMEOUT);
	assert_string_contains(res.roles[0].reason, "did not finish memory profiling within 9 s");
	assert_true(res.total_ms <= 9000 + o.poll_ms);
	bringup_result_free(&res);
}

static void test_together_when_budgets_fit(void **state)
{
	(void)state;
	struct sim s = sim_new();
	struct bringup_opts o = opts();
	o.one_at_a_time = false;
	struct bringup_result res;
	assert_int_equal(run(&s, &o, &res), 0);
	assert_true(res.ok);
	for (size_t i = 0; i < res.n; i++)
		assert_int_equal(res.roles[i].start_ms, 0);
	bringup_result_free(&res);
	/* budgets that do not fit together fall back to one window at a time */
	struct sim s2 = sim_new();
	s2.free = 35 * GiB;
	s2.returns = 100 * GiB;
	s2.returns_at_ms = 12000;
	assert_int_equal(run(&s2, &o, &res), 0);
	assert_true(res.ok);
	assert_true(res.roles[1].start_ms >= res.roles[0].window_ms);
	bringup_result_free(&res);
}

/* The memory gate at its boundary: free == budget + margin starts the role
 * at once, without a wait (kills bringup.c gate "f >= need" -> "f > need"). */
static void test_gate_boundary_starts(void **state)
{
	(void)state;
	struct sim s = sim_new();
	s.free = 10 * GiB + 1 * GiB; /* roles[0]'s budget + the margin, exactly */
	struct bringup_opts o = opts();
	o.mem_wait_ms = 1000;
	struct bringup_ops ops = { &s, s_start, s_observe, s_free, s_drop, s_event, s_now, s_sleep };
	struct bringup_result res;
	struct err *e = NULL;
	assert_int_equal(bringup_run(roles, 1, &ops, &o, &res, &e), 0);
	assert_true(res.ok);
	assert_int_equal(res.roles[0].start_ms, 0);
	assert_int_equal(s.n_events[EV_GATE_WAIT], 0);
	assert_int_equal(s.n_events[EV_START], 1);
	assert_int_equal(s.n_events[EV_WINDOW], 1);
	assert_int_equal(s.n_events[EV_READY], 1);
	assert_int_equal(s.stray_bytes, 0);
	bringup_result_free(&res);
	/* one byte less: it waits, then gives up */
	s = sim_new();
	s.free = 11 * GiB - 1;
	assert_int_equal(bringup_run(roles, 1, &ops, &o, &res, &e), 0);
	assert_false(res.ok);
	assert_int_equal(res.roles[0].outcome, OUT_NOT_STARTED);
	assert_int_equal(s.n_events[EV_GATE_WAIT], 1);
	assert_int_equal(s.gate_need, 11 * GiB);
	bringup_result_free(&res);
}

/* "together" needs the budgets' sum AND the margin free: at sum + margin
 * every role starts at once; between the sum and sum + margin it is one
 * window at a time (kills bringup.c "need = o->margin" -> 0 and the
 * together test "f >= need" -> "f > need"). */
static void test_together_needs_the_margin(void **state)
{
	(void)state;
	struct bringup_opts o = opts();
	o.one_at_a_time = false;
	struct bringup_result res;
	struct sim s = sim_new();
	s.free = 41 * GiB; /* 4 x 10 GiB + 1 GiB margin, exactly */
	assert_int_equal(run(&s, &o, &res), 0);
	assert_true(res.ok);
	for (size_t i = 0; i < res.n; i++)
		assert_int_equal(res.roles[i].start_ms, 0);
	bringup_result_free(&res);
	s = sim_new();
	s.free = 40 * GiB + GiB / 2; /* the sum fits, the margin does not */
	s.returns = 100 * GiB;
	s.returns_at_ms = 12000;
	assert_int_equal(run(&s, &o, &res), 0);
	assert_true(res.ok);
	assert_int_equal(res.roles[0].start_ms, 0);
	for (size_t i = 1; i < res.n; i++)
		assert_true(res.roles[i].start_ms >= res.roles[i - 1].window_ms);
	bringup_result_free(&res);
}

/* An observation that fails while the fleet waits to be ready (every
 * window closed) is an error of the whole bring-up: -1, the runtime's
 * message, not ok. Kills wait_ready's failure left at rc 0 (`rc = -0`). */
static void test_ready_wait_error_fails_the_run(void **state)
{
	(void)state;
	struct sim s = sim_new();
	s.fail_role = ROLE_RERANKER;
	struct bringup_opts o = opts();
	struct bringup_result res;
	struct bringup_ops ops = { &s, s_start, s_observe, s_free, s_drop, s_event, s_now, s_sleep };
	struct err *e = NULL;
	assert_int_equal(bringup_run(roles, ARRAY_SIZE(roles), &ops, &o, &res, &e), -1);
	assert_non_null(e);
	assert_string_contains(e->msg, "inspect 'reranker': the engine went away");
	assert_false(res.ok);
	/* every window had closed: all four were started */
	for (size_t i = 0; i < ARRAY_SIZE(roles); i++)
		assert_true(s.started[roles[i].role] >= 0);
	err_free(e);
	bringup_result_free(&res);
}

/* A role whose window closes but that never turns healthy times out in the
 * ready wait: the run returns 0 with the role's timeout in the result and
 * no error (an engine's failure is a result, not an error of lobes).
 * Kills `wait_ready(...) < 0` → `< 1` (the timeout's 0 became -1). */
static void test_ready_timeout_is_a_result(void **state)
{
	(void)state;
	struct sim s = sim_new();
	s.warm_ms = 1000000;
	struct bringup_opts o = opts();
	o.ready_wait_ms = 5000;
	struct bringup_result res;
	struct bringup_ops ops = { &s, s_start, s_observe, s_free, s_drop, s_event, s_now, s_sleep };
	struct err *e = NULL;
	assert_int_equal(bringup_run(roles, ARRAY_SIZE(roles), &ops, &o, &res, &e), 0);
	assert_null(e);
	assert_false(res.ok);
	assert_int_equal(res.roles[0].outcome, OUT_TIMEOUT);
	assert_string_contains(res.roles[0].reason, "not healthy within 5 s");
	bringup_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_window_at_a_time),
		cmocka_unit_test(test_gate_waits_for_memory),
		cmocka_unit_test(test_gate_gives_up_and_keeps_started),
		cmocka_unit_test(test_drop_caches),
		cmocka_unit_test(test_crash_stops_with_cause),
		cmocka_unit_test(test_window_timeout_is_bounded),
		cmocka_unit_test(test_together_when_budgets_fit),
		cmocka_unit_test(test_gate_boundary_starts),
		cmocka_unit_test(test_together_needs_the_margin),
		cmocka_unit_test(test_ready_wait_error_fails_the_run),
		cmocka_unit_test(test_ready_timeout_is_a_result),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
