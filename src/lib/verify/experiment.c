/*
 * experiment.c — the questions that cannot be answered by looking: boot a
 * role with each setting of a knob in turn and compare what it says
 * (question key `experiment:`). Two so far: speculative-config
 * (mtp-acceptance, experiment_spec.c) and kv-cache-dtype (fp8-kv-accuracy:
 * does fp8 KV with scale 1.0 cost output quality against auto?), here:
 *
 *   1. the setting the role does NOT run now is written to .env
 *      (<ROLE>_KV_CACHE_DTYPE, through the deploy dir's store), the role
 *      alone is stopped and brought up again through bring-up's memory gate
 *      (runtime/serve_ops.c; the rest of the fleet is not touched), its
 *      effective --kv-cache-dtype is checked, and eval_collect() asks it the
 *      reference text's prompt_logprobs and the task set;
 *   2. the operator's .env is put back byte for byte, the role is booted
 *      again the same way (the operator's own setting) and asked the same;
 *   3. eval_compare_runs(auto, fp8): the figures become observations
 *      (eval.kld_mean, eval.kld_p99, eval.same_top, eval.dlogp_max,
 *      eval.ppl_ratio, eval.accuracy_delta, eval.agreement) for the
 *      question's routes, and the record gets both runs.
 * Whatever fails after step 1 began, .env is put back and the role booted
 * with it before the error is returned.
 */
#include <string.h>

#include "../deploy/deploy.h"
#include "../measure/measure.h"
#include "../runtime/runtime.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "verify_int.h"

/* The role's effective --kv-cache-dtype now (its container's args). */
static char *effective_kv(struct xp *x, struct err **err)
{
	_cleanup_strv_ char **args = xp_args(x, err);
	if (!args)
		return NULL;
	const char *v = xp_flag(args, "--kv-cache-dtype");
	return xstrdup(v ? v : "auto");
}

static bool is_fp8(const char *v)
{
	return v && !strncmp(v, "fp8", 3);
}

/* Boot the role with kv_cache_dtype want, check it runs it, collect its
 * answers. The run (new) or NULL with err. */
static json_t *boot_and_ask(struct xp *x, const char *want, struct err **err)
{
	long long ready_ms;
	_cleanup_free_ char *what = xasprintf("kv_cache_dtype=%s", want);
	if (xp_boot(x, what, &ready_ms, err) < 0)
		return NULL;
	enum role_id r = x->r;
	_cleanup_free_ char *eff = effective_kv(x, err);
	if (!eff)
		return NULL;
	if (strcmp(eff, want) != 0) {
		err_set(err, EXIT_RUNTIME, "%s runs --kv-cache-dtype=%s, not %s as .env says", role_name(r),
			eff, want);
		return NULL;
	}
	_cleanup_free_ char *origin = xasprintf("http://127.0.0.1:%d", x->s.fleet->roles[r].port);
	_cleanup_free_ char *label = xasprintf("%s kv_cache_dtype=%s", role_name(r), eff);
	struct eval_side side = { .label = label, .origin = origin, .model = role_name(r) };
	struct eval_opts eo = { .top_k = 20, .timeout_s = x->o->eval_timeout_s,
				.max_tasks = x->o->max_tasks };
	json_t *run = eval_collect(&side, &eo, err);
	if (run) {
		json_object_set_new(run, "kv_cache_dtype", json_string(eff));
		json_object_set_new(run, "ready_ms", json_integer(ready_ms));
	}
	return run;
}

/* A run as the record keeps it: the setting, the boot, the answers (the
 * logprobs stay out; the comparison holds their figures). */
static json_t *run_summary(const json_t *run)
{
	return json_pack("{s:O, s:O, s:O, s:O}", "kv_cache_dtype", json_object_get(run, "kv_cache_dtype"),
			 "ready_ms", json_object_get(run, "ready_ms"), "side", json_object_get(run, "side"),
			 "answers", json_object_get(json_object_get(run, "tasks"), "answers"));
}

static void put_figures(struct obs_set *obs, const json_t *cmp)
{
	static const char *const lp[] = { "kld_mean", "kld_p99", "same_top", "dlogp_max", "ppl_ratio" };
	static const char *const tk[] = { "accuracy_delta", "agreement" };
	char v[64];
	for (size_t i = 0; i < sizeof lp / sizeof *lp; i++) {
		snprintf(v, sizeof v, "%.6g", json_number_value(json_object_get(json_object_get(cmp, "logprobs"), lp[i])));
		_cleanup_free_ char *k = xasprintf("eval.%s", lp[i]);
		obs_put(obs, k, v);
	}
	for (size_t i = 0; i < sizeof tk / sizeof *tk; i++) {
		snprintf(v, sizeof v, "%.6g", json_number_value(json_object_get(json_object_get(cmp, "tasks"), tk[i])));
		_cleanup_free_ char *k = xasprintf("eval.%s", tk[i]);
		obs_put(obs, k, v);
	}
}

