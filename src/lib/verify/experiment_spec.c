/*
 * experiment_spec.c — the speculative-config experiment (question
 * mtp-acceptance): is MTP worth running on this box? Faster decoding, at
 * what acceptance, with the same answers?
 *
 *   1. the setting the role does NOT run now is tried first: MTP off
 *      ("none") when the operator runs a speculative config, else the one
 *      the profiles of the MTP-capable boxes set (MTP_ON). The knob is
 *      written by `lobes init` into the compose file (compose cannot drop a
 *      list item), so the trial is deploy_knob_trial(): .env's
 *      <ROLE>_SPECULATIVE_CONFIG line and the compose file rendered with
 *      it, one commit;
 *   2. the role alone is stopped and brought up again through bring-up's
 *      memory gate (the rest of the fleet is not touched), its effective
 *      --speculative-config checked, then measured: the engine's
 *      spec-decode counters read (GET /metrics), a bench run at
 *      concurrency 1 (TPOT is where speculative decoding shows: one stream,
 *      decode-bound), the task set's greedy answers, the counters again —
 *      acceptance = accepted / draft tokens between the two reads;
 *   3. the operator's files are put back byte for byte (deploy_saved_put)
 *      and the role booted and measured the same way with its own setting;
 *   4. both boots' args must differ in --speculative-config only (a stale
 *      compose file would compare two changes), then the figures become
 *      observations: mtp.tpot_speedup (TPOT median off / on),
 *      mtp.throughput_ratio (output tokens/s on / off), mtp.acceptance,
 *      eval.agreement and eval.accuracy_delta (on against off).
 * Whatever fails after step 1 began, the files are put back and the role
 * booted with them before the error is returned.
 */
#include <string.h>

#include "../deploy/deploy.h"
#include "../knowledge/knowledge.h"
#include "../measure/measure.h"
#include "../render/render.h"
#include "../runtime/runtime.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "verify_int.h"

/* The MTP setting data/profiles/spark.yaml and thor.yaml give the cortex. */
#define MTP_ON "{\"method\": \"mtp\", \"num_speculative_tokens\": 2}"
#define BENCH_INPUT_WORDS 128
#define BENCH_OUTPUT_TOKENS 128

static bool spec_on(const char *v)
{
	return v && *v && strcmp(v, "none") != 0;
}

/* Whether the effective flag value (NULL: no flag) is the setting want. */
static bool spec_is(const char *eff, const char *want)
{
	if (!spec_on(want))
		return !eff;
	if (!eff)
		return false;
	json_auto_t *a = json_loads(eff, 0, NULL);
	json_auto_t *b = json_loads(want, 0, NULL);
	return a && b ? json_equal(a, b) : !strcmp(eff, want);
}

/* The metric names of the vLLM the role runs (runtime's
 * engine_metric_folder: its image's recorded data/vllm/<commit>/, else the
 * one of the version the engine reports): the counters are read by the
 * names that version registers. Which list, and why, goes into run. */
static int role_metric_names(const struct xp *x, int port, struct engine_metric_names *n,
			     json_t *run, struct err **err)
{
	struct env_file env;
	int rc = deploy_env_read(x->o->dir, &env, err);
	if (rc <= 0)
		return rc == 0 ? err_set(err, EXIT_CONFIG, "no deployment in '%s'", x->o->dir) : -1;
	_cleanup_free_ char *key = env_key(x->r, "IMAGE");
	struct knowledge k = { 0 };
	rc = knowledge_load(&k, NULL, err);
	_cleanup_free_ char *from = NULL;
	_cleanup_free_ char *folder =
		rc == 0 ? engine_metric_folder(&k, env_get(&env, key), port, 5000, &from) : NULL;
	if (rc == 0 && !folder)
		rc = err_set(err, EXIT_CONFIG, "no vLLM metric names are recorded (data/vllm/)");
	if (rc == 0)
		rc = engine_metric_names_load(n, folder, err);
	if (rc == 0)
		json_object_set_new(run, "metric_names", json_pack("{s:s, s:s}", "vllm", folder, "from", from));
	knowledge_free(&k);
	env_file_free(&env);
	return rc;
}

