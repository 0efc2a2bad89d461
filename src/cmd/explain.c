/*
 * explain.c — `lobes explain [--profile P] [ROLE]`: the plan, and why every
 * knob has its value. Builds the JSON tree with plan_json() and prints it as
 * text or --json; the text is a reading of that same tree.
 */
#include <getopt.h>
#include <string.h>

#include "../lib/facts/facts.h"
#include "../lib/knowledge/knowledge.h"
#include "../lib/plan/plan.h"
#include "../lib/util/cleanup.h"
#include "cmd.h"
#include "../lib/deploy/deploy.h"
#include "../lib/util/fs.h"

static void print_evidence(const struct ctx *ctx, const json_t *ev)
{
	size_t i;
	json_t *e;
	json_array_foreach(ev, i, e) {
		const char *date = jstr(e, "date"), *box = jstr(e, "box");
		printf("        %sevidence (%s)%s%s%s%s%s: %s\n", c_dim(ctx), jstr(e, "kind"),
		       *date ? " " : "", date, *box ? ", " : "", box, c_reset(ctx), jstr(e, "observation"));
	}
}

static void print_chain(const struct ctx *ctx, const json_t *chain)
{
	size_t n = json_array_size(chain);
	for (size_t i = n; i-- > 0;) {
		const json_t *s = json_array_get(chain, i);
		const char *kind = jstr(s, "kind");
		const char *val = json_string_value(json_object_get(s, "value"));
		if (i + 1 != n)
			printf("      %s(was %s from %s", c_dim(ctx), val ? val : "unset", kind);
		else
			printf("      %s<- %s", c_dim(ctx), kind);
		if (strcmp(kind, "trait") == 0)
			printf(" %s%s%s", c_reset(ctx), jstr(s, "trait"), c_dim(ctx));
		else if (strcmp(kind, "family") == 0 && *jstr(s, "family"))
			printf(" %s%s%s", c_reset(ctx), jstr(s, "family"), c_dim(ctx));
		printf(" at %s%s%s\n", jstr(s, "where"), i + 1 != n ? ")" : "", c_reset(ctx));
		if (i + 1 == n && strcmp(kind, "family") == 0)
			print_evidence(ctx, json_object_get(s, "evidence"));
		if (i + 1 != n || strcmp(kind, "trait") != 0)
			continue;
		printf("        cause: %s\n", jstr(s, "cause"));
		if (*jstr(s, "assumption"))
			printf("        %sassumed%s: %s\n", c_yellow(ctx), c_reset(ctx), jstr(s, "assumption"));
		print_evidence(ctx, json_object_get(s, "evidence"));
	}
}

