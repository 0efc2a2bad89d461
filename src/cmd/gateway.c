/*
 * gateway.c — `lobes gateway`: run the front door in the foreground.
 *
 * Reads the deploy dir (src/lib/gateway/config.c), starts the server, then
 * waits for signals in this thread (they are blocked in the server's
 * threads): SIGHUP reloads the deploy dir (a bad one is logged and the old
 * snapshot kept), SIGTERM/SIGINT drain (stop accepting, let in-flight
 * requests finish within LOBES_GATEWAY_DRAIN_TIMEOUT, cancel the rest) and
 * exit 0. Access and event lines go to stderr as JSON, one per line; stdout
 * gets the start line and the exit summary (text, or JSON with --json).
 * With --check it only validates the deploy dir and prints the settings.
 * --pid-file PATH: once listening, write the pid there (atomically) and
 * remove the file at exit; `lobes serve --apply` starts the gateway so and
 * waits for the file (src/lib/runtime/gateway_proc.c).
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../lib/gateway/gateway.h"
#include "../lib/util/fs.h"
#include "../lib/util/secret.h"
#include "../lib/util/cleanup.h"
#include "../version.h"
#include "cmd.h"

static void log_line(void *ud, const char *line)
{
	(void)ud;
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
}

/* An event of this command (reloaded, reload-failed): its message goes
 * through the one masking rule, as every error the command prints does. */
static void log_event(const char *event, const char *msg)
{
	_cleanup_free_ char *masked = secret_mask_text(msg);
	json_t *o = json_pack("{s:s, s:s}", "event", event, "message", masked ? masked : "");
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	log_line(NULL, s);
	free(s);
	json_decref(o);
}

/* peers.yaml: names, origins, key file paths (never the keys), role modes */
static json_t *peers_summary(const struct gw_config *c)
{
	if (!c->peers)
		return json_null();
	json_t *peers = json_array(), *roles = json_object();
	for (size_t i = 0; i < c->peers->n; i++) {
		const struct gw_peer *p = &c->peers->v[i];
		json_array_append_new(peers, json_pack("{s:s, s:s, s:s?}", "name", p->name, "origin",
						       p->origin, "key_file", p->key_file));
	}
	for (int r = 0; r < ROLE__COUNT; r++) {
		enum gw_peer_mode m = c->peers->role[r].mode;
		if (m != GW_PEER_NONE)
			json_object_set_new(roles, role_name((enum role_id)r),
					    json_pack("{s:s, s:s}", "mode", m == GW_PEER_PROXY ? "proxy" : "refer",
						      "peer", c->peers->v[c->peers->role[r].peer].name));
	}
	return json_pack("{s:s, s:s, s:o, s:o}", "box", gw_box_name(c), "file", c->peers->path,
			 "peers", peers, "roles", roles);
}

static json_t *summary(const struct gw_config *c, int port)
{
	json_t *roles = json_array();
	for (int r = 0; r < ROLE__COUNT; r++)
		if (c->roles[r].feasible)
			json_array_append_new(roles, json_string(role_name((enum role_id)r)));
	json_t *aliases = json_object();
	for (size_t i = 0; i < c->n_aliases; i++)
		json_object_set_new(aliases, c->aliases[i].name,
				    json_string(role_name(c->aliases[i].role)));
	/* the key itself is never printed: only where it comes from */
	json_t *o = json_pack("{s:s, s:i, s:b, s:s?, s:o, s:o, s:I, s:i, s:i, s:i, s:f, s:f, s:b}",
			 "bind", c->bind, "port", port, "auth", gw_auth_required(c),
			 "key_source", c->key_source, "roles", roles, "aliases", aliases, "max_body",
			 (json_int_t)c->max_body, "read_timeout_s", c->read_timeout_s,
			 "drain_timeout_s", c->drain_timeout_s, "max_connections", c->max_connections,
			 "swap_max", c->swap_max, "iowait_max", c->iowait_max, "iowait_off_by_card",
			 c->iowait_off_by_card);
	json_object_set_new(o, "workers", json_integer(gw_worker_count(c)));
	json_object_set_new(o, "connect_timeout_s", json_integer(c->connect_timeout_s));
	json_object_set_new(o, "first_byte_timeout_s", json_integer(c->first_byte_timeout_s));
	json_object_set_new(o, "max_buffered", json_integer((json_int_t)c->max_buffered));
	json_object_set_new(o, "peers", peers_summary(c));
	return o;
}

