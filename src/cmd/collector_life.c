/*
 * collector_life.c — the log collector beside `lobes serve --apply`
 * (started before the engines, so a role that crash-loops during bring-up
 * has each boot kept; left running when it already runs) and `lobes stop
 * --apply` (stopped after the engines, so their last lines are kept: it
 * makes one last pass on SIGTERM). The process work is in
 * src/lib/runtime/bgproc.c; this file words the result as one JSON object
 * ("collector" in serve's and stop's results) and a line.
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "../lib/runtime/runtime.h"
#include "../lib/util/cleanup.h"
#include "cmd.h"

static json_t *result(const struct bgproc *p, const char *action)
{
	json_t *o = json_pack("{s:s, s:b}", "action", action, "ok", 1);
	if (p->pid)
		json_object_set_new(o, "pid", json_integer(p->pid));
	if (p->log_file)
		json_object_set_new(o, "log", json_string(p->log_file));
	return o;
}

static json_t *failed(json_t *o, struct err *e)
{
	json_object_set_new(o, "ok", json_false());
	json_object_set_new(o, "error", json_string(e->msg));
	err_free(e);
	return o;
}

json_t *collector_up(const char *dir, bool skip, bool apply)
{
	if (skip)
		return json_pack("{s:s, s:b}", "action", "skip", "ok", 1);
	struct err *e = NULL;
	struct bgproc p;
	if (bgproc_read(&p, dir, BGPROC_COLLECTOR, &e) < 0)
		return failed(json_pack("{s:s}", "action", "start"), e);
	json_t *o = result(&p, p.pid ? "running" : "start");
	if (!p.pid && apply) {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			err_set(&e, EXIT_RUNTIME, "cannot find this program (/proc/self/exe)");
		else
			exe[n] = '\0';
		if (e || bgproc_start(&p, exe, GWPROC_START_TIMEOUT_MS, &e) < 0) {
			bgproc_free(&p);
			return failed(o, e);
		}
		json_object_set_new(o, "pid", json_integer(p.pid));
		json_object_set_new(o, "log", json_string(p.log_file));
	}
	bgproc_free(&p);
	return o;
}

json_t *collector_down(const char *dir, bool apply)
{
	struct err *e = NULL;
	struct bgproc p;
	if (bgproc_read(&p, dir, BGPROC_COLLECTOR, &e) < 0)
		return failed(json_pack("{s:s}", "action", "stop"), e);
	json_t *o = result(&p, p.pid ? "stop" : "none");
	bool killed = false;
	if (p.pid && apply) {
		if (bgproc_stop(&p, BGPROC_COLLECTOR_STOP_MS, &killed, &e) < 0) {
			bgproc_free(&p);
			return failed(o, e);
		}
		json_object_set_new(o, "killed", json_boolean(killed));
	}
	bgproc_free(&p);
	return o;
}

void collector_print(const json_t *c, bool applied)
{
	const char *a = jstr(c, "action");
	long long pid = json_integer_value(json_object_get(c, "pid"));
	if (!json_is_true(json_object_get(c, "ok")))
		printf("log collector: %s failed: %s\n", a, jstr(c, "error"));
	else if (!strcmp(a, "start") && applied)
		printf("log collector: keeping the engines' logs under logs/ (pid %lld; its log %s)\n", pid,
		       jstr(c, "log"));
	else if (!strcmp(a, "start"))
		printf("first start the log collector (the engines' logs kept per boot under logs/)\n");
	else if (!strcmp(a, "running"))
		printf("log collector: already running (pid %lld)\n", pid);
	else if (!strcmp(a, "stop") && applied)
		printf("log collector: stopped (pid %lld%s)\n", pid,
		       json_is_true(json_object_get(c, "killed")) ? ", killed past its bound" : "");
	else if (!strcmp(a, "stop"))
		printf("then stop the log collector (pid %lld)\n", pid);
}