/* bench, the answers and the counters of the running role; adds them to run. */
static int measure_role(struct xp *x, const char *label, json_t *run, struct err **err)
{
	const struct verify_opts *o = x->o;
	_cleanup_free_ char *origin = xasprintf("http://127.0.0.1:%d", x->s.fleet->roles[x->r].port);
	struct spec_counters before, after;
	_cleanup_(engine_metric_names_free) struct engine_metric_names names = { 0 };
	if (role_metric_names(x, x->s.fleet->roles[x->r].port, &names, run, err) < 0 ||
	    measure_spec_decode(origin, NULL, o->eval_timeout_s, &names, &before, err) < 0)
		return -1;
	struct bench_target t = { .label = label, .origin = origin, .model = role_name(x->r),
				  .kind = BENCH_GENERATE };
	struct bench_opts bo = { .input_len = BENCH_INPUT_WORDS, .output_len = BENCH_OUTPUT_TOKENS,
				 .ignore_eos = true, .requests = o->bench_requests > 0 ? o->bench_requests : 8,
				 .concurrency = 1, .batch = 1, .seed = 17, .timeout_s = o->eval_timeout_s };
	json_t *b = bench_run(&t, &bo, err);
	if (!b)
		return -1;
	json_object_set_new(run, "bench", b);
	json_int_t failed = json_integer_value(json_object_get(b, "failed"));
	json_int_t done = json_integer_value(json_object_get(b, "completed"));
	if (failed || !done) {
		_cleanup_free_ char *kinds = json_dumps(json_object_get(b, "errors"), JSON_COMPACT);
		return err_set(err, EXIT_RUNTIME, "%s: bench completed %lld of %lld requests (errors: %s)",
			       label, (long long)done, (long long)(done + failed), kinds ? kinds : "?");
	}
	struct eval_side side = { .label = label, .origin = origin, .model = role_name(x->r) };
	struct eval_opts eo = { .timeout_s = o->eval_timeout_s, .max_tasks = o->max_tasks,
				.answers_only = true };
	json_t *answers = eval_collect(&side, &eo, err);
	if (!answers)
		return -1;
	json_object_set_new(run, "answers", answers);
	if (measure_spec_decode(origin, NULL, o->eval_timeout_s, &names, &after, err) < 0)
		return -1;
	json_object_set_new(run, "spec_decode", measure_spec_delta(&before, &after));
	return 0;
}

/* Boot the role with speculative config want, check it runs it, measure.
 * The run (new) or NULL with err. */
static json_t *boot_and_measure(struct xp *x, const char *want, struct err **err)
{
	long long ready_ms;
	_cleanup_free_ char *what = xasprintf("speculative_config=%s", want);
	if (xp_boot(x, what, &ready_ms, err) < 0)
		return NULL;
	_cleanup_strv_ char **args = xp_args(x, err);
	if (!args)
		return NULL;
	const char *eff = xp_flag(args, "--speculative-config");
	if (!spec_is(eff, want)) {
		err_set(err, EXIT_RUNTIME, "%s runs --speculative-config=%s, not %s as .env says",
			role_name(x->r), eff ? eff : "(none)", want);
		return NULL;
	}
	_cleanup_free_ char *label = xasprintf("%s speculative_config=%s", role_name(x->r),
					       eff ? eff : "none");
	json_t *av = json_array();
	for (char **a = args; *a; a++)
		json_array_append_new(av, json_string(*a));
	json_t *run = json_pack("{s:s, s:I, s:o}", "speculative_config", eff ? eff : "none",
				"ready_ms", (json_int_t)ready_ms, "args", av);
	if (measure_role(x, label, run, err) < 0) {
		json_decref(run);
		return NULL;
	}
	return run;
}

/* The first arg of a that b does not have at the same place, other than
 * --speculative-config, or NULL when they differ in that flag only. */
static const char *other_difference(const json_t *a, const json_t *b)
{
	size_t i = 0, j = 0, na = json_array_size(a), nb = json_array_size(b);
	for (;;) {
		while (i < na && !strncmp(json_string_value(json_array_get(a, i)), "--speculative-config", 20))
			i++;
		while (j < nb && !strncmp(json_string_value(json_array_get(b, j)), "--speculative-config", 20))
			j++;
		if (i == na || j == nb)
			break;
		if (strcmp(json_string_value(json_array_get(a, i)), json_string_value(json_array_get(b, j))))
			return json_string_value(json_array_get(a, i));
		i++;
		j++;
	}
	return i < na ? json_string_value(json_array_get(a, i))
	       : j < nb ? json_string_value(json_array_get(b, j)) : NULL;
}

static double median(const json_t *run, const char *metric)
{
	return json_number_value(json_object_get(json_object_get(json_object_get(run, "bench"), metric),
						  "median"));
}

