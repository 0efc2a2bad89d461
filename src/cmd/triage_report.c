/*
 * triage_report.c — the report of `lobes triage` (see triage_report.h).
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/util/cleanup.h"
#include "triage_report.h"

/* --- JSON ------------------------------------------------------------- */

static json_t *strv_json(char **v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* One match as JSON; count 0 leaves "count" out. */
json_t *triage_match_json(const struct triage *t, const struct triage_match *m, uint64_t count)
{
	const struct signature *s = m->sig;
	json_t *caps = json_object();
	for (size_t i = 0; i < m->n_caps; i++)
		json_object_set_new(caps, m->caps[i].name, json_string(m->caps[i].value));
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:o, s:s, s:b, s:o}",
			      "line", (json_int_t)m->line_no, "id", s->id,
			      "severity", sig_severity_name(s->severity), "cause", s->cause,
			      "remedy", s->remedy, "traits", strv_json(s->traits),
			      "text", m->text, "truncated", m->truncated, "captures", caps);
	if (count)
		json_object_set_new(o, "count", json_integer((json_int_t)count));
	int fit = triage_version_fit(t, s);
	json_object_set_new(o, "version_fit", fit < 0 ? json_null() : json_boolean(fit));
	json_object_set_new(o, "cause_id", json_string(sig_cause_id(s)));
	return o;
}

static int cmp_line(const void *a, const void *b)
{
	const struct triage_match *x = *(const struct triage_match *const *)a;
	const struct triage_match *y = *(const struct triage_match *const *)b;
	if (x->line_no != y->line_no)
		return x->line_no < y->line_no ? -1 : 1;
	return x->sig_index < y->sig_index ? -1 : x->sig_index > y->sig_index;
}

/* The result for one input. matches: with all, every kept match (line
 * order); else each signature's first occurrence with its count. */
static json_t *notes_json(const struct triage *t)
{
	struct triage_notes n;
	triage_get_notes(t, &n);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "nul_lines", (json_int_t)n.nul_lines,
			 "first_nul_line", (json_int_t)n.first_nul_line, "bad_utf8_lines",
			 (json_int_t)n.bad_utf8_lines, "first_bad_utf8_line",
			 (json_int_t)n.first_bad_utf8_line, "long_lines", (json_int_t)n.long_lines,
			 "first_long_line", (json_int_t)n.first_long_line);
}

/* The lifecycle: verdict, phase, root exception, processes, events. */
static void life_json(json_t *o, const struct triage *t)
{
	const struct triage_life *L = triage_life(t);
	struct triage_verdict v;
	triage_verdict(t, &v);
	json_object_set_new(o, "verdict", json_string(v.fatal ? "fatal" : "clean"));
	json_object_set_new(o, "structural", json_boolean(v.structural));
	json_object_set_new(o, "phase", v.fatal ? json_string(triage_phase_name(v.phase)) : json_null());
	json_object_set_new(o, "stops_in", !v.fatal && L->stops_in != PHASE_UNKNOWN
						   ? json_string(triage_phase_name(L->stops_in))
						   : json_null());
	json_object_set_new(o, "root_exception",
			    v.fatal && v.line ? json_pack("{s:s?, s:s?, s:s?, s:I, s:s?}", "type", v.type,
							     "message", v.message, "frame", v.frame,
							     "line", (json_int_t)v.line, "process",
							     v.process)
						 : json_null());
	json_t *death = L->death ? json_pack("{s:s, s:I, s:s}", "kind", triage_event_name(L->death->kind),
					     "line", (json_int_t)L->death->line_no, "text", L->death->text)
				 : json_null();
	if (L->death && L->death->code != -1) {
		const char *sig = triage_exit_signal(L->death->code);
		json_object_set_new(death, "code", json_integer(L->death->code));
		json_object_set_new(death, "signal", sig ? json_string(sig) : json_null());
	}
	json_object_set_new(o, "death", death);
	json_t *procs = json_array();
	for (int k = PROC_NONE; k <= PROC_OTHER; k++)
		if (L->procs & (1u << k))
			json_array_append_new(procs, json_string(triage_proc_kind((enum triage_proc)k)));
	json_t *events = json_array();
	for (size_t i = 0; i < L->n_events; i++) {
		const struct triage_event *e = &L->events[i];
		json_t *j = json_pack("{s:s, s:I, s:s, s:s}", "kind", triage_event_name(e->kind), "line",
				      (json_int_t)e->line_no, "process", triage_proc_kind(e->proc), "text",
				      e->text);
		if (e->kind == EV_EXIT)
			json_object_set_new(j, "code", json_integer(e->code));
		json_array_append_new(events, j);
	}
	json_t *tbs = json_array();
	for (size_t i = 0; i < L->n_tbs; i++) {
		const struct triage_tb *b = &L->tbs[i];
		json_t *j = json_pack("{s:I, s:s?, s:s?, s:s?, s:s, s:s, s:b}", "line", (json_int_t)b->line_no,
				      "type", b->type, "message", b->message, "frame", b->frame,
				      "process", triage_proc_kind(b->proc), "phase",
				      triage_phase_name(b->phase), "fatal", b->fatal);
		if (b->chained_from >= 0)
			json_object_set_new(j, "chained_from",
					    json_integer((json_int_t)L->tbs[b->chained_from].line_no));
		json_array_append_new(tbs, j);
	}
	json_object_set_new(o, "lifecycle", json_pack("{s:o, s:o, s:o, s:o, s:o}", "processes", procs,
						      "startup_complete_line",
						      L->startup_line ? json_integer((json_int_t)L->startup_line)
								      : json_null(),
						      "ends_in_error_line",
						      L->error_line ? json_integer((json_int_t)L->error_line)
								    : json_null(),
						      "tracebacks", tbs, "events", events));
}

