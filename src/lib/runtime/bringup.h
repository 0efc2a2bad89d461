/*
 * bringup.h — bring roles up in the plan's order without a memory race.
 *
 * On unified memory (FACTS.md trait 5) every engine's memory profiling
 * counts whatever its neighbours load or allocate meanwhile as its own, so
 * roles go up one memory-profiling window at a time: before each role a
 * memory gate (free memory as vLLM reads it ≥ the role's budget + a margin,
 * waiting a bounded time, optionally dropping the page cache), then start it,
 * then wait until its window has closed (its log says the KV cache is
 * allocated) before the next. Then wait, bounded, for every role to answer
 * /health. "together" (discrete memory) starts every role at once when the
 * sum of the budgets fits free memory now, else falls back to one at a time.
 *
 * The world is reached only through `struct bringup_ops`, so the sequencing
 * is tested against a simulated box and driven for real by `lobes serve`.
 * Nothing here waits without a bound.
 */
#ifndef LOBES_BRINGUP_H
#define LOBES_BRINGUP_H

#include <stdbool.h>
#include <stdint.h>

#include "../knowledge/knowledge.h"
#include "../util/err.h"

/* What one look at a role shows. */
struct role_obs {
	bool exists;        /* a container exists */
	bool running;
	int restarts;       /* restart count (a first boot that failed) */
	bool exited;        /* the container stopped (engine died) */
	bool window_closed; /* log: memory profiling done and KV cache allocated */
	bool ready;         /* log: startup complete and /health answers 200 */
	char *phase;        /* owned, may be NULL: "loading weights", "profiling memory", ... */
	char *log_tail;     /* owned, may be NULL: the last lines of the boot log */
};
void role_obs_free(struct role_obs *o);

enum bringup_event_kind {
	EV_GATE_WAIT,   /* waiting for memory */
	EV_DROP_CACHES, /* dropped the page cache */
	EV_START,       /* role started */
	EV_PHASE,       /* role changed phase */
	EV_WINDOW,      /* role's memory-profiling window closed */
	EV_READY,       /* role answers /health */
	EV_FAIL,        /* role failed; reason set */
};

struct bringup_event {
	enum bringup_event_kind kind;
	enum role_id role;
	long long elapsed_ms; /* since bringup_run began */
	uint64_t free_bytes, need_bytes;
	const char *text;     /* phase or reason */
};
const char *bringup_event_name(enum bringup_event_kind k);

struct bringup_ops {
	void *ud;
	int (*start)(void *ud, enum role_id r, struct err **err);
	int (*observe)(void *ud, enum role_id r, struct role_obs *o, struct err **err);
	/* Free memory the way the engine will read it. */
	int (*mem_free)(void *ud, uint64_t *free_bytes, struct err **err);
	int (*drop_caches)(void *ud, struct err **err); /* may be NULL */
	void (*event)(void *ud, const struct bringup_event *ev);
	long long (*now_ms)(void *ud);
	void (*sleep_ms)(void *ud, int ms);
};

struct bringup_opts {
	bool one_at_a_time;
	uint64_t margin;    /* bytes added to every budget at the gate */
	int mem_wait_ms;    /* bound on one memory gate */
	int window_wait_ms; /* bound on one role's start → window closed */
	int ready_wait_ms;  /* bound on the final wait for every role */
	int poll_ms;
	bool drop_caches;   /* drop the page cache once per gate when short */
};

struct bringup_role {
	enum role_id role;
	uint64_t budget; /* bytes: gpu_mem_util × device memory */
};

enum role_outcome { OUT_NOT_STARTED, OUT_READY, OUT_FAILED, OUT_TIMEOUT, OUT_STARTED };
const char *role_outcome_name(enum role_outcome o);

struct bringup_role_result {
	enum role_id role;
	enum role_outcome outcome;
	long long start_ms, window_ms, ready_ms; /* -1 when it did not happen */
	char *reason;   /* owned */
	char *log_tail; /* owned */
};

struct bringup_result {
	struct bringup_role_result roles[ROLE__COUNT];
	size_t n;
	bool ok;
	long long total_ms;
	enum role_id failed_role;
	bool has_failed_role;
};

/* Bring the roles up in the given order. Returns 0 when the sequencing ran
 * (res->ok says whether every role became ready), -1 with *err when an op
 * itself failed (docker unreachable: EXIT_RUNTIME). */
int bringup_run(const struct bringup_role *roles, size_t n, const struct bringup_ops *ops,
		const struct bringup_opts *o, struct bringup_result *res, struct err **err);
void bringup_result_free(struct bringup_result *res);

#endif
