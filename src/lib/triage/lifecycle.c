/*
 * lifecycle.c — the lifecycle reader: what happened to the processes of a
 * log, read beside the signatures in the same pass (see triage.h; the
 * verdict drawn from it is in verdict.c).
 *
 * Markers: the lines that say where a process is (startup complete, engine
 * dead, fatal signal, exit codes, restarts, native deaths, NCCL watchdog
 * aborts, the container runtime's errors) are anchors of the prefilter like
 * the signatures' (each at least WM_FAST bytes, none in the background of
 * ordinary vLLM lines), so the pass costs nothing on lines that hold none.
 * Short words a shell prints when a process dies ("Killed", "Aborted") are
 * looked for only in the log's tail (tail.c).
 *
 * Tracebacks: the walk in triage.c hands every line it passes here; a
 * `File "...", line N, in f` line is a frame (the innermost one under a
 * vllm/ directory is the one reported; its function may name the phase),
 * the last exception line is the root, and a chained-exception banner right
 * after a root links the next traceback to it.
 *
 * Phase: phase.c (frames, the exception's message, progress lines).
 *
 * Processes: the prefix of an event's line names its process (normalise.c
 * peels it): APIServer, EngineCore*, workers (VllmWorker*, Worker*,
 * RayWorkerWrapper), other Ray actors and the raylet.
 */
#include <stdlib.h>
#include <string.h>

#include "normalise.h"
#include "triage_int.h"
#include "../util/cleanup.h"

#define LC_TEXT_CAP 512 /* bytes of an event's line kept */

struct marker {
	const char *text;
	enum triage_event_kind kind;
};

/* Every text is at least WM_FAST bytes (an anchor of the Wu-Manber walk). */
static const struct marker markers[] = {
	{ "Application startup complete", EV_STARTUP },
	{ "EngineDeadError", EV_ENGINE_DEAD },
	{ "Background loop has errored", EV_ENGINE_DEAD },
	{ "output_handler failed", EV_ENGINE_DEAD },
	{ "EngineCore encountered a fatal error", EV_ENGINE_DEAD },
	{ "Engine loop has died", EV_ENGINE_DEAD },
	/* the engine writes out the input of a model step that raised (V0's
	 * model runner, V1's engine core) before the error ends it */
	{ "Writing input of failed execution", EV_ENGINE_DEAD },
	{ "Dumping input data for V1 LLM engine", EV_ENGINE_DEAD },
	{ "ot fatal signal from worker processes", EV_FATAL_SIGNAL },
	{ "Engine process failed to start", EV_ENGINE_FAILED },
	{ "Engine core initialization failed", EV_ENGINE_FAILED },
	{ "EngineCore failed to start", EV_ENGINE_FAILED },
	{ "Worker failed with error", EV_ENGINE_FAILED },
	{ "Exception in worker", EV_ENGINE_FAILED },
	{ "died unexpectedly", EV_PROC_DIED },
	{ "died, exit code", EV_PROC_DIED },
	{ "ActorDiedError", EV_PROC_DIED },
	{ "The actor died", EV_PROC_DIED },
	{ "exited with code", EV_EXIT },
	/* kubectl describe's container state, systemd's unit */
	{ "Exit Code:", EV_EXIT },
	{ "Main process exited", EV_EXIT },
	/* Ray: a worker process gone under a task */
	{ "A worker died or was killed", EV_PROC_DIED },
	{ "Back-off restarting failed container", EV_RESTART },
	{ "CrashLoopBackOff", EV_RESTART },
	{ "Segmentation fault", EV_NATIVE },
	{ "core dumped", EV_NATIVE },
	{ "Fatal Python error", EV_NATIVE },
	{ "terminate called after throwing", EV_NATIVE },
	/* crash handlers: absl's (Ray's raylet and workers) for a fatal
	 * signal (not SIGTERM, a stop), UCX's backtrace header */
	{ "*** SIGSEGV received at", EV_NATIVE },
	{ "*** SIGABRT received at", EV_NATIVE },
	{ "*** SIGBUS received at", EV_NATIVE },
	{ "*** SIGILL received at", EV_NATIVE },
	{ "*** SIGFPE received at", EV_NATIVE },
	{ "==== backtrace (tid", EV_NATIVE },
	/* glibc's aborts on a damaged heap or stack */
	{ "double free or corruption", EV_NATIVE },
	{ "free(): invalid pointer", EV_NATIVE },
	{ "stack smashing detected", EV_NATIVE },
	/* torchrun's report of the signal a worker died of */
	{ "(SIGSEGV) received by PID", EV_NATIVE },
	{ "(SIGABRT) received by PID", EV_NATIVE },
	{ "(SIGKILL) received by PID", EV_KILLED },
	{ "Watchdog caught collective operation timeout", EV_WATCHDOG },
	{ "Some NCCL operations have failed or timed out", EV_WATCHDOG },
	{ "ncclCommWatchdog", EV_WATCHDOG },
	{ "watchdog thread terminated with exception", EV_WATCHDOG },
	{ "Heartbeat monitor timed out", EV_WATCHDOG },
	{ "Killed process", EV_KILLED },
	{ "Memory cgroup out of memory", EV_KILLED },
	/* Ray's memory monitor kills a task's worker */
	{ "node running low on memory", EV_KILLED },
	{ "Error response from daemon", EV_RUNTIME },
	{ "nvidia-container-cli", EV_RUNTIME },
	{ "OCI runtime create failed", EV_RUNTIME },
	{ "could not select device driver", EV_RUNTIME },
	{ "exec format error", EV_RUNTIME },
	{ "unknown or invalid runtime name", EV_RUNTIME },
	{ "failed to create shim task", EV_RUNTIME },
	/* an image with no build for this host (arm64: Jetson, GB10) */
	{ "no matching manifest for", EV_RUNTIME },
	/* Kubernetes never ran the container: no image, no GPU to place it on */
	{ "ImagePullBackOff", EV_RUNTIME },
	{ "ErrImagePull", EV_RUNTIME },
	{ "Insufficient nvidia.com/gpu", EV_RUNTIME },
	{ "vLLM API server version", EV_BOOT },
	{ "Initializing an LLM engine", EV_BOOT },
	{ "Initializing a V1 LLM engine", EV_BOOT },
	{ "Shutting down", EV_SHUTDOWN },
	/* an access-log line of a refused or failed request: the server was
	 * up to answer it (no event: a traceback before it was survived, see
	 * lc_survived_surely); not 2xx, which busy logs print on every line */
	{ "HTTP/1.1\" 4", EV_KINDS },
	{ "HTTP/1.1\" 5", EV_KINDS },
};