json_t *triage_source_json(const char *label, const struct sigset *set, const struct triage *t,
			   bool all, bool version_given, const char *stopped)
{
	json_t *matches = json_array(), *summary = json_array();
	size_t n = 0;
	if (all) {
		const struct triage_match *ms = triage_matches(t, &n);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(matches, triage_match_json(t, &ms[i], 0));
	} else {
		const struct triage_match **firsts = xcalloc(set->n + 1, sizeof(*firsts));
		for (size_t i = 0; i < set->n; i++)
			if (triage_first(t, i))
				firsts[n++] = triage_first(t, i);
		qsort(firsts, n, sizeof(*firsts), cmp_line);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(matches,
					      triage_match_json(t, firsts[i], triage_count(t, firsts[i]->sig_index)));
		free(firsts);
	}
	uint64_t by_sev[3] = { 0 };
	for (size_t i = 0; i < set->n; i++) {
		uint64_t c = triage_count(t, i);
		if (!c)
			continue;
		by_sev[set->sigs[i].severity] += c;
		json_array_append_new(summary,
				      json_pack("{s:s, s:s, s:I, s:I}", "id", set->sigs[i].id, "severity",
						sig_severity_name(set->sigs[i].severity), "count",
						(json_int_t)c, "first_line",
						(json_int_t)triage_first(t, i)->line_no));
	}
	const struct triage_match *cause = triage_cause(t);
	const struct signature *done = sigset_find(set, "startup-complete");
	bool complete = done && triage_count(t, (size_t)(done - set->sigs)) > 0;
	json_t *o = json_pack("{s:s, s:I, s:o, s:o, s:o, s:b, s:b, s:{s:I, s:I, s:I}}",
			      "file", label, "lines", (json_int_t)triage_lines(t),
			      "matches", matches, "summary", summary,
			      "cause", cause ? json_pack("{s:s, s:I, s:s, s:s, s:o}", "id", cause->sig->id,
							 "line", (json_int_t)cause->line_no,
							 "cause", cause->sig->cause,
							 "remedy", cause->sig->remedy,
							 "traits", strv_json(cause->sig->traits))
					     : json_null(),
			      "fatal", triage_fatal(t), "startup_complete", complete,
			      "counts", "fatal", (json_int_t)by_sev[SEV_FATAL],
			      "warning", (json_int_t)by_sev[SEV_WARNING],
			      "info", (json_int_t)by_sev[SEV_INFO]);
	if (stopped)
		json_object_set_new(o, "stopped", json_string(stopped));
	/* every cause in rank order (the first is "cause") */
	const struct triage_match *ranked[64];
	size_t nc = triage_causes(t, ranked, ARRAY_SIZE(ranked));
	json_t *causes = json_array();
	for (size_t i = 0; i < nc && i < ARRAY_SIZE(ranked); i++)
		json_array_append_new(causes, json_pack("{s:s, s:s, s:I, s:b, s:s, s:s}", "id",
							ranked[i]->sig->id, "cause_id",
							sig_cause_id(ranked[i]->sig), "line",
							(json_int_t)ranked[i]->line_no, "traceback_root",
							ranked[i]->root, "cause", ranked[i]->sig->cause,
							"remedy", ranked[i]->sig->remedy));
	json_object_set_new(o, "causes", causes);
	life_json(o, t);
	if (cause)
		json_object_set_new(json_object_get(o, "cause"), "cause_id",
				    json_string(sig_cause_id(cause->sig)));
	struct triage_root roots[1];
	size_t nr = triage_roots(t, NULL, 0);
	if (nr) {
		const struct triage_root *last = roots;
		struct triage_root *all_roots = xcalloc(nr, sizeof(*all_roots));
		triage_roots(t, all_roots, nr);
		roots[0] = all_roots[nr - 1];
		free(all_roots);
		json_object_set_new(o, "exception", json_pack("{s:I, s:s}", "line", (json_int_t)last->line_no,
							      "text", last->text));
	} else {
		json_object_set_new(o, "exception", json_null());
	}
	char ver[64];
	triage_version(t, ver, sizeof(ver));
	json_object_set_new(o, "vllm_version", *ver ? json_string(ver) : json_null());
	json_object_set_new(o, "version_from", !*ver ? json_null()
				: json_string(version_given ? "option" : "banner"));
	json_object_set_new(o, "notes", notes_json(t));
	if (triage_dropped(t))
		json_object_set_new(o, "dropped", json_integer((json_int_t)triage_dropped(t)));
	return o;
}

