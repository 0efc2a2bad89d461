/*
 * bench.c — `lobes bench [options] [ROLE...]`: how fast the fleet answers on
 * this box. For each target (a role's engine, the same role through the
 * gateway, or --url) and each point of the sweep (--concurrency LIST x
 * --rate LIST, or --batch LIST for a pooling role) one bounded run of
 * measure/bench.c; then one table per point, --json, and with --out a
 * markdown report with the command, the box and a plot.
 *
 * Roles come from the deploy dir's .env through the gateway's settings
 * (ports, feasibility, the gateway's port and key); ROLE@DIR names a role of
 * another deploy dir (direct: its engine's loopback port, as `lobes eval
 * compare` reads ROLE@DIR); the model is the role name, which the render
 * serves each role under. Nothing is changed.
 *
 * Exit: 0 every request of every point answered; 1 some request failed
 * (the errors are counted by kind) or a point completed none; 2 usage;
 * 3 the deploy dir cannot be read; 4 the report cannot be written.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/gateway/gateway.h"
#include "../lib/knowledge/knowledge.h"
#include "../lib/measure/measure.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/fs.h"
#include "cmd.h"

#define MAX_LIST 16
#define MAX_TARGETS (ROLE__COUNT * 2 + 1)

struct list {
	double v[MAX_LIST];
	int n;
};

/* "1,4,16" into l; each value in (0, max]. integer: whole numbers only. */
static int parse_list(const char *s, struct list *l, double max, bool integer)
{
	_cleanup_free_ char *copy = xstrdup(s);
	char *save = NULL;
	l->n = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double x = strtod(tok, &end);
		if (end == tok || *end || !isfinite(x) || x <= 0 || x > max ||
		    (integer && x != floor(x)) || l->n == MAX_LIST)
			return -1;
		l->v[l->n++] = x;
	}
	return l->n ? 0 : -1;
}

/* --slo ttft=MS,tpot=MS,e2el=MS */
static int parse_slo(const char *s, struct bench_opts *o)
{
	_cleanup_free_ char *copy = xstrdup(s);
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		if (!eq)
			return -1;
		*eq = '\0';
		double x = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || !isfinite(x) || x <= 0)
			return -1;
		if (!strcmp(tok, "ttft"))
			o->slo_ttft_ms = x;
		else if (!strcmp(tok, "tpot"))
			o->slo_tpot_ms = x;
		else if (!strcmp(tok, "e2el"))
			o->slo_e2el_ms = x;
		else
			return -1;
	}
	return 0;
}

static int parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A progress bar on stderr, only on a terminal. */
struct progress {
	const char *label;
	int conc;
};

static void on_progress(void *cls, size_t done, size_t total, double elapsed_s)
{
	const struct progress *p = cls;
	if (total) {
		int w = 30, f = (int)(w * done / total);
		fprintf(stderr, "\r%-20.20s c=%-4d [%.*s%*s] %zu/%zu %.1f s", p->label, p->conc, f,
			"##############################", w - f, "", done, total, elapsed_s);
	} else {
		fprintf(stderr, "\r%-20.20s c=%-4d %zu done %.1f s", p->label, p->conc, done, elapsed_s);
	}
	fflush(stderr);
}

static void print_stat(const json_t *run, const char *key, const char *name)
{
	const json_t *s = json_object_get(run, key);
	printf("  %-6s", name);
	const char *f[] = { "mean", "median", "p90", "p99" };
	for (int i = 0; i < 4; i++) {
		const json_t *v = json_object_get(s, f[i]);
		if (json_is_number(v))
			printf(" %10.1f", json_number_value(v));
		else
			printf(" %10s", "-");
	}
	printf("\n");
}

static void print_num(const char *name, const json_t *v, const char *fmt)
{
	printf("  %s ", name);
	if (json_is_number(v))
		printf(fmt, json_number_value(v));
	else
		printf("-");
}