size_t lc_marker_count(void)
{
	return ARRAY_SIZE(markers);
}

const char *lc_marker_text(size_t k)
{
	return k < ARRAY_SIZE(markers) ? markers[k].text : "";
}

/* --- processes and phases ------------------------------------------------ */

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static enum triage_proc proc_kind(const char *name, bool any)
{
	if (!any)
		return PROC_NONE;
	if (starts(name, "APIServer") || starts(name, "ApiServer") || starts(name, "api_server"))
		return PROC_API;
	if (starts(name, "EngineCore") || starts(name, "MQLLMEngine") || starts(name, "LLMEngine"))
		return PROC_ENGINE;
	if (starts(name, "VllmWorker") || starts(name, "Worker") || starts(name, "RayWorker") ||
	    strstr(name, "WorkerProc") || starts(name, "GPUWorker"))
		return PROC_WORKER;
	if (starts(name, "raylet") || strcmp(name, "pid") == 0 || strstr(name, "Ray") ||
	    strstr(name, "Actor") || starts(name, "ServeReplica") || starts(name, "ServeController"))
		return PROC_RAY;
	return PROC_OTHER;
}

/* The process of the raw line [ls, le). */
enum triage_proc lc_line_proc(struct triage *t, const char *ls, const char *le, char *name)
{
	bool any = norm_process(ls, (size_t)(le - ls), name, TRIAGE_PROC_CAP);
	enum triage_proc k = proc_kind(name, any);
	t->lc.procs |= 1u << k;
	return k;
}

/* --- events ---------------------------------------------------------------- */

uint64_t line_at(const struct triage *t, const char *p)
{
	if (p >= t->count_from)
		return t->nl + count_nl(t->count_from, (size_t)(p - t->count_from)) + 1;
	return t->nl - count_nl(p, (size_t)(t->count_from - p)) + 1;
}

static bool fatal_kind(enum triage_event_kind k, int code)
{
	switch (k) {
	case EV_STARTUP:
	case EV_SHUTDOWN:
	case EV_BOOT:
		return false;
	case EV_EXIT:
		return code != 0;
	default:
		return true;
	}
}

/* The code an exit line names (`exited with code 1`, `Exit Code:  137`,
 * systemd's `code=exited, status=1/FAILURE`): the first number within 32
 * bytes after the marker, or -1. */
static int exit_code(const char *buf)
{
	static const char *const words[] = { "exited with code", "Exit Code:", "Main process exited",
					     "died, exit code" };
	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		const char *c = strstr(buf, words[i]);
		if (!c)
			continue;
		c += strlen(words[i]);
		for (int k = 0; k < 32 && *c; k++, c++)
			if ((*c >= '0' && *c <= '9') || (*c == '-' && c[1] >= '0' && c[1] <= '9'))
				return (int)strtol(c, NULL, 10);
		return -1;
	}
	return -1;
}

