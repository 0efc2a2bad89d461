/*
 * status.c — `lobes status`: what the deployed fleet is doing now.
 *
 * No detection: the deploy dir's .env says which profile is deployed, which
 * roles are feasible and on which port and model each serves; the Engine
 * API says, per role, whether its container exists, its state and health,
 * since when it runs and how often it restarted. Containers are found by
 * the compose project label and matched to roles by their lobes.role label
 * (the compose service name when the label is missing).
 *
 * Docker's health is the rendered healthcheck's last verdict; until its first
 * run (the render checks every 15 s) the engine says "starting". For a
 * running role that is "starting" or has no healthcheck, status asks the
 * same question itself — GET http://127.0.0.1:PORT/health, bounded — so a
 * role `serve` just proved ready is not reported as failing. The gateway is
 * asked where its settings bind it (LOBES_GATEWAY_BIND; a wildcard bind on
 * loopback).
 *
 * Exit: 0 every feasible role running and healthy; 1 some is not; 3 no
 * .env in the deploy dir; 4 the engine cannot be reached (the roles are
 * then printed with state "unknown").
 */
#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/deploy/deploy.h"
#include "../lib/runtime/runtime.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/secret.h"
#include "cmd.h"

#define HEALTH_TIMEOUT_MS 2000

int status_fleet(struct ctx *ctx); /* fleet.c */

