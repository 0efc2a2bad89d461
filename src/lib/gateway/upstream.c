/*
 * upstream.c — the engine side of a worker: its libcurl multi handle.
 *
 * The worker's loop (worker.c) waits in one epoll set holding the engine
 * sockets libcurl asks for (its socket callback), the loop's wake eventfd
 * that other threads write to hand over work (drain, reload), the epoll set
 * of client sockets (below) and MHD's epoll fd; libcurl's timer comes from
 * its timer callback. The loop runs this file through upstream_loop_ops
 * (worker.h): the turn before each wait, the events of the fds added here,
 * and the collection of finished transfers after them.
 * Each wake-up hands libcurl only the socket that is ready
 * (curl_multi_socket_action), so the cost of a frame does not grow with the
 * number of open streams. The client side runs on the same thread, so a
 * relay started, cancelled or unpaused from an MHD callback needs no
 * hand-off: it is started at once or queued for the loop's next turn. This
 * file never calls the client side: it tells it through r->wake.
 *
 * It carries every relayed request of its worker; worker 0 also runs the
 * background /health poll of each feasible role (every health_interval_ms,
 * bounded by health_timeout_ms) and the pressure readings (once a second),
 * which every worker reads. Bytes from an engine are appended to the relay's
 * buffer and the client side is woken at once, so an SSE frame is on its
 * way to the client within one turn.
 *
 * Memory: a relay's buffer is bounded whatever the answer's length. The
 * part the client has read is dropped before each append (the unread rest
 * moved to the front once the read part is large), and a relay holding
 * more than HIGH_WATER unread bytes for a slow client pauses its transfer
 * (libcurl stops reading the engine's socket: the engine feels TCP
 * back-pressure) until the client side drains it below LOW_WATER (relay.c).
 * Every allocation of a relay buffer or a request body is charged to one
 * budget shared by all workers (max_buffered): a relay that would grow
 * past it pauses as for a slow client, and a request that finds it spent
 * is answered 503 server_busy (server.c). So a stream of any length passes
 * at the client's speed in flat memory.
 *
 * Client disconnects: each relay's client socket sits in an epoll set
 * (EPOLLRDHUP) that is part of the loop's set, so a client that goes away
 * while the relay waits for the engine is noticed at once and the upstream
 * transfer is removed — its connection closed, which is how vLLM learns to
 * abort the request and free the sequence. Events carry a slot and
 * generation, never a pointer, so a stale event cannot reach a freed relay;
 * a detached relay's fd is never touched again (it may be reused).
 *
 * Timeouts: connecting is bounded by connect_timeout_s (libcurl); an engine
 * that has not sent its answer's head within first_byte_timeout_s of the
 * start ends its relay (503, relay.c), and one silent for read_timeout_s
 * after its head ends it too (a stream that had started gets an error
 * event). The two are apart so a long prefill may be given minutes while a
 * stalled stream is still cut.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "upstream.h"

#define HIGH_WATER (256 * 1024)
#define WHOLE_MAX (64 * 1024)
/* the read part of a relay buffer is moved out once it is this large (or
 * half the buffer): one memmove per ~COMPACT_AT bytes relayed */
#define COMPACT_AT (64 * 1024)

double upstream_second_ms = 1000;

