/*
 * verdict.c — what the lifecycle (lifecycle.c) says about a log: fatal or
 * not, the root exception, the phase (see triage.h).
 *
 * The tail: at the end of the input the last lines (at most TAIL_LINES,
 * from the kept LC_TAIL bytes) are read backwards. Words a shell prints
 * when a process dies ("Killed", "Aborted") become events there; then,
 * past noise a dying server prints on its way out (shutdown lines, Python
 * warnings, leaked-resource notes), the last significant record decides
 * whether the log ends in an error: an ERROR/CRITICAL/FATAL record, an
 * exception line, a traceback cut short, or a line that says error or
 * failed outside an INFO/WARNING record.
 *
 * A traceback is fatal unless it was logged at INFO/WARNING level or ended
 * in an interrupt or a cancellation, and
 *   - before startup complete: when startup does not complete after it and
 *     a death follows it or the log ends in an error;
 *   - while serving: when a death follows it, or it was the engine's or a
 *     worker's and the log ends in an error (a request error the API server
 *     answered is not).
 * An event that is a death (engine dead, fatal signal, a process dead, a
 * non-zero exit, a restart, a native crash, a watchdog abort, a kill, the
 * container runtime's error) is fatal unless startup completes after it.
 * A log without startup complete that ends in an error is fatal; one
 * whose tail shows the server answering a request (an HTTP access line,
 * any status) before the error had started (a paste from the middle of a
 * serving log): its error then needs a shutdown after it, as after startup
 * complete.
 *
 * The root exception is the innermost of the first fatal chain of
 * tracebacks whose exception says something (not "Engine core
 * initialization failed. See root cause above."); else the error the log
 * ends in; else the deciding event.
 */
#include <stdlib.h>
#include <string.h>

#include "normalise.h"
#include "triage_int.h"
#include "../util/cleanup.h"

#define TAIL_LINES 64

/* Exceptions that only say that something else failed. */
static const char *const generic_text[] = {
	"EngineDeadError", "EngineGenerateError", "Engine core initialization failed",
	"Engine process failed to start", "Worker failed with error", "Background loop has errored",
	"Call to collective_rpc method failed", "Error executing method", "Failed core proc",
	"Engine loop has died", "See root cause above", "stack trace above",
	"See stack trace above", "SystemExit",
};

/* Exceptions a process ends with when it is stopped, not broken. */
static const char *const benign_type[] = {
	"KeyboardInterrupt", "CancelledError", "GeneratorExit",
};

static bool has_any(const char *s, const char *const *words, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if (strstr(s, words[i]))
			return true;
	return false;
}

static bool tb_generic(const struct triage_tb *tb)
{
	return !tb->type || has_any(tb->type, generic_text, ARRAY_SIZE(generic_text)) ||
	       has_any(tb->message, generic_text, ARRAY_SIZE(generic_text));
}

static bool tb_benign(const struct triage_tb *tb)
{
	return tb->type && has_any(tb->type, benign_type, ARRAY_SIZE(benign_type));
}

static bool death_event(const struct triage_event *e)
{
	switch (e->kind) {
	case EV_STARTUP:
	case EV_SHUTDOWN:
	case EV_BOOT:
		return false;
	case EV_EXIT:
		return e->code != 0;
	default:
		return true;
	}
}

void lc_finish(struct triage *t)
{
	struct lifecycle *lc = &t->lc;
	if (lc->finished)
		return;
	lc->finished = true;
	bool open = lc->cur_open;
	lc_tb_abort(t);
	lc->cur_open = open; /* a traceback cut short counts as an error at the end */
	lc_read_tail(t);
	lc->cur_open = false;
}

/* --- the verdict ---------------------------------------------------------- */

/* Whether a death (or, with shutdown, a shutdown) follows line. */
static bool death_after(const struct lifecycle *lc, uint64_t line, bool shutdown)
{
	for (size_t i = 0; i < lc->n_events; i++)
		if (lc->events[i].line_no >= line &&
		    (death_event(&lc->events[i]) ||
		     (shutdown && (lc->events[i].kind == EV_SHUTDOWN || lc->events[i].kind == EV_BOOT))))
			return true;
	return lc->last_death >= line && line;
}

