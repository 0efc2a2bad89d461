/* strv.c — NULL-terminated string vectors; see strv.h. */
#include <string.h>

#include "err.h"
#include "strv.h"

void strv_push(char ***v, const char *s)
{
	size_t n = 0;
	while (*v && (*v)[n])
		n++;
	*v = xrealloc(*v, (n + 2) * sizeof(char *));
	(*v)[n] = xstrdup(s);
	(*v)[n + 1] = NULL;
}

bool strv_has(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}