/* Record an event (the text is normalised from the raw line). */
static void add_event(struct triage *t, enum triage_event_kind kind, uint64_t line, const char *ls,
		      const char *le, enum triage_phase phase)
{
	struct lifecycle *lc = &t->lc;
	struct triage_event ev = { .kind = kind, .line_no = line, .code = -1, .phase = phase };
	ev.proc = lc_line_proc(t, ls, le, ev.proc_name);
	size_t n = (size_t)(le - ls) < LC_TEXT_CAP ? (size_t)(le - ls) : LC_TEXT_CAP;
	char buf[LC_TEXT_CAP + 1];
	struct norm k;
	size_t w = norm_line(ls, n, buf, &k);
	buf[w] = '\0';
	if (kind == EV_EXIT || kind == EV_PROC_DIED)
		ev.code = exit_code(buf);
	if (kind == EV_STARTUP) {
		if (!lc->first_startup)
			lc->first_startup = line;
		lc->last_startup = line;
	} else if (fatal_kind(kind, ev.code) && line > lc->last_death) {
		lc->last_death = line;
	}
	if (lc->n_events == LC_EVENTS)
		return;
	if (lc->n_events == lc->alloc_events) {
		lc->alloc_events = lc->alloc_events ? 2 * lc->alloc_events : 16;
		lc->events = xrealloc(lc->events, lc->alloc_events * sizeof(*lc->events));
	}
	ev.text = tr_capped_copy(buf + k.body, w - k.body, LC_TEXT_CAP, NULL);
	lc->events[lc->n_events++] = ev;
}

void lc_marker(struct triage *t, const char *s, const char *e, const char *ls, const char *le, size_t k)
{
	(void)e;
	const struct marker *m = &markers[k];
	if (!memmem(ls, (size_t)(le - ls), m->text, strlen(m->text)))
		return; /* a window of it, not the whole text */
	if (m->kind == EV_KINDS) {
		t->lc.answer_at = ls; /* its line is counted once, at the slice's end */
		return;
	}
	if (ls == t->lc.last_ls && t->lc.last_kind == (int)m->kind)
		return;
	t->lc.last_ls = ls;
	t->lc.last_kind = (int)m->kind;
	enum triage_phase ph = m->kind == EV_STARTUP || m->kind == EV_SHUTDOWN || m->kind == EV_BOOT ? PHASE_UNKNOWN
									: lc_phase_at(t, s, ls);
	add_event(t, m->kind, line_at(t, ls), ls, le, ph);
}

/* --- tracebacks -------------------------------------------------------- */

void lc_tb_clear(struct triage_tb *tb)
{
	free(tb->type);
	free(tb->message);
	free(tb->frame);
	memset(tb, 0, sizeof(*tb));
}

/* Keep the walked traceback (the last slot is reused when full). */
static void tb_keep(struct triage *t)
{
	struct lifecycle *lc = &t->lc;
	if (!lc->cur_open)
		return;
	lc->cur_open = false;
	lc->cur.phase = lc_tb_phase(lc->cur_strong, lc->cur.message, lc->cur.phase,
				    lc->cur_weak);
	lc_add_tb(t, &lc->cur);
}

void lc_add_tb(struct triage *t, struct triage_tb *tb)
{
	struct lifecycle *lc = &t->lc;
	if (lc->n_tbs == LC_TBS)
		lc_tb_clear(&lc->tbs[--lc->n_tbs]);
	size_t pos = lc->n_tbs;
	while (pos > 0 && lc->tbs[pos - 1].line_no > tb->line_no)
		pos--;
	memmove(lc->tbs + pos + 1, lc->tbs + pos, (lc->n_tbs - pos) * sizeof(*lc->tbs));
	lc->n_tbs++;
	for (size_t i = 0; i < lc->n_tbs; i++)
		if (i != pos && lc->tbs[i].chained_from >= (long)pos)
			lc->tbs[i].chained_from++;
	lc->tbs[pos] = *tb;
	memset(tb, 0, sizeof(*tb));
}

void lc_tb_begin(struct triage *t, const char *s, const char *e, const char *ls, const char *le)
{
	(void)e;
	struct lifecycle *lc = &t->lc;
	tb_keep(t);
	struct triage_tb *tb = &lc->cur;
	memset(tb, 0, sizeof(*tb));
	lc->cur_open = true;
	lc->cur_strong = lc->cur_weak = 0;
	tb->line_no = line_at(t, ls);
	tb->chained_from = -1;
	if (lc->chain_open && lc->n_tbs && tb->line_no <= lc->chain_line + 12)
		tb->chained_from = (long)lc->n_tbs - 1;
	lc->chain_open = false;
	tb->proc = lc_line_proc(t, ls, le, tb->proc_name);
	tb->quiet = classify(t, ls, le).quiet_level;
	tb->phase = tb->at = lc_phase_at(t, s, ls);
}

