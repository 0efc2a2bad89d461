/*
 * init.c — `lobes init`: detect → resolve → render into the deploy dir.
 * Dry-run by default (the profile chosen and why, then a unified diff);
 * --apply writes atomically. The logic lives in src/lib/deploy/init.c.
 */
#include <getopt.h>
#include <string.h>

#include "../lib/deploy/deploy.h"
#include "../lib/render/render.h"
#include "../lib/util/buf.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/fs.h"
#include "../lib/util/secret.h"
#include "cmd.h"

static json_t *result_json(const struct init_result *r, bool applied, const char *image_note)
{
	const struct plan *p = &r->lp.plan;
	json_t *kept = json_array();
	for (size_t i = 0; i < r->n_kept; i++) {
		const struct kept_value *k = &r->kept[i];
		json_array_append_new(kept, json_pack("{s:s, s:s, s:s?}", "key", k->key, "yours",
						      k->secret ? "<hidden>" : k->yours, "lobes",
						      k->lobes));
	}
	json_t *files = json_array();
	for (size_t i = 0; i < r->n_files; i++) {
		const struct file_change *f = &r->files[i];
		json_array_append_new(files, json_pack("{s:s, s:s, s:s?}", "name", f->name, "status",
						       !f->changed ? "same" : f->old ? "changed" : "new",
						       "backup", f->backup));
	}
	json_t *reset = json_array();
	for (char **k = r->reset; k && *k; k++)
		json_array_append_new(reset, json_string(*k));
	json_t *warn = json_array();
	for (char **w = p->warnings; w && *w; w++)
		json_array_append_new(warn, json_string(*w));
	if (image_note)
		json_array_append_new(warn, json_string(image_note));
	const struct host_facts *f = &r->lp.facts;
	return json_pack("{s:s, s:{s:s, s:s, s:s?}, s:{s:s, s:s, s:b, s:b}, s:o, s:o, s:o, s:o, s:s, "
			 "s:b, s:b, s:o, s:s}",
			 "dir", r->dir, "card", "id", p->card ? p->card->name : "unknown", "status",
			 p->card ? p->card->status : "unknown", "why", p->card_why, "profile", "name",
			 p->profile->name, "status", p->profile->status, "forced", p->forced,
			 "unvalidated", p->unvalidated, "facts", host_facts_json(f), "warnings", warn,
			 "kept", kept, "files", files, "diff", r->diff ? r->diff : "", "changed",
			 r->changed, "applied", applied, "reset", reset, "profile_source",
			 r->profile_from_dir ? "deploy dir (.env LOBES_PROFILE)"
			 : p->forced	     ? "--profile"
					     : "detected card");
}

/* init --target kubernetes: the tree of the profiles named (default: every
 * profile) under DIR/kubernetes/, through the deploy dir's store. */
static int init_k8s(struct ctx *ctx, const char *const *profiles, size_t n,
		    const struct k8s_options *ko, bool apply)
{
	struct err *e = NULL;
	_cleanup_free_ char *opdir = xasprintf("%s/profiles", ctx->dir);
	struct knowledge k = { 0 };
	if (knowledge_load(&k, opdir, &e) < 0)
		return cmd_fail(ctx, e);
	struct render_out ro;
	int rendered = render_nominal_k8s(&k, profiles, n, ko, &ro, &e);
	knowledge_free(&k);
	if (rendered < 0)
		return cmd_fail(ctx, e);
	struct tree_result tr;
	int synced = deploy_tree_sync(ctx->dir, "kubernetes", &ro, apply, &tr, &e);
	render_out_free(&ro);
	if (synced < 0) {
		tree_result_free(&tr);
		return cmd_fail(ctx, e);
	}
	json_auto_t *res = json_pack("{s:s, s:s, s:s, s:[], s:s, s:b, s:b}", "dir", ctx->dir, "target",
				     "kubernetes", "root", tr.root, "files", "diff", tr.diff, "changed",
				     tr.changed, "applied", apply && tr.changed);
	for (size_t i = 0; i < tr.n; i++)
		json_array_append_new(json_object_get(res, "files"),
				      json_pack("{s:s, s:s}", "name", tr.files[i].name, "status",
						!tr.files[i].changed ? "same" : tr.files[i].existed ? "changed" : "new"));
	tree_result_free(&tr);
	if (ctx->json) {
		out_json(res);
		return 0;
	}
	fputs(jstr(res, "diff"), stdout);
	size_t i;
	json_t *x;
	if (!json_is_true(json_object_get(res, "changed")))
		printf("'%s' is up to date: nothing to write\n", jstr(res, "root"));
	else if (!apply)
		printf("dry run: nothing written; run `lobes init --target kubernetes --apply` to write "
		       "these changes\n");
	else
		json_array_foreach(json_object_get(res, "files"), i, x)
			if (strcmp(jstr(x, "status"), "same") != 0)
				printf("wrote %s/%s\n", jstr(res, "root"), jstr(x, "name"));
	return 0;
}

