/*
 * evidence.h — answer a recorded question against the running fleet and
 * keep the answer as an evidence record.
 *
 * Read-only: the running fleet is the boot evidence, nothing is restarted.
 * verify_collect() gathers, for the question's role: the container's
 * effective args and env and state (Engine API), its boot log classified by
 * the signatures (every matched line quoted with its number), the image
 * (digest) and the vLLM version its log announces, the checkpoint's facts
 * (from the fleet's mounted HF cache), optionally the role's probe, and the
 * box's facts. These become observations (question.h) and a JSON record.
 * evidence_write() writes <dir>/evidence/<date>-<question>-<card>.txt and
 * .json atomically (mode 0600, in a 0700 dir; every value through the
 * masking rule of secret.h, none stored raw), fit to cite as a trait's
 * evidence.
 */
#ifndef LOBES_EVIDENCE_H
#define LOBES_EVIDENCE_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

#include "question.h"

struct bringup_event;

struct verify_opts {
	const char *dir;          /* deploy dir */
	const char *role;         /* NULL: the question's role */
	bool probe;               /* run the role's probe (when the question asks) */
	double probe_timeout_s;
	time_t now;               /* the record's time */
	/* experiments (verify_experiment) */
	uint64_t margin_bytes;    /* memory kept free above the role's budget at the gate */
	int mem_wait_s, boot_wait_s; /* bounds on the gate and on one boot */
	double eval_timeout_s;    /* one eval request */
	long max_tasks;           /* 0: the whole task set */
	long bench_requests;      /* speculative-config: bench requests per run (0: 8) */
	void (*event)(void *cls, const struct bringup_event *ev); /* the boots' progress; may be NULL */
	void *event_cls;
};

/* Collect; fills obs and returns the record (new reference) or NULL with
 * *err (EXIT_RUNTIME when the fleet cannot be looked at: "could not
 * verify"). */
json_t *verify_collect(const struct question *q, const struct verify_opts *o, struct obs_set *obs,
		       struct err **err);
/* A question with an experiment (q->experiment): change the knob, reboot
 * the role, compare, put everything back (experiment.c). Adds "experiment"
 * (both runs, the comparison, whether .env is the operator's byte for
 * byte) to rec and the eval.* observations to obs. -1 with err (EXIT_RUNTIME:
 * could not verify) — .env is put back and the role rebooted with it first. */
int verify_experiment(const struct question *q, const struct verify_opts *o, json_t *rec,
		      struct obs_set *obs, struct err **err);
/* Route, add the decision to the record. Returns the route or NULL. */
const struct q_route *verify_decide(const struct question *q, const struct obs_set *obs, json_t *record);
/* The text form of a record. Caller frees. */
char *evidence_text(const json_t *record);
/* Write the record; *paths gets "<txt path>" (caller frees). */
int evidence_write(const char *dir, const json_t *record, char **txt_path, char **json_path,
		   struct err **err);

#endif
