/*
 * tail.c — what the end of a log says (see verdict.c for what it decides).
 *
 * The last LC_TAIL bytes of the input are kept (lifecycle.c); at the end
 * they are read twice, at most TAIL_LINES lines:
 *
 *   - forwards, for exceptions no `Traceback` header announced (a paste
 *     that starts inside a traceback, a worker's error logged line by
 *     line): an exception line, with the frames above it, is a traceback
 *     of its own unless the walk already recorded its line as a root;
 *   - backwards, for the words a shell prints when a process dies
 *     ("Killed", "Aborted"), which become events, and for the last
 *     significant record: past what a dying server prints on its way out
 *     (shutdown lines, Python warnings, leaked-resource notes), an
 *     ERROR/CRITICAL/FATAL record, an exception line, a traceback frame,
 *     or a line that says error or failed outside an INFO/WARNING record
 *     means the log ends in an error.
 */
#include <stdlib.h>
#include <string.h>

#include "normalise.h"
#include "triage_int.h"
#include "../util/cleanup.h"

#define TAIL_LINES 400

static bool word_in(const char *m, size_t n, const char *w)
{
	return memmem(m, n, w, strlen(w)) != NULL;
}

/* What a dying server prints on its way out, and blank lines. */
static bool noise(const char *m, size_t n, const struct norm *k)
{
	static const char *const words[] = {
		"Shutting down", "shutdown complete", "Finished server process", "Waiting for application shutdown",
		"leaked shared_memory", "leaked semaphore", "warnings.warn(", "resource_tracker",
		"Warning:", "UserWarning", "FutureWarning", "DeprecationWarning", "destroy_process_group",
		"Stopped server process", "Stopping", "[W", "```", "terminated", "Terminating",
		"shutting down", "Exiting", "Killing", "close()", "cleanup", "Aborting", "exiting",
		"Parent process exited",
	};
	if (k->kind == NK_BLANK || (n <= 4 && memchr(m, '.', n)))
		return true;
	size_t c = 0; /* a caret line under a frame's code: `    ^^^^~~~` */
	while (c < n && strchr(" \t^~", m[c]))
		c++;
	if (c == n)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (word_in(m, n, words[i]))
			return true;
	return false;
}

/* An HTTP server's access-log line: `"METHOD path HTTP/1.1" 200 ...`
 * (uvicorn's, and nginx's or any proxy's in the common log format): a
 * request line's version, its closing quote, a three-digit status. Its
 * server was up and answering, whatever the status. */
static bool access_line(const char *m, size_t n)
{
	const char *p = m, *e = m + n;
	while ((p = memmem(p, (size_t)(e - p), " HTTP/", 6)) != NULL) {
		p += 6;
		while (p < e && ((*p >= '0' && *p <= '9') || *p == '.'))
			p++;
		if (e - p >= 5 && p[0] == '"' && p[1] == ' ' && p[2] >= '1' && p[2] <= '5' &&
		    p[3] >= '0' && p[3] <= '9' && p[4] >= '0' && p[4] <= '9' &&
		    (e - p == 5 || p[5] == ' '))
			return true;
	}
	return false;
}

/* A shell's word for a dead process: EV_KILLED, EV_NATIVE, or EV_KINDS. */
static enum triage_event_kind shell_death(const char *m, size_t n)
{
	static const char *const native[] = { "Aborted", "Illegal instruction", "Bus error" };
	if ((n == 6 && memcmp(m, "Killed", 6) == 0) || word_in(m, n, " Killed ") ||
	    (n > 7 && memcmp(m + n - 7, " Killed", 7) == 0) || word_in(m, n, "OOMKilled"))
		return EV_KILLED;
	for (size_t i = 0; i < ARRAY_SIZE(native); i++) {
		size_t l = strlen(native[i]);
		if (n >= l && memcmp(m, native[i], l) == 0)
			return EV_NATIVE;
		if (word_in(m, n, native[i]) && word_in(m, n, "core dumped"))
			return EV_NATIVE;
	}
	return EV_KINDS;
}

/* A line of a C++ stack a native death printed (`frame #3: f() + 0x1c
 * (0x7f in libc10.so)`, `Exception raised from f at file.cpp:44`): the
 * death's event, not this line, says what failed. */
