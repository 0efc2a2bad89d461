/*
 * evidence.c — collect observations from the live fleet, route them, and
 * write the evidence record; see evidence.h.
 */
#include <string.h>

#include "../facts/facts.h"
#include "../knowledge/knowledge.h"
#include "../runtime/runtime.h"
#include "../deploy/deploy.h"
#include "../render/render.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/secret.h"
#include "evidence.h"
#include "verify_int.h"
#include "../probe/probe.h"
#include "../triage/triage.h"

/* The value of flag `name` in an argv (--name=V or --name V), or NULL. */
static const char *flag_value(char **argv, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; argv && argv[i]; i++) {
		if (strncmp(argv[i], name, n) != 0)
			continue;
		if (argv[i][n] == '=')
			return argv[i] + n + 1;
		if (argv[i][n] == '\0' && argv[i + 1])
			return argv[i + 1];
	}
	return NULL;
}

/* The first positional argument (the model), skipping a leading "serve". */
static const char *first_positional(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++) {
		if (strcmp(argv[i], "serve") == 0 || strcmp(argv[i], "vllm") == 0)
			continue;
		if (argv[i][0] != '-')
			return argv[i];
		if (!strchr(argv[i], '=') && argv[i + 1] && argv[i + 1][0] != '-')
			i++; /* "--flag value" */
	}
	return NULL;
}

