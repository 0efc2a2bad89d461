/*
 * eval.c — `lobes eval compare A B`: do two servers (two settings of one
 * model: fp8 KV against auto, MTP on and off, two quantisations) answer
 * alike?
 *
 * 1. Distributions: the reference text (data/evals/reference.txt) is sent to
 *    each side once as a completion with prompt_logprobs k and max_tokens 1;
 *    its token ids come from the side's /tokenize (vLLM serves it at the
 *    root path, so this needs an engine's port, not the gateway). kld.c
 *    turns the two arrays into the figures.
 * 2. Answers: every task of the set (data/evals/NAME.json) is asked of each
 *    side as a chat at temperature 0 (greedy), thinking off, max_tokens 16;
 *    an answer is trimmed of spaces, quotes and a final full stop and must
 *    equal the task's answer exactly. Accuracy of each, and the agreement
 *    rate (both sides gave the same trimmed answer).
 * One request at a time: the comparison is about what comes back, not how
 * fast, and an engine under test should not also be under load. A side is
 * collected whole (eval_collect) before the other, so two settings that
 * cannot run at once (one engine rebooted between them) compare the same way.
 */
#include <ctype.h>
#include <string.h>

#include "../knowledge/knowledge.h"
#include "../util/cleanup.h"
#include "measure.h"
#include "measure_int.h"

#define MAX_DISAGREEMENTS 10
#define ANSWER_TOKENS 16

const char *measure_data(const char *path, size_t *len)
{
	for (size_t i = 0; i < embedded_files_count; i++)
		if (!strcmp(embedded_files[i].path, path)) {
			if (len)
				*len = embedded_files[i].len;
			return embedded_files[i].data;
		}
	return NULL;
}

static json_t *side_json(const struct eval_side *s)
{
	return json_pack("{s:s, s:s, s:s}", "label", s->label, "url", s->origin, "model", s->model);
}

/* A side's answer to body at path, status 200 and a JSON object, or NULL. */
static json_t *ask(const struct eval_side *s, const char *path, json_t *body, double timeout_s,
		   struct err **err)
{
	json_t *out = NULL;
	long status = measure_post_json(s->origin, path, s->bearer, body, timeout_s, &out, err);
	json_decref(body);
	if (status < 0)
		return (void)err_wrap(err, "%s", s->label), NULL;
	if (status != 200) {
		const char *msg = json_string_value(json_object_get(json_object_get(out, "error"), "message"));
		err_set(err, EXIT_RUNTIME, "%s: '%s%s' answered %ld%s%s", s->label, s->origin, path,
			status, msg ? ": " : "", msg ? msg : "");
		json_decref(out);
		return NULL;
	}
	return out;
}

/* The side's token ids of text and its prompt_logprobs (both new). */
static int side_logprobs(const struct eval_side *s, const char *text, int k, double timeout_s,
			 json_t **ids, json_t **plp, struct err **err)
{
	json_auto_t *tok = ask(s, "/tokenize", json_pack("{s:s, s:s}", "model", s->model, "prompt", text),
			       timeout_s, err);
	if (!tok)
		return -1;
	if (!json_is_array(json_object_get(tok, "tokens")))
		return err_set(err, EXIT_RUNTIME, "%s: /tokenize answered without tokens", s->label);
	json_auto_t *c = ask(s, "/v1/completions",
			     json_pack("{s:s, s:s, s:i, s:f, s:i}", "model", s->model, "prompt", text,
				       "max_tokens", 1, "temperature", 0.0, "prompt_logprobs", k),
			     timeout_s, err);
	if (!c)
		return -1;
	json_t *p = json_object_get(json_array_get(json_object_get(c, "choices"), 0), "prompt_logprobs");
	if (!json_is_array(p))
		return err_set(err, EXIT_RUNTIME, "%s: the completion has no prompt_logprobs (does the "
						  "server support them?)", s->label);
	*ids = json_incref(json_object_get(tok, "tokens"));
	*plp = json_incref(p);
	return 0;
}

/* Trim an answer: spaces, surrounding quotes or backticks, a final full stop. */
static char *trim_answer(const char *s)
{
	while (isspace((unsigned char)*s) || *s == '"' || *s == '\'' || *s == '`' || *s == '*')
		s++;
	char *t = xstrdup(s);
	size_t n = strlen(t);
	while (n && (isspace((unsigned char)t[n - 1]) || strchr("\"'`*.", t[n - 1])))
		t[--n] = '\0';
	return t;
}