static bool tb_fatal(const struct lifecycle *lc, const struct triage_tb *tb)
{
	if (tb->quiet || tb_benign(tb))
		return false;
	uint64_t end = tb->root_line ? tb->root_line : tb->line_no;
	bool serving = (lc->first_startup && lc->first_startup < tb->line_no) || tb->at == PHASE_SERVING;
	if (tb->request)
		return death_after(lc, end, false);
	/* a paste that ends inside a traceback (no exception line yet), of a
	 * server never seen started: what the process was doing died there,
	 * whatever its progress lines said it was at */
	bool cut_at_end = !tb->root_line && !lc->first_startup && lc->error_line >= tb->line_no;
	if (serving && !cut_at_end)
		return death_after(lc, end, true) ||
		       ((tb->proc == PROC_ENGINE || tb->proc == PROC_WORKER) && lc->error_line);
	if (lc->last_startup > tb->line_no)
		return false;
	return death_after(lc, end, true) || lc->error_line;
}

/* Whether line lies in a traceback the process survived (judged by
 * tb_fatal, which already weighed how the log ends). */
static bool in_survived(const struct lifecycle *lc, uint64_t line)
{
	for (size_t i = 0; i < lc->n_tbs; i++) {
		const struct triage_tb *tb = &lc->tbs[i];
		if (!tb->fatal && tb->line_no <= line &&
		    (!tb->root_line || tb->root_line >= line))
			return true;
	}
	return false;
}

bool lc_survived_surely(const struct lifecycle *lc, uint64_t line)
{
	for (size_t i = 0; i < lc->n_tbs; i++) {
		const struct triage_tb *tb = &lc->tbs[i];
		uint64_t end = tb->root_line ? tb->root_line : tb->line_no;
		if (tb->fatal || tb->line_no > line || (tb->root_line && tb->root_line < line))
			continue;
		if (tb->quiet || tb_benign(tb) || tb->request || lc->last_answer > end)
			return true;
	}
	return false;
}

/* The traceback a chain starts from (its innermost cause). */
static size_t chain_head(const struct lifecycle *lc, size_t i)
{
	for (unsigned k = 0; k < LC_TBS && lc->tbs[i].chained_from >= 0; k++)
		i = (size_t)lc->tbs[i].chained_from;
	return i;
}

enum triage_phase lc_phase_of(const struct lifecycle *lc, uint64_t line, enum triage_phase ph)
{
	if (lc->first_startup && lc->first_startup < line)
		return PHASE_SERVING;
	return ph == PHASE_UNKNOWN ? PHASE_LOAD : ph;
}

/* The root exception: the first fatal chain's innermost exception that
 * says something (then the first fatal chain's). */
static const struct triage_tb *pick_root(struct lifecycle *lc)
{
	const struct triage_tb *first = NULL;
	for (size_t i = 0; i < lc->n_tbs; i++) {
		if (!lc->tbs[i].fatal)
			continue;
		/* walk the chain from its head to i: the innermost specific one */
		size_t h = chain_head(lc, i);
		if (!first)
			first = &lc->tbs[h];
		for (size_t j = h; j <= i; j++)
			if ((j == h || lc->tbs[j].chained_from >= 0) && lc->tbs[j].type &&
			    !tb_generic(&lc->tbs[j]))
				return &lc->tbs[j];
	}
	return first;
}

