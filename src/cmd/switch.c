/*
 * switch.c — `lobes switch ROLE [MODEL]`: change one role's checkpoint.
 *
 * Without MODEL: the checkpoints of the Hugging Face cache, each with its
 * size, family and whether its weights fit the role's memory budget. With
 * MODEL: a dry run by default — what changes and why (family, parsers,
 * runner, the context clamped to the checkpoint's native length,
 * quantization from its quantization_config, KV scales, the traits that now
 * apply) and the diff of .env and the compose files. The change is written
 * as the operator's edits of .env (<ROLE>_MODEL and what follows from the
 * checkpoint), through the deploy store's init (lock, journal, atomic
 * commit), so `lobes init` keeps it and `explain` names it; the role's
 * keys that follow the old model are reset first.
 *
 * Refused before anything changes: a role that is not feasible here, a
 * model missing from the cache (with the command that fetches it, or
 * --allow-download), weights larger than the role's budget (with the
 * numbers). --apply then restarts that role alone and rolls back when the
 * new checkpoint does not boot or answer (switch_restart.c); --no-restart
 * only writes.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/deploy/deploy.h"
#include "../lib/facts/facts.h"
#include "../lib/render/render.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/fs.h"
#include "../lib/util/strv.h"
#include "cmd.h"
#include "switch_restart.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

struct sw_opts {
	const char *tool, *reasoning, *max_len, *util, *served;
	bool apply, no_restart, allow_download;
	int boot_wait_s;
};

/* The role's budget in bytes (gpu_mem_util × the box's memory); 0 when
 * the box's memory is unknown. */
static double role_budget(const struct loaded_plan *lp, enum role_id r, const char *util_override,
			  double *util)
{
	const char *u = util_override ? util_override : lp->plan.roles[r].knobs[KNOB_GPU_MEM_UTIL].value;
	*util = u ? strtod(u, NULL) : 0;
	double gib = 0;
	if (!host_facts_mem_gib(&lp->facts, &gib))
		return 0;
	return *util * gib * GIB;
}

/* `switch ROLE`: every cached checkpoint, its size, family, fit. */
static int list_models(struct ctx *ctx, struct loaded_plan *lp, enum role_id r)
{
	struct err *e = NULL;
	double util;
	double budget = role_budget(lp, r, NULL, &util);
	_cleanup_strv_ char **ids = checkpoint_cache_list(NULL);
	json_t *arr = json_array();
	for (size_t i = 0; ids && ids[i]; i++) {
		struct checkpoint_facts ck;
		checkpoint_facts_read(ids[i], &ck, NULL);
		size_t nf = 0;
		long long bytes = checkpoint_weights_bytes(ck.snapshot, &nf);
		const struct family *f = NULL;
		_cleanup_free_ char *why = NULL;
		if (family_match(&lp->k, ids[i], ck.has_config, ck.architectures, ck.model_type,
				 role_lane(r), &f, &why, &e) < 0) {
			err_free(e);
			e = NULL;
		}
		const char *fit = bytes < 0 ? "unknown (no safetensors)"
				  : budget <= 0 ? "unknown (box memory unknown)"
				  : (double)bytes < budget ? "fits" : "does not fit";
		json_array_append_new(arr, json_pack("{s:s, s:I, s:s?, s:s}", "model", ids[i], "bytes",
						     (json_int_t)bytes, "family", f ? f->name : NULL,
						     "fit", fit));
		checkpoint_facts_free(&ck);
	}
	json_auto_t *res = json_pack("{s:s, s:s?, s:f, s:o}", "role", role_name(r), "current",
				     lp->plan.roles[r].knobs[KNOB_MODEL].value, "budget_gib",
				     budget / GIB, "checkpoints", arr);
	if (ctx->json) {
		out_json(res);
		return 0;
	}
	printf("checkpoints in the Hugging Face cache for %s (now %s; budget %.1f GiB = %.2f of the "
	       "box):\n", role_name(r), jstr(res, "current"), budget / GIB, util);
	size_t i;
	json_t *m;
	json_array_foreach(arr, i, m) {
		long long b = json_integer_value(json_object_get(m, "bytes"));
		printf("  %-48s %8.1f GiB  %-16s %s\n", jstr(m, "model"), b < 0 ? 0.0 : (double)b / GIB,
		       *jstr(m, "family") ? jstr(m, "family") : "unknown family", jstr(m, "fit"));
	}
	if (!json_array_size(arr))
		printf("  (none)\n");
	return 0;
}

