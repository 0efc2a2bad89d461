/*
 * serve.c — `lobes serve [--apply]`: bring the deployed fleet up in the
 * plan's order with memory gates (src/lib/runtime/bringup.c does the
 * sequencing, runtime/serve_ops.c the starts and looks). Dry-run prints
 * the bring-up plan. With --apply: compose starts the first role and
 * creates the others, which are started through the Engine API at their
 * turn; the Engine API gives state, restarts and the boot log; /health on
 * the role's port says ready. A role that dies or
 * overruns its bound stops the wait: its last log lines and the cause triage
 * names are shown, roles already up are left running, exit 1. Then the
 * gateway (gateway_life.c): started in the background, or told to reload
 * when the one serve started before still runs; its settings are checked
 * before any engine starts. --no-gateway leaves it to systemd. Before the
 * engines, the log collector (collector_life.c) is started in the
 * background unless it runs (--no-collector: not at all).
 */
#include <getopt.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "../lib/runtime/runtime.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/clock.h"
#include "../lib/util/num.h"
#include "../lib/triage/triage.h"
#include "../lib/util/secret.h"
#include "cmd.h"

#define GiB 1073741824.0
#define SERVE_MAX_WAIT_S 604800L  /* --*-wait: a week */
#define SERVE_MAX_POLL_MS 60000L  /* --poll-ms: a minute */
#define SERVE_MAX_MARGIN_GIB 4096 /* --margin-gib: more than any box has */

