/*
 * top.c — `lobes top` (and `lobes status --watch`): the fleet as it runs,
 * refreshed every second until `q`.
 *
 * Each refresh is one look (runtime/view.h): per role its state, whether it
 * is ready, requests running and waiting, KV-cache use, prompt and
 * generation tokens/s, MTP acceptance — from the engine's own /metrics —
 * and for a role that is not ready, why (the cause triage names in its
 * log); then the box's memory as the bring-up gate reads it (MemFree) and
 * as the kernel could give it (MemAvailable), swap and I/O pressure.
 *
 * Plain ANSI, no curses: the screen is cleared and rewritten each second,
 * the terminal is put in non-canonical mode without echo so `q` needs no
 * Enter, and restored on every way out (q, Ctrl-C, SIGTERM). When stdout is
 * not a terminal, or with --once or --json, one snapshot is printed
 * instead: two looks an interval apart, so rates are known.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "../lib/knowledge/knowledge.h"
#include "../lib/runtime/runtime.h"
#include "../lib/triage/triage.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/secret.h"
#include "cmd.h"

#define LOOK_TIMEOUT_MS 2000

/* `lobes top -h` and the man page (the command table in src/main.c). */
const char cmd_top_help[] =
	"Read-only. A terminal dashboard (plain ANSI), refreshed until q or Ctrl-C: per\n"
	"feasible role its container state, READY (GET /health 200), and from its\n"
	"engine's GET /metrics (the names its image's vLLM registers, docs/observe.md)\n"
	"requests running and waiting, KV-cache use, prompt and generation tokens/s,\n"
	"MTP acceptance; a role not ready shows why (the cause triage names in its\n"
	"log). The box: MemAvailable, MemFree (what the bring-up gate reads), swap,\n"
	"iowait, /proc/pressure/io. Requests are bounded (2 s). Off a terminal, or with\n"
	"--once or --json: one snapshot of two looks an interval apart (rates known).\n"
	"Exit 0; 3 when the deploy dir has no .env.\n"
	"  --once        one snapshot, even on a terminal\n"
	"  --interval S  seconds between refreshes (0.2 to 60; default 1)\n";

static volatile sig_atomic_t stop_sig;
static void on_stop(int s) { stop_sig = s; }

/* view_explain_fn: the cause failure_report names, as one line. */
static char *explain(const char *log, void *ud)
{
	json_auto_t *rep = failure_report(log, 0, ud);
	const json_t *c = json_object_get(rep, "cause");
	const json_t *root = json_object_get(rep, "root_exception");
	if (json_is_object(c))
		return xasprintf("%s (line %lld)", jstr(c, "cause"),
				 (long long)json_integer_value(json_object_get(c, "line_no")));
	if (json_is_object(root) && *jstr(root, "type"))
		return xasprintf("%s%s%s (line %lld)", jstr(root, "type"),
				 *jstr(root, "message") ? ": " : "", jstr(root, "message"),
				 (long long)json_integer_value(json_object_get(root, "line_no")));
	return NULL;
}

static void gib(char *out, size_t n, uint64_t bytes)
{
	snprintf(out, n, "%.1f GiB", (double)bytes / 1073741824.0);
}

/* "-" for an unknown figure, else the number in fmt. */
static const char *fig(char *buf, size_t n, const char *fmt, double v)
{
	if (!isfinite(v))
		return "-";
	snprintf(buf, n, fmt, v);
	return buf;
}

static void print_view(const struct ctx *ctx, const struct fleet *f, const struct view *v,
		       bool live)
{
	char t[32];
	struct tm tm;
	localtime_r(&v->at, &tm);
	strftime(t, sizeof(t), "%H:%M:%S", &tm);
	printf("%slobes top%s  profile %s  %s  %s%s\n", c_bold(ctx), c_reset(ctx), f->profile,
	       f->dir, t, live ? "  (q quits)" : "");
	if (v->box_ok) {
		char avail[32], fr[32], tot[32], su[32], st[32], io[32] = "-", psi[32] = "";
		gib(avail, sizeof(avail), v->box.mem_available);
		gib(fr, sizeof(fr), v->box.mem_free);
		gib(tot, sizeof(tot), v->box.mem_total);
		gib(su, sizeof(su), v->box.swap_total - v->box.swap_free);
		gib(st, sizeof(st), v->box.swap_total);
		if (v->iowait_pct >= 0)
			snprintf(io, sizeof(io), "%.1f%%", v->iowait_pct);
		if (v->box.io_some_avg10 >= 0)
			snprintf(psi, sizeof(psi), "  io pressure %.2f%%", v->box.io_some_avg10);
		printf("box  memory available %s, free %s of %s  swap %s of %s  iowait %s%s\n", avail,
		       fr, tot, su, st, io, psi);
	} else {
		printf("box  %s%s%s\n", c_red(ctx), v->box_error ? v->box_error : "", c_reset(ctx));
	}
	if (!v->engine_ok)
		printf("%sdocker: %s%s\n", c_red(ctx), v->engine_error ? v->engine_error : "",
		       c_reset(ctx));
	printf("%s%-9s %-11s %-5s %4s %5s %6s %9s %8s %5s  %s%s\n", c_bold(ctx), "ROLE", "STATE",
	       "READY", "RUN", "WAIT", "KV", "PROMPT/s", "GEN/s", "MTP", "MODEL", c_reset(ctx));
	for (size_t i = 0; i < v->n; i++) {
		const struct view_role *r = &v->roles[i];
		char b[6][32];
		const double *m = r->sample.v;
		const char *mtp = fig(b[5], sizeof(b[5]), "%.0f%%",
				      100 * (isfinite(r->rates.accept) ? r->rates.accept
								       : r->rates.accept_total));
		printf("%-9s %s%-11s%s %-5s %4s %5s %6s %9s %8s %5s  %s\n", role_name(r->role),
		       r->ready ? c_green(ctx) : c_red(ctx), r->state, c_reset(ctx),
		       r->ready ? "yes" : "no", fig(b[0], sizeof(b[0]), "%.0f", m[EM_RUNNING]),
		       fig(b[1], sizeof(b[1]), "%.0f", m[EM_WAITING]),
		       fig(b[2], sizeof(b[2]), "%.1f%%", 100 * m[EM_KV_USAGE]),
		       fig(b[3], sizeof(b[3]), "%.1f", r->rates.prompt_tps),
		       fig(b[4], sizeof(b[4]), "%.1f", r->rates.generation_tps), mtp, r->model);
		if (r->why)
			printf("%s          why: %s%s\n", c_yellow(ctx), r->why, c_reset(ctx));
		else if (r->scrape_error)
			printf("%s          metrics: %s%s\n", c_dim(ctx), r->scrape_error, c_reset(ctx));
	}
}

