/*
 * logs.c — `lobes logs ROLE [-n N] [-f] [--previous] [--list]`: a role's
 * engine log per boot, as kept under DIR/logs/ROLE/ (runtime/logstore.h);
 * and `lobes logs --collect [--once] [--pid-file F]`: the collector that
 * keeps them (a pass every second over the Docker Engine API until SIGTERM
 * or Ctrl-C, then one last pass; `serve --apply` starts it in the
 * background with --pid-file, runtime/bgproc.h). `gateway` and `collector`
 * name the logs of those two processes, one file per start.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/runtime/runtime.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/fs.h"
#include "../lib/util/secret.h"
#include "cmd.h"

const char cmd_logs_help[] =
	"Read-only except --collect. The collector (`lobes logs --collect`, which\n"
	"`lobes serve --apply` starts in the background and `lobes stop --apply` stops;\n"
	"pid DIR/collector.pid): every second it asks the Docker Engine\n"
	"API for each feasible role's container and the lines it logged since the last\n"
	"pass, and appends them to DIR/logs/ROLE/NNNNNN.log, one file per boot (0600; a\n"
	"container restart starts the next file; the lines a restarted boot wrote last\n"
	"still go to its own file). Bounded: a boot's file past 8 MiB is moved aside to\n"
	"NNNNNN.log.1 and continued (at most two parts, the latest lines kept); a role\n"
	"keeps its 10 latest boots. A role that logged more than a pass reads (64 MiB)\n"
	"is read on by the next passes. It stops by itself when DIR/.env is gone.\n"
	"Prints the current boot's log (docs/observe.md).\n"
	"Exit 3 when no boot is kept.\n"
	"  -n, --lines N  the last N lines\n"
	"  -f, --follow   keep printing what the current boot (and the next) logs\n"
	"  --previous     the boot before the current one (a crash-looping role's\n"
	"                 failing boot after Docker restarted it)\n"
	"  --list         the boots kept: number, size, container and start\n"
	"  --collect      run the collector until SIGTERM or Ctrl-C\n"
	"  --once         with --collect: one pass, then exit\n"
	"  --pid-file F   with --collect: write the pid to F once set up; removed at exit\n"
	"ROLE may also be gateway or collector: the log of each start of the gateway\n"
	"and of the collector that `serve --apply` runs in the background.\n";

static volatile sig_atomic_t stop_sig;
static void on_stop(int s) { stop_sig = s; }

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (!stop_sig && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The pid file once set up (removed at exit if it still names us). */
static int write_pid(const char *pid_file, struct err **err)
{
	_cleanup_free_ char *mine = xasprintf("%d\n", (int)getpid());
	return fs_write_atomic(pid_file, mine, strlen(mine), 0644, err);
}

static void remove_pid(const char *pid_file)
{
	_cleanup_free_ char *mine = xasprintf("%d\n", (int)getpid());
	_cleanup_free_ char *was = fs_read(pid_file, 64, NULL, NULL);
	if (was && !strcmp(was, mine))
		unlink(pid_file);
}

static int collect(struct ctx *ctx, bool once, const char *pid_file)
{
	struct err *e = NULL;
	struct fleet f;
	if (fleet_load(&f, ctx->dir, &e) < 0)
		return cmd_fail(ctx, e);
	const char *roles[ROLE__COUNT];
	size_t n = 0;
	for (size_t i = 0; i < f.n_order; i++)
		roles[n++] = role_name(f.order[i]);
	struct logkeep k;
	logkeep_init(&k, ctx->dir, f.project, roles, n, 0, 0);
	struct engine en;
	if (engine_open(&en, &e) < 0) {
		logkeep_free(&k);
		fleet_free(&f);
		return cmd_fail(ctx, e);
	}
	struct sigaction sa = { .sa_handler = on_stop };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (pid_file && write_pid(pid_file, &e) < 0) {
		engine_close(&en);
		logkeep_free(&k);
		fleet_free(&f);
		return cmd_fail(ctx, e);
	}
	_cleanup_free_ char *env_path = xasprintf("%s/.env", f.dir);
	size_t lines = 0;
	int rc = 0;
	bool last = false;
	char said[512] = "";
	for (;;) {
		bgproc_trim_logs(f.dir, 0);
		if (logkeep_pass(&k, &en, &lines, &e) < 0) {
			if (once) {
				rc = -1;
				break;
			}
			if (strcmp(said, e->msg) != 0) /* once per new error, not each second */
				fprintf(stderr, "lobes logs --collect: %s (retrying every second)\n", e->msg);
			snprintf(said, sizeof(said), "%s", e->msg);
			err_free(e);
			e = NULL;
		}
		if (once || last)
			break;
		nap_ms(1000);
		if (!fs_exists(env_path)) {
			fprintf(stderr, "lobes logs --collect: '%s' is gone; stopping\n", env_path);
			break;
		}
		last = stop_sig != 0; /* one more pass: the lines logged until now */
	}
	if (pid_file)
		remove_pid(pid_file);
	engine_close(&en);
	logkeep_free(&k);
	fleet_free(&f);
	if (rc < 0)
		return cmd_fail(ctx, e);
	if (ctx->json) {
		json_auto_t *j = json_pack("{s:I}", "lines", (json_int_t)lines);
		out_json(j);
	}
	else if (once)
		printf("kept %zu new line%s\n", lines, lines == 1 ? "" : "s");
	return EXIT_OK;
}

/* The last n lines of text (all when n < 0). */
static const char *last_lines(const char *text, size_t len, long n)
{
	if (n < 0)
		return text;
	const char *p = text + len;
	if (p > text && p[-1] == '\n')
		p--;
	for (long k = 0; p > text; p--)
		if (p[-1] == '\n' && ++k == n)
			break;
	return p;
}

