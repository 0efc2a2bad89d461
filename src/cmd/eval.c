/*
 * eval.c — `lobes eval compare [options] A B`: whether two servers (two
 * settings of one model) answer alike, by measure/eval.c: the divergence of
 * their token distributions on a fixed text, then their greedy answers to a
 * task set. Read-only; it reports, it does not judge (the recorded verify
 * questions carry the thresholds).
 *
 * A side is http://HOST:PORT[/v1][#MODEL] (MODEL: else the server's first
 * in /v1/models; key: LOBES_EVAL_API_KEY) or ROLE[@DIR] (the role's engine
 * port in deploy dir DIR, else --dir; the model is the role name).
 *
 * Exit: 0 compared; 2 usage; 3 bad deploy dir or task set; 4 a side did not
 * answer usably.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/gateway/gateway.h"
#include "../lib/knowledge/knowledge.h"
#include "../lib/measure/measure.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/fs.h"
#include "cmd.h"

struct side {
	struct eval_side s;
	char *origin, *model, *label;
};

static void side_free(struct side *s)
{
	free(s->origin);
	free(s->model);
	free(s->label);
}

/* Fill side from spec; returns 0 or an exit code (usage errors printed). */
static int parse_side(struct ctx *ctx, const char *spec, struct side *side, double timeout_s)
{
	struct err *e = NULL;
	side->label = xstrdup(spec);
	if (!strncmp(spec, "http://", 7) || !strncmp(spec, "https://", 8)) {
		side->origin = xstrdup(spec);
		char *hash = strchr(side->origin, '#');
		if (hash) {
			*hash = '\0';
			if (hash[1])
				side->model = xstrdup(hash + 1);
		}
		size_t l = strlen(side->origin);
		while (l && side->origin[l - 1] == '/')
			side->origin[--l] = '\0';
		if (l > 3 && !strcmp(side->origin + l - 3, "/v1"))
			side->origin[l - 3] = '\0';
		side->s.bearer = getenv("LOBES_EVAL_API_KEY");
		if (!side->model && !(side->model = measure_first_model(side->origin, side->s.bearer,
								       timeout_s, &e)))
			return cmd_fail(ctx, e);
	} else {
		_cleanup_free_ char *role = xstrdup(spec);
		char *at = strchr(role, '@');
		const char *dir = ctx->dir;
		if (at) {
			*at = '\0';
			dir = at + 1;
		}
		int r = role_from_name(role);
		if (r < 0)
			return cmd_usage_error(ctx, "'%s': expected http://HOST:PORT[#MODEL] or ROLE[@DIR] "
						    "(roles: cortex, senses, hand, embedder, reranker)", spec);
		struct gw_config *c = gw_config_load(dir, NULL, &e);
		if (!c)
			return cmd_fail(ctx, e);
		bool feasible = c->roles[r].feasible;
		side->origin = xasprintf("http://127.0.0.1:%d", c->roles[r].port);
		gw_config_unref(c);
		if (!feasible)
			return cmd_usage_error(ctx, "role '%s' is not feasible in '%s'", role, dir);
		side->model = xstrdup(role_name(r));
	}
	side->s = (struct eval_side){ .label = side->label, .origin = side->origin,
				      .model = side->model, .bearer = side->s.bearer };
	return 0;
}

static void print_text(const json_t *res)
{
	const json_t *a = json_object_get(res, "a"), *b = json_object_get(res, "b");
	const json_t *l = json_object_get(res, "logprobs"), *t = json_object_get(res, "tasks");
#define N(o, k) json_number_value(json_object_get(o, k))
	printf("A: %s (%s, model %s)\nB: %s (%s, model %s)\n", jstr(a, "label"), jstr(a, "url"),
	       jstr(a, "model"), jstr(b, "label"), jstr(b, "url"), jstr(b, "model"));
	printf("\ntoken distributions on %s: %lld positions, top-k %lld\n", jstr(l, "reference"),
	       (long long)json_integer_value(json_object_get(l, "positions")),
	       (long long)json_integer_value(json_object_get(l, "top_k")));
	printf("  KLD(A||B)        mean %.6f  p99 %.6f  max %.6f\n", N(l, "kld_mean"), N(l, "kld_p99"),
	       N(l, "kld_max"));
	printf("                   (%s)\n", jstr(l, "kld_note"));
	printf("  same top token   %.2f%%\n", 100 * N(l, "same_top"));
	printf("  |dlogp| of the text's token   mean %.6f  max %.6f\n", N(l, "dlogp_mean"),
	       N(l, "dlogp_max"));
	printf("  perplexity       A %.4f  B %.4f  B/A %.4f\n", N(l, "ppl_a"), N(l, "ppl_b"),
	       N(l, "ppl_ratio"));
	printf("\ngreedy answers to '%s' (%lld tasks", jstr(t, "set"),
	       (long long)json_integer_value(json_object_get(t, "tasks")));
	if (json_is_true(json_object_get(t, "synthetic")))
		printf(", synthetic, seed %lld", (long long)json_integer_value(json_object_get(t, "seed")));
	printf("):\n");
	printf("  exact match      A %.1f%%  B %.1f%%\n", 100 * N(t, "accuracy_a"), 100 * N(t, "accuracy_b"));
	printf("  agreement        %.1f%%\n", 100 * N(t, "agreement"));
	size_t i;
	const json_t *d;
	json_array_foreach(json_object_get(t, "disagreements"), i, d)
		printf("  differs: %s (answer %s): A '%s', B '%s'\n", jstr(d, "id"), jstr(d, "answer"),
		       jstr(d, "a"), jstr(d, "b"));
#undef N
}

CMD(eval)
{
	struct eval_opts o = { .top_k = 20, .timeout_s = 120 };
	static const struct option opts[] = { { "top-k", required_argument, NULL, 'k' },
					      { "tasks", required_argument, NULL, 's' },
					      { "max-tasks", required_argument, NULL, 'n' },
					      { "timeout", required_argument, NULL, 't' },
					      { NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		long v;
		switch (c) {
		case 'k':
			v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > 20)
				return cmd_usage_error(ctx, "--top-k '%s': expected 1-20", optarg);
			o.top_k = (int)v;
			break;
		case 'n':
			v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1)
				return cmd_usage_error(ctx, "--max-tasks '%s': expected a positive count", optarg);
			o.max_tasks = v;
			break;
		case 's': o.tasks = optarg; break;
		case 't':
			o.timeout_s = strtod(optarg, &end);
			if (end == optarg || *end || !(o.timeout_s > 0) || o.timeout_s > 86400)
				return cmd_usage_error(ctx, "--timeout '%s': expected seconds in (0, 86400]", optarg);
			break;
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (argc - optind != 3 || strcmp(argv[optind], "compare"))
		return cmd_usage_error(ctx, "expected: compare A B");
	struct side a = { 0 }, b = { 0 };
	int code = parse_side(ctx, argv[optind + 1], &a, o.timeout_s);
	if (!code)
		code = parse_side(ctx, argv[optind + 2], &b, o.timeout_s);
	json_t *res = NULL;
	if (!code) {
		struct err *e = NULL;
		res = eval_compare(&a.s, &b.s, &o, &e);
		if (!res)
			code = cmd_fail(ctx, e);
	}
	side_free(&a);
	side_free(&b);
	if (code)
		return code;
	if (ctx->json)
		out_json(res);
	else
		print_text(res);
	json_decref(res);
	return 0;
}