/* The figures of off against on, as the record and the observations keep them. */
static json_t *figures(const json_t *off, const json_t *on, struct obs_set *obs, struct err **err)
{
	json_t *cmp = eval_compare_answers(json_object_get(off, "answers"), json_object_get(on, "answers"),
					   err);
	if (!cmp)
		return NULL;
	double t_off = median(off, "tpot_ms"), t_on = median(on, "tpot_ms");
	double r_off = json_number_value(json_object_get(json_object_get(off, "bench"), "output_throughput"));
	double r_on = json_number_value(json_object_get(json_object_get(on, "bench"), "output_throughput"));
	const json_t *sd = json_object_get(on, "spec_decode");
	const json_t *acc = json_object_get(sd, "acceptance_rate");
	json_object_set_new(cmp, "tpot_median_ms", json_pack("{s:f, s:f}", "off", t_off, "on", t_on));
	json_object_set_new(cmp, "tpot_speedup", t_on > 0 ? json_real(t_off / t_on) : json_null());
	json_object_set_new(cmp, "output_throughput", json_pack("{s:f, s:f}", "off", r_off, "on", r_on));
	json_object_set_new(cmp, "throughput_ratio", r_off > 0 ? json_real(r_on / r_off) : json_null());
	json_object_set(cmp, "acceptance_rate", acc ? (json_t *)acc : json_null());
	json_object_set(cmp, "mean_acceptance_length",
			json_object_get(sd, "mean_acceptance_length") ?: json_null());
	const char *keys[][2] = { { "mtp.tpot_speedup", "tpot_speedup" },
				  { "mtp.throughput_ratio", "throughput_ratio" },
				  { "mtp.acceptance", "acceptance_rate" } };
	char v[64];
	for (size_t i = 0; i < 3; i++) {
		const json_t *x = json_object_get(cmp, keys[i][1]);
		snprintf(v, sizeof v, "%.6g", json_number_value(x));
		obs_put(obs, keys[i][0], json_is_number(x) ? v : NULL);
	}
	const json_t *tk = json_object_get(cmp, "tasks");
	snprintf(v, sizeof v, "%.6g", json_number_value(json_object_get(tk, "agreement")));
	obs_put(obs, "eval.agreement", v);
	snprintf(v, sizeof v, "%.6g", json_number_value(json_object_get(tk, "accuracy_delta")));
	obs_put(obs, "eval.accuracy_delta", v);
	return cmp;
}

/* The two runs done, the operator's files back: the figures into rec and
 * obs. */
static int conclude(struct xp *x, const char *mine, const char *other, const char *key,
		    const struct deploy_saved *saved, const json_t *run_other, const json_t *run_mine,
		    json_t *rec, struct obs_set *obs, struct err **err)
{
	const char *dir = x->o->dir;
	bool restored = deploy_saved_same(dir, saved);
	_cleanup_free_ char *env_path = xasprintf("%s/.env", dir);
	size_t now_len = 0;
	_cleanup_free_ char *now = fs_read(env_path, ENV_FILE_CAP, &now_len, NULL);
	bool env_restored = now && now_len == saved->f[0].len && !memcmp(now, saved->f[0].bytes, now_len);
	const char *diff = other_difference(json_object_get(run_other, "args"),
					    json_object_get(run_mine, "args"));
	if (diff)
		return err_set(err, EXIT_RUNTIME, "the two boots of %s differ in more than "
						  "--speculative-config ('%s'): is docker-compose.yml as "
						  "`lobes init` renders it?", role_name(x->r), diff);
	const json_t *off = spec_on(mine) ? run_other : run_mine, *on = spec_on(mine) ? run_mine : run_other;
	json_t *cmp = figures(off, on, obs, err);
	if (!cmp)
		return -1;
	json_t *files = json_array();
	for (size_t i = 0; i < saved->n; i++)
		json_array_append_new(files, json_string(saved->f[i].name));
	json_object_set_new(rec, "experiment",
			    json_pack("{s:s, s:s, s:s, s:s, s:[s, s], s:b, s:b, s:o, s:{s:O, s:O}, s:o}",
				      "knob", "speculative_config", "env_key", key, "operator_value", mine,
				      "trial_value", other, "order", other, mine,
				      "env_restored_byte_for_byte", env_restored,
				      "files_restored_byte_for_byte", restored, "files", files, "runs",
				      "off", off, "on", on, "comparison", cmp));
	if (!restored || !env_restored)
		return err_set(err, EXIT_INTERNAL, "the files of '%s' differ from the operator's after "
						   "the experiment", dir);
	return 0;
}