/* --- text ------------------------------------------------------------- */

void triage_print_match(const struct ctx *ctx, const char *file, const json_t *m)
{
	const char *sev = jstr(m, "severity");
	const char *color = strcmp(sev, "fatal") == 0 ? c_red(ctx)
			    : strcmp(sev, "warning") == 0 ? c_yellow(ctx) : c_dim(ctx);
	char up[16];
	size_t i;
	for (i = 0; sev[i] && i + 1 < sizeof(up); i++)
		up[i] = (char)(sev[i] >= 'a' && sev[i] <= 'z' ? sev[i] - 32 : sev[i]);
	up[i] = 0;
	json_int_t count = json_integer_value(json_object_get(m, "count"));
	printf("%s:%lld: %s%s%s %s%s%s", file, (long long)json_integer_value(json_object_get(m, "line")),
	       color, up, c_reset(ctx), c_bold(ctx), jstr(m, "id"), c_reset(ctx));
	if (count > 1)
		printf(" (%lld lines)", (long long)count);
	printf(" — %s\n", jstr(m, "cause"));
	printf("    fix: %s\n", jstr(m, "remedy"));
	const json_t *traits = json_object_get(m, "traits");
	if (json_array_size(traits)) {
		printf("    trait:");
		json_t *v;
		json_array_foreach(traits, i, v)
			printf("%s %s", i ? "," : "", json_string_value(v));
		printf("\n");
	}
	const char *k;
	json_t *v;
	bool any = false;
	json_object_foreach((json_t *)json_object_get(m, "captures"), k, v) {
		printf("%s %s=%s", any ? "" : "    captured:", k, json_string_value(v));
		any = true;
	}
	if (any)
		printf("\n");
	printf("    %s| %s%s%s\n", c_dim(ctx), jstr(m, "text"),
	       json_is_true(json_object_get(m, "truncated")) ? " ..." : "", c_reset(ctx));
}

void triage_print_summary(const struct ctx *ctx, const json_t *f)
{
	const json_t *c = json_object_get(f, "counts");
	json_int_t nf = json_integer_value(json_object_get(c, "fatal"));
	json_int_t nw = json_integer_value(json_object_get(c, "warning"));
	json_int_t ni = json_integer_value(json_object_get(c, "info"));
	printf("%s%s:%s ", c_bold(ctx), jstr(f, "file"), c_reset(ctx));
	if (nf + nw + ni == 0)
		printf("no signature matched");
	else
		printf("%lld fatal, %lld warning, %lld info", (long long)nf, (long long)nw,
		       (long long)ni);
	printf(" in %lld lines", (long long)json_integer_value(json_object_get(f, "lines")));
	const json_t *cause = json_object_get(f, "cause");
	if (json_is_object(cause))
		printf("; %scause: %s%s (line %lld)", c_red(ctx), jstr(cause, "id"), c_reset(ctx),
		       (long long)json_integer_value(json_object_get(cause, "line")));
	else if (json_is_true(json_object_get(f, "startup_complete")))
		printf("; %sstartup complete%s", c_green(ctx), c_reset(ctx));
	if (*jstr(f, "stopped"))
		printf("; stopped: %s", jstr(f, "stopped"));
	if (json_integer_value(json_object_get(f, "dropped")))
		printf("; %lld matches not kept", (long long)json_integer_value(json_object_get(f, "dropped")));
	printf("\n");
}

/* The root cause first: `FILE:LINE: cause ID — what it means`, its fix,
 * and the other candidates. */
/* The verdict first: `FILE: FATAL in PHASE: cause ID` or `no known
 * cause: TYPE: MESSAGE`, where the root exception was raised. */
/* The root exception as `TYPE: MESSAGE`, or what stands for it where the
 * paste stops inside a traceback before its exception line. */
