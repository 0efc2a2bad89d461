/*
 * gateway_life.c — the gateway beside `lobes serve --apply` (started after
 * the engines, or told to reload when it already runs) and `lobes stop
 * --apply` (stopped before them). The process work is in
 * src/lib/runtime/bgproc.c; this file decides, and words the result
 * as one JSON object ("gateway" in serve's and stop's results) and a line.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/gateway/gateway.h"
#include "../lib/runtime/runtime.h"
#include "../lib/util/cleanup.h"
#include "cmd.h"

#define GW_DEFAULT_DRAIN_S 30
#define GW_KILL_GRACE_MS 5000

static int gw_life_open(struct gw_life *l, const char *dir, bool skip, bool need_settings,
			struct err **err)
{
	memset(l, 0, sizeof(*l));
	l->skip = skip;
	l->drain_s = GW_DEFAULT_DRAIN_S;
	if (skip)
		return 0;
	struct err *ce = NULL;
	struct gw_config *c = gw_config_load(dir, NULL, &ce);
	if (!c && need_settings) {
		err_wrap(&ce, "the gateway's settings (fix them, or pass --no-gateway)");
		*err = ce;
		return -1;
	}
	if (c) {
		l->bind = xstrdup(c->bind);
		l->port = c->port;
		l->drain_s = c->drain_timeout_s;
		gw_config_unref(c);
	}
	err_free(ce);
	return bgproc_read(&l->proc, dir, BGPROC_GATEWAY, err);
}

int gw_life_open_fleet(struct fleet *f, struct gw_life *l, const char *dir, bool skip,
		       bool need_settings, struct err **err)
{
	if (fleet_load(f, dir, err) < 0)
		return -1;
	if (gw_life_open(l, f->dir, skip, need_settings, err) < 0) {
		fleet_free(f);
		return -1;
	}
	return 0;
}

void gw_life_close(struct gw_life *l)
{
	bgproc_free(&l->proc);
	free(l->bind);
	memset(l, 0, sizeof(*l));
}

static json_t *base(const struct gw_life *l, const char *action)
{
	json_t *o = json_pack("{s:s, s:b}", "action", action, "ok", 1);
	if (l->bind) {
		json_object_set_new(o, "url", json_sprintf("http://%s:%d", l->bind, l->port));
		/* the running one's log, else where a start will log */
		json_object_set_new(o, "log", l->proc.pid && l->proc.log_file
							? json_string(l->proc.log_file)
							: json_sprintf("%s/logs/gateway/", l->proc.dir));
	}
	if (l->proc.pid)
		json_object_set_new(o, "pid", json_integer(l->proc.pid));
	return o;
}

/* Something answers HTTP on the gateway's port on loopback while no
 * gateway of ours runs: systemd's, or another program. */
static bool port_taken(const struct gw_life *l)
{
	bool reach = gw_bind_is_loopback(l->bind) || !strcmp(l->bind, "0.0.0.0") || !strcmp(l->bind, "::");
	return reach && http_health(l->port, 2000) > 0;
}

json_t *gw_life_plan(const struct gw_life *l, bool up)
{
	if (l->skip)
		return base(l, "skip");
	if (!up)
		return base(l, l->proc.pid ? "stop" : "none");
	if (l->proc.pid)
		return base(l, "reload");
	return base(l, port_taken(l) ? "external" : "start");
}

json_t *gw_life_up(struct gw_life *l)
{
	json_t *o = gw_life_plan(l, true);
	const char *a = jstr(o, "action");
	struct err *e = NULL;
	char exe[PATH_MAX];
	ssize_t n;
	if (!strcmp(a, "reload")) {
		if (bgproc_reload(&l->proc, &e) < 0)
			goto fail;
	} else if (!strcmp(a, "start")) {
		if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) < 0) {
			err_set(&e, EXIT_RUNTIME, "cannot find this program (/proc/self/exe)");
			goto fail;
		}
		exe[n] = '\0';
		if (bgproc_start(&l->proc, exe, GWPROC_START_TIMEOUT_MS, &e) < 0)
			goto fail;
		json_object_set_new(o, "pid", json_integer(l->proc.pid));
		json_object_set_new(o, "log", json_string(l->proc.log_file));
	}
	return o;
fail:
	json_object_set_new(o, "ok", json_false());
	json_object_set_new(o, "error", json_string(e->msg));
	err_free(e);
	return o;
}

json_t *gw_life_down(struct gw_life *l)
{
	json_t *o = gw_life_plan(l, false);
	if (strcmp(jstr(o, "action"), "stop") != 0)
		return o;
	struct err *e = NULL;
	bool killed = false;
	if (bgproc_stop(&l->proc, l->drain_s * 1000 + GW_KILL_GRACE_MS, &killed, &e) < 0) {
		json_object_set_new(o, "ok", json_false());
		json_object_set_new(o, "error", json_string(e->msg));
		err_free(e);
	}
	json_object_set_new(o, "killed", json_boolean(killed));
	return o;
}

void gw_life_print(const json_t *g, bool applied)
{
	const char *a = jstr(g, "action");
	long long pid = json_integer_value(json_object_get(g, "pid"));
	if (!json_is_true(json_object_get(g, "ok")))
		printf("gateway: %s failed: %s\n", a, jstr(g, "error"));
	else if (!strcmp(a, "skip"))
		printf("gateway: left alone (--no-gateway)\n");
	else if (!strcmp(a, "external"))
		printf("gateway: %s already answers and is not one `lobes serve` started (systemd's "
		       "lobes-gateway@.service?); left as is\n", jstr(g, "url"));
	else if (!strcmp(a, "start") && applied)
		printf("gateway: listening on %s (pid %lld; log %s)\n", jstr(g, "url"), pid, jstr(g, "log"));
	else if (!strcmp(a, "start"))
		printf("then start the gateway on %s (log %s)\n", jstr(g, "url"), jstr(g, "log"));
	else if (!strcmp(a, "reload") && applied)
		printf("gateway: already running (pid %lld); told it to reload the deploy dir\n", pid);
	else if (!strcmp(a, "reload"))
		printf("then tell the running gateway (pid %lld) to reload the deploy dir\n", pid);
	else if (!strcmp(a, "stop") && applied)
		printf("gateway: stopped (pid %lld%s)\n", pid,
		       json_is_true(json_object_get(g, "killed")) ? ", killed past its drain bound" : "");
	else if (!strcmp(a, "stop"))
		printf("first stop the gateway (pid %lld)\n", pid);
}