/* <ROLE>_<KNOB>=value, the value in its canonical form (0.5 → 0.50). */
static void push_set(char ***sets, enum role_id r, const char *knob, const char *v)
{
	_cleanup_free_ char *k = env_key(r, knob);
	_cleanup_free_ char *canon = NULL;
	const char *expect;
	int kn = knob_from_name(knob);
	if (kn < 0 || knob_canon((enum knob_id)kn, v, &canon, &expect) < 0)
		canon = xstrdup(v);
	_cleanup_free_ char *kv = xasprintf("%s=%s", k, canon);
	strv_push(sets, kv);
}

/* A value given on the command line, checked like a .env value. */
static int checked(struct ctx *ctx, enum knob_id kn, const char *v, const char *opt)
{
	char *canon = NULL;
	const char *expect = NULL;
	if (knob_canon(kn, v, &canon, &expect) < 0)
		return cmd_usage_error(ctx, "%s '%s' is invalid; expected %s", opt, v, expect);
	free(canon);
	return 0;
}

/* The .env edits for the new model, and the resets of the role's keys
 * that followed the old one (only those present in .env). */
static void edits_for(const struct loaded_plan *lp, const struct env_file *env, enum role_id r,
		      const char *model, const struct checkpoint_facts *ck, const struct family *newf,
		      const struct sw_opts *o, char ***sets, char ***resets)
{
	const struct role_plan *rp = &lp->plan.roles[r];
	push_set(sets, r, "model", model);
	if (o->tool)
		push_set(sets, r, "tool_call_parser", o->tool);
	if (o->reasoning)
		push_set(sets, r, "reasoning_parser", o->reasoning);
	if (o->max_len)
		push_set(sets, r, "max_model_len", o->max_len);
	if (o->util)
		push_set(sets, r, "gpu_mem_util", o->util);
	if (o->served) {
		_cleanup_free_ char *sn = xasprintf("role,%s", o->served);
		push_set(sets, r, "served_names", sn);
	}
	/* quantization follows the checkpoint's quantization_config: its method
	 * when the role's vLLM names it, else none (vLLM reads the config) */
	const char *q = ck->quant_method;
	bool q_ok = q && strcmp(q, "modelopt") != 0 && rp->reg &&
		    strv_has(rp->reg->quantizations, q);
	push_set(sets, r, "quantization", q_ok ? q : "none");
	/* a speculative config (MTP heads) belongs to the old family */
	const char *spec = rp->knobs[KNOB_SPECULATIVE_CONFIG].value;
	if (spec && strcmp(spec, "none") != 0 && newf != rp->family)
		push_set(sets, r, "speculative_config", "none");
	static const char *const follow[] = { "tool_call_parser", "reasoning_parser", "hf_overrides",
					      "runner", "convert", "max_model_len", "served_names" };
	for (size_t i = 0; i < ARRAY_SIZE(follow); i++) {
		_cleanup_free_ char *k = env_key(r, follow[i]);
		bool given = false;
		for (char **s = *sets; s && *s; s++)
			given |= str_starts_with(*s, k) && (*s)[strlen(k)] == '=';
		if (!given && env_get(env, k))
			strv_push(resets, k);
	}
}

