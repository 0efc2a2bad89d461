/* strv.c — NULL-terminated string vectors; see strv.h. */
#include <string.h>

#include "cleanup.h"
#include "err.h"
#include "fs.h"
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

char **strv_lines(const char *text, bool (*keep)(char *line))
{
	char **v = NULL;
	_cleanup_free_ char *copy = xstrdup(text ? text : "");
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *s = str_strip(l);
		if (*s && *s != '#' && keep(s))
			strv_push(&v, s);
	}
	return v ? v : xcalloc(1, sizeof(char *));
}
