/*
 * probe_judge.c — the pure half of the correctness probes (see probe.h): a
 * complete response in, a verdict out (pass, or a FAIL with its reason and
 * evidence), then the profile's known-failure mapping. No I/O.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "probe_int.h"

#define SNIPPET 160 /* bytes of an unexpected body quoted in a reason */

/* --- text helpers ---------------------------------------------------------- */

/* A one-line, printable copy of at most max bytes of s (n bytes): control
 * characters become spaces; with ascii_only, bytes >= 0x80 become '?' (for
 * bodies that may not be UTF-8). Cut text ends in "...". Caller frees. */
static char *oneline(const char *s, size_t n, size_t max, bool ascii_only)
{
	size_t keep = n > max ? max : n;
	if (!ascii_only)
		while (keep < n && keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
			keep--; /* never split a UTF-8 sequence */
	char *o = xcalloc(keep + 4, 1);
	for (size_t i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)s[i];
		o[i] = (char)(c < 0x20 || c == 0x7f ? ' ' : (ascii_only && c >= 0x80) ? '?' : c);
	}
	if (keep < n)
		memcpy(o + keep, "...", 3);
	return o;
}

static bool icontains(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return false;
}

/* True when answer, less surrounding whitespace and punctuation, is word
 * (case-insensitive). */
static bool is_exactly(const char *answer, const char *word)
{
	const char *b = answer, *e = answer + strlen(answer);
	while (b < e && (isspace((unsigned char)*b) || ispunct((unsigned char)*b)))
		b++;
	while (e > b && (isspace((unsigned char)e[-1]) || ispunct((unsigned char)e[-1])))
		e--;
	return (size_t)(e - b) == strlen(word) && strncasecmp(b, word, strlen(word)) == 0;
}

/* --- verdicts -------------------------------------------------------------- */

/* Apply the profile's known failure to a finished verdict. */
static void apply_known(struct probe *p)
{
	if (!p->known)
		return;
	const char *ref = p->known->ref ? p->known->ref : "(no ref)";
	if (p->status == PROBE_PASS) {
		p->status = PROBE_KNOWN_FAILURE_PASSED;
		free(p->notice);
		p->notice = xasprintf("known failure %s now passes: remove the entry "
				      "(role %s, probe %s) from the profile's known_failures",
				      ref, role_name(p->role), probe_kind_id(p->role, p->kind));
	} else if (p->status == PROBE_FAIL && p->failure == PF_WRONG) {
		p->status = PROBE_KNOWN_FAILURE;
	}
}

void probe_failf(struct probe *p, enum probe_failure f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	free(p->reason);
	p->reason = msg;
	p->status = PROBE_FAIL;
	p->failure = f;
	apply_known(p);
}

void probe_fail(struct probe *p, enum probe_failure f, const char *reason)
{
	probe_failf(p, f, "%s", reason);
}

static void pass(struct probe *p)
{
	free(p->reason);
	p->reason = NULL;
	p->status = PROBE_PASS;
	p->failure = PF_NONE;
	apply_known(p);
}

static void set_summary(struct probe *p, char *s)
{
	free(p->summary);
	p->summary = s;
}

/* The message of an error body: vLLM's error.message, FastAPI's detail, or
 * the start of the body itself. Caller frees. */
static char *error_message(const char *body, size_t len)
{
	json_auto_t *j = json_loadb(body, len, 0, NULL);
	const json_t *e = json_object_get(j, "error");
	const char *m = json_string_value(json_object_get(e, "message"));
	if (!m)
		m = json_string_value(e);
	if (!m)
		m = json_string_value(json_object_get(j, "detail"));
	if (m)
		return oneline(m, strlen(m), SNIPPET, false);
	if (!len)
		return xstrdup("empty body");
	return oneline(body, len, SNIPPET, true);
}

/* The message's reasoning: `reasoning` (vLLM at the recorded versions), else
 * `reasoning_content` (older vLLM). */
static const json_t *reasoning_of(const json_t *msg)
{
	const json_t *r = json_object_get(msg, "reasoning");
	return json_is_string(r) ? r : json_object_get(msg, "reasoning_content");
}

/* choices[0] and its message, or NULL with a malformed FAIL set. */
static const json_t *chat_message(struct probe *p, const json_t *j, const json_t **choice)
{
	*choice = json_array_get(json_object_get(j, "choices"), 0);
	const json_t *msg = json_object_get(*choice, "message");
	const json_t *content = json_object_get(msg, "content");
	if (!json_is_object(msg) || !(json_is_string(content) || json_is_null(content) || !content)) {
		probe_failf(p, PF_MALFORMED, "malformed body: no choices[0].message with a content "
			    "string or null");
		return NULL;
	}
	const json_t *fin = json_object_get(*choice, "finish_reason");
	if (json_is_string(fin))
		json_object_set_new(p->evidence, "finish_reason", json_string(json_string_value(fin)));
	return msg;
}