/* The side's greedy answer to prompt (trimmed), or NULL with err. */
static char *answer(const struct eval_side *s, const char *prompt, double timeout_s, struct err **err)
{
	json_auto_t *c = ask(s, "/v1/chat/completions",
			     json_pack("{s:s, s:[{s:s, s:s}], s:i, s:f, s:{s:b}}", "model", s->model,
				       "messages", "role", "user", "content", prompt, "max_tokens",
				       ANSWER_TOKENS, "temperature", 0.0, "chat_template_kwargs",
				       "enable_thinking", 0),
			     timeout_s, err);
	if (!c)
		return NULL;
	json_t *msg = json_object_get(json_array_get(json_object_get(c, "choices"), 0), "message");
	const char *content = json_string_value(json_object_get(msg, "content"));
	return trim_answer(content ? content : "");
}

/* The task set NAME from data/evals/NAME.json. */
static json_t *load_tasks(const char *name, struct err **err)
{
	_cleanup_free_ char *path = xasprintf("data/evals/%s.json", name);
	size_t len;
	const char *data = measure_data(path, &len);
	if (!data) {
		err_set(err, EXIT_CONFIG, "no task set '%s' (no '%s' in the binary)", name, path);
		return NULL;
	}
	json_error_t je;
	json_t *set = json_loadb(data, len, 0, &je);
	if (!set || !json_is_array(json_object_get(set, "tasks"))) {
		err_set(err, EXIT_CONFIG, "'%s':%d:%d: %s", path, je.line, je.column,
			set ? "expected an object with a tasks list" : je.text);
		json_decref(set);
		return NULL;
	}
	return set;
}

/* Ask side s every task of the set: {set, synthetic, seed, answers: [{id,
 * answer, want}]}. */
static json_t *ask_tasks(const struct eval_side *s, const struct eval_opts *o, struct err **err)
{
	const char *name = o->tasks ? o->tasks : "synthetic";
	json_auto_t *set = load_tasks(name, err);
	if (!set)
		return NULL;
	json_t *tasks = json_object_get(set, "tasks"), *task, *answers = json_array();
	size_t i;
	json_array_foreach(tasks, i, task) {
		if (o->max_tasks > 0 && (long)i >= o->max_tasks)
			break;
		const char *prompt = json_string_value(json_object_get(task, "prompt"));
		const char *want = json_string_value(json_object_get(task, "answer"));
		if (!prompt || !want) {
			json_decref(answers);
			err_set(err, EXIT_CONFIG, "task set '%s': task %zu needs a prompt and an answer",
				name, i + 1);
			return NULL;
		}
		_cleanup_free_ char *got = answer(s, prompt, o->timeout_s, err);
		if (!got) {
			json_decref(answers);
			return NULL;
		}
		json_array_append_new(answers, json_pack("{s:O, s:s, s:s}", "id", json_object_get(task, "id"),
							 "answer", got, "want", want));
	}
	json_t *syn = json_object_get(set, "synthetic"), *seed = json_object_get(set, "seed");
	return json_pack("{s:s, s:O, s:O, s:o}", "set", name, "synthetic", syn ? syn : json_false(),
			 "seed", seed ? seed : json_null(), "answers", answers);
}

json_t *eval_collect(const struct eval_side *s, const struct eval_opts *o, struct err **err)
{
	const char *text = o->reference;
	if (!text && !(text = measure_data("data/evals/reference.txt", NULL))) {
		err_set(err, EXIT_INTERNAL, "'data/evals/reference.txt' is not in the binary");
		return NULL;
	}
	json_t *ids = NULL, *plp = NULL;
	if (o->answers_only) {
		json_t *tasks = ask_tasks(s, o, err);
		return tasks ? json_pack("{s:o, s:o}", "side", side_json(s), "tasks", tasks) : NULL;
	}
	if (side_logprobs(s, text, o->top_k, o->timeout_s, &ids, &plp, err) < 0)
		return NULL;
	json_t *tasks = ask_tasks(s, o, err);
	if (!tasks) {
		json_decref(ids);
		json_decref(plp);
		return NULL;
	}
	return json_pack("{s:o, s:s, s:i, s:o, s:o, s:o}", "side", side_json(s), "reference",
			 o->reference ? "(given)" : "data/evals/reference.txt", "top_k", o->top_k,
			 "token_ids", ids, "prompt_logprobs", plp, "tasks", tasks);
}

