/*
 * clock.h — the monotonic clock in milliseconds and a plain sleep, for
 * bounded waits (child processes, the bring-up, stop, the gateway process).
 * Deadlines are taken on CLOCK_MONOTONIC so a wall-clock step never cuts or
 * stretches a wait.
 */
#ifndef LOBES_CLOCK_H
#define LOBES_CLOCK_H

/* Milliseconds on CLOCK_MONOTONIC (an arbitrary origin). */
long long clock_mono_ms(void);
/* Sleep ms milliseconds (a signal may end it early). */
void clock_sleep_ms(int ms);

#endif
