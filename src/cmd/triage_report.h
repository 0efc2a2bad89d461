/*
 * triage_report.h — `lobes triage`'s report: one input's result as JSON
 * (matches, summary, ranked causes, traceback root, version, notes) and
 * its text form (the root cause first, each match, a summary, notes on
 * stderr). The command (triage.c) reads; this file only formats.
 */
#ifndef LOBES_CMD_TRIAGE_REPORT_H
#define LOBES_CMD_TRIAGE_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "../lib/triage/triage.h"
#include "cmd.h"

/* One match as JSON; count 0 leaves "count" out. */
json_t *triage_match_json(const struct triage *t, const struct triage_match *m, uint64_t count);
/* The result for one input. all: every kept match (line order), else each
 * signature's first occurrence with its count. stopped: why --follow
 * stopped (NULL when not following). */
json_t *triage_source_json(const char *label, const struct sigset *set, const struct triage *t,
			   bool all, bool version_given, const char *stopped);
void triage_print_match(const struct ctx *ctx, const char *file, const json_t *m);
void triage_print_summary(const struct ctx *ctx, const json_t *f);
/* The root cause first: `FILE:LINE: cause ID — meaning`, its fix, the
 * other candidates and the traceback's root. */
void triage_print_headline(const struct ctx *ctx, const json_t *f);
/* What was odd about the input, on stderr. */
void triage_print_notes(const json_t *f);

#endif
