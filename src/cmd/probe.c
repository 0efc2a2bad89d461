/*
 * probe.c — `lobes probe [--timeout SECS] [ROLE...]`: ask every feasible role
 * of the deploy dir one question with a known answer, all at once, and say
 * which answered right. Read-only.
 *
 * The deploy dir's .env gives the roles (<ROLE>_FEASIBLE=true), their ports
 * (<ROLE>_PORT, else the fleet template's) and the profile (LOBES_PROFILE),
 * whose known_failures turn a listed wrong answer into `known-failure`. A
 * role rendered with a tool-call parser (<ROLE>_TOOL_CALL_PARSER) also gets
 * the tool-call probe, one with a reasoning parser (<ROLE>_REASONING_PARSER)
 * the reasoning-split probe. The
 * profile is looked up in the shipped knowledge plus <dir>/profiles; nothing
 * is detected and no checkpoint is read.
 *
 * --via-gateway sends every probe through the deploy dir's `lobes gateway`
 * (http://127.0.0.1:LOBES_GATEWAY_PORT, its key as the bearer) instead of
 * to each engine's port: the same questions, by role name, proving the
 * front door routes each role to a correct engine.
 *
 * Exit: 1 when a probe fails (a wrong answer, a timeout, a refused
 * connection, an HTTP error, a malformed body: network trouble is a FAIL,
 * never exit 4); 0 otherwise, known failures included; 2 for an unknown role
 * or one that is not feasible in the deploy dir; 3 when the dir has no .env
 * or its data is bad.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/gateway/gateway.h"
#include "../lib/knowledge/knowledge.h"
#include "../lib/deploy/deploy.h"
#include "../lib/render/render.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/fs.h"
#include "../lib/probe/probe.h"
#include "../lib/util/secret.h"
#include "cmd.h"

#define DEFAULT_TIMEOUT_S 60.0
#define MAX_TIMEOUT_S 3600.0

static void knowledge_freep(struct knowledge *k) { knowledge_free(k); }
int probe_fleet(struct ctx *ctx, double timeout_s); /* fleet.c */
static void env_file_freep(struct env_file *f) { env_file_free(f); }
static void fleet_template_freep(struct fleet_template *t) { fleet_template_free(t); }

/* The deploy dir's port for role r: <ROLE>_PORT, else the template's. */
static int role_port(const struct env_file *env, const struct fleet_template *t, enum role_id r,
		     const char *env_path, struct err **err)
{
	_cleanup_free_ char *key = env_key(r, "PORT");
	const char *v = env_get(env, key);
	if (!v)
		return t->ports[r];
	char *end;
	long port = strtol(v, &end, 10);
	if (!*v || *end || port < 1 || port > 65535)
		return err_set(err, EXIT_CONFIG, "'%s': %s='%s' is not a port (1-65535)", env_path, key, v);
	return (int)port;
}

/* True when .env sets <ROLE>_<what> to a non-empty value. */
static bool role_has(const struct env_file *env, enum role_id r, const char *what)
{
	_cleanup_free_ char *key = env_key(r, what);
	const char *v = env_get(env, key);
	return v && *v;
}

static bool role_is_feasible(const struct env_file *env, enum role_id r)
{
	_cleanup_free_ char *key = env_key(r, "FEASIBLE");
	const char *v = env_get(env, key);
	return v && strcmp(v, "true") == 0;
}