static void print_root(const json_t *r)
{
	if (!*jstr(r, "type") && !*jstr(r, "message"))
		printf("a traceback the log cuts before its exception line");
	else
		printf("%s%s%s", jstr(r, "type"), *jstr(r, "type") ? ": " : "", jstr(r, "message"));
}

static void print_verdict(const struct ctx *ctx, const json_t *f)
{
	const char *file = jstr(f, "file");
	if (strcmp(jstr(f, "verdict"), "fatal") != 0) {
		printf("%s: %sclean%s%s\n", file, c_green(ctx), c_reset(ctx),
		       json_is_true(json_object_get(f, "startup_complete")) ? " (startup complete)" : "");
		if (*jstr(f, "stops_in"))
			printf("    no error shown, but the log stops in %s, before startup complete: "
			       "if the server died after that, this log does not show it\n",
			       jstr(f, "stops_in"));
		return;
	}
	const json_t *c = json_object_get(f, "cause"), *r = json_object_get(f, "root_exception");
	printf("%s: %sFATAL%s", file, c_red(ctx), c_reset(ctx));
	if (*jstr(f, "phase"))
		printf(" in %s", jstr(f, "phase"));
	if (json_is_object(c))
		printf(": cause %s%s%s — %s\n", c_bold(ctx), jstr(c, "id"), c_reset(ctx), jstr(c, "cause"));
	else if (json_is_object(r)) {
		printf(": no known cause: ");
		print_root(r);
		printf("\n");
	} else
		printf(": no known cause\n");
	if (json_is_object(r)) {
		printf("    root exception (line %lld): ",
		       (long long)json_integer_value(json_object_get(r, "line")));
		print_root(r);
		printf("\n");
		/* a root with no exception (a crash with the stack dumped at it,
		 * a paste cut inside a traceback): its frame raised nothing */
		if (*jstr(r, "frame"))
			printf("    %s %s\n", *jstr(r, "type") ? "raised at" : "innermost vLLM frame:",
			       jstr(r, "frame"));
	}
	const json_t *d = json_object_get(f, "death");
	if (json_is_object(d))
		printf("    %s (line %lld): %s%s%s\n", jstr(d, "kind"),
		       (long long)json_integer_value(json_object_get(d, "line")), jstr(d, "text"),
		       *jstr(d, "signal") ? " — " : "", jstr(d, "signal"));
}

void triage_print_headline(const struct ctx *ctx, const json_t *f)
{
	print_verdict(ctx, f);
	const json_t *c = json_object_get(f, "cause");
	if (!json_is_object(c))
		return;
	printf("%s:%lld: %scause %s%s — %s\n", jstr(f, "file"),
	       (long long)json_integer_value(json_object_get(c, "line")), c_red(ctx), jstr(c, "id"),
	       c_reset(ctx), jstr(c, "cause"));
	printf("    fix: %s\n", jstr(c, "remedy"));
	const json_t *all = json_object_get(f, "causes");
	if (json_array_size(all) > 1) {
		printf("    also:");
		size_t i;
		json_t *v;
		json_array_foreach(all, i, v)
			if (i)
				printf("%s %s (line %lld)", i > 1 ? "," : "", jstr(v, "id"),
				       (long long)json_integer_value(json_object_get(v, "line")));
		printf("\n");
	}
	const json_t *ex = json_object_get(f, "exception");
	if (json_is_object(ex))
		printf("    exception (line %lld): %s\n",
		       (long long)json_integer_value(json_object_get(ex, "line")), jstr(ex, "text"));
}

/* What was odd about the input, on stderr. */
void triage_print_notes(const json_t *f)
{
	const json_t *n = json_object_get(f, "notes");
	json_int_t k;
	if ((k = json_integer_value(json_object_get(n, "nul_lines"))))
		fprintf(stderr, "%s: note: %lld line%s NUL bytes (first: line %lld); binary data?\n",
			jstr(f, "file"), (long long)k, k == 1 ? " holds" : "s hold",
			(long long)json_integer_value(json_object_get(n, "first_nul_line")));
	if ((k = json_integer_value(json_object_get(n, "bad_utf8_lines"))))
		fprintf(stderr, "%s: note: %lld line%s not valid UTF-8 (first: line %lld)\n",
			jstr(f, "file"), (long long)k, k == 1 ? " is" : "s are",
			(long long)json_integer_value(json_object_get(n, "first_bad_utf8_line")));
	if ((k = json_integer_value(json_object_get(n, "long_lines"))))
		fprintf(stderr, "%s: note: %lld line%s longer than 1 MiB (first: line %lld); matched on "
			"its first 1 MiB\n", jstr(f, "file"), (long long)k, k == 1 ? " is" : "s are",
			(long long)json_integer_value(json_object_get(n, "first_long_line")));
}