/* The plan of the role after the switch, as data. */
static json_t *role_change(const struct loaded_plan *before, const struct loaded_plan *after,
			   enum role_id r, long long bytes, double budget, double util)
{
	const struct role_plan *a = &after->plan.roles[r], *b = &before->plan.roles[r];
	json_t *knobs = json_object();
	static const enum knob_id shown[] = { KNOB_MODEL,	   KNOB_TOOL_CALL_PARSER, KNOB_REASONING_PARSER,
					      KNOB_RUNNER,	   KNOB_CONVERT,	  KNOB_HF_OVERRIDES,
					      KNOB_MAX_MODEL_LEN, KNOB_QUANTIZATION,	  KNOB_KV_CACHE_DTYPE,
					      KNOB_GPU_MEM_UTIL,  KNOB_SPECULATIVE_CONFIG, KNOB_SERVED_NAMES };
	for (size_t i = 0; i < ARRAY_SIZE(shown); i++) {
		const struct knob_value *kv = &a->knobs[shown[i]];
		const struct prov_step *last = kv->n_chain ? &kv->chain[kv->n_chain - 1] : NULL;
		json_object_set_new(knobs, knob_name(shown[i]),
				    json_pack("{s:s?, s:s?, s:s?, s:s?}", "was", b->knobs[shown[i]].value,
					      "now", kv->value, "from", last ? prov_kind_name(last->kind) : NULL,
					      "where", last ? last->where : NULL));
	}
	json_t *traits = json_array();
	for (size_t i = 0; i < a->n_evals; i++)
		if (a->evals[i].applied)
			json_array_append_new(traits, json_pack("{s:s, s:s}", "trait", a->evals[i].trait->name,
								"cause", a->evals[i].trait->cause));
	const char *ks = a->ckpt.kv_scales == TRI_TRUE ? "present" : a->ckpt.kv_scales == TRI_FALSE ? "absent"
											  : "unknown";
	return json_pack("{s:s?, s:s?, s:o, s:s?, s:s, s:s?, s:I, s:f, s:f, s:o, s:o}", "family",
			 a->family ? a->family->name : NULL, "family_why", a->family_why,
			 "native_context", a->ckpt.native_context > 0 ? json_integer(a->ckpt.native_context)
								       : json_null(),
			 "quant_method", a->ckpt.quant_method, "kv_scales", ks, "kv_scales_why",
			 a->ckpt.kv_scales_why, "weights_bytes", (json_int_t)bytes, "budget_gib",
			 budget / GIB, "gpu_mem_util", util, "knobs", knobs, "traits", traits);
}

static void print_change(const struct ctx *ctx, const json_t *res)
{
	const json_t *ch = json_object_get(res, "change");
	printf("%sswitch %s%s: %s -> %s\n", c_bold(ctx), jstr(res, "role"), c_reset(ctx),
	       jstr(res, "from"), jstr(res, "to"));
	printf("  family      %s — %s\n", *jstr(ch, "family") ? jstr(ch, "family") : "unknown",
	       jstr(ch, "family_why"));
	long long b = json_integer_value(json_object_get(ch, "weights_bytes"));
	if (b >= 0)
		printf("  weights     %.1f GiB of a %.1f GiB budget (gpu_memory_utilization %.2f)\n",
		       (double)b / GIB, json_real_value(json_object_get(ch, "budget_gib")),
		       json_real_value(json_object_get(ch, "gpu_mem_util")));
	printf("  kv scales   %s — %s\n", jstr(ch, "kv_scales"), jstr(ch, "kv_scales_why"));
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(ch, "knobs"), k, v) {
		const char *was = jstr(v, "was"), *now = jstr(v, "now");
		printf("  %-19s %s%s%s  (%s at %s)\n", k, strcmp(was, now) ? was : "",
		       strcmp(was, now) ? " -> " : "", now, jstr(v, "from"), jstr(v, "where"));
	}
	size_t i;
	json_array_foreach(json_object_get(ch, "traits"), i, v)
		printf("  trait %s applies: %s\n", jstr(v, "trait"), jstr(v, "cause"));
	json_array_foreach(json_object_get(res, "warnings"), i, v)
		printf("%swarning%s: %s\n", c_yellow(ctx), c_reset(ctx), json_string_value(v));
}

static int refuse(struct ctx *ctx, int code, const char *fmt, const char *a, const char *b)
{
	struct err *e = NULL;
	err_set(&e, code, fmt, a, b);
	return cmd_fail(ctx, e);
}