/* Text: one line per role, the known-failure notes, loud notices, a summary. */
static void print_text(const struct ctx *ctx, const json_t *res)
{
	printf("probing %s: profile %s, timeout %g s\n", jstr(res, "dir"),
	       json_is_string(json_object_get(res, "profile")) ? jstr(res, "profile") : "(none)",
	       json_number_value(json_object_get(res, "timeout_s")));
	size_t i;
	const json_t *p;
	json_array_foreach(json_object_get(res, "probes"), i, p) {
		const char *st = jstr(p, "status");
		bool fail = strcmp(st, "fail") == 0, kfp = strcmp(st, "known-failure-passed") == 0;
		const char *color = fail ? c_red(ctx) : kfp ? c_yellow(ctx)
					: strcmp(st, "pass") == 0 ? c_green(ctx) : c_yellow(ctx);
		const char *shown = fail ? "FAIL" : kfp ? "KNOWN-FAILURE-PASSED" : st;
		const char *detail = *jstr(p, "reason") ? jstr(p, "reason") : jstr(p, "summary");
		printf("%-9s %s%s%-20s%s %6lld ms  %s: %s\n", jstr(p, "role"), fail || kfp ? c_bold(ctx) : "",
		       color, shown, c_reset(ctx),
		       (long long)json_integer_value(json_object_get(p, "latency_ms")), jstr(p, "probe"),
		       detail);
		const json_t *kf = json_object_get(p, "known_failure");
		if (strcmp(st, "known-failure") == 0)
			printf("%-9s %sknown failure %s: %s%s\n", "", c_dim(ctx), jstr(kf, "ref"),
			       jstr(kf, "reason"), c_reset(ctx));
	}
	json_array_foreach(json_object_get(res, "notices"), i, p)
		printf("%s%s!! NOTICE: %s%s\n", c_bold(ctx), c_yellow(ctx), json_string_value(p),
		       c_reset(ctx));
	const json_t *c = json_object_get(res, "counts");
	json_int_t nf = json_integer_value(json_object_get(c, "fail"));
	json_int_t nk = json_integer_value(json_object_get(c, "known_failure"));
	json_int_t nkp = json_integer_value(json_object_get(c, "known_failure_passed"));
	printf("%s%lld passed, %lld failed%s", nf ? c_red(ctx) : c_green(ctx),
	       (long long)json_integer_value(json_object_get(c, "pass")), (long long)nf, c_reset(ctx));
	if (nk)
		printf(", %lld known failure%s", (long long)nk, nk == 1 ? "" : "s");
	if (nkp)
		printf(", %s%lld known failure%s now passing%s", c_yellow(ctx), (long long)nkp,
		       nkp == 1 ? "" : "s", c_reset(ctx));
	printf("\n");
}

struct probe_opts {
	double timeout_s;
	bool fleet, via_gateway, any_named;
	bool named[ROLE__COUNT];
};