static bool native_frame(const char *m, size_t n)
{
	return (n > 8 && memcmp(m, "frame #", 7) == 0 && m[7] >= '0' && m[7] <= '9') ||
	       (n > 22 && memcmp(m, "Exception raised from ", 22) == 0);
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A frame of the backtrace a native crash handler prints (UCX's and
 * libc-style: `23 0x000000000015a9fc _PyFunction_Vectorcall()  ???:0`,
 * `#5 0x00007f3a in f () from /x/libc.so.6`): a process died in native
 * code, with no Python exception to name. */
static bool crash_frame(const char *m, size_t n)
{
	size_t i = 0, d;
	while (i < n && (m[i] == ' ' || m[i] == '\t'))
		i++;
	if (i < n && m[i] == '#')
		i++;
	for (d = i; i < n && m[i] >= '0' && m[i] <= '9'; i++)
		;
	if (i == d || i - d > 4 || n - i < 12 || memcmp(m + i, " 0x", 3) != 0)
		return false;
	for (i += 3, d = i; i < n && is_hex(m[i]); i++)
		;
	if (i - d < 8 || i >= n || m[i] != ' ')
		return false;
	/* a function's call parentheses follow the address */
	return memmem(m + i, n - i, "()", 2) || memmem(m + i, n - i, " (", 2);
}

static bool level_is(const char *m, size_t n, const char *lvl)
{
	size_t l = strlen(lvl);
	return n > l && memcmp(m, lvl, l) == 0 && (m[l] == ' ' || m[l] == ':' || m[l] == ']');
}

/* Whether the normalised line m (classified k) is an error record. */
static bool error_line(const char *m, size_t n, const struct norm *k, bool tb_open)
{
	if (level_is(m, n, "ERROR") || level_is(m, n, "CRITICAL") || level_is(m, n, "FATAL"))
		return true;
	/* glog E/F: `E1203 10:00:00.000000  123 file.cc:1] ` */
	if (n > 6 && (m[0] == 'E' || m[0] == 'F') && m[1] >= '0' && m[1] <= '9' && m[5] == ' ')
		return true;
	if (k->quiet_level)
		return false;
	if (k->exception || k->traceback || k->chained)
		return true;
	char *frame = NULL;
	int strong = 0, weak = 0;
	bool ipy = lc_ipy_frame(m, n, &frame, &strong, &weak);
	free(frame);
	if (ipy)
		return true;
	if (k->kind == NK_INDENT || k->kind == NK_CONT) {
		size_t i = 0;
		while (i < n && (m[i] == ' ' || m[i] == '\t'))
			i++;
		if ((tb_open && k->kind == NK_INDENT) || (n - i > 6 && memcmp(m + i, "File \"", 6) == 0))
			return true;
	}
	/* NCCL unwinding a failure: `NCCL INFO file.cc:12 -> 2` */
	const char *arrow = n > 5 ? memmem(m, n, " -> ", 4) : NULL;
	if (arrow && word_in(m, n, "NCCL INFO") && arrow + 4 < m + n && arrow[4] >= '1' && arrow[4] <= '9')
		return true;
	static const char *const words[] = { "Error", "error:", "ERROR", "FAILED", "Failed", "failed",
					     "Fatal", "fatal", "Exception", "exception:" };
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (word_in(m, n, words[i]))
			return true;
	return shell_death(m, n) != EV_KINDS;
}

/* CPython's own wording of its built-in exceptions, which a tool that
 * catches one prints without the class (`Failed to start model server:
 * integer division or modulo by zero`): the class it names. */
static const struct {
	const char *words, *type;
} builtin_words[] = {
	{ "division or modulo by zero", "ZeroDivisionError" },
	{ "division by zero", "ZeroDivisionError" },
	{ "index out of range", "IndexError" },
	{ "object has no attribute", "AttributeError" },
	{ "No module named", "ModuleNotFoundError" },
	{ "cannot import name", "ImportError" },
	{ "got an unexpected keyword argument", "TypeError" },
	{ "required positional argument", "TypeError" },
	{ "object is not subscriptable", "TypeError" },
	{ "object is not callable", "TypeError" },
};

static char *builtin_type(const char *m, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(builtin_words); i++)
		if (memmem(m, n, builtin_words[i].words, strlen(builtin_words[i].words)))
			return xstrdup(builtin_words[i].type);
	return NULL;
}