static void op_event(void *cls, const struct bringup_event *ev)
{
	struct ctx *ctx = cls;
	if (ctx->json) {
		json_auto_t *j = json_pack("{s:s, s:s, s:I}", "event", bringup_event_name(ev->kind), "role",
					   role_name(ev->role), "elapsed_ms", (json_int_t)ev->elapsed_ms);
		if (ev->need_bytes)
			json_object_set_new(j, "need_bytes", json_integer((json_int_t)ev->need_bytes));
		if (ev->free_bytes)
			json_object_set_new(j, "free_bytes", json_integer((json_int_t)ev->free_bytes));
		if (ev->text)
			json_object_set_new(j, "text", json_string(ev->text));
		json_dumpf(j, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		fflush(stdout);
		return;
	}
	uint64_t f = 0;
	meminfo_field("MemFree", &f, NULL);
	const char *what = "";
	_cleanup_free_ char *txt = NULL;
	switch (ev->kind) {
	case EV_GATE_WAIT:
		txt = xasprintf("waiting for memory: %.1f GiB free, %.1f GiB needed",
				ev->free_bytes / GiB, ev->need_bytes / GiB);
		break;
	case EV_DROP_CACHES:
		what = "dropped the page cache";
		break;
	case EV_START:
		what = "started";
		break;
	case EV_PHASE:
		what = ev->text;
		break;
	case EV_WINDOW:
		what = "memory profiling done: next role may start";
		break;
	case EV_READY:
		what = "ready (/health 200)";
		break;
	case EV_FAIL:
		txt = xasprintf("%sFAILED%s: %s", c_red(ctx), c_reset(ctx), ev->text);
		break;
	}
	printf("[%7.1fs] %-9s %-46s %sfree %.1f GiB%s\n", ev->elapsed_ms / 1000.0, role_name(ev->role),
	       txt ? txt : what, c_dim(ctx), f / GiB, c_reset(ctx));
	fflush(stdout);
}

/* A role's failure report for a person: the cause, the log line it came
 * from with its number (always, wherever it is in the log), then the last
 * lines, numbered. */
static void print_report(const json_t *x)
{
	const json_t *cause = json_object_get(x, "cause");
	if (cause) {
		printf("  cause (%s): %s\n", jstr(cause, "signature"), jstr(cause, "cause"));
		if (*jstr(cause, "remedy"))
			printf("  fix: %s\n", jstr(cause, "remedy"));
		if (*jstr(cause, "trait"))
			printf("  trait: %s\n", jstr(cause, "trait"));
		printf("  from log line %lld: %s\n",
		       (long long)json_integer_value(json_object_get(cause, "line_no")),
		       jstr(cause, "line"));
	} else if (json_is_object(json_object_get(x, "root_exception"))) {
		const json_t *r = json_object_get(x, "root_exception");
		printf("  no known cause: %s%s%s (log line %lld, %s)\n", jstr(r, "type"),
		       *jstr(r, "type") ? ": " : "", jstr(r, "message"),
		       (long long)json_integer_value(json_object_get(r, "line_no")), jstr(x, "phase"));
	}
	const char *tail = jstr(x, "log_tail");
	if (!*tail)
		return;
	long long no = (long long)json_integer_value(json_object_get(x, "log_tail_from"));
	printf("  last log lines (%lld-%lld of %lld):\n", no,
	       (long long)json_integer_value(json_object_get(x, "log_lines")),
	       (long long)json_integer_value(json_object_get(x, "log_lines")));
	while (*tail) {
		size_t n = strcspn(tail, "\n");
		printf("  %6lld | %.*s\n", no++, (int)n, tail);
		tail += n + (tail[n] == '\n');
	}
}

struct serve_opts {
	bool apply, drop, together_override, one_override, no_gateway, no_collector;
	double margin_gib;
	int mem_wait, window_wait, ready_wait, poll_ms;
};

/* -1 when the options are good, else the exit code of a usage error. */
static int parse_opts(int argc, char **argv, struct ctx *ctx, struct serve_opts *so)
{
	*so = (struct serve_opts){ .margin_gib = 1.0, .mem_wait = 300, .window_wait = 1800,
				   .ready_wait = 1800, .poll_ms = 500 };
	static const struct option opts[] = {
		{ "apply", no_argument, NULL, 'a' },	      { "drop-caches", no_argument, NULL, 'd' },
		{ "margin-gib", required_argument, NULL, 'm' }, { "mem-wait", required_argument, NULL, 'M' },
		{ "window-wait", required_argument, NULL, 'W' }, { "ready-wait", required_argument, NULL, 'R' },
		{ "poll-ms", required_argument, NULL, 'P' },    { "mode", required_argument, NULL, 'o' },
		{ "no-gateway", no_argument, NULL, 'g' },	{ "no-collector", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 }
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		/* waits in seconds up to a week, the poll interval up to a minute */
		long v = 0, max = c == 'P' ? SERVE_MAX_POLL_MS : SERVE_MAX_WAIT_S;
		bool num = optarg && c != 'm' && c != 'o' && c != 'g' && c != 'c';
		const struct option *o = opts;
		while (o->name && o->val != c)
			o++;
		if (num && !num_parse_long(optarg, 1, max, &v))
			return cmd_usage_error(ctx, "--%s '%s' is not a whole number; expected 1 to %ld",
					       o->name ? o->name : "?", optarg, max);
		switch (c) {
		case 'a': so->apply = true; break;
		case 'd': so->drop = true; break;
		case 'g': so->no_gateway = true; break;
		case 'c': so->no_collector = true; break;
		case 'm':
			if (!num_parse_double(optarg, 0, SERVE_MAX_MARGIN_GIB, &so->margin_gib))
				return cmd_usage_error(ctx, "--margin-gib '%s' is not a size in GiB; expected a "
							    "finite number from 0 to %d", optarg,
						       SERVE_MAX_MARGIN_GIB);
			break;
		case 'M': so->mem_wait = (int)v; break;
		case 'W': so->window_wait = (int)v; break;
		case 'R': so->ready_wait = (int)v; break;
		case 'P': so->poll_ms = (int)v; break;
		case 'o':
			if (strcmp(optarg, "together") == 0)
				so->together_override = true;
			else if (strcmp(optarg, "one-at-a-time") == 0)
				so->one_override = true;
			else
				return cmd_usage_error(ctx, "--mode is one-at-a-time or together");
			break;
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* The roles in the plan's order with their budgets (of device bytes) into
 * roles (*n set), and the same as the plan's JSON array. */
static json_t *plan_roles(const struct fleet *fleet, const struct serve_opts *so, uint64_t device,
			  struct bringup_role *roles, size_t *n)
{
	json_t *plan = json_array();
	*n = 0;
	for (size_t i = 0; i < fleet->n_order; i++) {
		enum role_id r = fleet->order[i];
		roles[*n].role = r;
		roles[*n].budget = (uint64_t)(fleet->roles[r].util * device);
		json_array_append_new(plan, json_pack("{s:s, s:f, s:I, s:I, s:i}", "role", role_name(r),
						      "gpu_mem_util", fleet->roles[r].util, "budget_bytes",
						      (json_int_t)roles[*n].budget, "gate_bytes",
						      (json_int_t)(roles[*n].budget + so->margin_gib * GiB),
						      "port", fleet->roles[r].port));
		(*n)++;
	}
	return plan;
}

/* The dry run: the plan and what would happen to the gateway. */
static int dry_run(struct ctx *ctx, const struct serve_opts *so, const struct fleet *fleet,
		   const struct gw_life *gl, json_t *plan, bool one, uint64_t device,
		   const char *device_src, uint64_t free_now)
{
	json_auto_t *res = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:O, s:b}", "profile",
				     fleet->profile, "dir", fleet->dir, "mode",
				     one ? "one-at-a-time" : "together", "device_bytes",
				     (json_int_t)device, "device_source", device_src,
				     "free_bytes", (json_int_t)free_now, "roles", plan, "applied", 0);
	json_t *gw = gw_life_plan(gl, true);
	json_object_set_new(res, "gateway", gw);
	json_t *col = collector_up(fleet->dir, so->no_collector, false);
	json_object_set_new(res, "collector", col);
	if (ctx->json) {
		out_json(res);
		return 0;
	}
	printf("bring-up plan for profile %s in %s\n", jstr(res, "profile"), jstr(res, "dir"));
	collector_print(col, false);
	printf("mode: %s%s\n", one ? "one memory-profiling window at a time" : "together",
	       one ? " (the next role starts when the previous has allocated its KV cache)" : "");
	printf("device memory %.1f GiB (%s); free now %.1f GiB (MemFree, as vLLM reads it)\n",
	       device / GiB, device_src, free_now / GiB);
	size_t i;
	json_t *x;
	json_array_foreach(plan, i, x)
		printf("  %zu. %-9s port %-5d budget %5.1f GiB (util %.2f)  gate: free >= %.1f GiB\n",
		       i + 1, jstr(x, "role"), (int)json_integer_value(json_object_get(x, "port")),
		       json_integer_value(json_object_get(x, "budget_bytes")) / GiB,
		       json_real_value(json_object_get(x, "gpu_mem_util")),
		       json_integer_value(json_object_get(x, "gate_bytes")) / GiB);
	printf("then every role must answer /health within %d s\n", so->ready_wait);
	gw_life_print(gw, false);
	printf("dry run: nothing started; run `lobes serve --apply` to bring the fleet up\n");
	return 0;
}

/* One role's outcome as JSON, with the cause triage names in its log tail,
 * the line it came from and the last lines. */
static json_t *role_result_json(const struct bringup_role_result *x, const struct sigset *sigs)
{
	json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:s?}", "role", role_name(x->role),
			      "outcome", role_outcome_name(x->outcome), "start_ms",
			      (json_int_t)x->start_ms, "window_ms", (json_int_t)x->window_ms,
			      "ready_ms", (json_int_t)x->ready_ms, "reason", x->reason);
	json_t *rep = failure_report(x->log_tail, 12, sigs);
	if (rep)
		json_object_update_new(o, rep);
	return o;
}