/* Exact match and agreement of two runs' answers to the same tasks. */
static json_t *compare_answers(const json_t *ta, const json_t *tb, struct err **err)
{
	const json_t *aa = json_object_get(ta, "answers"), *ab = json_object_get(tb, "answers");
	size_t n = json_array_size(aa), right_a = 0, right_b = 0, agree = 0;
	if (n != json_array_size(ab) || !json_equal(json_object_get(ta, "set"), json_object_get(tb, "set"))) {
		err_set(err, EXIT_INTERNAL, "the two runs answered different task sets");
		return NULL;
	}
	json_t *dis = json_array();
	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_array_get(aa, i), *y = json_array_get(ab, i);
		const char *ra = json_string_value(json_object_get(x, "answer"));
		const char *rb = json_string_value(json_object_get(y, "answer"));
		const char *want = json_string_value(json_object_get(x, "want"));
		right_a += !strcmp(ra, want);
		right_b += !strcmp(rb, want);
		if (!strcmp(ra, rb))
			agree++;
		else if (json_array_size(dis) < MAX_DISAGREEMENTS)
			json_array_append_new(dis, json_pack("{s:O, s:s, s:s, s:s}", "id",
							     json_object_get(x, "id"), "answer", want,
							     "a", ra, "b", rb));
	}
	double d = n ? (double)n : 1;
	return json_pack("{s:O, s:O, s:O, s:i, s:f, s:f, s:f, s:f, s:o}", "set",
			 json_object_get(ta, "set"), "synthetic", json_object_get(ta, "synthetic"),
			 "seed", json_object_get(ta, "seed"), "tasks", (json_int_t)n, "accuracy_a",
			 right_a / d, "accuracy_b", right_b / d, "accuracy_delta",
			 (double)right_b / d - (double)right_a / d, "agreement", agree / d,
			 "disagreements", dis);
}

json_t *eval_compare_runs(const json_t *ra, const json_t *rb, struct err **err)
{
	const json_t *sa = json_object_get(ra, "side"), *sb = json_object_get(rb, "side");
	const json_t *ids_a = json_object_get(ra, "token_ids"), *ids_b = json_object_get(rb, "token_ids");
	if (!json_equal(ids_a, ids_b)) {
		err_set(err, EXIT_RUNTIME, "%s and %s tokenize the reference text differently (%zu and "
					   "%zu tokens): compare two settings of one model",
			json_string_value(json_object_get(sa, "label")),
			json_string_value(json_object_get(sb, "label")), json_array_size(ids_a),
			json_array_size(ids_b));
		return NULL;
	}
	json_t *fig = eval_logprob_figures(json_object_get(ra, "prompt_logprobs"),
					   json_object_get(rb, "prompt_logprobs"), ids_a, err);
	if (!fig)
		return NULL;
	json_object_set(fig, "top_k", json_object_get(ra, "top_k"));
	json_object_set(fig, "reference", json_object_get(ra, "reference"));
	json_t *tasks = compare_answers(json_object_get(ra, "tasks"), json_object_get(rb, "tasks"), err);
	if (!tasks) {
		json_decref(fig);
		return NULL;
	}
	return json_pack("{s:O, s:O, s:o, s:o}", "a", sa, "b", sb, "logprobs", fig, "tasks", tasks);
}

json_t *eval_compare_answers(const json_t *ra, const json_t *rb, struct err **err)
{
	json_t *tasks = compare_answers(json_object_get(ra, "tasks"), json_object_get(rb, "tasks"), err);
	if (!tasks)
		return NULL;
	return json_pack("{s:O, s:O, s:o}", "a", json_object_get(ra, "side"), "b",
			 json_object_get(rb, "side"), "tasks", tasks);
}

json_t *eval_compare(const struct eval_side *a, const struct eval_side *b,
		     const struct eval_opts *o, struct err **err)
{
	json_auto_t *ra = eval_collect(a, o, err);
	if (!ra)
		return NULL;
	json_auto_t *rb = eval_collect(b, o, err);
	if (!rb)
		return NULL;
	return eval_compare_runs(ra, rb, err);
}
