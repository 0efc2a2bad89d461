/*
 * worker.c — one worker loop of the gateway: a thread that runs its own MHD
 * daemon (external epoll mode, suspend/resume) and, through the worker_ops
 * the layer above registers (worker.h), its own engine side (upstream.c: a
 * libcurl multi handle), as nginx runs a worker process.
 *
 * The gateway starts N workers (server.c), each with its daemon listening on
 * the same address and port (SO_REUSEPORT: the kernel spreads new
 * connections over them). A request is handled wholly by the worker whose
 * daemon accepted it: MHD's callbacks, the relay's transfer and the resume
 * of the suspended connection all run on that one thread, so a request
 * costs no thread hand-off.
 *
 * The loop waits in one epoll set: its wake eventfd, MHD's epoll fd, and
 * what the layer above adds (the engine sockets, the client-disconnect
 * set). Each turn: ops->turn (queued work and timers), the front's timers
 * (w->front: the HTTP front's connection deadlines), then the ready
 * events (ops->event for those not the loop's own), ops->settle, then
 * MHD_run when MHD's fd is ready, its timeout is due, or a connection was
 * resumed (worker_kick: MHD 0.9.75 has no wake-up channel in external mode,
 * so a resume needs the loop to run it).
 *
 * Other threads touch a worker only through its queues and the wake fd:
 * drain asks each loop to quiesce its daemon (MHD_quiesce_daemon must run on
 * the loop that runs MHD_run) and waits for the answer, then to cancel what
 * is left, then to stop.
 */
#include <errno.h>
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "worker.h"

static void close_fds(struct worker *w)
{
	int *fds[] = { &w->loop_fd, &w->wake_fd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

int worker_init(struct worker *w, int idx, struct err **err)
{
	w->idx = idx;
	w->loop_fd = epoll_create1(EPOLL_CLOEXEC);
	w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event ew = { .events = EPOLLIN, .data.u64 = TAG_WAKE };
	if (w->loop_fd < 0 || w->wake_fd < 0 ||
	    epoll_ctl(w->loop_fd, EPOLL_CTL_ADD, w->wake_fd, &ew) < 0) {
		int e = errno;
		close_fds(w);
		return err_errno(err, EXIT_RUNTIME, e, "epoll/eventfd");
	}
	w->fds_open = true;
	return 0;
}

void worker_free(struct worker *w)
{
	if (w->fds_open)
		close_fds(w);
	w->fds_open = false;
}

void worker_wake(struct worker *w)
{
	if (worker_on_loop(w))
		return; /* the loop looks at its queues before it waits */
	uint64_t one = 1;
	ssize_t n = write(w->wake_fd, &one, sizeof(one));
	(void)n; /* EAGAIN: the counter is already non-zero, a wake-up is pending */
}

bool worker_stopping(const struct worker *w)
{
	return __atomic_load_n(&w->stop, __ATOMIC_ACQUIRE);
}

void worker_kick(struct worker *w)
{
	w->mhd_kick = true;
}

bool worker_on_loop(const struct worker *w)
{
	pthread_t self = __atomic_load_n(&w->self, __ATOMIC_ACQUIRE);
	return w->running && self && pthread_equal(pthread_self(), self);
}

static void quiesce_if_asked(struct worker *w)
{
	if (!__atomic_load_n(&w->quiesce_req, __ATOMIC_ACQUIRE) || w->quiesced)
		return;
	MHD_socket ls = MHD_quiesce_daemon(w->d);
	if (ls != MHD_INVALID_SOCKET)
		close(ls);
	pthread_mutex_lock(&w->mu);
	w->quiesced = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev[256];
	__atomic_store_n(&w->self, pthread_self(), __ATOMIC_RELEASE);
	for (;;) {
		quiesce_if_asked(w);
		double next;
		if (w->ops->turn(w->ud, &next))
			break;
		double now = gw_now_ms();
		if (w->front) {
			double f = w->front(w->front_ud, now);
			if (f < next)
				next = f;
		}
		/* MHD: a timeout of 0 means connections hold data it has not
		 * processed yet; otherwise the earliest idle timeout */
		MHD_UNSIGNED_LONG_LONG mhd_ms = 0;
		double mhd_at = -1;
		if (MHD_get_timeout(w->d, &mhd_ms) == MHD_YES) {
			mhd_at = now + (double)mhd_ms;
			if (mhd_at < next)
				next = mhd_at;
		}
		int wait_ms = next <= now || w->mhd_kick ? 0 : (int)(next - now) + 1;
		int n = epoll_wait(w->loop_fd, ev, 256, wait_ms);
		bool mhd_due = false;
		for (int i = 0; i < n; i++) {
			if (ev[i].data.u64 == TAG_MHD) {
				mhd_due = true;
			} else if (ev[i].data.u64 == TAG_WAKE) {
				uint64_t c;
				ssize_t r = read(w->wake_fd, &c, sizeof(c));
				(void)r;
			} else {
				w->ops->event(w->ud, ev[i].data.u64, ev[i].events);
			}
		}
		w->ops->settle(w->ud);
		if (mhd_at >= 0 && gw_now_ms() >= mhd_at)
			mhd_due = true;
		if (mhd_due || w->mhd_kick) {
			w->mhd_kick = false;
			MHD_run(w->d);
		}
	}
	return NULL;
}

int worker_launch(struct worker *w, const struct worker_ops *ops, void *ud, struct err **err)
{
	w->ops = ops;
	w->ud = ud;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(w->d, MHD_DAEMON_INFO_EPOLL_FD);
	struct epoll_event em = { .events = EPOLLIN, .data.u64 = TAG_MHD };
	if (!di || epoll_ctl(w->loop_fd, EPOLL_CTL_ADD, di->epoll_fd, &em) < 0)
		return err_errno(err, EXIT_RUNTIME, di ? errno : EINVAL, "epoll (worker %d)", w->idx);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	/* running is set before the thread exists; worker_on_loop also needs
	 * w->self, which the thread sets first thing */
	w->running = true;
	if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
		w->running = false;
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		return err_set(err, EXIT_RUNTIME, "cannot start gateway worker %d", w->idx);
	}
	return 0;
}

void worker_quiesce(struct worker *w)
{
	if (!w->running)
		return;
	__atomic_store_n(&w->quiesce_req, true, __ATOMIC_RELEASE);
	worker_wake(w);
	pthread_mutex_lock(&w->mu);
	while (!w->quiesced)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

void worker_halt(struct worker *w)
{
	if (!w->running)
		return;
	__atomic_store_n(&w->stop, true, __ATOMIC_RELEASE);
	worker_wake(w);
	pthread_join(w->th, NULL);
	w->running = false;
	__atomic_store_n(&w->self, (pthread_t)0, __ATOMIC_RELEASE);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
}

/* The buffer budget charges each request and answer buffer its allocated
 * size; the process's memory follows it only if a freed buffer goes back
 * to the system. glibc's default raises its mmap threshold to the size of
 * the last large block freed, after which buffers of a few MiB come from
 * the workers' own heaps (one arena per thread), where a block freed by one
 * worker is not reused by another and a realloc copies (old and new held at
 * once): 40 stalled 4 MiB uploads under a 16 MiB budget raised the peak
 * RSS by 25 MB. A fixed threshold (which also stops the adjusting) keeps
 * every block of 128 KiB or more in its own mapping: grown by mremap,
 * returned on free. Smaller blocks, the common case, are unchanged. */
void worker_buffers_mapped(void)
{
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}
