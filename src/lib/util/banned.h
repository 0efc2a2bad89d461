/*
 * banned.h — functions that must not be used in lobes.
 *
 * Forced into every translation unit by the build (-include), so a use of
 * any of these fails to compile. Use snprintf/xasprintf, buf_*,
 * strtok_r, or the fs helpers instead.
 */
#ifndef LOBES_BANNED_H
#define LOBES_BANNED_H

/* The headers that declare the banned functions come first, so their
 * declarations are not rewritten; later includes of them are no-ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef gets
#define gets(x) BANNED(gets)
#undef atoi
#define atoi(x) BANNED(atoi)

#endif