bool upstream_budget_take(struct upstream_shared *sh, size_t n, size_t budget)
{
	long long now = __atomic_add_fetch(&sh->buffered, (long long)n, __ATOMIC_RELAXED);
	if (budget && now > (long long)budget) {
		__atomic_sub_fetch(&sh->buffered, (long long)n, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

void upstream_budget_give(struct upstream_shared *sh, size_t n)
{
	if (n)
		__atomic_sub_fetch(&sh->buffered, (long long)n, __ATOMIC_RELAXED);
}

bool upstream_budget_spent(struct upstream_shared *sh, size_t budget)
{
	return budget && __atomic_load_n(&sh->buffered, __ATOMIC_RELAXED) >= (long long)budget;
}

size_t upstream_buf_grown(const struct buf *b, size_t n)
{
	if (b->len + n + 1 <= b->alloc)
		return b->alloc;
	size_t a = b->alloc ? b->alloc : 256;
	while (a < b->len + n + 1)
		a *= 2;
	return a;
}

void relay_unref(struct relay *r)
{
	pthread_mutex_lock(&r->mu);
	int left = --r->refs;
	pthread_mutex_unlock(&r->mu);
	if (left > 0)
		return;
	if (r->easy)
		upstream_easy_put(r->up, r->easy);
	curl_slist_free_all(r->hdrs);
	free(r->url);
	free(r->body);
	free(r->content_type);
	buf_free(&r->data);
	upstream_budget_give(r->up->sh, r->charged);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

CURL *upstream_easy_get(struct upstream *u)
{
	CURL *e = NULL;
	pthread_mutex_lock(&u->qmu);
	if (u->n_easy_pool)
		e = u->easy_pool[--u->n_easy_pool];
	pthread_mutex_unlock(&u->qmu);
	if (!e)
		return curl_easy_init();
	curl_easy_reset(e);
	return e;
}

void upstream_easy_put(struct upstream *u, CURL *e)
{
	pthread_mutex_lock(&u->qmu);
	bool kept = u->multi && u->n_easy_pool < UPSTREAM_EASY_POOL;
	if (kept)
		u->easy_pool[u->n_easy_pool++] = e;
	pthread_mutex_unlock(&u->qmu);
	if (!kept)
		curl_easy_cleanup(e);
}

/* Tell the client side that r's state changed (r->mu held). */
static void wake(struct relay *r)
{
	if (r->wake)
		r->wake(r);
}

/* Queue r for the loop. Every queue entry holds a reference (for q_new it
 * is the upstream side's own), dropped once handled. */
static void push(struct upstream *u, struct relay ***q, size_t *n, size_t *a, struct relay *r,
		 bool ref)
{
	if (ref) {
		pthread_mutex_lock(&r->mu);
		r->refs++;
		pthread_mutex_unlock(&r->mu);
	}
	pthread_mutex_lock(&u->qmu);
	if (*n == *a) {
		*a = *a ? *a * 2 : 16;
		*q = xrealloc(*q, *a * sizeof(**q));
	}
	(*q)[(*n)++] = r;
	pthread_mutex_unlock(&u->qmu);
	worker_wake(u->w);
}

static void start_relay(struct upstream *u, struct relay *r);

void upstream_submit(struct upstream *u, struct relay *r)
{
	if (worker_on_loop(u->w)) /* from MHD's callback on the same loop: start at once */
		start_relay(u, r);
	else
		push(u, &u->q_new, &u->n_new, &u->a_new, r, false);
}

void upstream_cancel(struct upstream *u, struct relay *r)
{
	push(u, &u->q_cancel, &u->n_cancel, &u->a_cancel, r, true);
}

void upstream_unpause(struct upstream *u, struct relay *r)
{
	push(u, &u->q_unpause, &u->n_unpause, &u->a_unpause, r, true);
}

void upstream_cancel_all(struct upstream *u)
{
	pthread_mutex_lock(&u->qmu);
	u->cancel_all = true;
	pthread_mutex_unlock(&u->qmu);
	worker_wake(u->w);
}

void upstream_poll_now(struct upstream *u)
{
	u->next_health = 0;
	worker_wake(u->w);
}

/* Header lines: at the blank line ending a final (non-1xx) response, the
 * relay has its head and the client side can answer. */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct relay *r = ud;
	size_t len = size * n;
	if (len > 2 || (len == 2 && p[0] != '\r') || (len == 1 && p[0] != '\n'))
		return len;
	long code = 0;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200)
		return len;
	char *ct = NULL;
	curl_easy_getinfo(r->easy, CURLINFO_CONTENT_TYPE, &ct);
	curl_off_t cl = -1;
	curl_easy_getinfo(r->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	r->t_head = r->t_last_rx = gw_now_ms();
	pthread_mutex_lock(&r->mu);
	r->status = code;
	free(r->content_type);
	r->content_type = ct ? xstrdup(ct) : NULL;
	r->content_length = cl;
	r->head = true;
	/* a small body of known length that is not a stream is answered in one
	 * piece once complete: one wake-up instead of two (it is never an SSE
	 * frame, so nothing waits on its parts) */
	r->whole = cl >= 0 && cl <= WHOLE_MAX && !(ct && !strncmp(ct, "text/event-stream", 17));
	if (!r->whole || cl == 0)
		wake(r);
	pthread_mutex_unlock(&r->mu);
	return len;
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	struct relay *r = ud;
	size_t len = size * n;
	r->t_last_rx = gw_now_ms();
	pthread_mutex_lock(&r->mu);
	if (r->client_gone || r->detached) {
		pthread_mutex_unlock(&r->mu);
		return 0; /* aborts the transfer */
	}
	size_t unread = r->data.len - r->rd;
	if (unread > HIGH_WATER) {
		r->paused = true;
		pthread_mutex_unlock(&r->mu);
		return CURL_WRITEFUNC_PAUSE;
	}
	if (r->rd && (r->rd == r->data.len || r->rd >= COMPACT_AT || r->rd > unread)) {
		memmove(r->data.data, r->data.data + r->rd, unread);
		r->data.len = unread;
		r->data.data[unread] = '\0';
		r->rd = 0;
	}
	size_t grown = upstream_buf_grown(&r->data, len);
	if (grown > r->data.alloc) {
		size_t more = grown - r->data.alloc;
		/* past the budget: wait for the client to read what is here (a
		 * body answered whole is bounded by WHOLE_MAX and never waits) */
		if (!upstream_budget_take(r->up->sh, more, r->max_buffered)) {
			if (unread && !r->whole) {
				r->paused = true;
				pthread_mutex_unlock(&r->mu);
				return CURL_WRITEFUNC_PAUSE;
			}
			upstream_budget_take(r->up->sh, more, 0);
		}
		r->charged += more;
	}
	int rc = buf_add(&r->data, p, len);
	if (!r->whole || (long long)r->data.len >= r->content_length)
		wake(r);
	pthread_mutex_unlock(&r->mu);
	return rc < 0 ? 0 : len;
}

static void slot_add(struct upstream *u, struct relay *r)
{
	size_t i = 0;
	while (i < u->n_slots && u->slots[i])
		i++;
	if (i == u->n_slots) {
		size_t a = u->n_slots ? u->n_slots * 2 : 64;
		u->slots = xrealloc(u->slots, a * sizeof(*u->slots));
		u->gens = xrealloc(u->gens, a * sizeof(*u->gens));
		for (size_t k = u->n_slots; k < a; k++) {
			u->slots[k] = NULL;
			u->gens[k] = 0;
		}
		u->n_slots = a;
	}
	u->slots[i] = r;
	r->slot = (unsigned)i;
	r->gen = ++u->gens[i];
	u->n_active++;
}

static void start_relay(struct upstream *u, struct relay *r)
{
	CURL *e = r->easy;
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	r->t_start = r->t_last_rx = gw_now_ms();
	slot_add(u, r);
	pthread_mutex_lock(&r->mu);
	bool gone = r->detached || r->client_gone;
	if (!gone && r->client_fd >= 0) {
		struct epoll_event ev = { .events = EPOLLRDHUP,
					  .data.u64 = ((uint64_t)r->gen << 32) | r->slot };
		epoll_ctl(u->epfd, EPOLL_CTL_ADD, r->client_fd, &ev);
	}
	pthread_mutex_unlock(&r->mu);
	curl_multi_add_handle(u->multi, e);
}

/* The transfer of r is over (done, failed or cancelled): take it out of
 * the multi handle and drop the upstream side's reference. */
static void end_relay(struct upstream *u, struct relay *r, CURLcode result)
{
	if (!u->slots[r->slot] || u->slots[r->slot] != r)
		return; /* already ended */
	curl_multi_remove_handle(u->multi, r->easy);
	u->slots[r->slot] = NULL;
	u->n_active--;
	r->t_done = gw_now_ms();
	pthread_mutex_lock(&r->mu);
	if (!r->detached && r->client_fd >= 0)
		epoll_ctl(u->epfd, EPOLL_CTL_DEL, r->client_fd, NULL);
	r->done = true;
	r->result = result;
	wake(r);
	pthread_mutex_unlock(&r->mu);
	relay_unref(r);
}

/* Take the queues; start new relays, cancel detached ones, unpause. */
static bool drain_queues(struct upstream *u)
{
	pthread_mutex_lock(&u->qmu);
	struct relay **nw = u->q_new, **cc = u->q_cancel, **up = u->q_unpause;
	size_t nn = u->n_new, nc = u->n_cancel, nu = u->n_unpause;
	u->q_new = u->q_cancel = u->q_unpause = NULL;
	u->n_new = u->n_cancel = u->n_unpause = u->a_new = u->a_cancel = u->a_unpause = 0;
	bool stop = worker_stopping(u->w), all = u->cancel_all;
	u->cancel_all = false;
	pthread_mutex_unlock(&u->qmu);
	for (size_t i = 0; i < nn; i++)
		start_relay(u, nw[i]);
	for (size_t i = 0; i < nc; i++) {
		if (cc[i]->slot < u->n_slots)
			end_relay(u, cc[i], CURLE_ABORTED_BY_CALLBACK);
		relay_unref(cc[i]);
	}
	for (size_t i = 0; i < nu; i++) {
		struct relay *r = up[i];
		if (r->slot < u->n_slots && u->slots[r->slot] == r) {
			pthread_mutex_lock(&r->mu);
			bool p = r->paused;
			r->paused = false;
			pthread_mutex_unlock(&r->mu);
			if (p)
				curl_easy_pause(r->easy, CURLPAUSE_CONT);
		}
		relay_unref(r);
	}
	if (all)
		for (size_t i = 0; i < u->n_slots; i++)
			if (u->slots[i]) {
				struct relay *r = u->slots[i];
				pthread_mutex_lock(&r->mu);
				r->cancelled = true;
				pthread_mutex_unlock(&r->mu);
				end_relay(u, r, CURLE_ABORTED_BY_CALLBACK);
			}
	free(nw);
	free(cc);
	free(up);
	return stop;
}

static void client_events(struct upstream *u)
{
	struct epoll_event ev[64];
	int n = epoll_wait(u->epfd, ev, 64, 0);
	for (int i = 0; i < n; i++) {
		unsigned slot = (unsigned)(ev[i].data.u64 & 0xffffffffu);
		unsigned gen = (unsigned)(ev[i].data.u64 >> 32);
		if (slot >= u->n_slots || !u->slots[slot] || u->gens[slot] != gen)
			continue;
		struct relay *r = u->slots[slot];
		pthread_mutex_lock(&r->mu);
		r->client_gone = true;
		pthread_mutex_unlock(&r->mu);
		end_relay(u, r, CURLE_ABORTED_BY_CALLBACK);
	}
}

static void stall_scan(struct upstream *u, double now)
{
	for (size_t i = 0; i < u->n_slots; i++) {
		struct relay *r = u->slots[i];
		if (!r || r->paused)
			continue;
		/* before the head: the first-byte timeout (a long prefill); after
		 * it: the read timeout between bytes */
		int limit = r->head ? r->read_timeout_s : r->first_byte_timeout_s;
		if (now - r->t_last_rx < limit * upstream_second_ms)
			continue;
		pthread_mutex_lock(&r->mu);
		r->stalled = true;
		pthread_mutex_unlock(&r->mu);
		end_relay(u, r, CURLE_OPERATION_TIMEDOUT);
	}
}

/* libcurl's socket callback: keep the loop's epoll set in step with the
 * engine sockets libcurl wants watched. */
static int on_socket(CURL *e, curl_socket_t s, int what, void *ud, void *sockp)
{
	(void)e;
	struct upstream *u = ud;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(u->w->loop_fd, EPOLL_CTL_DEL, s, NULL);
		return 0;
	}
	struct epoll_event ev = { .events = (what & CURL_POLL_IN ? EPOLLIN : 0u) |
					    (what & CURL_POLL_OUT ? EPOLLOUT : 0u),
				  .data.u64 = (uint64_t)s };
	if (!sockp) {
		if (epoll_ctl(u->w->loop_fd, EPOLL_CTL_ADD, s, &ev) < 0 && errno == EEXIST)
			epoll_ctl(u->w->loop_fd, EPOLL_CTL_MOD, s, &ev);
		curl_multi_assign(u->multi, s, u);
	} else if (epoll_ctl(u->w->loop_fd, EPOLL_CTL_MOD, s, &ev) < 0 && errno == ENOENT) {
		epoll_ctl(u->w->loop_fd, EPOLL_CTL_ADD, s, &ev);
	}
	return 0;
}

/* libcurl's timer callback: when to hand it CURL_SOCKET_TIMEOUT (-1: never). */
static int on_timer(CURLM *m, long timeout_ms, void *ud)
{
	(void)m;
	struct upstream *u = ud;
	u->timer_at = timeout_ms < 0 ? -1 : gw_now_ms() + (double)timeout_ms;
	return 0;
}

/* Collect finished transfers (after events were handed to libcurl). */
static void finished(struct upstream *u)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(u->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		int *kind = NULL;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&kind);
		CURLcode res = m->data.result;
		if (kind && *kind == XFER_HEALTH)
			upstream_health_done(u, (struct health_xfer *)kind, res);
		else if (kind)
			end_relay(u, (struct relay *)kind, res);
	}
}