const struct triage_life *triage_life(const struct triage *ct)
{
	struct triage *t = (struct triage *)ct; /* the result is a cache of the state */
	struct lifecycle *lc = &t->lc;
	struct triage_life *L = &lc->life;
	*L = (struct triage_life){
		.startup_line = lc->first_startup, .procs = lc->procs, .tbs = lc->tbs,
		.n_tbs = lc->n_tbs, .events = lc->events, .n_events = lc->n_events,
		.error_line = lc->error_line,
	};
	bool any_tb = false;
	for (size_t i = 0; i < lc->n_tbs; i++)
		any_tb |= lc->tbs[i].fatal = tb_fatal(lc, &lc->tbs[i]);
	/* a chain is fatal as a whole */
	for (size_t i = 0; i < lc->n_tbs; i++)
		if (lc->tbs[i].fatal)
			for (size_t h = i; lc->tbs[h].chained_from >= 0; h = (size_t)lc->tbs[h].chained_from)
				lc->tbs[lc->tbs[h].chained_from].fatal = true;
	for (size_t i = 0; i < lc->n_events && !L->death; i++)
		if (death_event(&lc->events[i]) && !(lc->last_startup > lc->events[i].line_no))
			L->death = &lc->events[i];
	/* a server seen answering a request (an access line) before the error
	 * had started, even where the paste begins after its startup line */
	bool up = lc->first_startup || (lc->answered_line && lc->answered_line < lc->error_line);
	bool ends_badly = lc->error_line && !(lc->last_startup > lc->error_line) &&
			  (!up || lc->error_shutdown) && !in_survived(lc, lc->error_line);
	L->fatal = any_tb || L->death || ends_badly;
	if (!L->fatal) {
		enum triage_phase at = lc->first_startup || lc->answered_line || !lc->tail_len
					       ? PHASE_UNKNOWN
					       : lc_phase_back(lc->tail, lc->tail + lc->tail_len);
		L->stops_in = at == PHASE_SERVING ? PHASE_UNKNOWN : at;
		return L;
	}
	L->root = pick_root(lc);
	if (L->root && L->root->dump && L->death) {
		/* a stack faulthandler dumped: the crash it was dumped at is the
		 * root, the dump says where (its innermost vLLM frame, its phase) */
		L->root_type = NULL;
		L->root_message = L->death->text;
		L->root_frame = L->root->frame;
		L->root_line = L->death->line_no;
		L->phase = lc_phase_of(lc, L->root->line_no,
				       L->root->phase != PHASE_UNKNOWN ? L->root->phase : L->death->phase);
	} else if (L->root) {
		L->root_type = L->root->type;
		L->root_message = L->root->message;
		L->root_frame = L->root->frame;
		L->root_line = L->root->root_line ? L->root->root_line : L->root->line_no;
		L->phase = lc_phase_of(lc, L->root->line_no, L->root->phase);
	} else if (lc->error_line && !lc->error_native && !(L->death && L->death->kind == EV_RUNTIME)) {
		/* (the container runtime's refusal is its own root: vLLM never ran) */
		L->root_type = lc->error_type;
		L->root_message = lc->error_message;
		L->root_line = lc->error_line;
		L->phase = lc_phase_of(lc, lc->error_line,
				    lc_tb_phase(0, lc->error_message,
						lc_phase_back(lc->tail, lc->tail + lc->error_off), 0));
	} else if (L->death) {
		L->root_type = NULL; /* a death that left no Python exception */
		L->root_message = L->death->text;
		L->root_line = L->death->line_no;
		L->phase = lc_phase_of(lc, L->death->line_no,
				    L->death->kind == EV_RUNTIME ? PHASE_PRESTART
				    : lc_tb_phase(0, L->death->text, L->death->phase, 0));
	} else {
		L->root_type = lc->error_type;
		L->root_message = lc->error_message;
		L->root_line = lc->error_line;
		L->phase = lc_phase_of(lc, lc->error_line, PHASE_UNKNOWN);
	}
	return L;
}

const char *triage_phase_name(enum triage_phase p)
{
	static const char *const names[] = { "unknown", "pre-start", "load", "profile", "warm-up",
					     "graph-capture", "serving" };
	return (size_t)p < ARRAY_SIZE(names) ? names[p] : "unknown";
}

const char *triage_proc_kind(enum triage_proc p)
{
	static const char *const names[] = { "main", "api-server", "engine-core", "worker", "ray",
					     "other" };
	return (size_t)p < ARRAY_SIZE(names) ? names[p] : "other";
}

const char *triage_exit_signal(int code)
{
	static const struct {
		int sig;
		const char *text;
	} sigs[] = {
		{ 4, "SIGILL (an illegal instruction: a build for another CPU)" },
		{ 6, "SIGABRT (an abort)" },
		{ 7, "SIGBUS (a bus error)" },
		{ 8, "SIGFPE (an arithmetic fault)" },
		{ 9, "SIGKILL (killed: often the OOM killer or a memory limit)" },
		{ 11, "SIGSEGV (a segmentation fault)" },
		{ 15, "SIGTERM (stopped)" },
	};
	int sig = code > 128 && code < 160 ? code - 128 : code < 0 && code > -32 ? -code : 0;
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (sigs[i].sig == sig)
			return sigs[i].text;
	return NULL;
}

const char *triage_event_name(enum triage_event_kind k)
{
	static const char *const names[] = {
		"startup complete", "engine dead", "fatal signal", "engine failed", "process died",
		"exit", "restart", "native crash", "watchdog abort", "killed", "container runtime error",
		"shutdown", "boot",
	};
	return (size_t)k < ARRAY_SIZE(names) ? names[k] : "event";
}
