/*
 * num.h — strict numbers from the command line and from operator files.
 *
 * strtol/strtod accept too much for a bound: "" is 0, "nan" and "inf" are
 * doubles, 99999999999 silently wraps once cast to int. These accept the
 * whole string as a number inside [min, max] or fail, and the caller says
 * which option was wrong.
 */
#ifndef LOBES_NUM_H
#define LOBES_NUM_H

#include <stdbool.h>

/* Decimal digits only (no sign, no blanks), value in [min, max]. */
bool num_parse_long(const char *s, long min, long max, long *out);
/* A finite decimal number (strtod syntax, no "nan"/"inf", no hex) in
 * [min, max]. */
bool num_parse_double(const char *s, double min, double max, double *out);

#endif