static void print_run(const json_t *run)
{
	bool gen = !strcmp(jstr(run, "kind"), "generate");
	const json_t *rate = json_object_get(run, "rate");
	printf("%s  concurrency %lld  rate %s", jstr(run, "target"),
	       (long long)json_integer_value(json_object_get(run, "concurrency")),
	       json_is_number(rate) ? "" : "inf");
	if (json_is_number(rate))
		printf("%g/s", json_number_value(rate));
	if (!gen)
		printf("  batch %lld", (long long)json_integer_value(json_object_get(run, "batch")));
	printf("  %lld/%lld completed  duration %.2f s\n",
	       (long long)json_integer_value(json_object_get(run, "completed")),
	       (long long)json_integer_value(json_object_get(run, "sent")),
	       json_number_value(json_object_get(run, "duration_s")));
	print_num("requests/s", json_object_get(run, "request_throughput"), "%.2f");
	if (gen) {
		print_num(" output tok/s", json_object_get(run, "output_throughput"), "%.1f");
		print_num(" total tok/s", json_object_get(run, "total_token_throughput"), "%.1f");
		print_num(" goodput", json_object_get(run, "goodput"), "%.2f");
		print_num(" input tokens", json_object_get(run, "input_tokens"), "%.0f");
		print_num(" output tokens", json_object_get(run, "output_tokens"), "%.0f");
	} else {
		print_num(" inputs/s", json_object_get(run, "input_throughput"), "%.1f");
		print_num(" input tokens", json_object_get(run, "input_tokens"), "%.0f");
	}
	printf("\n  %-6s %10s %10s %10s %10s  (ms)\n", "metric", "mean", "median", "p90", "p99");
	if (gen) {
		print_stat(run, "ttft_ms", "TTFT");
		print_stat(run, "tpot_ms", "TPOT");
		print_stat(run, "itl_ms", "ITL");
		print_stat(run, "e2el_ms", "E2EL");
	} else {
		print_stat(run, "latency_ms", "latency");
	}
	printf("  errors:");
	const char *k;
	const json_t *v;
	if (!json_object_size(json_object_get(run, "errors")))
		printf(" none");
	json_object_foreach((json_t *)json_object_get(run, "errors"), k, v)
		printf(" %s %lld", k, (long long)json_integer_value(v));
	printf("\n\n");
}

/* The command line as run, for the report. */
static char *command_line(int argc, char **argv)
{
	_cleanup_free_ char *s = xstrdup("lobes bench");
	for (int i = 1; i < argc; i++) {
		char *n = xasprintf("%s %s", s, argv[i]);
		free(s);
		s = n;
	}
	return TAKE_PTR(s);
}

struct targets {
	struct bench_target t[MAX_TARGETS];
	char *owned[MAX_TARGETS * 2];
	int n, n_owned;
};

static char *keep(struct targets *ts, char *s)
{
	ts->owned[ts->n_owned++] = s;
	return s;
}

static enum bench_kind kind_of(enum role_id r)
{
	return r == ROLE_EMBEDDER ? BENCH_EMBED : r == ROLE_RERANKER ? BENCH_RERANK : BENCH_GENERATE;
}


/* The targets: ROLEs of the deploy dir (direct, through the gateway, or
 * both), or --url. Sets *box's card and profile. Returns 0 or an exit code. */
