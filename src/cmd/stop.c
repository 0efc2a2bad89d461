/*
 * stop.c — `lobes stop [--apply]`: compose down, then wait (bounded) until
 * the memory the fleet held is free again. On unified boxes the page cache
 * of the weights stays "used" after teardown (FACTS.md trait 5), so
 * --drop-caches drops it (root). Dry-run says what would stop and how much
 * memory should come back. The gateway `lobes serve` started is stopped
 * first (it drains its in-flight requests), unless --no-gateway.
 */
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "../lib/facts/facts.h"
#include "../lib/runtime/compose_cli.h"
#include "../lib/runtime/engine_api.h"
#include "../lib/runtime/fleet.h"
#include "../lib/runtime/memory.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/clock.h"
#include "../lib/util/num.h"
#include "cmd.h"

#define GiB 1073741824.0
#define STOP_MAX_WAIT_S 604800 /* --wait: a week */

CMD(stop)
{
	bool apply = false, drop = false, no_gateway = false;
	int wait_s = 120;
	static const struct option opts[] = { { "apply", no_argument, NULL, 'a' },
					      { "drop-caches", no_argument, NULL, 'd' },
					      { "wait", required_argument, NULL, 'w' },
					      { "no-gateway", no_argument, NULL, 'g' },
					      { NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': apply = true; break;
		case 'd': drop = true; break;
		case 'g': no_gateway = true; break;
		case 'w': {
			long v;
			if (!num_parse_long(optarg, 0, STOP_MAX_WAIT_S, &v))
				return cmd_usage_error(ctx, "--wait '%s' is not a number of seconds; expected a "
							    "whole number from 0 to %d", optarg, STOP_MAX_WAIT_S);
			wait_s = (int)v;
			break;
		}
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	struct err *e = NULL;
	struct fleet fleet;
	if (fleet_load(&fleet, ctx->dir, &e) < 0)
		return cmd_fail(ctx, e);
	/* the gateway is stopped even when its settings no longer load */
	struct gw_life gl;
	if (gw_life_open(&gl, fleet.dir, no_gateway, false, &e) < 0) {
		fleet_free(&fleet);
		return cmd_fail(ctx, e);
	}
	struct engine eng;
	struct engine_container_list l = { 0 };
	if (engine_open(&eng, &e) < 0 || engine_list_project(&eng, fleet.project, &l, &e) < 0) {
		engine_close(&eng);
		gw_life_close(&gl);
		fleet_free(&fleet);
		return cmd_fail(ctx, e);
	}
	engine_close(&eng);
	/* Memory expected back: the budgets of the running roles. */
	uint64_t device = 0, free0 = 0, held = 0;
	_cleanup_free_ char *device_src = NULL;
	if (device_memory(&device, &device_src, &e) < 0) {
		engine_container_list_free(&l);
		gw_life_close(&gl);
		fleet_free(&fleet);
		return cmd_fail(ctx, e);
	}
	json_auto_t *res = json_pack("{s:s, s:[], s:b}", "dir", fleet.dir, "containers", "applied", apply);
	json_t *cl = json_object_get(res, "containers");
	for (size_t i = 0; i < l.n; i++) {
		int r = role_from_name(l.c[i].service);
		bool running = strcmp(l.c[i].state, "running") == 0 || strcmp(l.c[i].state, "restarting") == 0;
		if (running && r >= 0 && fleet.roles[r].feasible)
			held += (uint64_t)(fleet.roles[r].util * device);
		json_array_append_new(cl, json_pack("{s:s, s:s}", "name", l.c[i].name, "state", l.c[i].state));
	}
	engine_container_list_free(&l);
	meminfo_field("MemFree", &free0, NULL);
	/* an engine holds most of its budget (KV cache + weights); 80% of it is
	 * what must come back for the memory to count as returned */
	uint64_t target = free0 + held * 8 / 10;
	if (target > device)
		target = device;
	json_object_set_new(res, "free_before_bytes", json_integer((json_int_t)free0));
	json_object_set_new(res, "expected_back_bytes", json_integer((json_int_t)held));
	if (!apply) {
		json_object_set_new(res, "gateway", gw_life_plan(&gl, false));
		gw_life_close(&gl);
		fleet_free(&fleet);
		if (ctx->json) {
			out_json(res);
			return 0;
		}
		gw_life_print(json_object_get(res, "gateway"), false);
		printf("would stop %zu container%s of project %s in %s\n", json_array_size(cl),
		       json_array_size(cl) == 1 ? "" : "s", jstr(res, "dir"), jstr(res, "dir"));
		size_t i;
		json_t *x;
		json_array_foreach(cl, i, x)
			printf("  %s (%s)\n", jstr(x, "name"), jstr(x, "state"));
		printf("then wait up to %d s for %.1f GiB to come back (free now %.1f GiB)\n", wait_s,
		       held / GiB, free0 / GiB);
		printf("dry run: nothing stopped; run `lobes stop --apply`\n");
		return 0;
	}
	/* the front door first: no new request reaches an engine going down */
	json_t *gw = gw_life_down(&gl);
	gw_life_close(&gl);
	json_object_set_new(res, "gateway", gw);
	bool gw_ok = json_is_true(json_object_get(gw, "ok"));
	if (!ctx->json && strcmp(jstr(gw, "action"), "none") != 0)
		gw_life_print(gw, true);
	struct compose comp;
	struct proc_result pr;
	if (compose_open(&comp, fleet.dir, &e) < 0 || compose_down(&comp, &pr, &e) < 0) {
		compose_free(&comp);
		fleet_free(&fleet);
		return cmd_fail(ctx, e);
	}
	int down_rc = compose_result_check("down", &pr, &e);
	proc_result_free(&pr);
	compose_free(&comp);
	fleet_free(&fleet);
	if (down_rc < 0)
		return cmd_fail(ctx, e);
	if (drop && geteuid() != 0) {
		fprintf(stderr, "lobes stop: warning: --drop-caches needs root; not dropping\n");
		drop = false;
	}
	bool dropped = false;
	uint64_t f = 0;
	long long deadline = clock_mono_ms() + (long long)wait_s * 1000;
	for (;;) {
		if (meminfo_field("MemFree", &f, &e) < 0)
			return cmd_fail(ctx, e);
		if (f >= target)
			break;
		if (drop && !dropped) {
			if (drop_caches(&e) < 0)
				return cmd_fail(ctx, e);
			dropped = true;
			continue;
		}
		if (clock_mono_ms() >= deadline)
			break;
		clock_sleep_ms(250);
	}
	bool back = f >= target;
	json_object_set_new(res, "free_after_bytes", json_integer((json_int_t)f));
	json_object_set_new(res, "memory_back", json_boolean(back));
	json_object_set_new(res, "dropped_caches", json_boolean(dropped));
	if (ctx->json) {
		out_json(res);
		return back && gw_ok ? 0 : 1;
	}
	printf("stopped %zu container%s\n", json_array_size(cl), json_array_size(cl) == 1 ? "" : "s");
	if (dropped)
		printf("dropped the page cache\n");
	if (back)
		printf("memory is back: %.1f GiB free (was %.1f GiB)\n", f / GiB, free0 / GiB);
	else
		printf("memory did not come back within %d s: %.1f GiB free, expected >= %.1f GiB%s\n",
		       wait_s, f / GiB, target / GiB,
		       dropped ? "" : "; on unified memory the page cache keeps it: try --drop-caches (root)");
	return back && gw_ok ? 0 : 1;
}