/* The type of an error line: an exception's class, or the word before
 * the first colon of a tool's message (`nvidia-container-cli: ...`), or
 * the built-in class CPython's wording in it names. */
static void error_type(const char *m, size_t n, const struct norm *k, char **type, char **message)
{
	const char *c = memchr(m, ':', n);
	if (k->exception) {
		size_t tl = c ? (size_t)(c - m) : n;
		*type = tr_capped_copy(m, tl, 200, NULL);
		const char *msg = c ? c + 1 : m + n;
		while (msg < m + n && *msg == ' ')
			msg++;
		*message = tr_capped_copy(msg, (size_t)(m + n - msg), TRIAGE_TEXT_CAP, NULL);
		return;
	}
	*type = builtin_type(m, n);
	*message = tr_capped_copy(m, n, TRIAGE_TEXT_CAP, NULL);
}

/* An exception token in m[0, n) (`pkg.Name: ` or `Name` at the end, the
 * name ending like an exception class) where no header said so: its
 * offset, or -1. Only the first 300 bytes are looked at. */
long lc_find_exception(const char *m, size_t n)
{
	static const char *const ends[] = { "Error", "Exception", "Interrupt", "Failure", "Fault" };
	size_t lim = n < 300 ? n : 300;
	for (size_t i = 0; i < lim; i++) {
		if (i && !strchr(" \t|:[(`'\"*", m[i - 1]))
			continue;
		size_t j = i;
		while (j < n && (m[j] == '_' || m[j] == '.' || (m[j] >= 'a' && m[j] <= 'z') ||
				 (m[j] >= 'A' && m[j] <= 'Z') || (m[j] >= '0' && m[j] <= '9')))
			j++;
		if (j == i || !((m[i] >= 'A' && m[i] <= 'Z') || (m[i] >= 'a' && m[i] <= 'z')))
			continue;
		if (!(j == n || (m[j] == ':' && (j + 1 == n || m[j + 1] == ' '))))
			continue;
		for (size_t e = 0; e < ARRAY_SIZE(ends); e++) {
			size_t l = strlen(ends[e]);
			/* a bare `Error:` is a tool's word, not a Python class */
			if (j - i > l && memcmp(m + j - l, ends[e], l) == 0)
				return (long)i;
			if (j - i == l && e == 1 && memcmp(m + i, "Exception", l) == 0)
				return (long)i;
		}
	}
	return -1;
}

/* A frame as faulthandler dumps it at a native crash: `File "p", line N
 * in f`, no comma before `in` (a traceback's frame has one). */
static bool dump_frame(const char *m, size_t n)
{
	const char *ln = memmem(m, n, "\", line ", 8);
	return ln && !memmem(ln, (size_t)(m + n - ln), ", in ", 5) &&
	       memmem(ln, (size_t)(m + n - ln), " in ", 4);
}

/* One line of the tail, normalised. */
struct tline {
	const char *ls, *le;  /* raw */
	uint64_t line;
	char buf[1024];
	size_t n;
	struct norm k;
	const char *m;        /* after the level header */
	size_t mn;
};

static void tline_read(struct tline *l, const char *ls, const char *le, uint64_t line)
{
	l->ls = ls;
	l->le = le;
	l->line = line;
	size_t len = (size_t)(le - ls) < sizeof(l->buf) ? (size_t)(le - ls) : sizeof(l->buf);
	l->n = norm_line(ls, len, l->buf, &l->k);
	l->m = l->buf + l->k.body;
	l->mn = l->n - l->k.body;
}

static bool has_root(const struct lifecycle *lc, uint64_t line)
{
	for (size_t i = 0; i < lc->n_tbs; i++)
		if (lc->tbs[i].root_line == line)
			return true;
	return false;
}

