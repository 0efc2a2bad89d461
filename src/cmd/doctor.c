/*
 * doctor.c — `lobes doctor`: read-only checks of the deploy dir before a
 * boot. One line per finding (severity, check id, message), then its
 * detail and its remedy indented below; --json prints the same findings.
 * Exit 1 when any finding is an error, 0 otherwise, 3 when there is no
 * deploy dir or it cannot be read at all (the findings are printed first:
 * nothing deployed is a configuration error, as for status and probe). The
 * checks live in src/lib/doctor/.
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

CMD(doctor)
{
	const char *profile = NULL, *kube = NULL;
	bool probe = false;
	static const struct option opts[] = { { "profile", required_argument, NULL, 'p' },
					      { "image-probe", no_argument, NULL, 'i' },
					      { "kubernetes", required_argument, NULL, 'k' },
					      { NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "p:", opts, NULL)) != -1) {
		switch (c) {
		case 'p': profile = optarg; break;
		case 'i': probe = true; break;
		case 'k': kube = optarg; break;
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	if (kube && (profile || probe))
		return cmd_usage_error(ctx, "--kubernetes checks each overlay against its own profile: "
					    "no --profile or --image-probe with it");
	struct doctor_opts o = { .dir = ctx->dir, .profile = profile, .image_probe = probe,
				 .kubernetes = kube };
	struct doctor_report r;
	struct err *e = NULL;
	if ((kube ? doctor_run_kubernetes(&r, &o, &e) : doctor_run(&r, &o, &e)) < 0) {
		doctor_report_free(&r);
		return cmd_fail(ctx, e);
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