static void print_text(const struct ctx *ctx, const json_t *t)
{
	const json_t *pr = json_object_get(t, "profile"), *card = json_object_get(t, "card");
	printf("%sprofile %s%s (%s)%s%s\n", c_bold(ctx), jstr(pr, "name"), c_reset(ctx),
	       jstr(pr, "status"), json_is_true(json_object_get(pr, "forced")) ? ", forced" : "",
	       json_is_true(json_object_get(pr, "unvalidated")) ? ", unvalidated for this card" : "");
	printf("  %s\n  from %s\n", jstr(pr, "description"), jstr(pr, "where"));
	printf("card %s (%s): %s\n", jstr(card, "id"), jstr(card, "status"), jstr(card, "why"));
	const json_t *facts = json_object_get(t, "facts");
	const char *keys[] = { "gpu_name", "compute_cap", "mem_total", "memory_model" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		const json_t *f = json_object_get(facts, keys[i]);
		if (!f)
			continue;
		if (json_is_true(json_object_get(f, "valid")))
			printf("  %-13s %s  [%s]\n", keys[i], jstr(f, "value"), jstr(f, "source"));
		else
			printf("  %-13s unknown\n", keys[i]);
	}
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(t, "warnings"), i, w)
		printf("%swarning%s: %s\n", c_yellow(ctx), c_reset(ctx), json_string_value(w));
	const json_t *b = json_object_get(t, "bringup");
	printf("\nbring-up: %s, order:", jstr(b, "value"));
	json_array_foreach(json_object_get(t, "order"), i, w)
		printf(" %s", json_string_value(w));
	printf("\n");
	print_chain(ctx, json_object_get(b, "chain"));
	json_array_foreach(json_object_get(t, "dead_env"), i, w)
		printf("dead env: %s (trait %s; use %s)\n", jstr(w, "name"), jstr(w, "trait"),
		       jstr(w, "replacement"));
	json_array_foreach(json_object_get(t, "known_failures"), i, w)
		printf("known failure: %s %s — %s (%s)\n", jstr(w, "role"), jstr(w, "probe"),
		       jstr(w, "reason"), jstr(w, "ref"));
	const char *rname;
	json_t *r;
	json_object_foreach(json_object_get(t, "roles"), rname, r) {
		bool feasible = json_is_true(json_object_get(r, "feasible"));
		printf("\n%s%s%s  (%s lane, %s%s%s)\n", c_bold(ctx), rname, c_reset(ctx), jstr(r, "lane"),
		       feasible ? c_green(ctx) : c_red(ctx), feasible ? "feasible" : "not feasible",
		       c_reset(ctx));
		const char *kname;
		json_t *kv;
		json_object_foreach(json_object_get(r, "knobs"), kname, kv) {
			const char *v = json_string_value(json_object_get(kv, "value"));
			if (!feasible && strcmp(kname, "feasible") != 0)
				continue;
			printf("  %-18s %s\n", kname, v ? v : "(unset: no flag)");
			print_chain(ctx, json_object_get(kv, "chain"));
		}
		if (!feasible)
			continue;
		const json_t *ap = json_object_get(r, "attention_path");
		const char *apv = json_string_value(json_object_get(ap, "value"));
		printf("  %sattention path%s     %s — %s\n", c_dim(ctx), c_reset(ctx), apv ? apv : "unknown",
		       jstr(ap, "why"));
		const json_t *im = json_object_get(r, "image");
		if (json_is_true(json_object_get(im, "recorded")))
			printf("  %svllm%s               %s (lists: data/vllm/%s/)\n", c_dim(ctx), c_reset(ctx),
			       jstr(im, "vllm"), jstr(im, "registry"));
		else
			printf("  %svllm%s               not recorded for this image: its flags, env names "
			       "and parsers cannot be checked\n", c_dim(ctx), c_reset(ctx));
		const json_t *fam = json_object_get(r, "family");
		if (json_is_string(json_object_get(fam, "name")))
			printf("  %sfamily%s             %s — %s (%s)\n", c_dim(ctx), c_reset(ctx),
			       jstr(fam, "name"), jstr(fam, "why"), jstr(fam, "where"));
		else
			printf("  %sfamily%s             %sunknown%s — %s\n", c_dim(ctx), c_reset(ctx),
			       c_yellow(ctx), c_reset(ctx), jstr(fam, "why"));
		const json_t *ck = json_object_get(r, "checkpoint");
		printf("  %scheckpoint%s         kv scales %s — %s\n", c_dim(ctx), c_reset(ctx),
		       jstr(ck, "kv_scales"), jstr(ck, "kv_scales_why"));
		json_array_foreach(json_object_get(r, "traits"), i, w)
			printf("  %strait%s %s: %s%s — %s\n", c_dim(ctx), c_reset(ctx), jstr(w, "trait"),
			       jstr(w, "predicate"),
			       json_is_true(json_object_get(w, "applied")) ? ", applied" : ", not applied",
			       jstr(w, "detail"));
	}
}

CMD(explain)
{
	const char *profile = NULL;
	static const struct option opts[] = { { "profile", required_argument, NULL, 'p' },
					      { NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "p:", opts, NULL)) != -1) {
		if (c == 'p')
			profile = optarg;
		else
			return cmd_usage_error(ctx, "unknown option");
	}
	int role = -1;
	if (optind < argc) {
		role = role_from_name(argv[optind]);
		if (role < 0)
			return cmd_usage_error(ctx, "unknown role '%s'; expected cortex, senses, hand, "
						    "embedder or reranker", argv[optind]);
		if (optind + 1 < argc)
			return cmd_usage_error(ctx, "one role at most");
	}
	struct err *e = NULL;
	json_auto_t *t = NULL;
	_cleanup_free_ char *envp = xasprintf("%s/.env", ctx->dir);
	if (fs_exists(envp)) {
		/* A deploy dir: its operator edits are overrides in the plan. */
		struct init_result r;
		struct init_opts o = { .dir = ctx->dir, .profile = profile };
		if (init_prepare(&r, &o, &e) < 0) {
			init_result_free(&r);
			return cmd_fail(ctx, e);
		}
		t = plan_json(&r.lp.plan, &r.lp.facts, role);
		init_result_free(&r);
	} else {
		struct loaded_plan lp;
		if (loaded_plan_init(&lp, ctx->dir, profile, &e) < 0)
			return cmd_fail(ctx, e);
		t = plan_json(&lp.plan, &lp.facts, role);
		loaded_plan_free(&lp);
	}
	if (ctx->json)
		out_json(t);
	else
		print_text(ctx, t);
	return 0;
}
