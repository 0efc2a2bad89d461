/*
 * report.c — the failure report of a role's boot log; see report.h.
 *
 * The log is matched once by triage; the cause keeps its line number, so the
 * report can name the line exactly however far it is from the end.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "../util/secret.h"
#include "report.h"
#include "triage.h"

/* Lines in text: a last line without a newline counts. */
static size_t count_lines(const char *text)
{
	size_t n = 0;
	const char *p = text;
	for (; *p; p++)
		if (*p == '\n')
			n++;
	if (p > text && p[-1] != '\n')
		n++;
	return n;
}

json_t *failure_report(const char *log, size_t tail_lines, const struct sigset *set)
{
	if (!log)
		return NULL;
	size_t total = count_lines(log);
	/* The tail: the last tail_lines lines, without the final newline. */
	const char *end = log + strlen(log);
	if (end > log && end[-1] == '\n')
		end--;
	const char *p = end;
	size_t seen = 0;
	while (p > log && tail_lines) {
		if (p[-1] == '\n' && ++seen == tail_lines)
			break;
		p--;
	}
	size_t in_tail = 0;
	for (const char *q = p; q < end; q++)
		in_tail += *q == '\n';
	in_tail += p < end;
	json_t *r = json_pack("{s:I, s:s%, s:I}", "log_lines", (json_int_t)total, "log_tail", p,
			      (size_t)(end - p), "log_tail_from", (json_int_t)(total - in_tail + 1));
	if (!set) {
		secret_mask_json(r);
		return r;
	}
	_cleanup_triage_ struct triage *t = triage_new(set, 0);
	triage_feed(t, log, strlen(log));
	triage_finish(t);
	struct triage_verdict v;
	triage_verdict(t, &v);
	json_object_set_new(r, "verdict", json_string(v.fatal ? "fatal" : "clean"));
	if (v.fatal) {
		json_object_set_new(r, "phase", json_string(triage_phase_name(v.phase)));
		if (v.line)
			json_object_set_new(r, "root_exception",
					    json_pack("{s:s?, s:s?, s:s?, s:I}", "type", v.type, "message",
						      v.message, "frame", v.frame, "line_no", (json_int_t)v.line));
	}
	const struct triage_match *m = v.cause;
	if (m)
		json_object_set_new(r, "cause",
				    json_pack("{s:s, s:s, s:s?, s:s?, s:s, s:I}", "signature", m->sig->id,
					      "cause", m->sig->cause, "remedy", m->sig->remedy, "trait",
					      m->sig->traits ? m->sig->traits[0] : NULL, "line", m->text,
					      "line_no", (json_int_t)m->line_no));
	secret_mask_json(r);
	return r;
}
