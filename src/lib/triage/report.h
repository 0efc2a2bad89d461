/*
 * report.h — the failure report of a role that did not come up: the cause
 * triage names in its boot log, the line that cause came from (with its line
 * number in the log), and the last lines of the log.
 *
 * The cause line is always reported on its own, not left to the tail: an
 * engine that restarts, or writes its traceback on stderr while stdout keeps
 * going, can push the fatal line out of any fixed-size tail. Line numbers
 * are 1-based and count every line of the log as given (stdout and stderr in
 * the order the Engine API returned them).
 */
#ifndef LOBES_REPORT_H
#define LOBES_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "signatures.h"

/* A new JSON object for log (NUL-terminated; NULL gives NULL):
 *   log_lines       the number of lines in log
 *   log_tail        its last tail_lines lines (a string, newline-separated)
 *   log_tail_from   the line number of the first line of log_tail
 *   cause           {signature, cause, remedy?, trait?, line, line_no} when
 *                   set (borrowed) names one; line is the whole log line
 *   verdict         with set: "fatal" or "clean" (triage's verdict, which a
 *                   log can reach with no signature)
 *   phase, root_exception {type?, message?, frame?, line_no}  when fatal
 * Secrets in the lines are masked (secret.h). Never fails except on OOM. */
json_t *failure_report(const char *log, size_t tail_lines, const struct sigset *set);

#endif
