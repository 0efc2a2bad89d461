/*
 * verdict_cause.c — a log's verdict with its cause (triage_verdict,
 * triage_fatal; see triage.h): the lifecycle's verdict (verdict.c) and the
 * ranked causes (triage_result.c) brought together. It sits above both, so
 * that the ranking may ask the lifecycle for the root exception without a
 * call loop between them.
 */
#include <stdlib.h>
#include <string.h>

#include "triage_int.h"
#include "../util/cleanup.h"

bool triage_fatal(const struct triage *t)
{
	return triage_cause(t) != NULL || triage_life(t)->fatal;
}

/* The root from the cause's line: the traceback whose root it is, else an
 * exception named on it, else the line itself. */
static void root_from_cause(struct triage *t, const struct triage_match *c, struct triage_verdict *v)
{
	struct lifecycle *lc = &t->lc;
	for (size_t i = 0; i < lc->n_tbs; i++) {
		const struct triage_tb *tb = &lc->tbs[i];
		if (tb->root_line >= c->line_no && tb->root_line < c->line_no + c->lines && tb->type) {
			v->type = tb->type;
			v->message = tb->message;
			v->frame = tb->frame;
			v->line = tb->root_line;
			v->process = triage_proc_kind(tb->proc);
			v->phase = lc_phase_of(lc, tb->line_no, tb->phase);
			return;
		}
	}
	free(lc->root_type);
	free(lc->root_message);
	lc->root_type = lc->root_message = NULL;
	long x = lc_find_exception(c->text, strlen(c->text));
	if (x >= 0)
		lc_split_exception(c->text + x, strlen(c->text) - (size_t)x, &lc->root_type, &lc->root_message);
	else
		lc->root_message = xstrdup(c->text);
	v->type = lc->root_type;
	v->message = lc->root_message;
	v->line = c->line_no;
	v->phase = lc_phase_of(lc, c->line_no, lc_tb_phase(0, lc->root_message, c->phase, 0));
}

void triage_verdict(const struct triage *ct, struct triage_verdict *v)
{
	struct triage *t = (struct triage *)ct;
	const struct triage_life *L = triage_life(t);
	*v = (struct triage_verdict){ .cause = triage_cause(t) };
	v->structural = L->fatal;
	v->fatal = L->fatal || v->cause;
	if (!v->fatal)
		return;
	if (!L->fatal) {
		root_from_cause(t, v->cause, v);
		return;
	}
	v->phase = L->phase;
	v->type = L->root_type;
	v->message = L->root_message;
	v->frame = L->root_frame;
	v->line = L->root_line;
	v->process = L->root ? triage_proc_kind(L->root->proc) : NULL;
}