/* True when s is NULL or only whitespace. */
static bool blank(const char *s)
{
	for (; s && *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

/* tool-call: one call of get_weather with {"city": "Paris"}, finish_reason
 * tool_calls, nothing in content. */
static void judge_tool(struct probe *p, const json_t *j)
{
	const json_t *choice, *msg = chat_message(p, j, &choice);
	if (!msg)
		return;
	const char *content = json_string_value(json_object_get(msg, "content"));
	const char *fin = json_string_value(json_object_get(choice, "finish_reason"));
	const json_t *calls = json_object_get(msg, "tool_calls");
	const json_t *fn = json_object_get(json_array_get(calls, 0), "function");
	const char *name = json_string_value(json_object_get(fn, "name"));
	const char *args = json_string_value(json_object_get(fn, "arguments"));
	_cleanup_free_ char *shown = oneline(content ? content : "", content ? strlen(content) : 0,
					     80, false);
	json_object_set_new(p->evidence, "content", content ? json_string(content) : json_null());
	if (json_is_array(calls))
		json_object_set(p->evidence, "tool_calls", (json_t *)calls);
	if (!json_array_size(calls)) {
		set_summary(p, xasprintf("no tool call, content '%s'", shown));
		probe_failf(p, PF_WRONG, "no tool call (finish_reason '%s', content '%s')",
			    fin ? fin : "none", shown);
		return;
	}
	_cleanup_free_ char *args_shown = oneline(args ? args : "", args ? strlen(args) : 0, 80, false);
	set_summary(p, xasprintf("%s(%s), finish_reason %s", name ? name : "?", args_shown,
				 fin ? fin : "none"));
	json_auto_t *a = args ? json_loads(args, 0, NULL) : NULL;
	const char *city = json_string_value(json_object_get(a, TOOL_ARG));
	if (json_array_size(calls) != 1)
		probe_failf(p, PF_WRONG, "%zu tool calls, expected one", json_array_size(calls));
	else if (!name || strcmp(name, TOOL_NAME))
		probe_failf(p, PF_WRONG, "called '%s', not '%s'", name ? name : "(no name)", TOOL_NAME);
	else if (!json_is_object(a))
		probe_failf(p, PF_WRONG, "arguments are not a JSON object string: '%s'", args_shown);
	else if (!city || strcasecmp(city, TOOL_VALUE) || json_object_size(a) != 1)
		probe_failf(p, PF_WRONG, "arguments %s, expected {\"%s\": \"%s\"}", args_shown,
			    TOOL_ARG, TOOL_VALUE);
	else if (!fin || strcmp(fin, "tool_calls"))
		probe_failf(p, PF_WRONG, "finish_reason '%s', expected 'tool_calls'", fin ? fin : "none");
	else if (!blank(content))
		probe_failf(p, PF_WRONG, "text leaked into content beside the tool call: '%s'", shown);
	else
		pass(p);
}

/* reasoning-split: the thinking in the reasoning field, the answer (with
 * "paris") in content, no think markers in content. */
static void judge_reasoning(struct probe *p, const json_t *j)
{
	const json_t *choice, *msg = chat_message(p, j, &choice);
	if (!msg)
		return;
	const char *content = json_string_value(json_object_get(msg, "content"));
	const char *reasoning = json_string_value(reasoning_of(msg));
	const char *fin = json_string_value(json_object_get(choice, "finish_reason"));
	if (!content)
		content = "";
	_cleanup_free_ char *shown = oneline(content, strlen(content), 80, false);
	json_object_set_new(p->evidence, "answer", json_string(content));
	json_object_set_new(p->evidence, "reasoning", reasoning ? json_string(reasoning) : json_null());
	set_summary(p, xasprintf("reasoning %zu bytes, answer '%s'", reasoning ? strlen(reasoning) : 0,
				 shown));
	if (strstr(content, "<think>") || strstr(content, "</think>"))
		probe_failf(p, PF_WRONG, "the thinking leaked into content (think markers in the "
			    "answer '%s'): no reasoning parser at work", shown);
	else if (blank(reasoning))
		probe_failf(p, PF_WRONG, "no thinking in the reasoning field (answer '%s')", shown);
	else if (fin && !strcmp(fin, "length") && blank(content))
		probe_failf(p, PF_WRONG, "the answer did not finish within %d tokens", REASONING_MAX_TOKENS);
	else if (!icontains(content, REASONING_EXPECT))
		probe_failf(p, PF_WRONG, "answer '%s' does not contain '%s'", shown, REASONING_EXPECT);
	else
		pass(p);
}

static void judge_chat(struct probe *p, const json_t *j)
{
	const char *expect = probe_chat[p->role].expect;
	const json_t *choice = json_array_get(json_object_get(j, "choices"), 0);
	const json_t *msg = json_object_get(choice, "message");
	const json_t *content = json_object_get(msg, "content");
	if (!json_is_object(msg) || !(json_is_string(content) || json_is_null(content) || !content)) {
		probe_failf(p, PF_MALFORMED, "malformed body: no choices[0].message.content string");
		return;
	}
	const char *answer = json_is_string(content) ? json_string_value(content) : "";
	json_object_set_new(p->evidence, "answer", json_string(answer));
	json_object_set_new(p->evidence, "expected", json_string(expect));
	const json_t *fin = json_object_get(choice, "finish_reason");
	if (json_is_string(fin))
		json_object_set_new(p->evidence, "finish_reason", json_string(json_string_value(fin)));
	const json_t *reasoning = reasoning_of(msg);
	if (json_is_string(reasoning) && *json_string_value(reasoning))
		json_object_set_new(p->evidence, "reasoning",
				    json_string(json_string_value(reasoning)));
	_cleanup_free_ char *shown = oneline(answer, strlen(answer), 80, false);
	set_summary(p, xasprintf("answer '%s'", shown));
	json_object_set_new(p->evidence, "match", json_string(probe_chat[p->role].exact ? "exact"
											 : "contains"));
	bool right = probe_chat[p->role].exact ? is_exactly(answer, expect) : icontains(answer, expect);
	if (right)
		pass(p);
	else if (!*answer)
		probe_failf(p, PF_WRONG, "empty answer (expected %s'%s')",
			  probe_chat[p->role].exact ? "" : "one containing ", expect);
	else if (probe_chat[p->role].exact)
		probe_failf(p, PF_WRONG, "answer '%s' is not '%s'", shown, expect);
	else
		probe_failf(p, PF_WRONG, "answer '%s' does not contain '%s'", shown, expect);
}

static double cosine(const double *a, const double *b, size_t n, bool *ok)
{
	double ab = 0, aa = 0, bb = 0;
	for (size_t i = 0; i < n; i++) {
		ab += a[i] * b[i];
		aa += a[i] * a[i];
		bb += b[i] * b[i];
	}
	*ok = aa > 0 && bb > 0;
	return *ok ? ab / sqrt(aa * bb) : 0;
}

static void judge_embed(struct probe *p, const json_t *j)
{
	const json_t *data = json_object_get(j, "data");
	if (!json_is_array(data) || json_array_size(data) != 3) {
		probe_failf(p, PF_MALFORMED, "malformed body: expected 'data' with 3 embeddings, got %s",
			  json_is_array(data) ? "another count" : "none");
		return;
	}
	double *vec[3] = { NULL, NULL, NULL };
	size_t dim = 0;
	const char *bad = NULL;
	for (size_t i = 0; i < 3 && !bad; i++) {
		const json_t *item = json_array_get(data, i);
		const json_t *idx = json_object_get(item, "index");
		const json_t *emb = json_object_get(item, "embedding");
		json_int_t k = idx ? json_integer_value(idx) : (json_int_t)i;
		if ((idx && !json_is_integer(idx)) || k < 0 || k > 2 || vec[k])
			bad = "'index' is not 0, 1 and 2";
		else if (!json_is_array(emb) || !json_array_size(emb))
			bad = "an 'embedding' is not a non-empty list";
		else if (dim && json_array_size(emb) != dim)
			bad = "the embeddings differ in length";
		if (bad)
			break;
		dim = json_array_size(emb);
		vec[k] = xcalloc(dim, sizeof(double));
		for (size_t d = 0; d < dim; d++) {
			const json_t *x = json_array_get(emb, d);
			vec[k][d] = json_number_value(x);
			if (!json_is_number(x) || !isfinite(vec[k][d])) {
				bad = "an embedding holds a value that is not a finite number";
				break;
			}
		}
	}
	if (bad) {
		probe_failf(p, PF_MALFORMED, "malformed body: %s", bad);
	} else {
		bool ok_p, ok_u;
		double cp = cosine(vec[0], vec[1], dim, &ok_p);
		double cu = cosine(vec[0], vec[2], dim, &ok_u);
		json_object_set_new(p->evidence, "dim", json_integer((json_int_t)dim));
		json_object_set_new(p->evidence, "cos_paraphrase", ok_p ? json_real(cp) : json_null());
		json_object_set_new(p->evidence, "cos_unrelated", ok_u ? json_real(cu) : json_null());
		if (!ok_p || !ok_u) {
			set_summary(p, xasprintf("a zero embedding (dim %zu)", dim));
			probe_failf(p, PF_WRONG, "an embedding is all zeros: the cosines are undefined");
		} else {
			set_summary(p, xasprintf("cos(paraphrase)=%.3f %s cos(unrelated)=%.3f", cp,
						 cp > cu ? ">" : "<=", cu));
			if (cp > cu)
				pass(p);
			else
				probe_failf(p, PF_WRONG,
					  "the paraphrase is not closer than the unrelated sentence: "
					  "cos(paraphrase)=%.3f <= cos(unrelated)=%.3f", cp, cu);
		}
	}
	for (size_t i = 0; i < 3; i++)
		free(vec[i]);
}

static void judge_rerank(struct probe *p, const json_t *j)
{
	const json_t *results = json_object_get(j, "results");
	size_t n = json_array_size(results);
	if (!json_is_array(results) || !n || n > N_DOCS) {
		probe_failf(p, PF_MALFORMED, "malformed body: expected 'results' with 1 to %zu entries",
			  (size_t)N_DOCS);
		return;
	}
	json_t *ranking = json_array();
	json_object_set_new(p->evidence, "ranking", ranking);
	json_object_set_new(p->evidence, "paris_index", json_integer(PARIS_DOC));
	_cleanup_buf_ struct buf order;
	buf_init(&order, 0);
	bool seen[N_DOCS] = { false };
	size_t paris_rank = 0;
	double paris_score = 0, top_other = -INFINITY;
	size_t top_other_index = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(results, i);
		const json_t *idx = json_object_get(r, "index");
		const json_t *score = json_object_get(r, "relevance_score");
		json_int_t k = json_integer_value(idx);
		if (!json_is_integer(idx) || k < 0 || (size_t)k >= N_DOCS || seen[k] ||
		    !json_is_number(score) || !isfinite(json_number_value(score))) {
			probe_failf(p, PF_MALFORMED,
				  "malformed body: results[%zu] needs a new 'index' in 0..%zu and a "
				  "numeric 'relevance_score'", i, (size_t)N_DOCS - 1);
			return;
		}
		seen[k] = true;
		double s = json_number_value(score);
		json_array_append_new(ranking, json_pack("{s:I, s:f, s:s}", "index", k, "score", s,
							 "document", probe_rerank_docs[k]));
		buf_printf(&order, "%s%lld", i ? "," : "", (long long)k);
		if (k == PARIS_DOC) {
			paris_rank = i + 1;
			paris_score = s;
		} else if (s > top_other) {
			top_other = s;
			top_other_index = (size_t)k;
		}
	}
	json_object_set_new(p->evidence, "paris_rank",
			    paris_rank ? json_integer((json_int_t)paris_rank) : json_null());
	set_summary(p, xasprintf("ranking [%s], Paris document (%d) %s", buf_str(&order), PARIS_DOC,
				 paris_rank == 1 ? "first" : "not first"));
	if (!paris_rank)
		probe_failf(p, PF_WRONG, "the Paris document is missing from the ranking [%s]",
			  buf_str(&order));
	else if (paris_rank != 1)
		probe_failf(p, PF_WRONG, "the Paris document ranked %zu of %zu: ranking [%s]", paris_rank,
			  n, buf_str(&order));
	else if (top_other > paris_score)
		probe_failf(p, PF_WRONG,
			  "the Paris document is served first but document %zu scores higher "
			  "(%.4f > %.4f)", top_other_index, top_other, paris_score);
	else
		pass(p);
}

void probe_judge(struct probe *p, long http_status, const char *body, size_t len)
{
	p->http_status = http_status;
	if (http_status < 200 || http_status > 299) {
		_cleanup_free_ char *m = error_message(body, len);
		probe_failf(p, PF_HTTP, "HTTP %ld: %s", http_status, m);
		return;
	}
	json_error_t je;
	json_auto_t *j = json_loadb(body, len, 0, &je);
	if (!json_is_object(j)) {
		if (j) {
			probe_failf(p, PF_MALFORMED, "malformed body: not a JSON object");
		} else {
			_cleanup_free_ char *snip = oneline(body, len, 60, true);
			probe_failf(p, PF_MALFORMED, "malformed body: %s (body '%s')", je.text, snip);
		}
		return;
	}
	if (p->kind == PK_TOOL_CALL)
		judge_tool(p, j);
	else if (p->kind == PK_REASONING)
		judge_reasoning(p, j);
	else if (p->role == ROLE_EMBEDDER)
		judge_embed(p, j);
	else if (p->role == ROLE_RERANKER)
		judge_rerank(p, j);
	else
		judge_chat(p, j);
}

