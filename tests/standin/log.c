/*
 * log.c — vLLM's log line format for the stand-in (a test double).
 *
 * vLLM logs to stdout as "LEVEL MM-DD HH:MM:SS [file.py:NNN] message";
 * uvicorn's own lines read "INFO:     message"; tracebacks are raw lines.
 * VLLM_LOGGING_LEVEL filters like vLLM's (DEBUG, INFO, WARNING, ERROR).
 * The HTTP thread logs too, so every line is written under one lock.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <time.h>

#include "standin.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static enum level threshold = LV_INFO;

/* Read VLLM_LOGGING_LEVEL and make stdout line buffered. */
void log_init(void)
{
	const char *lv = getenv("VLLM_LOGGING_LEVEL");

	setvbuf(stdout, NULL, _IOLBF, 0);
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (!lv)
		return;
	if (!strcasecmp(lv, "DEBUG"))
		threshold = LV_DEBUG;
	else if (!strcasecmp(lv, "WARNING") || !strcasecmp(lv, "WARN"))
		threshold = LV_WARNING;
	else if (!strcasecmp(lv, "ERROR") || !strcasecmp(lv, "CRITICAL"))
		threshold = LV_ERROR;
}

/* Print one vLLM-format line at level lv; where is "file.py:NNN". */
void vlog(enum level lv, const char *where, const char *fmt, ...)
{
	static const char *const names[] = { "DEBUG", "INFO", "WARNING", "ERROR" };
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;

	if (lv < threshold)
		return;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%m-%d %H:%M:%S", &tm);
	pthread_mutex_lock(&lock);
	printf("%s %s [%s] ", names[lv], stamp, where);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&lock);
}

/* Print one uvicorn-format INFO line. */
void uvlog(const char *fmt, ...)
{
	va_list ap;

	if (LV_INFO < threshold)
		return;
	pthread_mutex_lock(&lock);
	fputs("INFO:     ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&lock);
}

/* Print one raw line (no prefix) to stdout or stderr. */
void raw(bool to_stderr, const char *fmt, ...)
{
	FILE *f = to_stderr ? stderr : stdout;
	va_list ap;

	pthread_mutex_lock(&lock);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
	pthread_mutex_unlock(&lock);
}

void vtraceback(const char *where, const char *headline, const char *const frames[],
		const char *exception)
{
	vlog(LV_ERROR, where, "%s", headline);
	vlog(LV_ERROR, where, "Traceback (most recent call last):");
	for (size_t i = 0; frames && frames[i]; i++)
		vlog(LV_ERROR, where, "%s", frames[i]);
	vlog(LV_ERROR, where, "%s", exception);
}