/* The tail forwards: exceptions no walk recorded become tracebacks. */
static void tail_exceptions(struct triage *t, const char *lo, uint64_t first)
{
	struct lifecycle *lc = &t->lc;
	struct triage_tb cur = { .chained_from = -1 };
	bool open = false, chained = false, prev_exc = false;
	int strong = 0, weak = 0;
	long last = -1; /* index of the last tail traceback */
	const char *open_at = lo;
	struct tline *l = xcalloc(1, sizeof(*l));
	const char *p = lo, *e = lc->tail + lc->tail_len;
	for (uint64_t line = first; p < e; line++) {
		const char *le = memchr(p, '\n', (size_t)(e - p));
		le = le ? le : e;
		tline_read(l, p, le, line);
		p = le + 1;
		if (l->k.traceback || l->k.chained) {
			chained |= l->k.chained;
			if (l->k.traceback && !open) {
				open = true;
				cur.line_no = line;
				cur.quiet = l->k.quiet_level;
				cur.proc = lc_line_proc(t, l->ls, l->le, cur.proc_name);
				open_at = l->ls;
			}
			prev_exc = false;
			continue;
		}
		bool dump = (l->k.kind == NK_INDENT || l->k.kind == NK_CONT) && dump_frame(l->m, l->mn);
		if (dump && (!open || cur.dump)) {
			/* most recent call first: the first vLLM frame and the
			 * first phase named are the innermost */
			char *f = NULL;
			int s = 0, w = 0;
			lc_frame(l->m, l->mn, &f, &s, &w, NULL);
			if (!cur.frame)
				cur.frame = f;
			else
				free(f);
			strong = strong ? strong : s;
			weak = weak ? weak : w;
			if (!open) {
				open = true;
				cur.dump = true;
				cur.line_no = line;
				cur.proc = lc_line_proc(t, l->ls, l->le, cur.proc_name);
				open_at = l->ls;
			}
			prev_exc = false;
			continue;
		}
		if (((l->k.kind == NK_INDENT || l->k.kind == NK_CONT) &&
		     lc_frame(l->m, l->mn, &cur.frame, &strong, &weak, &cur.request)) ||
		    (!l->k.quiet_level && lc_ipy_frame(l->m, l->mn, &cur.frame, &strong, &weak))) {
			if (!open) {
				open = true;
				cur.line_no = line;
				cur.quiet = l->k.quiet_level;
				cur.proc = lc_line_proc(t, l->ls, l->le, cur.proc_name);
				open_at = l->ls;
			}
			prev_exc = false;
			continue;
		}
		if (open && l->k.kind == NK_INDENT && !l->k.exception)
			lc_code_call(l->m, l->mn, &strong, &weak); /* a frame's code line */
		long x = l->k.exception ? 0 : (l->k.quiet_level ? -1 : lc_find_exception(l->m, l->mn));
		if (x < 0 || prev_exc) {
			/* the exception's message goes on, or another line */
			bool cont = l->k.kind == NK_CONT || (prev_exc && x >= 0);
			prev_exc = prev_exc && cont;
			if (prev_exc || l->k.kind == NK_INDENT || l->k.kind == NK_BLANK || l->k.kind == NK_CONT)
				continue;
			if (l->mn == 0 || (open && !l->k.quiet_level))
				continue; /* an empty or ERROR record inside a logged traceback */
			if (!l->k.quiet_level || !open) {
				lc_tb_clear(&cur);
				cur = (struct triage_tb){ .chained_from = -1 };
				open = chained = false;
				strong = weak = 0;
			}
			continue;
		}
		prev_exc = true;
		if (has_root(lc, line)) {
			lc_tb_clear(&cur);
			cur = (struct triage_tb){ .chained_from = -1 };
			open = chained = false;
			strong = weak = 0;
			continue;
		}
		if (!open) {
			cur.line_no = line;
			cur.quiet = l->k.quiet_level;
		}
		cur.root_line = line;
		lc_split_exception(l->m + x, l->mn - (size_t)x, &cur.type, &cur.message);
		cur.proc = lc_line_proc(t, l->ls, l->le, cur.proc_name);
		cur.at = lc_phase_back(lo, l->ls);
		cur.phase = lc_tb_phase(strong, cur.message, cur.at, weak);
		cur.chained_from = chained && last >= 0 ? last : -1;
		uint64_t at = cur.line_no;
		lc_add_tb(t, &cur);
		last = -1;
		for (size_t i = 0; i < lc->n_tbs; i++)
			if (lc->tbs[i].line_no == at && lc->tbs[i].root_line == line)
				last = (long)i;
		cur = (struct triage_tb){ .chained_from = -1 };
		open = chained = false;
		strong = weak = 0;
	}
	/* a traceback the paste cut before its exception, unless the walk has
	 * it already */
	bool walked = false;
	for (size_t i = 0; open && i < lc->n_tbs; i++)
		walked |= !lc->tbs[i].root_line && lc->tbs[i].line_no <= cur.line_no;
	if (open && !walked) {
		cur.at = lc_phase_back(lo, open_at);
		cur.phase = lc_tb_phase(strong, NULL, cur.at, weak);
		cur.chained_from = chained && last >= 0 ? last : -1;
		lc_add_tb(t, &cur);
	}
	lc_tb_clear(&cur);
	free(l);
}