/* `switch ROLE MODEL`. */
static int do_switch(struct ctx *ctx, struct init_result *cur, enum role_id r, const char *model,
		     const struct sw_opts *o)
{
	struct err *e = NULL;
	struct checkpoint_facts ck;
	checkpoint_facts_read(model, &ck, NULL);
	_cleanup_free_ char *hub = NULL;
	if (!ck.found && !o->allow_download) {
		checkpoint_facts_free(&ck);
		return refuse(ctx, EXIT_CONFIG, "'%s' is not in the Hugging Face cache; nothing changed; "
			      "fetch it first (huggingface-cli download %s, with HF_HOME or HF_HUB_CACHE as "
			      "the engines see it), or pass --allow-download to let vLLM download it at boot",
			      model, model);
	}
	const struct family *newf = NULL;
	_cleanup_free_ char *fwhy = NULL;
	if (family_match(&cur->lp.k, model, ck.has_config, ck.architectures, ck.model_type, role_lane(r),
			 &newf, &fwhy, &e) < 0) {
		checkpoint_facts_free(&ck);
		return cmd_fail(ctx, e);
	}
	size_t nf = 0;
	long long bytes = ck.found ? checkpoint_weights_bytes(ck.snapshot, &nf) : -1;
	double util;
	double budget = role_budget(&cur->lp, r, o->util, &util);
	if (bytes >= 0 && budget > 0 && (double)bytes >= budget) {
		_cleanup_free_ char *nums = xasprintf("%.1f GiB of weights (%zu safetensors files) do not "
						      "fit the %s budget of %.1f GiB (gpu_memory_utilization "
						      "%.2f of %.1f GiB)", (double)bytes / GIB, nf,
						      role_name(r), budget / GIB, util, budget / util / GIB);
		checkpoint_facts_free(&ck);
		return refuse(ctx, EXIT_CONFIG, "'%s': %s; nothing changed; pick a smaller checkpoint or "
			      "pass a larger --gpu-memory-utilization", model, nums);
	}
	_cleanup_strv_ char **sets = NULL, **resets = NULL;
	struct env_file env = { 0 };
	deploy_env_read(ctx->dir, &env, NULL);
	edits_for(&cur->lp, &env, r, model, &ck, newf, o, &sets, &resets);
	env_file_free(&env);
	checkpoint_facts_free(&ck);
	struct init_result nr;
	struct init_opts io = { .dir = ctx->dir, .apply = o->apply, .keep_backups = -1, .set = sets,
				.reset = resets };
	if (init_prepare(&nr, &io, &e) < 0) {
		init_result_free(&nr);
		return cmd_fail(ctx, e);
	}
	json_t *warn = json_array();
	for (char **w = nr.lp.plan.warnings; w && *w; w++)
		if (str_starts_with(*w, role_name(r)))
			json_array_append_new(warn, json_string(*w));
	json_auto_t *res = json_pack("{s:s, s:s?, s:s, s:o, s:o, s:s, s:b, s:b}", "role", role_name(r),
				     "from", cur->lp.plan.roles[r].knobs[KNOB_MODEL].value, "to", model,
				     "change", role_change(&cur->lp, &nr.lp, r, bytes, budget, util),
				     "warnings", warn, "diff", nr.diff ? nr.diff : "", "changed", nr.changed,
				     "applied", false);
	int rc = 0;
	struct deploy_saved before = { 0 };
	bool restart = o->apply && !o->no_restart && nr.changed;
	if (restart && deploy_save(ctx->dir, &before, &e) < 0)
		rc = cmd_fail(ctx, e);
	else if (o->apply && init_apply(&nr, &e) < 0)
		rc = cmd_fail(ctx, e);
	else if (o->apply)
		json_object_set_new(res, "applied", json_true());
	if (!rc && restart) {
		close(nr.lock_fd); /* the restart's rollback takes the lock itself */
		nr.lock_fd = -1;
		const struct knob_value *kn = nr.lp.plan.roles[r].knobs;
		const char *tp = kn[KNOB_TOOL_CALL_PARSER].value, *rp = kn[KNOB_REASONING_PARSER].value;
		struct sw_restart sr = { .dir = ctx->dir, .role = r, .new_model = model,
					 .old_model = cur->lp.plan.roles[r].knobs[KNOB_MODEL].value,
					 .before = &before, .profile = nr.lp.plan.profile,
					 .tool_parser = tp && *tp && strcmp(tp, "none") != 0,
					 .reasoning_parser = rp && *rp && strcmp(rp, "none") != 0,
					 .boot_wait_s = o->boot_wait_s, .probe_timeout_s = 60 };
		if (switch_restart(&sr, res, &e) < 0) {
			rc = cmd_fail(ctx, e);
			if (ctx->json && json_is_true(json_object_get(res, "rolled_back")))
				out_json(res);
		}
	}
	deploy_saved_free(&before);
	init_result_free(&nr);
	if (rc)
		return rc;
	if (ctx->json) {
		out_json(res);
		return 0;
	}
	print_change(ctx, res);
	printf("\n%s", jstr(res, "diff"));
	if (!json_is_true(json_object_get(res, "changed")))
		printf("nothing to change\n");
	else if (o->apply && o->no_restart)
		printf("written; restart the role with `lobes serve --apply`, then `lobes probe %s`\n",
		       role_name(r));
	else if (o->apply)
		printf("%s restarted on %s; it answers its probes\n", role_name(r), model);
	else
		printf("dry run: nothing written; --apply writes it and restarts %s (--no-restart: "
		       "writes only)\n", role_name(r));
	return 0;
}

