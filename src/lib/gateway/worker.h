/*
 * worker.h — one event loop of the gateway (worker.c). Internal to the
 * gateway: the layer above the log and below the engine client. The loop
 * knows its thread, its epoll set, its wake fd and the MHD daemon it runs;
 * what it does between waits and with the events of the fds it did not add
 * itself is the business of the layer above, which registers a worker_ops
 * when it launches the loop. The loop never calls a file above it.
 */
#ifndef LOBES_GATEWAY_WORKER_H
#define LOBES_GATEWAY_WORKER_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>

#include "log.h"

/* epoll tags of the loop's own fds; the layer above tags its fds with
 * other values (an engine socket by its fd) */
#define TAG_WAKE (1ull << 62)
#define TAG_MHD (1ull << 60)

/* What the layer above does on the loop (all called on the loop thread). */
struct worker_ops {
	/* One turn before the loop waits: queued work, timers. Returns true to
	 * end the loop (see worker_stopping); *next: when the loop must turn
	 * again (monotonic ms, gw_now_ms). */
	bool (*turn)(void *ud, double *next);
	/* An event of an fd the layer above added to loop_fd. */
	void (*event)(void *ud, uint64_t tag, uint32_t events);
	/* After the events of one wait were handed out. */
	void (*settle)(void *ud);
};

struct worker {
	int idx;
	int loop_fd; /* what the loop waits on: wake_fd, MHD's epoll fd, the fds of the layer above */
	int wake_fd; /* eventfd: another thread has queued work */
	bool fds_open;
	struct MHD_Daemon *d; /* set by the caller before worker_launch */
	const struct worker_ops *ops;
	void *ud;
	/* the HTTP front's timers (set before worker_launch, may be NULL): run
	 * each turn after ops->turn; returns when it is due again (ms) */
	double (*front)(void *front_ud, double now);
	void *front_ud;
	pthread_t th;
	pthread_t self; /* th, as the thread itself stores it (worker_on_loop) */
	bool running;  /* the thread has been started and not joined */
	bool mhd_kick; /* a connection was resumed: MHD_run is due (loop only) */
	bool stop;     /* worker_halt asked; atomic */
	pthread_mutex_t mu; /* quiesce hand-shake */
	pthread_cond_t cv;
	bool quiesce_req, quiesced;
};

/* The epoll set and the wake fd (no thread yet). */
/* Large buffers each in their own mapping, returned on free (a process-wide
 * malloc setting; the gateway sets it once at start: worker.c says why). */
void worker_buffers_mapped(void);
int worker_init(struct worker *w, int idx, struct err **err);
/* Close them (the thread has been halted). */
void worker_free(struct worker *w);
/* Start w's thread running w->d and ops (with ud). */
int worker_launch(struct worker *w, const struct worker_ops *ops, void *ud, struct err **err);
/* Is the caller w's loop thread? */
bool worker_on_loop(const struct worker *w);
/* Wake the loop (after queueing work or changing settings); a no-op on the
 * loop itself, which looks at its queues before it waits. */
void worker_wake(struct worker *w);
/* Has worker_halt asked the loop to end? ops->turn returns true once it
 * has handed its queued work over. */
bool worker_stopping(const struct worker *w);
/* A connection of w->d was resumed: run MHD on this turn (MHD 0.9.75 has no
 * wake-up channel in external mode). Loop only. */
void worker_kick(struct worker *w);
/* Have w's daemon stop accepting (MHD_quiesce_daemon, on its loop); returns
 * once it has. */
void worker_quiesce(struct worker *w);
/* Stop and join w's thread. */
void worker_halt(struct worker *w);

#endif