/* The tail backwards: shell deaths, and whether the log ends in an error. */
static void tail_end(struct triage *t, const char *lo, uint64_t line)
{
	struct lifecycle *lc = &t->lc;
	const char *p = lo + lc->tail_len;
	bool decided = false, shutdown = false;
	unsigned cont = 0;
	struct tline *l = xcalloc(1, sizeof(*l));
	for (int i = 0; i < TAIL_LINES && p > lo; i++, line--) {
		const char *le = p[-1] == '\n' ? p - 1 : p;
		const char *nl = le > lo ? memrchr(lo, '\n', (size_t)(le - lo)) : NULL;
		const char *ls = nl ? nl + 1 : lo;
		p = ls;
		tline_read(l, ls, le, line);
		enum triage_event_kind d = shell_death(l->buf, l->n);
		if (d != EV_KINDS && i < 64)
			lc_add_event(t, d, line, ls, le, lc_phase_back(lo, ls));
		if (access_line(l->buf, l->n))
			lc->answered_line = line; /* the earliest the tail shows */
		if (decided)
			continue;
		if (noise(l->buf, l->n, &l->k)) {
			shutdown |= word_in(l->buf, l->n, "hutdown") || word_in(l->buf, l->n, "hutting down");
			continue;
		}
		bool crash = crash_frame(l->m, l->mn);
		bool err = crash || error_line(l->buf, l->n, &l->k, lc->cur_open) ||
			   (l->k.body && error_line(l->m, l->mn, &l->k, false));
		if (!err && (l->k.kind == NK_CONT || l->k.kind == NK_INDENT) && cont < 16) {
			cont++; /* the record, or the frame of a code line, may be above */
			continue;
		}
		decided = true;
		if (!err)
			break;
		lc->error_line = line;
		lc->error_shutdown = shutdown;
		lc->error_off = (size_t)(ls - lo);
		lc->error_native = d != EV_KINDS || native_frame(l->m, l->mn);
		if (d == EV_KINDS && crash) {
			/* the log ends in a native crash's backtrace: a death */
			lc->error_native = true;
			lc_add_event(t, EV_NATIVE, line, ls, le, lc_phase_back(lo, ls));
		}
		long x = l->k.exception ? 0 : lc_find_exception(l->m, l->mn);
		if (x > 0) {
			struct norm k = l->k;
			k.exception = true;
			error_type(l->m + x, l->mn - (size_t)x, &k, &lc->error_type, &lc->error_message);
		} else {
			error_type(l->m, l->mn, &l->k, &lc->error_type, &lc->error_message);
		}
		if (i >= 64)
			break;
	}
	free(l);
}

void lc_read_tail(struct triage *t)
{
	struct lifecycle *lc = &t->lc;
	if (!lc->tail_len)
		return;
	/* at most TAIL_LINES lines */
	const char *lo = lc->tail, *e = lc->tail + lc->tail_len, *p = e;
	uint64_t last = lc->tail_first + count_nl(lo, lc->tail_len) - (e[-1] == '\n');
	for (int i = 0; i < TAIL_LINES && p > lo; i++) {
		const char *le = p[-1] == '\n' ? p - 1 : p;
		const char *nl = le > lo ? memrchr(lo, '\n', (size_t)(le - lo)) : NULL;
		p = nl ? nl + 1 : lo;
	}
	tail_exceptions(t, p, last - count_nl(p, (size_t)(e - p)) + (e[-1] == '\n'));
	tail_end(t, lo, last);
}