struct top_opts {
	bool once;
	double interval; /* seconds */
};

static int parse(int argc, char **argv, struct ctx *ctx, struct top_opts *o)
{
	static const struct option opts[] = { { "once", no_argument, NULL, '1' },
					      { "interval", required_argument, NULL, 'i' },
					      { NULL, 0, NULL, 0 } };
	o->interval = 1.0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case '1':
			o->once = true;
			break;
		case 'i':
			o->interval = strtod(optarg, &end);
			if (*end || !(o->interval >= 0.2 && o->interval <= 60))
				return cmd_usage_error(ctx, "--interval takes seconds, 0.2 to 60");
			break;
		default:
			return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* Wait up to ms for a key; true when it was q (or a stop signal came). */
static bool wait_quit(int ms, bool tty_in)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	if (poll(tty_in ? &p : NULL, tty_in ? 1 : 0, ms) > 0) {
		char ch;
		if (read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
			return true;
	}
	return stop_sig != 0;
}

static void live(const struct ctx *ctx, const struct fleet *f, const struct knowledge *k,
		 struct sigset *sigs, const struct top_opts *o)
{
	bool tty_in = isatty(STDIN_FILENO);
	struct termios saved, raw;
	if (tty_in && tcgetattr(STDIN_FILENO, &saved) == 0) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	} else {
		tty_in = false;
	}
	struct sigaction sa = { .sa_handler = on_stop };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("\033[?25l"); /* hide the cursor */
	struct view v[2] = { 0 };
	int cur = 0;
	for (bool first = true; !stop_sig; first = false) {
		view_sample(&v[cur], f, k, first ? NULL : &v[!cur], LOOK_TIMEOUT_MS, explain, sigs);
		printf("\033[H\033[2J");
		print_view(ctx, f, &v[cur], true);
		fflush(stdout);
		cur = !cur;
		view_free(&v[cur]);
		if (wait_quit((int)(o->interval * 1000), tty_in))
			break;
	}
	view_free(&v[!cur]);
	printf("\033[?25h");
	fflush(stdout);
	if (tty_in)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
}

CMD(top)
{
	struct top_opts o = { 0 };
	int rc = parse(argc, argv, ctx, &o);
	if (rc)
		return rc;
	struct err *e = NULL;
	struct fleet f;
	if (fleet_load(&f, ctx->dir, &e) < 0)
		return cmd_fail(ctx, e);
	struct knowledge k = { 0 };
	_cleanup_free_ char *opdir = xasprintf("%s/profiles", ctx->dir);
	if (knowledge_load(&k, opdir, &e) < 0) {
		fleet_free(&f);
		return cmd_fail(ctx, e);
	}
	struct sigset sigs = { 0 };
	if (sigset_load(&sigs, ctx->dir, &e) < 0) {
		sigset_free(&sigs);
		knowledge_free(&k);
		fleet_free(&f);
		return cmd_fail(ctx, e);
	}
	if (!o.once && !ctx->json && isatty(STDOUT_FILENO)) {
		live(ctx, &f, &k, &sigs, &o);
	} else {
		/* one snapshot: two looks an interval apart, so rates are known */
		struct view a, b;
		view_sample(&a, &f, &k, NULL, LOOK_TIMEOUT_MS, NULL, NULL);
		struct timespec ts = { (time_t)o.interval,
				       (long)((o.interval - (double)(time_t)o.interval) * 1e9) };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		view_sample(&b, &f, &k, &a, LOOK_TIMEOUT_MS, explain, &sigs);
		if (ctx->json) {
			json_auto_t *j = view_json(&b);
			json_object_set_new(j, "profile", json_string(f.profile));
			json_object_set_new(j, "dir", json_string(f.dir));
			secret_mask_json(j);
			out_json(j);
		} else {
			print_view(ctx, &f, &b, false);
		}
		view_free(&a);
		view_free(&b);
	}
	sigset_free(&sigs);
	knowledge_free(&k);
	fleet_free(&f);
	return EXIT_OK;
}