static int resolve_targets(struct ctx *ctx, char **roles, int n_roles, const char *via,
			   const char *url, const char *model, const char *kind,
			   struct targets *ts, json_t *box)
{
	if (url) {
		if (n_roles)
			return cmd_usage_error(ctx, "--url and ROLE arguments do not mix");
		if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
			return cmd_usage_error(ctx, "--url '%s': expected http://HOST:PORT", url);
		char *o = keep(ts, xstrdup(url));
		size_t l = strlen(o);
		while (l && o[l - 1] == '/')
			o[--l] = '\0';
		if (l > 3 && !strcmp(o + l - 3, "/v1"))
			o[l - 3] = '\0';
		enum bench_kind k = !kind || !strcmp(kind, "generate") ? BENCH_GENERATE
				    : !strcmp(kind, "embed") ? BENCH_EMBED : BENCH_RERANK;
		ts->t[ts->n++] = (struct bench_target){ .label = o, .origin = o,
							.model = model ? model : "default",
							.kind = k, .bearer = getenv("LOBES_BENCH_API_KEY") };
		return 0;
	}
	if (model || kind)
		return cmd_usage_error(ctx, "--model and --kind go with --url");
	bool direct = !strcmp(via, "direct") || !strcmp(via, "both");
	bool gw = !strcmp(via, "gateway") || !strcmp(via, "both");
	int code = 0;
	for (int i = 0; i < n_roles && !code; i++) {
		/* ROLE or ROLE@DIR: the role of another deploy dir */
		char *name = keep(ts, xstrdup(roles[i]));
		char *at = strchr(name, '@');
		const char *dir = ctx->dir;
		if (at) {
			*at = '\0';
			dir = at + 1;
		}
		int r = role_from_name(name);
		if (r < 0 || !*dir)
			return cmd_usage_error(ctx, "'%s': expected ROLE or ROLE@DIR (roles: cortex, senses, "
						    "hand, embedder, reranker)", roles[i]);
		struct err *e = NULL;
		struct gw_config *c = gw_config_load(dir, NULL, &e);
		if (!c)
			return cmd_fail(ctx, e);
		if (i == 0) {
			json_object_set_new(box, "card", json_string(c->card ? c->card : ""));
			json_object_set_new(box, "profile", json_string(c->profile ? c->profile : ""));
		}
		if (!c->roles[r].feasible) {
			code = cmd_usage_error(ctx, "role '%s' is not feasible in '%s'", name, dir);
		} else {
			bool any = !strcmp(c->bind, "0.0.0.0") || !strcmp(c->bind, "::");
			const char *sfx = at ? keep(ts, xasprintf("@%s", dir)) : "";
			if (direct)
				ts->t[ts->n++] = (struct bench_target){
					.label = keep(ts, xasprintf("%s%s", role_name(r), sfx)),
					.model = role_name(r), .kind = kind_of(r),
					.origin = keep(ts, xasprintf("http://127.0.0.1:%d", c->roles[r].port)) };
			if (gw)
				ts->t[ts->n++] = (struct bench_target){
					.label = keep(ts, xasprintf("%s%s via gateway", role_name(r), sfx)),
					.model = role_name(r), .kind = kind_of(r),
					.origin = keep(ts, xasprintf("http://%s:%d", any ? "127.0.0.1" : c->bind,
								     c->port)),
					.bearer = c->key ? keep(ts, xstrdup(c->key)) : NULL };
		}
		gw_config_unref(c);
	}
	return code;
}

struct bench_args {
	struct bench_opts o;
	struct list conc, rate, batch;
	const char *via, *url, *model, *kind, *out;
	bool rate_given;
};