CMD(switch)
{
	struct sw_opts o = { .boot_wait_s = 1800 };
	static const struct option opts[] = { { "apply", no_argument, NULL, 'a' },
					      { "no-restart", no_argument, NULL, 'n' },
					      { "allow-download", no_argument, NULL, 'd' },
					      { "tool-call-parser", required_argument, NULL, 't' },
					      { "reasoning-parser", required_argument, NULL, 'r' },
					      { "max-model-len", required_argument, NULL, 'l' },
					      { "gpu-memory-utilization", required_argument, NULL, 'u' },
					      { "served-name", required_argument, NULL, 's' },
					      { "boot-wait", required_argument, NULL, 'b' },
					      { NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': o.apply = true; break;
		case 'n': o.no_restart = true; break;
		case 'd': o.allow_download = true; break;
		case 't': o.tool = optarg; break;
		case 'r': o.reasoning = optarg; break;
		case 'l': o.max_len = optarg; break;
		case 'u': o.util = optarg; break;
		case 's': o.served = optarg; break;
		case 'b': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 604800)
				return cmd_usage_error(ctx, "--boot-wait '%s' is invalid; expected seconds "
							    "(1-604800)", optarg);
			o.boot_wait_s = (int)v;
			break;
		}
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if ((o.tool && checked(ctx, KNOB_TOOL_CALL_PARSER, o.tool, "--tool-call-parser")) ||
	    (o.reasoning && checked(ctx, KNOB_REASONING_PARSER, o.reasoning, "--reasoning-parser")) ||
	    (o.max_len && checked(ctx, KNOB_MAX_MODEL_LEN, o.max_len, "--max-model-len")) ||
	    (o.util && checked(ctx, KNOB_GPU_MEM_UTIL, o.util, "--gpu-memory-utilization")) ||
	    (o.served && checked(ctx, KNOB_SERVED_NAMES, o.served, "--served-name")))
		return EXIT_USAGE;
	if (optind >= argc || optind + 2 < argc)
		return cmd_usage_error(ctx, "expected ROLE and, to switch it, MODEL");
	int r = role_from_name(argv[optind]);
	if (r < 0)
		return cmd_usage_error(ctx, "unknown role '%s'; expected cortex, senses, hand, embedder or "
					    "reranker", argv[optind]);
	const char *model = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (model && checked(ctx, KNOB_MODEL, model, "MODEL"))
		return EXIT_USAGE;
	if (o.no_restart && !o.apply)
		return cmd_usage_error(ctx, "--no-restart goes with --apply (write without restarting)");
	struct err *e = NULL;
	struct env_file env = { 0 };
	int have = deploy_env_read(ctx->dir, &env, &e);
	env_file_free(&env);
	if (have < 0)
		return cmd_fail(ctx, e);
	if (have == 0)
		return refuse(ctx, EXIT_CONFIG, "%s has no .env%s; run `lobes init --apply` first", ctx->dir, "");
	struct init_result cur;
	struct init_opts io = { .dir = ctx->dir, .keep_backups = -1 };
	if (init_prepare(&cur, &io, &e) < 0) {
		init_result_free(&cur);
		return cmd_fail(ctx, e);
	}
	int rc;
	if (!role_feasible(&cur.lp.plan, (enum role_id)r)) {
		const struct knob_value *fv = &cur.lp.plan.roles[r].knobs[KNOB_FEASIBLE];
		const struct prov_step *last = fv->n_chain ? &fv->chain[fv->n_chain - 1] : NULL;
		_cleanup_free_ char *why = last && last->trait ? xasprintf("trait %s: %s", last->trait->name,
									  last->trait->cause)
						 : xasprintf("%s", last ? last->where : "not in the profile");
		rc = refuse(ctx, EXIT_CONFIG, "role '%s' is not feasible on this box (%s); nothing changed",
			    role_name((enum role_id)r), why);
	} else if (!model) {
		rc = list_models(ctx, &cur.lp, (enum role_id)r);
	} else {
		rc = do_switch(ctx, &cur, (enum role_id)r, model, &o);
	}
	init_result_free(&cur);
	return rc;
}