static json_t *strv_json(char **v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* The fleet's HF hub on this host: LOBES_HF_CACHE/hub, with ~ expanded. */
static char *fleet_hub(const char *dir)
{
	struct env_file env = { 0 };
	char *hub = NULL;
	if (deploy_env_read(dir, &env, NULL) > 0) {
		const char *v = env_get(&env, "LOBES_HF_CACHE");
		const char *home = getenv("HOME");
		if (v && v[0] == '~')
			hub = xasprintf("%s%s/hub", home ? home : "", v + 1);
		else if (v && *v)
			hub = xasprintf("%s/hub", v);
	}
	env_file_free(&env);
	return hub;
}

/* The box: its facts and the card they match. */
static void collect_box(json_t *rec, struct obs_set *obs, const struct fleet *fleet, const char *dir)
{
	struct host_facts hf = { 0 };
	struct facts_opts fo;
	facts_opts_from_env(&fo);
	host_facts_gather(&hf, &fo, NULL);
	struct knowledge k = { 0 };
	const char *card = fleet->card;
	_cleanup_free_ char *why = NULL;
	_cleanup_free_ char *opdir = xasprintf("%s/profiles", dir);
	if (knowledge_load(&k, opdir, NULL) == 0) {
		const struct card *c = card_match(&k, &hf, &why);
		if (c)
			card = c->name;
		else if (hf.gpu_name.valid || hf.compute_cap.valid)
			card = "unknown";
	}
	json_object_set_new(rec, "box", json_pack("{s:s, s:s?, s:o}", "card", card, "card_why", why,
						  "facts", host_facts_json(&hf)));
	obs_put(obs, "box.card", card);
	knowledge_free(&k);
	host_facts_free(&hf);

}

/* The container's VLLM_* and HF_* env (masked) as JSON; VLLM_* as
 * observations. */
static json_t *collect_env(const struct engine_container *c, struct obs_set *obs)
{
	/* Every secret of the container's env is remembered first, so its value
	 * is hidden wherever it shows up (argv, log); none is stored raw. */
	for (size_t i = 0; c->env && c->env[i]; i++) {
		const char *eq = strchr(c->env[i], '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xasprintf("%.*s", (int)(eq - c->env[i]), c->env[i]);
		secret_remember_named(name, eq + 1);
	}
	json_t *env = json_object();
	for (size_t i = 0; c->env && c->env[i]; i++) {
		const char *eq = strchr(c->env[i], '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xasprintf("%.*s", (int)(eq - c->env[i]), c->env[i]);
		if (!str_starts_with(name, "VLLM_") && !str_starts_with(name, "HF_"))
			continue;
		_cleanup_free_ char *value = secret_name(name) ? xstrdup(SECRET_MASK)
							       : secret_mask_text(eq + 1);
		json_object_set_new(env, name, json_string(value));
		if (str_starts_with(name, "VLLM_")) {
			_cleanup_free_ char *key = xasprintf("env.%s", name);
			obs_put(obs, key, value);
		}
	}
	return env;
}

/* The boot log classified by the signatures (log.<id> observations, the
 * matched lines), and vLLM's version as the log says it, else as the
 * image is recorded (*version, caller frees; NULL when neither says). */
static int collect_log(json_t *rec, struct obs_set *obs, struct engine *eng,
		       const struct engine_container *c, const char *dir, char **version,
		       struct err **err)
{
	char *log = NULL;
	struct engine_log_opts lo = { .tail = -1, .since = 0, .cap = 64u << 20 };
	if (engine_logs(eng, c->id, &lo, &log, err) < 0)
		return err_wrap(err, "could not verify: read the boot log of '%s'", c->name);
	struct sigset set = { 0 };
	if (sigset_load(&set, dir, err) < 0) {
		free(log);
		return -1;
	}
	struct triage *t = triage_new(&set, TRIAGE_KEEP_ALL);
	triage_feed(t, log, strlen(log));
	triage_finish(t);
	json_t *lines = json_array();
	size_t nm;
	const struct triage_match *ms = triage_matches(t, &nm);
	for (size_t i = 0; i < nm; i++)
		json_array_append_new(lines, json_pack("{s:I, s:s, s:s, s:s}", "line",
						       (json_int_t)ms[i].line_no, "signature",
						       ms[i].sig->id, "severity",
						       sig_severity_name(ms[i].sig->severity), "text",
						       ms[i].text));
	for (size_t i = 0; i < set.n; i++) {
		_cleanup_free_ char *key = xasprintf("log.%s", set.sigs[i].id);
		obs_put(obs, key, triage_count(t, i) ? "present" : "absent");
	}
	json_object_set_new(rec, "boot_log", json_pack("{s:I, s:o}", "lines", (json_int_t)triage_lines(t),
						       "matches", lines));
	triage_free(t);
	sigset_free(&set);
	/* vLLM's version as its own log says it; else the pinned one (declared). */
	const char *vl = strstr(log, "vLLM API server version ");
	const char *vsrc = "boot log";
	if (vl) {
		vl += strlen("vLLM API server version ");
		*version = xasprintf("%.*s", (int)strcspn(vl, " \r\n"), vl);
	} else {
		struct knowledge kk = { 0 };
		const struct vimage *vi = NULL;
		if (knowledge_load(&kk, NULL, NULL) == 0 && (vi = knowledge_image(&kk, c->image)))
			*version = xstrdup(vi->vllm_version);
		knowledge_free(&kk);
		vsrc = *version ? "the version recorded for the container's image (declared; the log does "
				 "not say)"
			       : "unknown: the log does not say and the image is not recorded";
	}
	free(log);
	json_object_set_new(rec, "vllm_version", json_pack("{s:s?, s:s}", "value", *version, "source", vsrc));
	return 0;
}

/* The checkpoint's facts, from the fleet's HF cache. */
static void collect_checkpoint(json_t *rec, struct obs_set *obs, const char *dir, const char *model)
{
	_cleanup_free_ char *hub = fleet_hub(dir);
	struct checkpoint_facts ck;
	checkpoint_facts_read_in(hub, model, &ck, NULL);
	obs_put(obs, "checkpoint.kv_scales", ck.kv_scales == TRI_TRUE	 ? "present"
					     : ck.kv_scales == TRI_FALSE ? "absent"
									 : NULL);
	json_t *ckj = checkpoint_facts_json(&ck);
	json_object_set_new(ckj, "model", json_string(model ? model : ""));
	json_object_set_new(rec, "checkpoint", ckj);
	checkpoint_facts_free(&ck);
}

json_t *verify_collect(const struct question *q, const struct verify_opts *o, struct obs_set *obs,
		       struct err **err)
{
	const char *rname = o->role ? o->role : q->role;
	int role = role_from_name(rname);
	if (role < 0) {
		err_set(err, EXIT_CONFIG, "question '%s' names unknown role '%s'", q->id, rname);
		return NULL;
	}
	struct fleet fleet;
	if (fleet_load(&fleet, o->dir, err) < 0)
		return NULL;
	_cleanup_free_ char *version = NULL;
	json_t *rec = json_object();
	char date[32];
	struct tm tm;
	gmtime_r(&o->now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(rec, "question", json_pack("{s:s, s:s, s:s, s:s?, s:o}", "id", q->id, "title",
						       q->title, "file", q->file, "thresholds",
						       question_thresholds(q), "evidence",
						       question_evidence_json(q)));
	json_object_set_new(rec, "date", json_string(date));
	json_object_set_new(rec, "deploy_dir", json_string(o->dir));
	json_object_set_new(rec, "profile", json_string(fleet.profile));
	json_object_set_new(rec, "role", json_string(rname));
	collect_box(rec, obs, &fleet, o->dir);

	/* The container. */
	struct engine eng = { 0 };
	struct engine_container_list l = { 0 };
	if (engine_open(&eng, err) < 0 || engine_list_project(&eng, fleet.project, &l, err) < 0) {
		err_wrap(err, "could not verify");
		goto fail;
	}
	const struct engine_container *c = NULL;
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.c[i].service, rname) == 0)
			c = &l.c[i];
	if (!c) {
		err_set(err, EXIT_RUNTIME,
			"could not verify: role '%s' has no container in project '%s' (bring the fleet up "
			"with `lobes serve --apply`)", rname, fleet.project);
		goto fail;
	}
	char restarts[16];
	snprintf(restarts, sizeof(restarts), "%d", c->restart_count);
	obs_put(obs, "container.state", c->state);
	obs_put(obs, "container.restarts", restarts);
	json_t *env = collect_env(c, obs);
	const char *kv = flag_value(c->args, "--kv-cache-dtype");
	obs_put(obs, "args.kv_cache_dtype", kv ? kv : "auto");
	const char *sc = flag_value(c->args, "--speculative-config");
	obs_put(obs, "args.speculative_config", sc ? sc : "none");
	const char *model = first_positional(c->args);
	if (!model)
		model = fleet.roles[role].model;
	json_object_set_new(rec, "container",
			    json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:o, s:o, s:o}", "name", c->name,
				      "id", c->id, "state", c->state, "restarts", c->restart_count,
				      "image", c->image, "image_id", c->image_id, "entrypoint",
				      strv_json(c->entrypoint), "args", strv_json(c->args), "env", env));
	/* The image. */
	struct engine_image im = { 0 };
	if (engine_image_inspect(&eng, c->image_id, &im, NULL) == 0)
		json_object_set_new(rec, "image", json_pack("{s:s, s:o}", "id", im.id, "repo_digests",
							    strv_json(im.repo_digests)));
	else
		json_object_set_new(rec, "image", json_pack("{s:s}", "id", c->image_id));
	engine_image_free(&im);
	if (collect_log(rec, obs, &eng, c, o->dir, &version, err) < 0)
		goto fail;
	obs_put(obs, "image.vllm_version", version);
	collect_checkpoint(rec, obs, o->dir, model);
	/* The probe. */
	if (o->probe && q->probe && fleet.roles[role].feasible) {
		struct probe pr;
		probe_init(&pr, (enum role_id)role, fleet.roles[role].port, NULL);
		if (probe_run(&pr, 1, o->probe_timeout_s, NULL) == 0) {
			obs_put(obs, "probe.status", probe_status_name(pr.status));
			json_object_set_new(rec, "probe", probe_json(&pr));
		}
		probe_free(&pr);
	}
	engine_container_list_free(&l);
	engine_close(&eng);
	fleet_free(&fleet);
	json_t *oj = json_object();
	for (size_t i = 0; i < obs->n; i++)
		if (!str_starts_with(obs->keys[i], "log.") || strcmp(obs->values[i], "present") == 0)
			json_object_set_new(oj, obs->keys[i],
					    obs->values[i] ? json_string(obs->values[i]) : json_null());
	json_object_set_new(rec, "observations", oj);
	secret_mask_json(rec);
	return rec;
fail:
	engine_container_list_free(&l);
	engine_close(&eng);
	fleet_free(&fleet);
	json_decref(rec);
	return NULL;
}

