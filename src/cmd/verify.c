/*
 * verify.c — `lobes verify QUESTION`: answer a recorded question against the
 * running fleet (read-only) and write an evidence record. A question with
 * an experiment (fp8-kv-accuracy, mtp-acceptance) is the exception: it
 * reboots its role with each setting in turn, compares them, and puts the
 * operator's files and setting back (verify/experiment.c,
 * experiment_spec.c). Exit 0 when a route decided, 1
 * when the observations decide nothing (undecided), 4 when the fleet could
 * not be looked at (could not verify), 3 for bad input.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/knowledge/knowledge.h"
#include "../lib/runtime/runtime.h"
#include "../lib/util/cleanup.h"
#include "../lib/verify/verify.h"
#include "cmd.h"

/* An experiment's boots, as they happen, on stderr (stdout keeps the
 * result, --json included). */
static void on_boot(void *cls, const struct bringup_event *ev)
{
	(void)cls;
	fprintf(stderr, "[%7.1fs] %-9s %s%s%s\n", ev->elapsed_ms / 1000.0, role_name(ev->role),
		bringup_event_name(ev->kind), ev->text ? ": " : "", ev->text ? ev->text : "");
}

CMD(verify)
{
	const char *role = NULL;
	bool list = false, no_probe = false;
	double timeout = 60;
	long max_tasks = 0, boot_wait = 1800, requests = 8;
	static const struct option opts[] = { { "role", required_argument, NULL, 'r' },
					      { "max-tasks", required_argument, NULL, 'm' },
					      { "boot-wait", required_argument, NULL, 'b' },
					      { "requests", required_argument, NULL, 'q' },
					      { "list", no_argument, NULL, 'l' },
					      { "no-probe", no_argument, NULL, 'n' },
					      { "timeout", required_argument, NULL, 't' },
					      { NULL, 0, NULL, 0 } };
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': role = optarg; break;
		case 'l': list = true; break;
		case 'n': no_probe = true; break;
		case 'm':
		case 'q':
		case 'b': {
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 604800)
				return cmd_usage_error(ctx, "--%s '%s': expected a whole number from 1",
						       c == 'm' ? "max-tasks" : c == 'q' ? "requests" : "boot-wait",
						       optarg);
			*(c == 'm' ? &max_tasks : c == 'q' ? &requests : &boot_wait) = v;
			break;
		}
		case 't':
			timeout = strtod(optarg, &end);
			if (*end || timeout <= 0)
				return cmd_usage_error(ctx, "--timeout '%s' is not a number of seconds", optarg);
			break;
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	struct err *e = NULL;
	struct question_set qs;
	if (questions_load(&qs, ctx->dir, &e) < 0)
		return cmd_fail(ctx, e);
	if (list) {
		json_auto_t *res = json_array();
		for (size_t i = 0; i < qs.n; i++)
			json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s?}", "id", qs.q[i].id, "title",
							     qs.q[i].title, "role", qs.q[i].role, "thresholds",
							     question_thresholds(&qs.q[i])));
		questions_free(&qs);
		if (ctx->json)
			out_json(res);
		else {
			size_t i;
			json_t *x;
			json_array_foreach(res, i, x)
				printf("%-24s %s (role %s%s%s)\n", jstr(x, "id"), jstr(x, "title"), jstr(x, "role"),
				       *jstr(x, "thresholds") ? ", thresholds " : "", jstr(x, "thresholds"));
		}
		return 0;
	}
	if (optind + 1 != argc) {
		questions_free(&qs);
		return cmd_usage_error(ctx, "one QUESTION expected (see `lobes verify --list`)");
	}
	const struct question *q = question_find(&qs, argv[optind]);
	if (!q) {
		_cleanup_free_ char *names = NULL;
		for (size_t i = 0; i < qs.n; i++) {
			char *x = xasprintf("%s%s%s", names ? names : "", names ? ", " : "", qs.q[i].id);
			free(names);
			names = x;
		}
		int rc = cmd_usage_error(ctx, "unknown question '%s'; expected one of: %s", argv[optind],
					 names ? names : "(none)");
		questions_free(&qs);
		return rc;
	}
	if (role && role_from_name(role) < 0) {
		questions_free(&qs);
		return cmd_usage_error(ctx, "unknown role '%s'", role);
	}
	struct verify_opts vo = { .dir = ctx->dir, .role = role, .probe = !no_probe,
				  .probe_timeout_s = timeout, .now = time(NULL),
				  .margin_bytes = 1ULL << 30, .mem_wait_s = 300, .boot_wait_s = (int)boot_wait,
				  .eval_timeout_s = timeout, .max_tasks = max_tasks, .bench_requests = requests,
				  .event = on_boot };
	struct obs_set obs = { 0 };
	json_t *rec = verify_collect(q, &vo, &obs, &e);
	if (!rec) {
		obs_free(&obs);
		questions_free(&qs);
		return cmd_fail(ctx, e);
	}
	if (q->experiment && verify_experiment(q, &vo, rec, &obs, &e) < 0) {
		json_decref(rec);
		obs_free(&obs);
		questions_free(&qs);
		return cmd_fail(ctx, e);
	}
	const struct q_route *route = verify_decide(q, &obs, rec);
	_cleanup_free_ char *route_id = route ? xstrdup(route->id) : NULL;
	obs_free(&obs);
	questions_free(&qs); /* route points into qs: only route_id from here */
	char *txt = NULL, *jsn = NULL;
	if (evidence_write(ctx->dir, rec, &txt, &jsn, &e) < 0) {
		free(txt);
		free(jsn);
		json_decref(rec);
		return cmd_fail(ctx, e);
	}
	json_object_set_new(rec, "evidence_files", json_pack("[s, s]", txt, jsn));
	if (ctx->json) {
		out_json(rec);
	} else {
		const json_t *d = json_object_get(rec, "decision");
		printf("%s\n", jstr(json_object_get(rec, "question"), "title"));
		printf("%sdecision%s: %s — %s\n", c_bold(ctx), c_reset(ctx),
		       route_id ? route_id : "undecided", jstr(d, "answer"));
		printf("action: %s\n", jstr(d, "action"));
		printf("because:\n%s", jstr(rec, "routing"));
		printf("evidence: %s\n          %s\n", txt, jsn);
	}
	free(txt);
	free(jsn);
	json_decref(rec);
	return route_id ? 0 : 1;
}
