/* num.c — strict numbers with bounds; see num.h. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "num.h"

bool num_parse_long(const char *s, long min, long max, long *out)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno == ERANGE || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool num_parse_double(const char *s, double min, double max, double *out)
{
	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	for (const char *p = s; *p; p++) /* no nan, inf, hex floats */
		if (!isdigit((unsigned char)*p) && *p != '.' && *p != 'e' && *p != 'E' && *p != '-' &&
		    *p != '+')
			return false;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno == ERANGE || *end || !isfinite(v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}