/* The vLLM part of a frame's path: from its last `vllm/` directory. */
void lc_tb_line(struct triage *t, const struct norm *k, size_t len)
{
	struct lifecycle *lc = &t->lc;
	/* a wrapper that relays the lines may have taken the frames'
	 * indentation away (`[vLLM] File "...", line 5, in <module>`) */
	if (!lc->cur_open || (k->kind != NK_INDENT && k->kind != NK_CONT))
		return;
	if (!lc_frame(t->scratch + k->body, len - k->body, &lc->cur.frame, &lc->cur_strong, &lc->cur_weak,
		      &lc->cur.request))
		lc_code_call(t->scratch + k->body, len - k->body, &lc->cur_strong, &lc->cur_weak);
}

/* Split an exception line into its type and message. */
void lc_split_exception(const char *text, size_t len, char **type, char **message)
{
	const char *c = memchr(text, ':', len);
	size_t tl = c ? (size_t)(c - text) : len;
	*type = tr_capped_copy(text, tl, 200, NULL);
	const char *m = c ? c + 1 : text + len;
	while (m < text + len && *m == ' ')
		m++;
	*message = tr_capped_copy(m, (size_t)(text + len - m), TRIAGE_TEXT_CAP, NULL);
}

void lc_tb_root(struct triage *t, uint64_t line, const char *text, size_t len, const char *p,
		const char *e)
{
	struct lifecycle *lc = &t->lc;
	if (!lc->cur_open)
		return;
	lc->cur.root_line = line;
	lc_split_exception(text, len, &lc->cur.type, &lc->cur.message);
	tb_keep(t);
	/* a chained banner in the next few lines links the next traceback */
	for (int i = 0; i < 6 && p < e; i++) {
		const char *le = memchr(p, '\n', (size_t)(e - p));
		le = le ? le : e;
		struct norm k = classify(t, p, le);
		if (k.chained) {
			lc->chain_open = true;
			lc->chain_line = line;
			break;
		}
		if (k.kind != NK_BLANK && k.kind != NK_CONT)
			break;
		p = le + 1;
	}
}

void lc_tb_abort(struct triage *t)
{
	tb_keep(t);
}

/* --- the tail ----------------------------------------------------------------- */

void lc_slice_end(struct triage *t, const char *s, size_t n)
{
	struct lifecycle *lc = &t->lc;
	/* grown to what is kept (a short log's tail is short): a 256 KiB
	 * buffer made and zeroed for every triage was a cost of its own */
	size_t want = (lc->tail_len + n < LC_TAIL ? lc->tail_len + n : LC_TAIL) + 1;
	if (want > lc->tail_alloc) {
		size_t a = lc->tail_alloc ? lc->tail_alloc : 4096;
		while (a < want)
			a *= 2;
		a = a < LC_TAIL + 1 ? a : LC_TAIL + 1;
		lc->tail = xrealloc(lc->tail, a);
		lc->tail_alloc = a;
	}
	if (n >= LC_TAIL) {
		memcpy(lc->tail, s + n - LC_TAIL, LC_TAIL);
		lc->tail_len = LC_TAIL;
	} else {
		size_t keep = lc->tail_len + n > LC_TAIL ? LC_TAIL - n : lc->tail_len;
		memmove(lc->tail, lc->tail + lc->tail_len - keep, keep);
		memcpy(lc->tail + keep, s, n);
		lc->tail_len = keep + n;
	}
	lc->tail[lc->tail_len] = '\0';
	/* start at a line start: drop a cut first line */
	if (lc->tail_len == LC_TAIL) {
		const char *nl = memchr(lc->tail, '\n', lc->tail_len);
		size_t cut = nl ? (size_t)(nl + 1 - lc->tail) : 0;
		memmove(lc->tail, lc->tail + cut, lc->tail_len - cut);
		lc->tail_len -= cut;
		lc->tail[lc->tail_len] = '\0';
	}
	/* t->nl counts the newlines through the end of the slice */
	lc->tail_first = t->nl - count_nl(lc->tail, lc->tail_len) + 1;
}

void lc_free(struct triage *t)
{
	struct lifecycle *lc = &t->lc;
	for (size_t i = 0; i < lc->n_tbs; i++)
		lc_tb_clear(&lc->tbs[i]);
	lc_tb_clear(&lc->cur);
	for (size_t i = 0; i < lc->n_events; i++)
		free(lc->events[i].text);
	free(lc->events);
	free(lc->tail);
	free(lc->error_type);
	free(lc->error_message);
	free(lc->root_type);
	free(lc->root_message);
}

void lc_add_event(struct triage *t, enum triage_event_kind kind, uint64_t line, const char *ls,
		  const char *le, enum triage_phase phase)
{
	add_event(t, kind, line, ls, le, phase);
}