int xp_spec(struct xp *x, const char *mine, json_t *rec, struct obs_set *obs, struct err **err)
{
	const struct verify_opts *o = x->o;
	const char *other = spec_on(mine) ? "none" : MTP_ON;
	_cleanup_free_ char *key = xasprintf("%s_SPECULATIVE_CONFIG", role_name(x->r));
	for (char *p = key; *p; p++)
		*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
	struct deploy_saved saved;
	if (deploy_knob_trial(o->dir, key, other, &saved, err) < 0)
		return -1;
	json_auto_t *run_other = boot_and_measure(x, other, err);
	json_auto_t *run_mine = NULL;
	/* the operator's files back, byte for byte, and the role booted with them */
	struct err *e2 = NULL;
	int rc = -1;
	if (deploy_saved_put(o->dir, &saved, run_other ? err : &e2) == 0) {
		run_mine = boot_and_measure(x, mine, run_other ? err : &e2);
		if (run_other && run_mine)
			rc = conclude(x, mine, other, key, &saved, run_other, run_mine, rec, obs, err);
	}
	err_free(e2);
	deploy_saved_free(&saved);
	return rc;
}

void xp_spec_text(struct buf *b, const json_t *x)
{
	const json_t *cmp = json_object_get(x, "comparison"), *tk = json_object_get(cmp, "tasks");
	buf_printf(b, "experiment: %s, the operator's %s; files put back byte for byte: %s (.env %s)\n",
		   json_string_value(json_object_get(x, "knob")),
		   json_string_value(json_object_get(x, "operator_value")),
		   json_is_true(json_object_get(x, "files_restored_byte_for_byte")) ? "yes" : "NO",
		   json_is_true(json_object_get(x, "env_restored_byte_for_byte")) ? "yes" : "NO");
	const char *runs[] = { "off", "on" };
	for (size_t i = 0; i < 2; i++) {
		const json_t *ru = json_object_get(json_object_get(x, "runs"), runs[i]);
		const json_t *bn = json_object_get(ru, "bench"), *sd = json_object_get(ru, "spec_decode");
		buf_printf(b, "  run %s: speculative_config %s, ready after %lld ms; bench %lld requests "
			      "(%lld in, %lld out, concurrency 1): TPOT median %.2f ms, TTFT median %.2f "
			      "ms, output %.1f tok/s; %zu answers",
			   runs[i], json_string_value(json_object_get(ru, "speculative_config")),
			   (long long)json_integer_value(json_object_get(ru, "ready_ms")),
			   (long long)json_integer_value(json_object_get(bn, "completed")),
			   (long long)json_integer_value(json_object_get(bn, "input_len")),
			   (long long)json_integer_value(json_object_get(bn, "output_len")),
			   median(ru, "tpot_ms"), median(ru, "ttft_ms"),
			   json_number_value(json_object_get(bn, "output_throughput")),
			   json_array_size(json_object_get(json_object_get(json_object_get(ru, "answers"),
									     "tasks"), "answers")));
		if (json_is_object(sd))
			buf_printf(b, "; spec decode: %.0f drafts, %.0f draft tokens, %.0f accepted",
				   json_number_value(json_object_get(sd, "drafts")),
				   json_number_value(json_object_get(sd, "draft_tokens")),
				   json_number_value(json_object_get(sd, "accepted_tokens")));
		buf_adds(b, "\n");
	}
	buf_printf(b, "  TPOT speedup (off/on) %.3f, output tok/s on/off %.3f, acceptance %s%.3f "
		      "(mean acceptance length %.3f)\n  tasks %lld: exact match off %.3f on %.3f, "
		      "agreement %.3f\n",
		   json_number_value(json_object_get(cmp, "tpot_speedup")),
		   json_number_value(json_object_get(cmp, "throughput_ratio")),
		   json_is_number(json_object_get(cmp, "acceptance_rate")) ? "" : "unknown ",
		   json_number_value(json_object_get(cmp, "acceptance_rate")),
		   json_number_value(json_object_get(cmp, "mean_acceptance_length")),
		   (long long)json_integer_value(json_object_get(tk, "tasks")),
		   json_number_value(json_object_get(tk, "accuracy_a")),
		   json_number_value(json_object_get(tk, "accuracy_b")),
		   json_number_value(json_object_get(tk, "agreement")));
}