/* One turn of the loop before it waits: queued work, libcurl's timer,
 * finished transfers, worker 0's polls, the stall scan. Returns true when
 * the worker is to stop; *next: when the loop must turn again (ms). */
static bool turn(void *ud, double *next)
{
	struct upstream *u = ud;
	struct worker *w = u->w;
	if (drain_queues(u))
		return true;
	double now = gw_now_ms();
	if (u->timer_at >= 0 && now >= u->timer_at) {
		int running;
		u->timer_at = -1; /* the callback may set the next one */
		curl_multi_socket_action(u->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	finished(u);
	now = gw_now_ms();
	if (w->idx == 0 && now >= u->next_health)
		upstream_health_poll(u, now);
	if (w->idx == 0 && now >= u->next_pressure) {
		upstream_pressure_tick(u);
		u->next_pressure = now + 1000;
	}
	if (now >= u->next_stall_scan) {
		stall_scan(u, now);
		u->next_stall_scan = now + upstream_second_ms / 4;
	}
	double t = u->next_stall_scan;
	if (w->idx == 0 && u->next_health < t)
		t = u->next_health;
	if (u->timer_at >= 0 && u->timer_at < t)
		t = u->timer_at;
	*next = t;
	return false;
}

/* An event of an fd added here: the disconnect watch or an engine socket. */
static void event(void *ud, uint64_t tag, uint32_t e)
{
	struct upstream *u = ud;
	if (tag == TAG_CLIENTS) {
		client_events(u);
	} else {
		int running;
		int flags = (e & EPOLLIN ? CURL_CSELECT_IN : 0) | (e & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
			    (e & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
		curl_multi_socket_action(u->multi, (curl_socket_t)tag, flags, &running);
	}
}

static void settle(void *ud)
{
	finished(ud);
}

const struct worker_ops upstream_loop_ops = { .turn = turn, .event = event, .settle = settle };

int upstream_init(struct upstream *u, struct worker *w, struct upstream_shared *sh,
		  struct err **err)
{
	u->w = w;
	u->sh = sh;
	u->epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ec = { .events = EPOLLIN, .data.u64 = TAG_CLIENTS };
	if (u->epfd < 0 || epoll_ctl(w->loop_fd, EPOLL_CTL_ADD, u->epfd, &ec) < 0) {
		int e = errno;
		if (u->epfd >= 0)
			close(u->epfd);
		u->epfd = -1;
		return err_errno(err, EXIT_RUNTIME, e, "epoll/eventfd");
	}
	u->timer_at = -1;
	u->multi = curl_multi_init();
	curl_multi_setopt(u->multi, CURLMOPT_MAXCONNECTS, 4096L);
	curl_multi_setopt(u->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(u->multi, CURLMOPT_SOCKETDATA, u);
	curl_multi_setopt(u->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(u->multi, CURLMOPT_TIMERDATA, u);
	pthread_mutex_init(&u->qmu, NULL);
	for (int i = 0; i < ROLE__COUNT; i++)
		u->health[i].role = i;
	return 0;
}

void upstream_free(struct upstream *u)
{
	if (!u->multi)
		return;
	for (size_t i = 0; i < u->n_slots; i++)
		if (u->slots[i])
			end_relay(u, u->slots[i], CURLE_ABORTED_BY_CALLBACK);
	for (int i = 0; i < ROLE__COUNT; i++) {
		if (u->health[i].easy) {
			curl_multi_remove_handle(u->multi, u->health[i].easy);
			curl_easy_cleanup(u->health[i].easy);
		}
		free(u->health[i].url);
	}
	/* relays queued but never started */
	for (size_t i = 0; i < u->n_new; i++) {
		pthread_mutex_lock(&u->q_new[i]->mu);
		u->q_new[i]->done = true;
		u->q_new[i]->result = CURLE_ABORTED_BY_CALLBACK;
		wake(u->q_new[i]);
		pthread_mutex_unlock(&u->q_new[i]->mu);
		relay_unref(u->q_new[i]);
	}
	for (size_t i = 0; i < u->n_cancel; i++)
		relay_unref(u->q_cancel[i]);
	for (size_t i = 0; i < u->n_unpause; i++)
		relay_unref(u->q_unpause[i]);
	free(u->q_new);
	free(u->q_cancel);
	free(u->q_unpause);
	free(u->slots);
	free(u->gens);
	pthread_mutex_lock(&u->qmu);
	while (u->n_easy_pool)
		curl_easy_cleanup(u->easy_pool[--u->n_easy_pool]);
	CURLM *m = u->multi;
	u->multi = NULL; /* every relay has ended: nothing is put back after this */
	pthread_mutex_unlock(&u->qmu);
	curl_multi_cleanup(m);
	close(u->epfd);
	u->epfd = -1;
	pthread_mutex_destroy(&u->qmu);
}