/* The two boots and the comparison, with .env put back on every path. */
static int kv_experiment(struct xp *x, const char *mine, json_t *rec, struct obs_set *obs,
			 struct err **err)
{
	const struct verify_opts *o = x->o;
	enum role_id r = x->r;
	const char *other = is_fp8(mine) ? "auto" : "fp8";
	_cleanup_free_ char *key = xasprintf("%s_KV_CACHE_DTYPE", role_name(r));
	for (char *p = key; *p; p++)
		*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
	_cleanup_free_ char *orig = NULL;
	size_t orig_len = 0;
	if (deploy_env_set(o->dir, key, other, &orig, &orig_len, err) < 0)
		return -1;
	json_auto_t *run_other = boot_and_ask(x, other, err);
	/* the operator's .env back, byte for byte, and the role booted with it */
	struct err *e2 = NULL;
	if (deploy_env_put(o->dir, orig, orig_len, run_other ? err : &e2) < 0) {
		err_free(e2);
		return -1;
	}
	json_auto_t *run_mine = boot_and_ask(x, mine, run_other ? err : &e2);
	err_free(e2);
	if (!run_other || !run_mine)
		return -1;
	_cleanup_free_ char *env_path = xasprintf("%s/.env", o->dir);
	size_t now_len = 0;
	_cleanup_free_ char *now = fs_read(env_path, ENV_FILE_CAP, &now_len, NULL);
	bool restored = now && now_len == orig_len && !memcmp(now, orig, orig_len);
	const json_t *ra = is_fp8(mine) ? run_other : run_mine, *rb = is_fp8(mine) ? run_mine : run_other;
	json_t *cmp = eval_compare_runs(ra, rb, err);
	if (!cmp)
		return -1;
	put_figures(obs, cmp);
	json_object_set_new(rec, "experiment",
			    json_pack("{s:s, s:s, s:s, s:[s, s], s:b, s:{s:o, s:o}, s:o}", "knob",
				      "kv_cache_dtype", "env_key", key, "operator_value", mine, "order",
				      other, mine, "env_restored_byte_for_byte", restored, "runs", "auto",
				      run_summary(ra), "fp8", run_summary(rb), "comparison", cmp));
	return restored ? 0 : err_set(err, EXIT_INTERNAL, "'%s/.env' differs from the operator's after "
							  "the experiment", o->dir);
}

int verify_experiment(const struct question *q, const struct verify_opts *o, json_t *rec,
		      struct obs_set *obs, struct err **err)
{
	const char *rname = o->role ? o->role : q->role;
	int r = role_from_name(rname);
	bool spec = !strcmp(q->experiment, "speculative-config");
	const char *knob = spec ? "speculative_config" : "kv_cache_dtype";
	_cleanup_free_ char *ok = xasprintf("args.%s", knob);
	bool known;
	const char *mine = obs_get(obs, ok, &known);
	if (r < 0 || !known || !mine)
		return err_set(err, EXIT_RUNTIME, "could not verify: the effective %s of '%s' is not "
						  "known", knob, rname);
	struct fleet fleet;
	if (fleet_load(&fleet, o->dir, err) < 0)
		return -1;
	uint64_t device = 0;
	_cleanup_free_ char *device_src = NULL;
	if (device_memory(&device, &device_src, err) < 0) {
		fleet_free(&fleet);
		return -1;
	}
	struct xp x = { .s = { .services = { role_name(r), NULL }, .event = o->event,
			       .event_cls = o->event_cls },
			.r = (enum role_id)r, .budget = (uint64_t)(fleet.roles[r].util * device), .o = o };
	int rc = -1;
	if (serve_rt_open(&x.s, &fleet, err) == 0) {
		rc = spec ? xp_spec(&x, mine, rec, obs, err) : kv_experiment(&x, mine, rec, obs, err);
		serve_rt_close(&x.s);
	}
	fleet_free(&fleet);
	if (rc < 0)
		err_wrap(err, "could not verify '%s'", q->id);
	return rc;
}