CMD(init)
{
	const char *profile = NULL;
	bool apply = false;
	char **reset = NULL;
	size_t n_reset = 0;
	const char *target = "compose";
	const char *profiles[K8S_MAX_PROFILES];
	size_t n_profiles = 0;
	struct k8s_options ko = { 0 };
	static const struct option opts[] = { { "profile", required_argument, NULL, 'p' },
					      { "apply", no_argument, NULL, 'a' },
					      { "target", required_argument, NULL, 't' },
					      { "lobes-image", required_argument, NULL, 'i' },
					      { "hf-cache-claim", required_argument, NULL, 'C' },
					      { "reset", required_argument, NULL, 'r' },
					      { "keep-backups", required_argument, NULL, 'k' },
					      { NULL, 0, NULL, 0 } };
	int keep = -1;
	int c;
	while ((c = getopt_long(argc, argv, "p:ar:k:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (n_profiles == K8S_MAX_PROFILES) {
				free(reset);
				return cmd_usage_error(ctx, "more than %d --profile", K8S_MAX_PROFILES);
			}
			profiles[n_profiles++] = profile = optarg;
			break;
		case 'a': apply = true; break;
		case 't': target = optarg; break;
		case 'i': ko.lobes_image = optarg; break;
		case 'C': ko.hf_claim = optarg; break;
		case 'k': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v < 0 || v > 100000) {
				free(reset);
				return cmd_usage_error(ctx, "--keep-backups '%s' is not a whole number (0 or more)",
						       optarg);
			}
			keep = (int)v;
			break;
		}
		case 'r':
			reset = xrealloc(reset, (n_reset + 2) * sizeof(char *));
			reset[n_reset++] = optarg;
			reset[n_reset] = NULL;
			break;
		default: free(reset); return cmd_usage_error(ctx, "unknown option");
		}
	}
	_cleanup_free_ char **reset_owned = reset;
	if (optind < argc)
		return cmd_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	bool k8s = !strcmp(target, "kubernetes");
	if (!k8s && strcmp(target, "compose") != 0)
		return cmd_usage_error(ctx, "--target '%s'; expected compose or kubernetes", target);
	if (k8s && (reset || keep >= 0))
		return cmd_usage_error(ctx, "--reset and --keep-backups are for the compose files");
	if (k8s)
		return init_k8s(ctx, profiles, n_profiles, &ko, apply);
	if (ko.lobes_image || ko.hf_claim)
		return cmd_usage_error(ctx, "--lobes-image and --hf-cache-claim need --target kubernetes");
	if (n_profiles > 1)
		return cmd_usage_error(ctx, "one --profile for --target compose");
	struct init_opts o = { .dir = ctx->dir, .profile = profile, .reset = reset, .apply = apply,
			       .keep_backups = keep };
	struct init_result r;
	struct err *e = NULL;
	if (init_prepare(&r, &o, &e) < 0) {
		init_result_free(&r);
		return cmd_fail(ctx, e);
	}
	/* An operator's image that is not pinned or not recorded is said. */
	_cleanup_buf_ struct buf notes;
	buf_init(&notes, 0);
	for (int i = 0; i < ROLE__COUNT; i++) {
		const struct role_plan *rp = &r.lp.plan.roles[i];
		const char *img = rp->knobs[KNOB_IMAGE].value;
		if (!role_feasible(&r.lp.plan, (enum role_id)i) || !img)
			continue;
		_cleanup_free_ char *why = image_ref_problem(img);
		_cleanup_free_ char *key = env_key((enum role_id)i, "IMAGE");
		if (why)
			buf_printf(&notes, "%s%s='%s' is %s", notes.len ? "; " : "", key, img, why);
		else if (!knowledge_image(&r.lp.k, img))
			buf_printf(&notes, "%s%s='%s': its vLLM version is not recorded, so its flags and "
				   "env names cannot be checked", notes.len ? "; " : "", key, img);
	}
	const char *image_note = notes.len ? buf_str(&notes) : NULL;
	if (apply && init_apply(&r, &e) < 0) {
		init_result_free(&r);
		return cmd_fail(ctx, e);
	}
	json_auto_t *res = result_json(&r, apply && r.changed, image_note);
	init_result_free(&r);
	secret_mask_json(res); /* the text below is printed from it too */
	if (ctx->json) {
		out_json(res);
		return 0;
	}
	const json_t *card = json_object_get(res, "card"), *pr = json_object_get(res, "profile");
	printf("card: %s (%s) — %s\n", jstr(card, "id"), jstr(card, "status"), jstr(card, "why"));
	printf("profile: %s%s%s (%s)%s%s, from the %s\n", c_bold(ctx), jstr(pr, "name"), c_reset(ctx),
	       jstr(pr, "status"), json_is_true(json_object_get(pr, "forced")) ? ", forced" : "",
	       json_is_true(json_object_get(pr, "unvalidated")) ? ", unvalidated for this card" : "",
	       jstr(res, "profile_source"));
	const json_t *facts = json_object_get(res, "facts");
	const char *fk[] = { "gpu_name", "compute_cap", "mem_total", "memory_model" };
	printf("facts:");
	for (size_t k = 0; k < ARRAY_SIZE(fk); k++) {
		const json_t *fv = json_object_get(facts, fk[k]);
		const char *v = json_string_value(json_object_get(fv, "value"));
		printf(" %s=%s", fk[k], v ? v : "unknown");
	}
	printf("\n");
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(res, "warnings"), i, x)
		printf("%swarning%s: %s\n", c_yellow(ctx), c_reset(ctx), json_string_value(x));
	if (json_array_size(json_object_get(res, "kept")))
		printf("kept your .env values:\n");
	json_array_foreach(json_object_get(res, "kept"), i, x) {
		const char *lobes = json_string_value(json_object_get(x, "lobes"));
		if (lobes)
			printf("  %s=%s (lobes would write %s)\n", jstr(x, "key"), jstr(x, "yours"), lobes);
		else
			printf("  %s=%s (yours only)\n", jstr(x, "key"), jstr(x, "yours"));
	}
	for (char **k = reset; k && *k; k++)
		printf("reset: %s\n", *k);
	fputs(jstr(res, "diff"), stdout);
	bool changed = json_is_true(json_object_get(res, "changed"));
	if (!changed)
		printf("'%s' is up to date: nothing to write\n", jstr(res, "dir"));
	else if (!apply)
		printf("dry run: nothing written; run `lobes init --apply` to write these changes\n");
	else
		json_array_foreach(json_object_get(res, "files"), i, x) {
			if (strcmp(jstr(x, "status"), "same") == 0)
				continue;
			printf("wrote %s/%s", jstr(res, "dir"), jstr(x, "name"));
			if (*jstr(x, "backup"))
				printf(" (previous kept as %s)", jstr(x, "backup"));
			printf("\n");
		}
	return 0;
}