const struct q_route *verify_decide(const struct question *q, const struct obs_set *obs, json_t *record)
{
	char *detail = NULL;
	const struct q_route *r = question_route(q, obs, &detail);
	/* thresholds: "declared" (our judgement), "measured", or null (not said) */
	const char *th = question_thresholds(q);
	if (r)
		json_object_set_new(record, "decision", json_pack("{s:s, s:s, s:s, s:s?}", "route", r->id,
								  "answer", r->answer, "action", r->action,
								  "thresholds", th));
	else
		json_object_set_new(record, "decision", json_pack("{s:n, s:s, s:s, s:s?}", "route", "answer",
								  "undecided", "action", q->undecided,
								  "thresholds", th));
	json_object_set_new(record, "routing", json_string(detail));
	free(detail);
	return r;
}

char *evidence_text(const json_t *r)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	const json_t *q = json_object_get(r, "question"), *box = json_object_get(r, "box");
	const json_t *c = json_object_get(r, "container"), *d = json_object_get(r, "decision");
	const json_t *facts = json_object_get(box, "facts");
	buf_printf(&b, "lobes verify: %s\nquestion: %s\ndate: %s\n",
		   json_string_value(json_object_get(q, "id")), json_string_value(json_object_get(q, "title")),
		   json_string_value(json_object_get(r, "date")));
	buf_printf(&b, "box: card %s", json_string_value(json_object_get(box, "card")));
	const char *fk[] = { "gpu_name", "compute_cap", "mem_total", "memory_model", "hostname" };
	for (size_t i = 0; i < ARRAY_SIZE(fk); i++) {
		const char *v = json_string_value(json_object_get(json_object_get(facts, fk[i]), "value"));
		buf_printf(&b, ", %s %s", fk[i], v ? v : "unknown");
	}
	buf_printf(&b, "\nprofile: %s\nrole: %s\n", json_string_value(json_object_get(r, "profile")),
		   json_string_value(json_object_get(r, "role")));
	buf_printf(&b, "container: %s (%s, restarts %lld)\n", json_string_value(json_object_get(c, "name")),
		   json_string_value(json_object_get(c, "state")),
		   (long long)json_integer_value(json_object_get(c, "restarts")));
	const json_t *im = json_object_get(r, "image");
	buf_printf(&b, "image: %s (id %s)", json_string_value(json_object_get(c, "image")),
		   json_string_value(json_object_get(im, "id")));
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(im, "repo_digests"), i, x)
		buf_printf(&b, ", digest %s", json_string_value(x));
	const json_t *vv = json_object_get(r, "vllm_version");
	buf_printf(&b, "\nvLLM: %s (from %s)\n", json_string_value(json_object_get(vv, "value")),
		   json_string_value(json_object_get(vv, "source")));
	buf_adds(&b, "effective args:");
	json_array_foreach(json_object_get(c, "args"), i, x)
		buf_printf(&b, " %s", json_string_value(x));
	buf_adds(&b, "\nenv (VLLM_*, HF_*):");
	const char *k;
	json_object_foreach(json_object_get(c, "env"), k, x)
		buf_printf(&b, " %s=%s", k, json_string_value(x));
	const json_t *ck = json_object_get(r, "checkpoint");
	buf_printf(&b, "\ncheckpoint: %s: kv scales %s (%s)\n", json_string_value(json_object_get(ck, "model")),
		   json_string_value(json_object_get(ck, "kv_scales")),
		   json_string_value(json_object_get(ck, "kv_scales_why")));
	buf_adds(&b, "boot log lines (by signature):\n");
	json_array_foreach(json_object_get(json_object_get(r, "boot_log"), "matches"), i, x)
		buf_printf(&b, "  L%lld [%s] %s\n", (long long)json_integer_value(json_object_get(x, "line")),
			   json_string_value(json_object_get(x, "signature")),
			   json_string_value(json_object_get(x, "text")));
	const json_t *pr = json_object_get(r, "probe");
	if (pr)
		buf_printf(&b, "probe: %s %s (%s)\n", json_string_value(json_object_get(pr, "probe")),
			   json_string_value(json_object_get(pr, "status")),
			   json_string_value(json_object_get(pr, "summary")));
	const json_t *x2 = json_object_get(r, "experiment");
	if (x2 && !strcmp(json_string_value(json_object_get(x2, "knob")), "speculative_config")) {
		xp_spec_text(&b, x2);
	} else if (x2) {
		const json_t *cmp = json_object_get(x2, "comparison");
		const json_t *lpf = json_object_get(cmp, "logprobs"), *tk = json_object_get(cmp, "tasks");
		buf_printf(&b, "experiment: %s, the operator's %s; .env put back byte for byte: %s\n",
			   json_string_value(json_object_get(x2, "knob")),
			   json_string_value(json_object_get(x2, "operator_value")),
			   json_is_true(json_object_get(x2, "env_restored_byte_for_byte")) ? "yes" : "NO");
		const char *runs[] = { "auto", "fp8" };
		for (size_t ri = 0; ri < 2; ri++) {
			const json_t *ru = json_object_get(json_object_get(x2, "runs"), runs[ri]);
			buf_printf(&b, "  run %s: %s, ready after %lld ms, %zu answers\n", runs[ri],
				   json_string_value(json_object_get(json_object_get(ru, "side"), "label")),
				   (long long)json_integer_value(json_object_get(ru, "ready_ms")),
				   json_array_size(json_object_get(ru, "answers")));
		}
		buf_printf(&b, "  KLD(auto||fp8) mean %.6f p99 %.6f (%s)\n  same top %.4f, |dlogp| max %.6f, "
			       "perplexity auto %.4f fp8 %.4f ratio %.4f\n  tasks %lld: exact match auto "
			       "%.3f fp8 %.3f, agreement %.3f\n",
			   json_number_value(json_object_get(lpf, "kld_mean")),
			   json_number_value(json_object_get(lpf, "kld_p99")),
			   json_string_value(json_object_get(lpf, "kld_note")),
			   json_number_value(json_object_get(lpf, "same_top")),
			   json_number_value(json_object_get(lpf, "dlogp_max")),
			   json_number_value(json_object_get(lpf, "ppl_a")),
			   json_number_value(json_object_get(lpf, "ppl_b")),
			   json_number_value(json_object_get(lpf, "ppl_ratio")),
			   (long long)json_integer_value(json_object_get(tk, "tasks")),
			   json_number_value(json_object_get(tk, "accuracy_a")),
			   json_number_value(json_object_get(tk, "accuracy_b")),
			   json_number_value(json_object_get(tk, "agreement")));
	}
	buf_adds(&b, "observations:\n");
	json_object_foreach(json_object_get(r, "observations"), k, x)
		buf_printf(&b, "  %s = %s\n", k, json_is_null(x) ? "unknown" : json_string_value(x));
	const char *route = json_string_value(json_object_get(d, "route"));
	const char *th = json_string_value(json_object_get(d, "thresholds"));
	buf_printf(&b, "decision: %s — %s\naction: %s\n%s%s%srouting:\n%s", route ? route : "undecided",
		   json_string_value(json_object_get(d, "answer")),
		   json_string_value(json_object_get(d, "action")), th ? "thresholds: " : "",
		   th ? th : "", th ? (strcmp(th, "declared") ? "\n" : " (judgement, not measured)\n") : "",
		   json_string_value(json_object_get(r, "routing")));
	return buf_take(&b);
}