/* --apply: the engines through compose and the Engine API, one window at a
 * time or together; the result into *res. 0, or -1 with *err. */
static int bring_up(struct ctx *ctx, const struct serve_opts *so, struct fleet *fleet,
		    struct bringup_role *roles, size_t n, bool one, json_t **res, struct err **err)
{
	struct serve_rt s = { .event = op_event, .event_cls = ctx };
	for (size_t i = 0; i < n; i++)
		s.services[i] = role_name(roles[i].role);
	if (serve_rt_open(&s, fleet, err) < 0)
		return -1;
	struct bringup_ops ops = serve_rt_ops(&s);
	struct bringup_opts bo = { .one_at_a_time = one, .margin = (uint64_t)(so->margin_gib * GiB),
				   .mem_wait_ms = so->mem_wait * 1000, .window_wait_ms = so->window_wait * 1000,
				   .ready_wait_ms = so->ready_wait * 1000, .poll_ms = so->poll_ms,
				   .drop_caches = so->drop };
	if (so->drop && geteuid() != 0) {
		fprintf(stderr, "lobes serve: warning: --drop-caches needs root; not dropping\n");
		bo.drop_caches = false;
	}
	struct bringup_result br;
	int rc = bringup_run(roles, n, &ops, &bo, &br, err);
	*res = json_pack("{s:s, s:s, s:b, s:I, s:[]}", "profile", fleet->profile, "mode",
			 one ? "one-at-a-time" : "together", "ok", rc == 0 && br.ok,
			 "total_ms", (json_int_t)br.total_ms, "roles");
	json_t *rl = json_object_get(*res, "roles");
	struct sigset sigs = { 0 };
	bool have_sigs = sigset_load(&sigs, NULL, NULL) == 0;
	for (size_t i = 0; i < br.n; i++)
		json_array_append_new(rl, role_result_json(&br.roles[i], have_sigs ? &sigs : NULL));
	sigset_free(&sigs);
	secret_mask_json(*res);
	bringup_result_free(&br);
	serve_rt_close(&s);
	return rc;
}

