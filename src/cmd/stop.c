/*
 * stop.c — `lobes stop [--apply]`: compose down, then wait (bounded) until
 * the memory the fleet held is free again. On unified boxes the page cache
 * of the weights stays "used" after teardown (FACTS.md trait 5), so
 * --drop-caches drops it (root). Dry-run says what would stop and how much
 * memory should come back. The gateway `lobes serve` started is stopped
 * first (it drains its in-flight requests), unless --no-gateway: with
 * --apply before anything else is asked, so an unreachable Docker Engine
 * (exit 4) still leaves no front door sending requests to engines. The log
 * collector `serve` started is stopped after the engines (collector_life.c),
 * even when they could not be stopped.
 */
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "../lib/facts/facts.h"
#include "../lib/runtime/runtime.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/clock.h"
#include "../lib/util/num.h"
#include "cmd.h"

#define GiB 1073741824.0
#define STOP_MAX_WAIT_S 604800 /* --wait: a week */

struct stop_opts {
	bool apply, drop, no_gateway;
	int wait_s;
};

/* -1 when the options are good, else the exit code of a usage error. */
static int parse_opts(int argc, char **argv, struct ctx *ctx, struct stop_opts *o)
{
	*o = (struct stop_opts){ .wait_s = 120 };
	static const struct option opts[] = { { "apply", no_argument, NULL, 'a' },
					      { "drop-caches", no_argument, NULL, 'd' },
					      { "wait", required_argument, NULL, 'w' },
					      { "no-gateway", no_argument, NULL, 'g' },
					      { NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': o->apply = true; break;
		case 'd': o->drop = true; break;
		case 'g': o->no_gateway = true; break;
		case 'w': {
			long v;
			if (!num_parse_long(optarg, 0, STOP_MAX_WAIT_S, &v))
				return cmd_usage_error(ctx, "--wait '%s' is not a number of seconds; expected a "
							    "whole number from 0 to %d", optarg, STOP_MAX_WAIT_S);
			o->wait_s = (int)v;
			break;
		}
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* The project's containers into res.containers, and the memory their
 * running roles hold (their budgets) into *held; the MemFree to wait for
 * into *target. */
static int measure(const struct fleet *fleet, json_t *res, uint64_t *held, uint64_t *target,
		   struct err **err)
{
	struct engine eng;
	struct engine_container_list l = { 0 };
	if (engine_open(&eng, err) < 0 || engine_list_project(&eng, fleet->project, &l, err) < 0) {
		engine_close(&eng);
		return -1;
	}
	engine_close(&eng);
	uint64_t device = 0, free0 = 0;
	_cleanup_free_ char *device_src = NULL;
	if (device_memory(&device, &device_src, err) < 0) {
		engine_container_list_free(&l);
		return -1;
	}
	json_t *cl = json_array();
	*held = 0;
	for (size_t i = 0; i < l.n; i++) {
		int r = role_from_name(l.c[i].service);
		bool running = strcmp(l.c[i].state, "running") == 0 || strcmp(l.c[i].state, "restarting") == 0;
		if (running && r >= 0 && fleet->roles[r].feasible)
			*held += (uint64_t)(fleet->roles[r].util * device);
		json_array_append_new(cl, json_pack("{s:s, s:s}", "name", l.c[i].name, "state", l.c[i].state));
	}
	engine_container_list_free(&l);
	json_object_set_new(res, "containers", cl);
	meminfo_field("MemFree", &free0, NULL);
	/* an engine holds most of its budget (KV cache + weights); 80% of it is
	 * what must come back for the memory to count as returned */
	*target = free0 + *held * 8 / 10;
	if (*target > device)
		*target = device;
	json_object_set_new(res, "free_before_bytes", json_integer((json_int_t)free0));
	json_object_set_new(res, "expected_back_bytes", json_integer((json_int_t)*held));
	return 0;
}

static void print_dry_run(const json_t *res, const char *project, int wait_s)
{
	const json_t *cl = json_object_get(res, "containers");
	printf("would stop %zu container%s of project %s in %s\n", json_array_size(cl),
	       json_array_size(cl) == 1 ? "" : "s", project, jstr(res, "dir"));
	size_t i;
	json_t *x;
	json_array_foreach(cl, i, x)
		printf("  %s (%s)\n", jstr(x, "name"), jstr(x, "state"));
	printf("then wait up to %d s for %.1f GiB to come back (free now %.1f GiB)\n", wait_s,
	       json_integer_value(json_object_get(res, "expected_back_bytes")) / GiB,
	       json_integer_value(json_object_get(res, "free_before_bytes")) / GiB);
	collector_print(json_object_get(res, "collector"), false);
	printf("dry run: nothing stopped; run `lobes stop --apply`\n");
}

/* compose down in the deploy dir. */
static int compose_stop(const struct fleet *fleet, struct err **err)
{
	struct compose comp;
	struct proc_result pr;
	if (compose_open(&comp, fleet->dir, err) < 0 || compose_down(&comp, &pr, err) < 0) {
		compose_free(&comp);
		return -1;
	}
	int rc = compose_result_check("down", &pr, err);
	proc_result_free(&pr);
	compose_free(&comp);
	return rc;
}

/* Wait (bounded by wait_s) until MemFree reaches target, dropping the page
 * cache once on the way when drop; the last MemFree into res. */
static int wait_memory(json_t *res, uint64_t target, bool drop, int wait_s, struct err **err)
{
	bool dropped = false;
	uint64_t f = 0;
	long long deadline = clock_mono_ms() + (long long)wait_s * 1000;
	for (;;) {
		if (meminfo_field("MemFree", &f, err) < 0)
			return -1;
		if (f >= target)
			break;
		if (drop && !dropped) {
			if (drop_caches(err) < 0)
				return -1;
			dropped = true;
			continue;
		}
		if (clock_mono_ms() >= deadline)
			break;
		clock_sleep_ms(250);
	}
	json_object_set_new(res, "free_after_bytes", json_integer((json_int_t)f));
	json_object_set_new(res, "memory_back", json_boolean(f >= target));
	json_object_set_new(res, "dropped_caches", json_boolean(dropped));
	return 0;
}

static void print_applied(const json_t *res, uint64_t target, int wait_s)
{
	const json_t *cl = json_object_get(res, "containers");
	double f = (double)json_integer_value(json_object_get(res, "free_after_bytes"));
	double free0 = (double)json_integer_value(json_object_get(res, "free_before_bytes"));
	bool dropped = json_is_true(json_object_get(res, "dropped_caches"));
	printf("stopped %zu container%s\n", json_array_size(cl), json_array_size(cl) == 1 ? "" : "s");
	if (dropped)
		printf("dropped the page cache\n");
	if (json_is_true(json_object_get(res, "memory_back")))
		printf("memory is back: %.1f GiB free (was %.1f GiB)\n", f / GiB, free0 / GiB);
	else
		printf("memory did not come back within %d s: %.1f GiB free, expected >= %.1f GiB%s\n",
		       wait_s, f / GiB, (double)target / GiB,
		       dropped ? "" : "; on unified memory the page cache keeps it: try --drop-caches (root)");
}

/* --apply: the front door first (no new request reaches an engine going
 * down, and it goes even when Docker cannot be reached), then the
 * containers, then the memory. */
static int stop_apply(struct ctx *ctx, const struct stop_opts *o, struct fleet *fleet,
		      struct gw_life *gl, json_t *res)
{
	struct err *e = NULL;
	json_t *gw = gw_life_down(gl);
	json_object_set_new(res, "gateway", gw);
	bool gw_ok = json_is_true(json_object_get(gw, "ok"));
	if (!ctx->json && strcmp(jstr(gw, "action"), "none") != 0)
		gw_life_print(gw, true);
	uint64_t held = 0, target = 0;
	int stopped = measure(fleet, res, &held, &target, &e) < 0 ? -1 : compose_stop(fleet, &e);
	/* the log collector after the engines (its last pass keeps their last
	 * lines), and even when they could not be stopped */
	json_t *col = collector_down(fleet->dir, true);
	json_object_set_new(res, "collector", col);
	bool col_ok = json_is_true(json_object_get(col, "ok"));
	if (!ctx->json && strcmp(jstr(col, "action"), "none") != 0)
		collector_print(col, true);
	if (stopped < 0) {
		if (ctx->json) /* what did happen (the gateway), then the error */
			out_json(res);
		return cmd_fail(ctx, e);
	}
	bool drop = o->drop;
	if (drop && geteuid() != 0) {
		fprintf(stderr, "lobes stop: warning: --drop-caches needs root; not dropping\n");
		drop = false;
	}
	if (wait_memory(res, target, drop, o->wait_s, &e) < 0)
		return cmd_fail(ctx, e);
	bool back = json_is_true(json_object_get(res, "memory_back"));
	if (ctx->json)
		out_json(res);
	else
		print_applied(res, target, o->wait_s);
	return back && gw_ok && col_ok ? 0 : 1;
}

CMD(stop)
{
	struct stop_opts o;
	int code = parse_opts(argc, argv, ctx, &o);
	if (code >= 0)
		return code;
	struct err *e = NULL;
	struct fleet fleet;
	/* the gateway is stopped even when its settings no longer load */
	struct gw_life gl;
	if (gw_life_open_fleet(&fleet, &gl, ctx->dir, o.no_gateway, false, &e) < 0)
		return cmd_fail(ctx, e);
	code = 0;
	json_auto_t *res = json_pack("{s:s, s:b}", "dir", fleet.dir, "applied", o.apply);
	if (o.apply) {
		code = stop_apply(ctx, &o, &fleet, &gl, res);
	} else {
		uint64_t held, target;
		json_object_set_new(res, "gateway", gw_life_plan(&gl, false));
		if (!ctx->json) /* the gateway first, as --apply does it */
			gw_life_print(json_object_get(res, "gateway"), false);
		json_object_set_new(res, "collector", collector_down(fleet.dir, false));
		if (measure(&fleet, res, &held, &target, &e) < 0)
			code = cmd_fail(ctx, e);
		else if (ctx->json)
			out_json(res);
		else
			print_dry_run(res, fleet.project, o.wait_s);
	}
	gw_life_close(&gl);
	fleet_free(&fleet);
	return code;
}