CMD(gateway)
{
	struct gw_overrides ov = { 0 };
	bool check = false;
	const char *pid_file = NULL;
	static const struct option opts[] = { { "bind", required_argument, NULL, 'b' },
					      { "pid-file", required_argument, NULL, 'f' },
					      { "port", required_argument, NULL, 'p' },
					      { "key-file", required_argument, NULL, 'k' },
					      { "check", no_argument, NULL, 'c' },
					      { NULL, 0, NULL, 0 } };
	int o;
	while ((o = getopt_long(argc, argv, "b:p:k:c", opts, NULL)) != -1) {
		switch (o) {
		case 'b': ov.bind = optarg; break;
		case 'k': ov.key_file = optarg; break;
		case 'c': check = true; break;
		case 'f': pid_file = optarg; break;
		case 'p': {
			char *end;
			long p = strtol(optarg, &end, 10);
			if (end == optarg || *end || p < 0 || p > 65535)
				return cmd_usage_error(ctx, "--port '%s': expected a port 0-65535", optarg);
			ov.port = p ? (int)p : -1; /* -1: any free port */
			break;
		}
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);

	struct err *e = NULL;
	struct gw_config *cfg = gw_config_load(ctx->dir, &ov, &e);
	if (!cfg)
		return cmd_fail(ctx, e);
	if (check) {
		json_t *s = summary(cfg, cfg->port);
		if (ctx->json)
			out_json(s);
		else
			printf("gateway settings ok: %s:%d, %s, %zu roles feasible, %zu aliases\n",
			       cfg->bind, cfg->port, gw_auth_required(cfg) ? "API key required" : "no API key",
			       json_array_size(json_object_get(s, "roles")), cfg->n_aliases);
		json_decref(s);
		gw_config_unref(cfg);
		return 0;
	}

	/* one fd per client and one per engine connection: raise the soft limit */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct gateway *g = gateway_start(cfg, log_line, NULL, &e);
	if (!g) {
		gw_config_unref(cfg);
		return cmd_fail(ctx, e);
	}
	gateway_set_version(g, LOBES_VERSION);
	json_t *s = summary(cfg, gateway_port(g));
	gw_config_unref(cfg);
	/* the pid file exists before the listening line is out: whoever waits
	 * for that line may read the file at once */
	_cleanup_free_ char *mypid = xasprintf("%d\n", (int)getpid());
	if (pid_file && fs_write_atomic(pid_file, mypid, strlen(mypid), 0644, &e) < 0) {
		json_decref(s);
		gateway_drain_and_stop(g); /* nothing is in flight yet */
		return cmd_fail(ctx, e);
	}
	if (ctx->json) {
		json_object_set_new(s, "event", json_string("listening"));
		char *t = json_dumps(s, JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%s\n", t);
		free(t);
	} else {
		printf("lobes gateway: listening on http://%s:%d (%s, %d worker%s)\n", jstr(s, "bind"),
		       gateway_port(g),
		       json_is_true(json_object_get(s, "auth")) ? "API key required" : "no API key",
		       (int)json_integer_value(json_object_get(s, "workers")),
		       json_integer_value(json_object_get(s, "workers")) == 1 ? "" : "s");
	}
	json_decref(s);
	fflush(stdout);

	int sig = 0;
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig != SIGHUP)
			break;
		struct err *re = NULL;
		struct gw_config *nc = gw_config_load(ctx->dir, &ov, &re);
		if (!nc) {
			log_event("reload-failed", re->msg);
			err_free(re);
			continue;
		}
		gateway_reload(g, nc);
		gw_config_unref(nc);
		log_event("reloaded", ctx->dir);
	}
	gateway_quiesce(g); /* the socket is closed before "draining" is said */
	log_event("draining", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	int cancelled = gateway_drain_and_stop(g);
	if (pid_file) {
		_cleanup_free_ char *was = fs_read(pid_file, 64, NULL, NULL);
		if (was && !strcmp(was, mypid))
			unlink(pid_file);
	}
	if (ctx->json) {
		json_t *r = json_pack("{s:s, s:i}", "event", "stopped", "cancelled", cancelled);
		out_json(r);
		json_decref(r);
	} else {
		printf("lobes gateway: stopped (%d in-flight request%s cancelled at the drain bound)\n",
		       cancelled, cancelled == 1 ? "" : "s");
	}
	return 0;
}