static int parse_args(int argc, char **argv, struct ctx *ctx, struct bench_args *a)
{
	static const struct option opts[] = {
		{ "concurrency", required_argument, NULL, 'c' }, { "rate", required_argument, NULL, 'r' },
		{ "requests", required_argument, NULL, 'n' },  { "duration", required_argument, NULL, 'd' },
		{ "shape", required_argument, NULL, 's' },     { "input-len", required_argument, NULL, 'i' },
		{ "output-len", required_argument, NULL, 'o' }, { "batch", required_argument, NULL, 'b' },
		{ "slo", required_argument, NULL, 'S' },       { "seed", required_argument, NULL, 'e' },
		{ "timeout", required_argument, NULL, 't' },   { "via", required_argument, NULL, 'v' },
		{ "url", required_argument, NULL, 'u' },       { "model", required_argument, NULL, 'm' },
		{ "kind", required_argument, NULL, 'k' },      { "out", required_argument, NULL, 'O' },
		{ "no-ignore-eos", no_argument, NULL, 'E' },   { NULL, 0, NULL, 0 }
	};
	long v;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (parse_list(optarg, &a->conc, 4096, true) < 0)
				return cmd_usage_error(ctx, "--concurrency '%s': expected N[,N...] in 1-4096", optarg);
			break;
		case 'r':
			if (parse_list(optarg, &a->rate, 1e6, false) < 0)
				return cmd_usage_error(ctx, "--rate '%s': expected requests/s R[,R...] > 0", optarg);
			a->rate_given = true;
			break;
		case 'b':
			if (parse_list(optarg, &a->batch, 4096, true) < 0)
				return cmd_usage_error(ctx, "--batch '%s': expected N[,N...] in 1-4096", optarg);
			break;
		case 'n':
			if (parse_int(optarg, 1, 10000000, &v) < 0)
				return cmd_usage_error(ctx, "--requests '%s': expected 1-10000000", optarg);
			a->o.requests = v;
			break;
		case 'd': {
			char *end;
			a->o.duration_s = strtod(optarg, &end);
			if (end == optarg || *end || !(a->o.duration_s > 0) || a->o.duration_s > 86400)
				return cmd_usage_error(ctx, "--duration '%s': expected seconds in (0, 86400]", optarg);
			break;
		}
		case 's':
			if (bench_shape(optarg, &a->o.input_len, &a->o.output_len) < 0)
				return cmd_usage_error(ctx, "--shape '%s': expected balanced, prompt-heavy "
							    "or decode-heavy", optarg);
			break;
		case 'i':
		case 'o':
			if (parse_int(optarg, 1, 1000000, &v) < 0)
				return cmd_usage_error(ctx, "--%s '%s': expected 1-1000000",
						       c == 'i' ? "input-len" : "output-len", optarg);
			*(c == 'i' ? &a->o.input_len : &a->o.output_len) = (int)v;
			break;
		case 'S':
			if (parse_slo(optarg, &a->o) < 0)
				return cmd_usage_error(ctx, "--slo '%s': expected ttft=MS,tpot=MS,e2el=MS "
							    "(any of them)", optarg);
			break;
		case 'e':
			if (parse_int(optarg, 0, 2147483647L, &v) < 0)
				return cmd_usage_error(ctx, "--seed '%s': expected 0-2147483647", optarg);
			a->o.seed = (unsigned long)v;
			break;
		case 't': {
			char *end;
			a->o.timeout_s = strtod(optarg, &end);
			if (end == optarg || *end || !(a->o.timeout_s > 0) || a->o.timeout_s > 86400)
				return cmd_usage_error(ctx, "--timeout '%s': expected seconds in (0, 86400]", optarg);
			break;
		}
		case 'v':
			if (strcmp(optarg, "direct") && strcmp(optarg, "gateway") && strcmp(optarg, "both"))
				return cmd_usage_error(ctx, "--via '%s': expected direct, gateway or both", optarg);
			a->via = optarg;
			break;
		case 'u': a->url = optarg; break;
		case 'm': a->model = optarg; break;
		case 'k':
			if (strcmp(optarg, "generate") && strcmp(optarg, "embed") && strcmp(optarg, "rerank"))
				return cmd_usage_error(ctx, "--kind '%s': expected generate, embed or rerank", optarg);
			a->kind = optarg;
			break;
		case 'O': a->out = optarg; break;
		case 'E': a->o.ignore_eos = false; break;
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (optind >= argc && !a->url)
		return cmd_usage_error(ctx, "name a ROLE (or --url)");
	return 0;
}

