/*
 * doctor.c — `lobes doctor`: read-only checks of the deploy dir before a
 * boot. One line per finding (severity, check id, message), then its
 * detail and its remedy indented below; --json prints the same findings.
 * Exit 1 when any finding is an error, 0 otherwise, 3 when there is no
 * deploy dir or it cannot be read at all (the findings are printed first:
 * nothing deployed is a configuration error, as for status and probe). The
 * checks live in src/lib/doctor/.
 *
 * --fix: the heal plan for the findings that have one safe fix (fix.c):
 * each fix with the finding it heals, the diff, and the findings left for
 * the operator; --apply writes it as one commit. Exit 0 when the plan was
 * made (and written), the error's code when it could not be.
 */
#include <getopt.h>
#include <string.h>

#include "../lib/util/cleanup.h"
#include "../lib/doctor/doctor.h"
#include "../lib/util/secret.h"
#include "cmd.h"

static const char *sev_color(const struct ctx *ctx, const char *sev)
{
	if (strcmp(sev, "error") == 0)
		return c_red(ctx);
	if (strcmp(sev, "warning") == 0)
		return c_yellow(ctx);
	if (strcmp(sev, "ok") == 0)
		return c_green(ctx);
	return c_dim(ctx);
}

/* Print text indented by `pad` spaces, line by line. */
static void indented(const char *text, const char *prefix)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		printf("        %s%.*s\n", prefix, (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

/* `doctor --fix [--apply]`. */
static int fix(struct ctx *ctx, const struct doctor_opts *o, const struct doctor_report *r, bool apply)
{
	struct doctor_fix_plan p;
	struct err *e = NULL;
	if (doctor_fix_plan(&p, o, r, &e) < 0 || (apply && doctor_fix_apply(&p, &e) < 0)) {
		doctor_fix_plan_free(&p);
		return cmd_fail(ctx, e);
	}
	json_auto_t *res = doctor_fix_json(&p);
	json_object_set_new(res, "applied", json_boolean(apply && p.n));
	size_t nfix = p.n;
	doctor_fix_plan_free(&p);
	secret_mask_json(res);
	if (ctx->json) {
		out_json(res);
		return 0;
	}
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(res, "fixes"), i, x) {
		const json_t *f = json_object_get(x, "finding");
		printf("%sfix%s %s%s%s%s%s%s: %s\n", c_green(ctx), c_reset(ctx), c_bold(ctx), jstr(f, "id"),
		       *jstr(f, "name") ? " " : "", jstr(f, "name"), c_reset(ctx), "", jstr(x, "what"));
		printf("        heals: %s\n", jstr(f, "message"));
		if (*jstr(x, "before"))
			indented(jstr(x, "before"), "- ");
		if (*jstr(x, "after"))
			indented(jstr(x, "after"), "+ ");
	}
	json_array_foreach(json_object_get(res, "unfixed"), i, x) {
		printf("%sleft%s %s%s%s: %s\n", c_yellow(ctx), c_reset(ctx), c_bold(ctx), jstr(x, "id"),
		       c_reset(ctx), jstr(x, "message"));
		if (*jstr(x, "remedy"))
			indented(jstr(x, "remedy"), "fix by hand: ");
	}
	if (*jstr(res, "diff"))
		printf("\n%s", jstr(res, "diff"));
	if (!nfix)
		printf("nothing doctor --fix can heal safely\n");
	else if (apply)
		printf("fixed %zu finding%s; run `lobes doctor` to check\n", nfix, nfix == 1 ? "" : "s");
	else
		printf("dry run: nothing written; --fix --apply writes it\n");
	return 0;
}

CMD(doctor)
{
	const char *profile = NULL, *kube = NULL;
	bool probe = false, want_fix = false, apply = false;
	static const struct option opts[] = { { "profile", required_argument, NULL, 'p' },
					      { "image-probe", no_argument, NULL, 'i' },
					      { "kubernetes", required_argument, NULL, 'k' },
					      { "fix", no_argument, NULL, 'f' },
					      { "apply", no_argument, NULL, 'a' },
					      { NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "p:", opts, NULL)) != -1) {
		switch (c) {
		case 'p': profile = optarg; break;
		case 'i': probe = true; break;
		case 'k': kube = optarg; break;
		case 'f': want_fix = true; break;
		case 'a': apply = true; break;
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	if (kube && (profile || probe))
		return cmd_usage_error(ctx, "--kubernetes checks each overlay against its own profile: "
					    "no --profile or --image-probe with it");
	if (apply && !want_fix)
		return cmd_usage_error(ctx, "--apply writes the heal plan of --fix: pass --fix --apply");
	if (want_fix && kube)
		return cmd_usage_error(ctx, "--fix heals a compose deploy dir, not a --kubernetes tree "
					    "(re-render it with `lobes init --target kubernetes --apply`)");
	struct doctor_opts o = { .dir = ctx->dir, .profile = profile, .image_probe = probe,
				 .kubernetes = kube };
	struct doctor_report r;
	struct err *e = NULL;
	if ((kube ? doctor_run_kubernetes(&r, &o, &e) : doctor_run(&r, &o, &e)) < 0) {
		doctor_report_free(&r);
		return cmd_fail(ctx, e);
	}
	if (want_fix) {
		int frc = fix(ctx, &o, &r, apply);
		doctor_report_free(&r);
		return frc;
	}
	int code = r.no_dir ? EXIT_CONFIG : doctor_worst(&r) >= SEV_ERROR ? EXIT_CHECK : 0;
	json_auto_t *res = doctor_report_json(&r);
	doctor_report_free(&r);
	secret_mask_json(res); /* the text below is printed from it too */
	if (ctx->json) {
		out_json(res);
		return code;
	}
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(res, "checks"), i, x) {
		const char *sev = jstr(x, "severity");
		printf("%s%-7s%s %s%s%s: %s\n", sev_color(ctx, sev), sev, c_reset(ctx), c_bold(ctx),
		       jstr(x, "id"), c_reset(ctx), jstr(x, "message"));
		if (*jstr(x, "detail"))
			indented(jstr(x, "detail"), "");
		if (*jstr(x, "remedy"))
			indented(jstr(x, "remedy"), "fix: ");
	}
	const json_t *s = json_object_get(res, "summary");
	json_int_t ne = json_integer_value(json_object_get(s, "error"));
	json_int_t nw = json_integer_value(json_object_get(s, "warning"));
	printf("%s%s%s: %lld error%s, %lld warning%s, %lld info, %lld ok\n",
	       ne ? c_red(ctx) : c_green(ctx), ne ? "problems found" : "no errors", c_reset(ctx),
	       (long long)ne, ne == 1 ? "" : "s", (long long)nw, nw == 1 ? "" : "s",
	       (long long)json_integer_value(json_object_get(s, "info")),
	       (long long)json_integer_value(json_object_get(s, "ok")));
	return code;
}