/* The result of --apply, the gateway's included: one JSON line, or text. */
static int print_result(struct ctx *ctx, json_t *res, const json_t *gw)
{
	bool up_ok = json_is_true(json_object_get(res, "ok"));
	const json_t *col = json_object_get(res, "collector");
	bool ok = up_ok && json_is_true(json_object_get(gw, "ok")) &&
		  json_is_true(json_object_get(col, "ok"));
	json_object_set_new(res, "ok", json_boolean(ok));
	if (ctx->json) {
		/* one line, after the event lines: the last line is the result */
		json_object_set_new(res, "event", json_string("result"));
		json_dumpf(res, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		return ok ? 0 : 1;
	}
	const json_t *rl = json_object_get(res, "roles");
	size_t i;
	json_t *x;
	json_array_foreach(rl, i, x) {
		if (!*jstr(x, "reason"))
			continue;
		printf("\n%s%s%s: %s\n", c_bold(ctx), jstr(x, "role"), c_reset(ctx), jstr(x, "reason"));
		print_report(x);
	}
	if (up_ok)
		printf("all %zu roles ready in %.1f s\n", json_array_size(rl),
		       json_integer_value(json_object_get(res, "total_ms")) / 1000.0);
	else
		printf("bring-up stopped; roles already up are left running (`lobes status`, `lobes stop`)\n");
	gw_life_print(gw, true);
	collector_print(col, true);
	return ok ? 0 : 1;
}

CMD(serve)
{
	struct serve_opts so;
	int code = parse_opts(argc, argv, ctx, &so);
	if (code >= 0)
		return code;
	struct err *e = NULL;
	struct fleet fleet;
	/* the gateway's settings are checked before anything starts */
	struct gw_life gl;
	if (gw_life_open_fleet(&fleet, &gl, ctx->dir, so.no_gateway, true, &e) < 0)
		return cmd_fail(ctx, e);
	/* Device memory: the detected total, else the host's MemTotal. */
	uint64_t device = 0, free_now = 0;
	_cleanup_free_ char *device_src = NULL;
	if (device_memory(&device, &device_src, &e) < 0) {
		gw_life_close(&gl);
		fleet_free(&fleet);
		return cmd_fail(ctx, e);
	}
	meminfo_field("MemFree", &free_now, NULL);
	bool one = so.one_override || (!so.together_override && strcmp(fleet.bringup, "together") != 0);
	struct bringup_role roles[ROLE__COUNT];
	size_t n = 0;
	json_auto_t *plan = plan_roles(&fleet, &so, device, roles, &n);
	if (!so.apply) {
		code = dry_run(ctx, &so, &fleet, &gl, plan, one, device, device_src, free_now);
		gw_life_close(&gl);
		fleet_free(&fleet);
		return code;
	}
	/* the log collector before the engines: a role that crash-loops while
	 * it comes up has each boot kept */
	json_auto_t *col = collector_up(fleet.dir, so.no_collector, true);
	json_auto_t *res = NULL;
	int rc = bring_up(ctx, &so, &fleet, roles, n, one, &res, &e);
	fleet_free(&fleet);
	if (rc < 0) {
		gw_life_close(&gl);
		return cmd_fail(ctx, e);
	}
	/* the front door, after the engines: it answers 503 for a role that
	 * did not come up, so it starts either way */
	json_auto_t *gw = gw_life_up(&gl);
	gw_life_close(&gl);
	json_object_set(res, "gateway", gw);
	json_object_set(res, "collector", col);
	secret_mask_json(res); /* the gateway's log lines, if it failed */
	return print_result(ctx, res, gw);
}