/* Every point of every target; the runs in order. Returns 0 or an exit code. */
static int sweep(struct ctx *ctx, const struct targets *ts, struct bench_args *a, json_t *runs)
{
	bool tty = isatty(STDERR_FILENO);
	for (int i = 0; i < ts->n; i++) {
		const struct bench_target *t = &ts->t[i];
		bool gen = t->kind == BENCH_GENERATE;
		for (int ci = 0; ci < a->conc.n; ci++)
			for (int ri = 0; ri < (gen ? a->rate.n : 1); ri++)
				for (int bi = 0; bi < (gen ? 1 : a->batch.n); bi++) {
					struct bench_opts o = a->o;
					struct progress p = { t->label, (int)a->conc.v[ci] };
					o.concurrency = (int)a->conc.v[ci];
					o.rate = gen && a->rate_given ? a->rate.v[ri] : 0;
					o.batch = (int)a->batch.v[bi];
					if (!o.requests && !o.duration_s)
						o.requests = o.concurrency * 4 > 16 ? o.concurrency * 4 : 16;
					if (tty) {
						o.progress = on_progress;
						o.progress_cls = &p;
					}
					struct err *e = NULL;
					json_t *run = bench_run(t, &o, &e);
					if (tty)
						fprintf(stderr, "\r\033[K");
					if (!run)
						return cmd_fail(ctx, e);
					json_array_append_new(runs, run);
				}
	}
	return 0;
}

CMD(bench)
{
	struct bench_args a = { .o = { .input_len = 256, .output_len = 256, .ignore_eos = true,
				       .timeout_s = 600 },
				.conc = { { 1 }, 1 }, .rate = { { 0 }, 1 }, .batch = { { 1 }, 1 },
				.via = "direct" };
	int code = parse_args(argc, argv, ctx, &a);
	if (code)
		return code;
	struct targets ts = { 0 };
	json_auto_t *box = json_object();
	code = resolve_targets(ctx, argv + optind, argc - optind, a.via, a.url, a.model, a.kind, &ts, box);
	json_auto_t *runs = json_array();
	if (!code) {
		/* the engine's own version; the first target that says */
		for (int i = 0; i < ts.n && !json_object_get(box, "vllm_version"); i++) {
			char *v = measure_engine_version(ts.t[i].origin, ts.t[i].bearer, 5);
			if (v)
				json_object_set_new(box, "vllm_version", json_string(v));
			free(v);
		}
		if (!json_object_get(box, "vllm_version"))
			json_object_set_new(box, "vllm_version", json_null());
		code = sweep(ctx, &ts, &a, runs);
	}
	for (int i = 0; i < ts.n_owned; i++)
		free(ts.owned[i]);
	if (code)
		return code;

	bool ok = true;
	size_t i;
	json_t *run;
	json_array_foreach(runs, i, run)
		ok = ok && json_integer_value(json_object_get(run, "failed")) == 0 &&
		     json_integer_value(json_object_get(run, "completed")) > 0;
	_cleanup_free_ char *cmdline = command_line(argc, argv);
	_cleanup_free_ char *load = fs_read("/proc/loadavg", 4096, NULL, NULL);
	if (load) {
		char *sp = load;
		for (int f = 0; f < 3 && sp; f++)
			sp = strchr(sp + 1, ' ');
		if (sp)
			*sp = '\0';
		json_object_set_new(box, "loadavg", json_string(load));
	}
	char date[32];
	time_t now = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	json_auto_t *res = json_pack("{s:s, s:s, s:O, s:O, s:b}", "command", cmdline, "date", date,
				     "box", box, "runs", runs, "ok", ok);
	if (a.out) {
		_cleanup_free_ char *md = bench_report_md(res);
		struct err *e = NULL;
		if (fs_write_atomic(a.out, md, strlen(md), 0644, &e) < 0)
			return cmd_fail(ctx, e);
		json_object_set_new(res, "report", json_string(a.out));
	}
	if (ctx->json) {
		out_json(res);
	} else {
		json_array_foreach(runs, i, run)
			print_run(run);
		if (a.out)
			printf("report: %s\n", a.out);
	}
	return ok ? 0 : EXIT_CHECK;
}