/* -1 when the options are good, else the exit code of a usage error. */
static int parse_opts(int argc, char **argv, struct ctx *ctx, struct probe_opts *o)
{
	*o = (struct probe_opts){ .timeout_s = DEFAULT_TIMEOUT_S };
	static const struct option opts[] = { { "timeout", required_argument, NULL, 't' },
					      { "fleet", no_argument, NULL, 'f' },
					      { "via-gateway", no_argument, NULL, 'g' },
					      { NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "t:", opts, NULL)) != -1) {
		switch (c) {
		case 'f': o->fleet = true; break;
		case 'g': o->via_gateway = true; break;
		case 't': {
			char *end;
			o->timeout_s = strtod(optarg, &end);
			if (end == optarg || *end || !isfinite(o->timeout_s) || o->timeout_s <= 0 ||
			    o->timeout_s > MAX_TIMEOUT_S)
				return cmd_usage_error(ctx, "--timeout '%s': expected seconds in (0, %g]",
						       optarg, MAX_TIMEOUT_S);
			break;
		}
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (o->fleet && optind < argc)
		return cmd_usage_error(ctx, "--fleet probes every role; no ROLE arguments");
	for (int i = optind; i < argc; i++) {
		int r = role_from_name(argv[i]);
		if (r < 0)
			return cmd_usage_error(ctx, "unknown role '%s' (roles: cortex, senses, hand, "
						    "embedder, reranker)", argv[i]);
		o->named[r] = o->any_named = true;
	}
	return -1;
}

/* The deploy dir's .env, parsed into env (the file as committed). */
static int read_env(const char *dir, const char *env_path, struct env_file *env, struct err **err)
{
	int have_env = deploy_env_read(dir, env, err);
	if (have_env == 0)
		return err_set(err, EXIT_CONFIG, "no deploy dir at '%s' ('%s' is missing); run 'lobes init "
						 "--apply' first", dir, env_path);
	return have_env < 0 ? -1 : 0;
}

/* The profile of .env's LOBES_PROFILE (its known failures; shipped
 * knowledge + <dir>/profiles) into *prof, or NULL with a warning when .env
 * names none. */
static int load_profile(const char *dir, const struct env_file *env, const char *env_path,
			struct knowledge *k, const struct profile **prof, json_t *warnings,
			struct err **err)
{
	const char *name = env_get(env, "LOBES_PROFILE");
	*prof = NULL;
	if (!name || !*name) {
		json_array_append_new(warnings, json_string("no LOBES_PROFILE in .env: no known "
							    "failures apply"));
		return 0;
	}
	_cleanup_free_ char *opdir = xasprintf("%s/profiles", dir);
	if (knowledge_load(k, opdir, err) < 0)
		return -1;
	*prof = knowledge_profile(k, name);
	if (!*prof)
		return err_set(err, EXIT_CONFIG, "'%s': LOBES_PROFILE='%s' is not a known profile",
			       env_path, name);
	return 0;
}

/* The probes of every feasible role (or the named ones) into probes; *n
 * set. 0, or the exit code of a usage or configuration error. */
static int plan_probes(struct ctx *ctx, const struct probe_opts *o, const struct env_file *env,
		       const char *env_path, const struct profile *prof, struct probe *probes,
		       size_t *n)
{
	struct err *e = NULL;
	__attribute__((cleanup(fleet_template_freep))) struct fleet_template tpl = { 0 };
	if (fleet_template_load(&tpl, &e) < 0)
		return cmd_fail(ctx, e);
	*n = 0;
	for (int r = 0; r < ROLE__COUNT; r++) {
		bool feasible = role_is_feasible(env, (enum role_id)r);
		if (o->named[r] && !feasible) {
			_cleanup_free_ char *key = env_key((enum role_id)r, "FEASIBLE");
			const char *v = env_get(env, key);
			return cmd_usage_error(ctx, "role '%s' is not feasible in '%s' (.env %s=%s)",
					       role_name((enum role_id)r), ctx->dir, key, v ? v : "unset");
		}
		if (!feasible || (o->any_named && !o->named[r]))
			continue;
		int port = role_port(env, &tpl, (enum role_id)r, env_path, &e);
		if (port < 0)
			return cmd_fail(ctx, e);
		probe_init(&probes[(*n)++], (enum role_id)r, port,
			   probe_known_failure(prof, (enum role_id)r));
		if (role_has(env, (enum role_id)r, "TOOL_CALL_PARSER"))
			probe_init_kind(&probes[(*n)++], (enum role_id)r, PK_TOOL_CALL, port,
					probe_kind_known_failure(prof, (enum role_id)r, PK_TOOL_CALL));
		if (role_has(env, (enum role_id)r, "REASONING_PARSER"))
			probe_init_kind(&probes[(*n)++], (enum role_id)r, PK_REASONING, port,
					probe_kind_known_failure(prof, (enum role_id)r, PK_REASONING));
	}
	if (!*n) {
		err_set(&e, EXIT_CONFIG, "'%s' declares no feasible role (no <ROLE>_FEASIBLE=true)",
			env_path);
		return cmd_fail(ctx, e);
	}
	return 0;
}

/* Run the probes, through the gateway when via_gateway (its key as the
 * bearer, never printed; its origin into *gw_origin, which the probes
 * borrow for their report). 0, or the exit code of an error. */
static int run_probes(struct ctx *ctx, bool via_gateway, struct probe *probes, size_t n,
		      double timeout_s, char **gw_origin)
{
	struct err *e = NULL;
	struct gw_config *gwc = NULL;
	if (via_gateway) {
		gwc = gw_config_load(ctx->dir, NULL, &e);
		if (!gwc)
			return cmd_fail(ctx, e);
		bool any = !strcmp(gwc->bind, "0.0.0.0") || !strcmp(gwc->bind, "::");
		*gw_origin = xasprintf("http://%s:%d", any ? "127.0.0.1" : gwc->bind, gwc->port);
		for (size_t i = 0; i < n; i++) {
			probes[i].origin = *gw_origin;
			probes[i].bearer = gwc->key;
		}
	}
	int code = probe_run(probes, n, timeout_s, &e) < 0 ? cmd_fail(ctx, e) : 0;
	for (size_t i = 0; gwc && i < n; i++) /* the key goes with the config */
		probes[i].bearer = NULL;
	gw_config_unref(gwc);
	return code;
}

/* The result object of the probes (freed here), printed as text or --json. */
static int report(struct ctx *ctx, struct probe *probes, size_t n, const char *profile_name,
		  double timeout_s, json_t *warnings)
{
	json_int_t counts[4] = { 0 };
	json_t *arr = json_array(), *notices = json_array();
	for (size_t i = 0; i < n; i++) {
		counts[probes[i].status]++;
		json_array_append_new(arr, probe_json(&probes[i]));
		if (probes[i].notice)
			json_array_append_new(notices, json_string(probes[i].notice));
		probe_free(&probes[i]);
	}
	json_auto_t *res = json_pack(
		"{s:s, s:o, s:f, s:b, s:{s:I, s:I, s:I, s:I}, s:o, s:o, s:O}", "dir", ctx->dir,
		"profile", profile_name && *profile_name ? json_string(profile_name) : json_null(),
		"timeout_s", timeout_s, "ok", counts[PROBE_FAIL] == 0, "counts",
		"pass", counts[PROBE_PASS], "fail", counts[PROBE_FAIL],
		"known_failure", counts[PROBE_KNOWN_FAILURE],
		"known_failure_passed", counts[PROBE_KNOWN_FAILURE_PASSED],
		"probes", arr, "notices", notices, "warnings", warnings);
	secret_mask_json(res);
	if (ctx->json) {
		out_json(res);
	} else {
		size_t i;
		const json_t *w;
		json_array_foreach(warnings, i, w)
			fprintf(stderr, "lobes probe: warning: %s\n", json_string_value(w));
		print_text(ctx, res);
	}
	return counts[PROBE_FAIL] ? EXIT_CHECK : 0;
}

CMD(probe)
{
	struct probe_opts o;
	int code = parse_opts(argc, argv, ctx, &o);
	if (code >= 0)
		return code;
	if (o.fleet) /* every role once, where the fleet serves it: src/cmd/fleet.c */
		return probe_fleet(ctx, o.timeout_s);
	struct err *e = NULL;
	_cleanup_free_ char *env_path = xasprintf("%s/.env", ctx->dir);
	__attribute__((cleanup(env_file_freep))) struct env_file env = { 0 };
	if (read_env(ctx->dir, env_path, &env, &e) < 0)
		return cmd_fail(ctx, e);
	__attribute__((cleanup(knowledge_freep))) struct knowledge k = { 0 };
	const struct profile *prof = NULL;
	json_auto_t *warnings = json_array();
	if (load_profile(ctx->dir, &env, env_path, &k, &prof, warnings, &e) < 0)
		return cmd_fail(ctx, e);
	struct probe probes[ROLE__COUNT * 3];
	size_t n = 0;
	_cleanup_free_ char *gw_origin = NULL;
	code = plan_probes(ctx, &o, &env, env_path, prof, probes, &n);
	if (!code)
		code = run_probes(ctx, o.via_gateway, probes, n, o.timeout_s, &gw_origin);
	if (code) {
		for (size_t i = 0; i < n; i++)
			probe_free(&probes[i]);
		return code;
	}
	return report(ctx, probes, n, env_get(&env, "LOBES_PROFILE"), o.timeout_s, warnings);
}