int evidence_write(const char *dir, const json_t *record, char **txt_path, char **json_path,
		   struct err **err)
{
	_cleanup_free_ char *ed = xasprintf("%s/evidence", dir);
	if (fs_mkdirs(ed, 0700, err) < 0)
		return -1;
	/* what is written went through the one masking rule, as a copy */
	json_auto_t *masked = json_deep_copy(record);
	secret_mask_json(masked);
	record = masked;
	const char *date = json_string_value(json_object_get(record, "date"));
	const char *qid = json_string_value(json_object_get(json_object_get(record, "question"), "id"));
	const char *card = json_string_value(json_object_get(json_object_get(record, "box"), "card"));
	_cleanup_free_ char *base = NULL;
	for (int n = 1;; n++) {
		free(base);
		base = n == 1 ? xasprintf("%s/%.10s-%s-%s", ed, date, qid, card)
			      : xasprintf("%s/%.10s-%s-%s-%d", ed, date, qid, card, n);
		_cleanup_free_ char *probe = xasprintf("%s.txt", base);
		if (!fs_exists(probe))
			break;
	}
	_cleanup_free_ char *text = evidence_text(record);
	char *js = json_dumps(record, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	_cleanup_free_ char *jsn = xasprintf("%s\n", js);
	free(js);
	*txt_path = xasprintf("%s.txt", base);
	*json_path = xasprintf("%s.json", base);
	if (fs_write_atomic(*json_path, jsn, strlen(jsn), 0600, err) < 0 ||
	    fs_write_atomic(*txt_path, text, strlen(text), 0600, err) < 0)
		return -1;
	return 0;
}