/* "45s", "12m03s", "2h03m", "3d04h". */
static void fmt_uptime(long long s, char *out, size_t n)
{
	if (s < 60)
		snprintf(out, n, "%llds", s);
	else if (s < 3600)
		snprintf(out, n, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(out, n, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(out, n, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
}

/* Role entry for the JSON result. c: its container (NULL: none); reachable:
 * whether the engine answered. Sets "ok" and, when not ok, "problem". */
static json_t *role_status(const char *role, const struct env_file *env,
			   const struct engine_container *c, bool reachable, time_t now)
{
	_cleanup_free_ char *up = xstrdup(role);
	for (char *p = up; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	_cleanup_free_ char *kf = xasprintf("%s_FEASIBLE", up);
	_cleanup_free_ char *kp = xasprintf("%s_PORT", up);
	_cleanup_free_ char *km = xasprintf("%s_MODEL", up);
	const char *feas = env_get(env, kf), *port = env_get(env, kp), *model = env_get(env, km);
	bool feasible = feas && strcmp(feas, "true") == 0;
	json_t *o = json_pack("{s:s, s:b}", "role", role, "feasible", feasible);
	char *end = NULL;
	long pn = port ? strtol(port, &end, 10) : 0;
	json_object_set_new(o, "port", port && *port && end && !*end ? json_integer(pn)
					: port ? json_string(port) : json_null());
	json_object_set_new(o, "model", model ? json_string(model) : json_null());
	if (!reachable) {
		json_object_set_new(o, "state", json_string(feasible ? "unknown" : "not deployed"));
		json_object_set_new(o, "ok", json_boolean(!feasible));
		if (feasible)
			json_object_set_new(o, "problem", json_string("docker engine unreachable"));
		return o;
	}
	if (!c) {
		json_object_set_new(o, "state", json_string(feasible ? "not running" : "not deployed"));
		json_object_set_new(o, "ok", json_boolean(!feasible));
		if (feasible)
			json_object_set_new(o, "problem", json_string("not running"));
		return o;
	}
	json_object_set_new(o, "state", json_string(c->state));
	json_object_set_new(o, "health", json_string(c->health));
	json_object_set_new(o, "container", json_string(c->name));
	json_object_set_new(o, "image", json_string(c->image));
	json_object_set_new(o, "restart_count", json_integer(c->restart_count));
	bool running = strcmp(c->state, "running") == 0;
	time_t started;
	if (*c->started_at)
		json_object_set_new(o, "started_at", json_string(c->started_at));
	if (running && engine_parse_time(c->started_at, &started) == 0)
		json_object_set_new(o, "uptime_s",
				    json_integer(now > started ? (json_int_t)(now - started) : 0));
	if (!running && *c->finished_at)
		json_object_set_new(o, "exit_code", json_integer(c->exit_code));
	if (*c->profile)
		json_object_set_new(o, "container_profile", json_string(c->profile));
	/* docker has no verdict yet: ask /health directly */
	int http = -1;
	bool no_verdict = strcmp(c->health, "starting") == 0 || strcmp(c->health, "none") == 0;
	if (running && no_verdict && json_is_integer(json_object_get(o, "port"))) {
		http = http_health((int)json_integer_value(json_object_get(o, "port")), HEALTH_TIMEOUT_MS);
		json_object_set_new(o, "http_health", json_integer(http));
	}
	_cleanup_free_ char *problem = NULL, *note = NULL;
	if (!feasible)
		problem = xstrdup("infeasible in this profile, yet a container exists");
	else if (!running && *c->finished_at)
		problem = xasprintf("%s (exit code %d%s)", c->state, c->exit_code,
				    c->oom_killed ? ", killed for memory" : "");
	else if (!running)
		problem = xstrdup(c->state);
	else if (strcmp(c->health, "unhealthy") == 0)
		problem = xstrdup("unhealthy");
	else if (no_verdict && http != 200)
		problem = xasprintf("%s; /health %s", strcmp(c->health, "none") == 0
				    ? "no healthcheck" : "health check not passed yet",
				    http > 0 ? "answers an error" : "does not answer");
	else if (no_verdict)
		note = xasprintf("%s; /health answers 200", strcmp(c->health, "none") == 0
				 ? "no healthcheck" : "docker's health check has not run yet");
	/* an infeasible role's leftover container is reported, not failed:
	 * the plan asks nothing of it */
	json_object_set_new(o, "ok", json_boolean(!feasible || !problem));
	if (problem && feasible)
		json_object_set_new(o, "problem", json_string(problem));
	else if (problem || note)
		json_object_set_new(o, "note", json_string(problem ? problem : note));
	return o;
}

static void print_text(const struct ctx *ctx, const json_t *res)
{
	const json_t *eng = json_object_get(res, "engine");
	bool reach = json_is_true(json_object_get(eng, "reachable"));
	printf("%sprofile%s %s  %sdeploy dir%s %s  %sdocker engine%s %s%s%s (%s)\n", c_bold(ctx),
	       c_reset(ctx), jstr(res, "profile"), c_bold(ctx), c_reset(ctx), jstr(res, "dir"),
	       c_bold(ctx), c_reset(ctx), reach ? c_green(ctx) : c_red(ctx),
	       reach ? "reachable" : "unreachable", c_reset(ctx), jstr(eng, "socket"));
	printf("%-10s %-13s %-10s %-6s %-8s %-8s %s\n", "ROLE", "STATE", "HEALTH", "PORT", "UPTIME",
	       "RESTARTS", "MODEL");
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(res, "roles"), i, r) {
		bool feasible = json_is_true(json_object_get(r, "feasible"));
		const json_t *c = json_object_get(r, "container");
		if (!feasible && !c) {
			printf("%s%-10s not deployed (infeasible)%s\n", c_dim(ctx), jstr(r, "role"),
			       c_reset(ctx));
			continue;
		}
		char port[32] = "-", uptime[32] = "-", restarts[32] = "-";
		const json_t *pj = json_object_get(r, "port");
		if (json_is_integer(pj))
			snprintf(port, sizeof(port), "%lld", (long long)json_integer_value(pj));
		else if (json_is_string(pj))
			snprintf(port, sizeof(port), "%s", json_string_value(pj));
		const json_t *uj = json_object_get(r, "uptime_s");
		if (json_is_integer(uj))
			fmt_uptime((long long)json_integer_value(uj), uptime, sizeof(uptime));
		const json_t *rj = json_object_get(r, "restart_count");
		if (json_is_integer(rj))
			snprintf(restarts, sizeof(restarts), "%lld", (long long)json_integer_value(rj));
		bool ok = json_is_true(json_object_get(r, "ok"));
		const char *health = *jstr(r, "health") ? jstr(r, "health") : "-";
		printf("%-10s %s%-13s%s %-10s %-6s %-8s %-8s %s\n", jstr(r, "role"),
		       ok ? c_green(ctx) : c_red(ctx), jstr(r, "state"), c_reset(ctx), health, port,
		       uptime, restarts, *jstr(r, "model") ? jstr(r, "model") : "-");
		if (*jstr(r, "note"))
			printf("%s  note: %s%s\n", c_yellow(ctx), jstr(r, "note"), c_reset(ctx));
	}
	const json_t *gw = json_object_get(res, "gateway");
	long long gpid = json_integer_value(json_object_get(gw, "pid"));
	printf("%-10s %s:%lld %s", "gateway", jstr(gw, "bind"), (long long)json_integer_value(json_object_get(gw, "port")),
	       json_is_true(json_object_get(gw, "running")) ? "running" : "not running");
	if (gpid)
		printf(" (pid %lld, started by lobes serve; log %s)", gpid, jstr(gw, "log"));
	printf("\n");
	const json_t *col = json_object_get(res, "collector");
	if (json_is_true(json_object_get(col, "running")))
		printf("%-10s running (pid %lld; the engines' logs under logs/, `lobes logs ROLE`)\n",
		       "logs", (long long)json_integer_value(json_object_get(col, "pid")));
	else
		printf("%-10s not kept: no log collector runs (`lobes serve --apply` starts it)\n", "logs");
	const json_t *probs = json_object_get(res, "problems");
	long long nf = json_integer_value(json_object_get(res, "feasible_roles"));
	if (!reach) {
		printf("%sstate unknown:%s docker engine unreachable\n", c_red(ctx), c_reset(ctx));
		return;
	}
	if (json_array_size(probs) == 0) {
		printf("%sok:%s %lld of %lld feasible roles running and healthy\n", c_green(ctx),
		       c_reset(ctx), nf, nf);
		return;
	}
	printf("%snot ok:%s %lld of %lld feasible roles running and healthy\n", c_red(ctx),
	       c_reset(ctx), nf - (long long)json_array_size(probs), nf);
	json_array_foreach(probs, i, r)
		printf("  %s: %s\n", jstr(r, "role"), jstr(r, "problem"));
}

CMD(status)
{
	static const struct option opts[] = { { "fleet", no_argument, NULL, 'f' },
					      { "watch", no_argument, NULL, 'w' },
					      { NULL, 0, NULL, 0 } };
	int c;
	bool fleet = false, watch = false;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'w')
			watch = true;
		else if (c == 'f')
			fleet = true;
		else
			return cmd_usage_error(ctx, "unknown option");
	}
	if (watch && (fleet || optind < argc))
		return cmd_usage_error(ctx, "--watch takes no other option here");
	if (watch) /* the live view: src/cmd/top.c */
		return cmd_top(1, argv, ctx);
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	if (fleet) /* every box in peers.yaml: src/cmd/fleet.c */
		return status_fleet(ctx);

	struct err *e = NULL;
	struct env_file env;
	int have_env = deploy_env_read(ctx->dir, &env, &e);
	if (have_env < 0)
		return cmd_fail(ctx, e);
	if (!have_env) {
		err_set(&e, EXIT_CONFIG,
			"no deployment in '%s' (no .env); run 'lobes init --apply' to write one",
			ctx->dir);
		return cmd_fail(ctx, e);
	}
	const char *profile = env_get(&env, "LOBES_PROFILE");
	const char *project = env_get(&env, "COMPOSE_PROJECT_NAME");
	if (!project || !*project)
		project = "lobes";

	json_auto_t *res = json_pack("{s:s, s:s, s:s}", "profile", profile ? profile : "",
				     "dir", ctx->dir, "project", project);
	json_t *eng = json_object();
	json_object_set_new(res, "engine", eng);
	struct engine en = { 0 };
	struct err *engine_err = NULL;
	struct engine_container_list l = { 0 };
	bool reachable = false;
	if (engine_open(&en, &engine_err) < 0) {
		json_object_set_new(eng, "socket", json_string(getenv("DOCKER_HOST")));
	} else {
		json_object_set_new(eng, "socket", json_string(en.sock));
		if (engine_ping(&en, &engine_err) == 0 &&
		    engine_list_project(&en, project, &l, &engine_err) == 0)
			reachable = true;
	}
	json_object_set_new(eng, "reachable", json_boolean(reachable));
	if (engine_err)
		json_object_set_new(eng, "error", json_string(engine_err->msg));

	time_t now = time(NULL);
	json_t *roles = json_array(), *problems = json_array();
	json_int_t n_feasible = 0;
	for (size_t i = 0; i < env.n; i++) {
		const char *k = env.e[i].key;
		size_t kl = strlen(k);
		if (kl <= 9 || strcmp(k + kl - 9, "_FEASIBLE") != 0)
			continue;
		_cleanup_free_ char *role = xasprintf("%.*s", (int)(kl - 9), k);
		for (char *p = role; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		bool seen = false; /* a key assigned twice: the last wins, list it once */
		size_t j;
		json_t *r;
		json_array_foreach(roles, j, r)
			seen = seen || strcmp(jstr(r, "role"), role) == 0;
		if (seen)
			continue;
		r = role_status(role, &env, reachable ? engine_container_for_role(&l, role) : NULL,
				reachable, now);
		if (json_is_true(json_object_get(r, "feasible")))
			n_feasible++;
		if (!json_is_true(json_object_get(r, "ok")))
			json_array_append_new(problems,
					      json_pack("{s:s, s:s}", "role", role, "problem",
							jstr(r, "problem")));
		json_array_append_new(roles, r);
	}
	json_object_set_new(res, "roles", roles);
	json_object_set_new(res, "feasible_roles", json_integer(n_feasible));
	json_object_set_new(res, "problems", problems);
	json_object_set_new(res, "ok", json_boolean(reachable && json_array_size(problems) == 0));
	/* the front door: is `lobes gateway` answering on its port? (not a problem when not) */
	const char *gp = env_get(&env, "LOBES_GATEWAY_PORT");
	long gport = gp && *gp ? strtol(gp, NULL, 10) : 8000;
	const char *gb = env_get(&env, "LOBES_GATEWAY_BIND");
	gb = gb && *gb ? gb : "127.0.0.1";
	json_object_set_new(res, "gateway",
			    json_pack("{s:s, s:i, s:b}", "bind", gb, "port", (int)gport, "running",
				      gport > 0 && gport < 65536 &&
					      http_health_at(gb, (int)gport, HEALTH_TIMEOUT_MS) == 200));
	/* the one `lobes serve` started, when it runs (src/lib/runtime/gateway_proc.c) */
	struct bgproc gproc;
	if (bgproc_read(&gproc, ctx->dir, BGPROC_GATEWAY, NULL) == 0 && gproc.pid) {
		json_t *g = json_object_get(res, "gateway");
		json_object_set_new(g, "pid", json_integer(gproc.pid));
		if (gproc.log_file)
			json_object_set_new(g, "log", json_string(gproc.log_file));
	}
	bgproc_free(&gproc);
	/* the log collector `lobes serve` started (not a problem when not) */
	json_t *col = json_pack("{s:b}", "running", 0);
	if (bgproc_read(&gproc, ctx->dir, BGPROC_COLLECTOR, NULL) == 0 && gproc.pid) {
		json_object_set_new(col, "running", json_true());
		json_object_set_new(col, "pid", json_integer(gproc.pid));
		if (gproc.log_file)
			json_object_set_new(col, "log", json_string(gproc.log_file));
	}
	bgproc_free(&gproc);
	json_object_set_new(res, "collector", col);
	engine_container_list_free(&l);
	engine_close(&en);
	env_file_free(&env);

	secret_mask_json(res);
	if (ctx->json)
		out_json(res);
	else
		print_text(ctx, res);
	if (engine_err) {
		fflush(stdout);
		return cmd_fail(ctx, engine_err);
	}
	return json_array_size(problems) ? EXIT_CHECK : EXIT_OK;
}