static int list(struct ctx *ctx, const char *role, const unsigned *nos, size_t n)
{
	json_auto_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *dir = logstore_role_dir(ctx->dir, role);
		_cleanup_free_ char *p = xasprintf("%s/%06u.log", dir, nos[i]);
		_cleanup_free_ char *p1 = xasprintf("%s/%06u.log.1", dir, nos[i]);
		struct stat st, st1;
		long long size = stat(p, &st) == 0 ? (long long)st.st_size : 0;
		size += stat(p1, &st1) == 0 ? (long long)st1.st_size : 0;
		char head[256] = "";
		FILE *fp = fopen(p1, "r"); /* the boot's first part, when it was moved aside */
		if (!fp)
			fp = fopen(p, "r");
		if (fp) {
			if (!fgets(head, sizeof(head), fp))
				head[0] = '\0';
			fclose(fp);
		}
		head[strcspn(head, "\n")] = '\0';
		json_array_append_new(arr, json_pack("{s:i, s:s, s:I, s:s}", "boot", (int)nos[i],
						     "file", p, "bytes", (json_int_t)size, "header",
						     head));
	}
	if (ctx->json) {
		json_auto_t *j = json_pack("{s:s, s:O}", "role", role, "boots", arr);
		out_json(j);
		return EXIT_OK;
	}
	size_t i;
	json_t *b;
	json_array_foreach(arr, i, b)
		printf("%6lld  %10lld bytes  %s%s\n",
		       (long long)json_integer_value(json_object_get(b, "boot")),
		       (long long)json_integer_value(json_object_get(b, "bytes")), jstr(b, "header"),
		       i + 1 == n ? "  (current)" : "");
	return EXIT_OK;
}

/* -f: print what the newest boot's file gains, and each new boot's. */
static void follow(struct ctx *ctx, const char *role, unsigned no, size_t from)
{
	struct sigaction sa = { .sa_handler = on_stop };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop_sig) {
		nap_ms(200);
		size_t len = 0;
		_cleanup_free_ char *t = logstore_read(ctx->dir, role, no, &len, NULL);
		if (t && len > from) {
			fwrite(t + from, 1, len - from, stdout);
			fflush(stdout);
			from = len;
		}
		unsigned *nos;
		size_t n;
		if (logstore_list(ctx->dir, role, &nos, &n, NULL) == 0 && n && nos[n - 1] > no) {
			no = nos[n - 1];
			from = 0;
		}
		free(nos);
	}
}

CMD(logs)
{
	static const struct option opts[] = {
		{ "lines", required_argument, NULL, 'n' }, { "follow", no_argument, NULL, 'f' },
		{ "previous", no_argument, NULL, 'p' },    { "list", no_argument, NULL, 'l' },
		{ "collect", no_argument, NULL, 'c' },     { "once", no_argument, NULL, 'o' },
		{ "pid-file", required_argument, NULL, 'P' }, { NULL, 0, NULL, 0 }
	};
	long nlines = -1;
	bool fol = false, prev = false, lst = false, col = false, once = false;
	const char *pid_file = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "n:f", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'n':
			nlines = strtol(optarg, &end, 10);
			if (*end || nlines < 0)
				return cmd_usage_error(ctx, "-n takes a number of lines");
			break;
		case 'f': fol = true; break;
		case 'p': prev = true; break;
		case 'l': lst = true; break;
		case 'c': col = true; break;
		case 'o': once = true; break;
		case 'P': pid_file = optarg; break;
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (col) {
		if (optind < argc || fol || prev || lst || nlines >= 0)
			return cmd_usage_error(ctx, "--collect takes only --once and --pid-file");
		return collect(ctx, once, pid_file);
	}
	if (once || pid_file)
		return cmd_usage_error(ctx, "--%s goes with --collect", once ? "once" : "pid-file");
	if (optind + 1 != argc)
		return cmd_usage_error(ctx, "name one role");
	const char *role = argv[optind];
	if (role_from_name(role) < 0 && strcmp(role, bgproc_log_name(BGPROC_GATEWAY)) != 0 &&
	    strcmp(role, bgproc_log_name(BGPROC_COLLECTOR)) != 0)
		return cmd_usage_error(ctx, "unknown role '%s' (a role, gateway or collector)", role);
	if (fol && prev)
		return cmd_usage_error(ctx, "-f follows the current boot, not --previous");
	struct err *e = NULL;
	unsigned *nos;
	size_t n;
	if (logstore_list(ctx->dir, role, &nos, &n, &e) < 0)
		return cmd_fail(ctx, e);
	if (lst) {
		int rc = list(ctx, role, nos, n);
		free(nos);
		return rc;
	}
	if (n < (prev ? 2u : 1u)) {
		free(nos);
		_cleanup_free_ char *d = logstore_role_dir(ctx->dir, role);
		err_set(&e, EXIT_CONFIG, "no %sboot of %s kept in '%s' (serve keeps them; see lobes logs -h)",
			prev ? "previous " : "", role, d);
		return cmd_fail(ctx, e);
	}
	unsigned no = nos[n - (prev ? 2 : 1)];
	free(nos);
	size_t len = 0;
	_cleanup_free_ char *text = logstore_read(ctx->dir, role, no, &len, &e);
	if (!text)
		return cmd_fail(ctx, e);
	const char *from = last_lines(text, len, nlines);
	if (ctx->json) {
		json_auto_t *j = json_pack("{s:s, s:i, s:s}", "role", role, "boot", (int)no, "text", from);
		secret_mask_json(j);
		out_json(j);
		return EXIT_OK;
	}
	fwrite(from, 1, len - (size_t)(from - text), stdout);
	fflush(stdout);
	if (fol)
		follow(ctx, role, no, len);
	return EXIT_OK;
}
