/*
 * render.c — `lobes render`: the render of a profile for its own card, a
 * function of the profile and the knowledge (shipped data/ plus the
 * operator's DIR/profiles/, which this file loads) only: no detection
 * beyond choosing the default profile, no checkpoint reads. To stdout, into
 * a directory (--out), or compared with one (--check).
 */
#include <getopt.h>
#include <string.h>

#include "../lib/plan/plan.h"
#include "../lib/deploy/deploy.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/fs.h"
#include "../lib/util/secret.h"
#include "cmd.h"

/* Profile named in DIR/.env (LOBES_PROFILE), or NULL. */
static char *profile_of_dir(const char *dir)
{
	struct env_file env;
	if (deploy_env_read(dir, &env, NULL) <= 0)
		return NULL;
	const char *v = env_get(&env, "LOBES_PROFILE");
	char *r = v ? xstrdup(v) : NULL;
	env_file_free(&env);
	return r;
}

/* Print, write (--out) or compare (--check) a render; frees ro. */
static int render_emit(struct ctx *ctx, struct render_out *ro_, const char *profile,
		       const char *out_dir, const char *check_dir)
{
	struct render_out ro = *ro_;
	struct err *e = NULL;
	json_auto_t *res = json_pack("{s:s, s:[]}", "profile", profile, "files");
	json_t *files = json_object_get(res, "files");
	int code = 0;
	_cleanup_buf_ struct buf diff;
	buf_init(&diff, 0);
	for (size_t i = 0; i < ro.n; i++) {
		const struct render_file *f = &ro.files[i];
		json_t *fo = json_pack("{s:s}", "name", f->name);
		if (check_dir) {
			_cleanup_free_ char *p = xasprintf("%s/%s", check_dir, f->name);
			_cleanup_free_ char *have = fs_exists(p) ? fs_read(p, 16 << 20, NULL, NULL) : NULL;
			_cleanup_free_ char *la = xasprintf("%s", p);
			_cleanup_free_ char *lb = xasprintf("render %s/%s", profile, f->name);
			bool same = have && strcmp(have, f->data) == 0;
			if (!same) {
				diff_unified(have, f->data, la, lb, &diff);
				code = 1;
			}
			json_object_set_new(fo, "status", json_string(!have ? "missing" : same ? "same" : "differs"));
		} else if (out_dir) {
			_cleanup_free_ char *p = xasprintf("%s/%s", out_dir, f->name);
			_cleanup_free_ char *d = xstrdup(p);
			*strrchr(d, '/') = 0;
			if (fs_mkdirs(d, 0755, &e) < 0) {
				render_out_free(&ro);
				return cmd_fail(ctx, e);
			}
			if (fs_write_atomic(p, f->data, f->len, f->mode, &e) < 0) {
				render_out_free(&ro);
				return cmd_fail(ctx, e);
			}
			json_object_set_new(fo, "written", json_string(p));
		} else {
			json_object_set_new(fo, "content", json_string(f->data));
		}
		json_array_append_new(files, fo);
	}
	render_out_free(&ro);
	if (check_dir)
		json_object_set_new(res, "diff", json_string(buf_str(&diff)));
	secret_mask_json(res); /* a .env's secrets never reach the diff */
	if (ctx->json) {
		out_json(res);
		return code;
	}
	size_t i;
	json_t *fo;
	json_array_foreach(files, i, fo) {
		if (check_dir && strcmp(jstr(fo, "status"), "same") != 0)
			printf("%s: %s\n", jstr(fo, "name"), jstr(fo, "status"));
		else if (out_dir)
			printf("wrote %s\n", jstr(fo, "written"));
		else if (!check_dir)
			printf("%s==> %s <==%s\n%s\n", c_bold(ctx), jstr(fo, "name"), c_reset(ctx),
			       jstr(fo, "content"));
	}
	if (check_dir) {
		fputs(jstr(res, "diff"), stdout);
		printf(code ? "'%s' differs from the render of profile '%s'\n"
			    : "'%s' matches the render of profile '%s'\n", check_dir, profile);
	}
	return code;
}

CMD(render)
{
	const char *profile = NULL, *out_dir = NULL, *check_dir = NULL, *target = "compose";
	const char *profiles[K8S_MAX_PROFILES];
	size_t n_profiles = 0;
	struct k8s_options ko = { 0 };
	static const struct option opts[] = { { "profile", required_argument, NULL, 'p' },
					      { "out", required_argument, NULL, 'o' },
					      { "check", required_argument, NULL, 'c' },
					      { "target", required_argument, NULL, 't' },
					      { "lobes-image", required_argument, NULL, 'i' },
					      { "hf-cache-claim", required_argument, NULL, 'C' },
					      { NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "p:o:c:t:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (n_profiles == K8S_MAX_PROFILES)
				return cmd_usage_error(ctx, "more than %d --profile", K8S_MAX_PROFILES);
			profiles[n_profiles++] = profile = optarg;
			break;
		case 'o': out_dir = optarg; break;
		case 'c': check_dir = optarg; break;
		case 't': target = optarg; break;
		case 'i': ko.lobes_image = optarg; break;
		case 'C': ko.hf_claim = optarg; break;
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	bool k8s = !strcmp(target, "kubernetes");
	if (!k8s && strcmp(target, "compose") != 0)
		return cmd_usage_error(ctx, "--target '%s'; expected compose or kubernetes", target);
	if (!k8s && (ko.lobes_image || ko.hf_claim))
		return cmd_usage_error(ctx, "--lobes-image and --hf-cache-claim need --target kubernetes");
	if (!k8s && n_profiles > 1)
		return cmd_usage_error(ctx, "one --profile for --target compose");
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	if (out_dir && check_dir)
		return cmd_usage_error(ctx, "--out and --check exclude each other");
	struct err *e = NULL;
	_cleanup_free_ char *from_dir = NULL;
	if (!profile && check_dir) {
		from_dir = profile_of_dir(check_dir);
		profile = from_dir;
	}
	/* The operator's DIR/profiles are knowledge, loaded here: the render
	 * itself reads no file. */
	_cleanup_free_ char *opdir = xasprintf("%s/profiles", ctx->dir);
	struct knowledge k = { 0 };
	struct render_out ro;
	if (k8s) {
		if (knowledge_load(&k, opdir, &e) < 0)
			return cmd_fail(ctx, e);
		int rendered = render_nominal_k8s(&k, profiles, n_profiles, &ko, &ro, &e);
		knowledge_free(&k);
		if (rendered < 0)
			return cmd_fail(ctx, e);
		return render_emit(ctx, &ro, "kubernetes", out_dir, check_dir);
	}
	_cleanup_free_ char *detected = NULL;
	if (!profile) {
		struct loaded_plan lp;
		if (loaded_plan_init(&lp, ctx->dir, NULL, &e) < 0)
			return cmd_fail(ctx, e);
		detected = xstrdup(lp.plan.profile->name);
		loaded_plan_free(&lp);
		profile = detected;
	}
	if (knowledge_load(&k, opdir, &e) < 0)
		return cmd_fail(ctx, e);
	int rendered = render_nominal(&k, profile, &ro, &e);
	knowledge_free(&k);
	if (rendered < 0)
		return cmd_fail(ctx, e);
	return render_emit(ctx, &ro, profile, out_dir, check_dir);
}
