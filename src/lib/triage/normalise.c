/*
 * normalise.c — strip the layers around a log line and classify it (see
 * normalise.h). Hand-written scanners, no regex: this runs on every line of
 * a record triage looks at, and on the lines a traceback walk passes.
 *
 * Each layer is a small recogniser that returns the length of the prefix
 * it accepts at p (0 when it does not apply); the layers are peeled in a
 * loop, in any order, so `vllm-1  | 2025-...Z (EngineCore_DP0 pid=7) ...`
 * loses all three.
 */
#include <stdio.h>
#include <string.h>

#include "normalise.h"

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
static bool is_alpha(char c) { return is_upper(c) || is_lower(c); }
static bool is_word(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }
static bool is_space(char c) { return c == ' ' || c == '\t'; }

/* n digits at p[i..]; returns i + n or 0 */
static size_t digits(const char *p, size_t len, size_t i, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (i + k >= len || !is_digit(p[i + k]))
			return 0;
	return i + n;
}

static size_t skip_spaces(const char *p, size_t len, size_t i)
{
	while (i < len && is_space(p[i]))
		i++;
	return i;
}

/* --- ANSI ------------------------------------------------------------- */

/* An SGR sequence whose ESC was lost in a paste: `[1;36m`, `[0m`. */
static size_t orphan_sgr(const char *p, size_t len)
{
	if (len < 3 || p[0] != '[')
		return 0;
	size_t i = 1;
	while (i < len && i < 12 && (is_digit(p[i]) || p[i] == ';'))
		i++;
	return i > 1 && i < len && p[i] == 'm' ? i + 1 : 0;
}

/* Copy s to out without escape sequences (CSI, OSC, two-byte) and without
 * orphaned SGR sequences; returns the length. */
static size_t strip_ansi(const char *s, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		char c = s[i];
		if (c == '\x1b') {
			i++;
			if (i < n && s[i] == '[') { /* CSI: params, final byte 0x40-0x7e */
				i++;
				while (i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e))
					i++;
				i += i < n;
			} else if (i < n && s[i] == ']') { /* OSC: to BEL or ESC \ */
				while (i < n && s[i] != '\a' && !(s[i] == '\x1b' && i + 1 < n && s[i + 1] == '\\'))
					i++;
				i += i < n ? (s[i] == '\a' ? 1 : 2) : 0;
			} else if (i < n) {
				i++;
			}
			continue;
		}
		if (c == '^' && i + 1 < n && s[i + 1] == '[') { /* `^[[0;36m`: ESC in caret notation */
			size_t k = orphan_sgr(s + i + 2, n - i - 2);
			if (k) {
				i += 2 + k;
				continue;
			}
		}
		if (c == '[') {
			size_t k = orphan_sgr(s + i, n - i);
			if (k) {
				i += k;
				continue;
			}
		}
		out[o++] = c;
		i++;
	}
	return o;
}

/* --- layers ------------------------------------------------------------ */

/* docker compose: `name  | ` (v2 `vllm-1`, v1 `vllm_1`) */
static size_t compose_prefix(const char *p, size_t len)
{
	size_t i = 0;
	while (i < len && i < 64 && (is_word(p[i]) || p[i] == '-' || p[i] == '.'))
		i++;
	if (i == 0 || i >= len || !is_space(p[i]))
		return 0;
	i = skip_spaces(p, len, i);
	if (i >= len || p[i] != '|')
		return 0;
	i++;
	return i < len && p[i] == ' ' ? i + 1 : i;
}

/* hh:mm:ss at i; returns the index after it or 0 */
static size_t clock(const char *p, size_t len, size_t i)
{
	if (!(i = digits(p, len, i, 2)) || i >= len || p[i] != ':' || !(i = digits(p, len, i + 1, 2)) ||
	    i >= len || p[i] != ':' || !(i = digits(p, len, i + 1, 2)))
		return 0;
	return i;
}

/* ISO date-time, optionally bracketed, with fraction and zone; also the
 * CRI log format's `stdout F ` after it. */
static size_t iso_prefix(const char *p, size_t len)
{
	/* bracketed as `[...]`, or as `【...】` (CJK lenticular brackets, in
	 * logs written for a Chinese locale) */
	bool cjk = len > 3 && memcmp(p, "\xe3\x80\x90", 3) == 0;
	size_t i = cjk ? 3 : p[0] == '[' ? 1 : 0;
	if (!(i = digits(p, len, i, 4)) || i >= len || p[i] != '-' || !(i = digits(p, len, i + 1, 2)) ||
	    i >= len || p[i] != '-' || !(i = digits(p, len, i + 1, 2)) || i >= len ||
	    (p[i] != 'T' && p[i] != ' ') || !(i = clock(p, len, i + 1)))
		return 0;
	if (i < len && (p[i] == '.' || p[i] == ',')) {
		i++;
		while (i < len && is_digit(p[i]))
			i++;
	}
	if (i < len && p[i] == 'Z')
		i++;
	else if (i + 5 <= len && (p[i] == '+' || p[i] == '-') && digits(p, len, i + 1, 2))
		i += p[i + 3] == ':' ? 6 : 5;
	if (i + 4 <= len && p[i] == ' ' && (!memcmp(p + i + 1, "UTC", 3) || !memcmp(p + i + 1, "GMT", 3)))
		i += 4;
	if (i > len)
		return 0;
	if (cjk) {
		if (i + 3 > len || memcmp(p + i, "\xe3\x80\x91", 3) != 0)
			return 0;
		i += 3;
	} else if (p[0] == '[') {
		if (i >= len || p[i] != ']')
			return 0;
		i++;
	}
	if (i < len && !is_space(p[i]) && p[i] != '|' && !cjk)
		return 0;
	i = skip_spaces(p, len, i);
	/* loguru and friends: `2025-04-29 22:18:08.494 | INFO ...` */
	if (i + 1 < len && p[i] == '|' && p[i + 1] == ' ')
		i += 2;
	/* CRI: `stdout F ` / `stderr P ` */
	if (i + 9 <= len && (!memcmp(p + i, "stdout ", 7) || !memcmp(p + i, "stderr ", 7)) &&
	    (p[i + 7] == 'F' || p[i + 7] == 'P') && p[i + 8] == ' ')
		i += 9;
	return i;
}

/* journald short format: `Aug 19 18:30:11 host ident[pid]: `, the month
 * in the host's locale (`déc.`, `févr.`, `Mär`: letters, UTF-8 bytes, an
 * abbreviation's dot) */
static size_t journald_prefix(const char *p, size_t len)
{
	size_t i = 0;
	while (i < len && i < 8 && (is_upper(p[i]) || is_lower(p[i]) || (unsigned char)p[i] >= 0x80))
		i++;
	if (i < len && i >= 3 && p[i] == '.')
		i++;
	if (len < 20 || i < 3 || i >= len || p[i] != ' ')
		return 0;
	i++;
	if (p[i] == ' ')
		i++;
	while (i < len && is_digit(p[i]))
		i++;
	if (i >= len || p[i] != ' ' || !(i = clock(p, len, i + 1)) || i >= len || p[i] != ' ')
		return 0;
	i++;
	size_t h = i; /* host */
	while (i < len && !is_space(p[i]))
		i++;
	if (i == h || i >= len)
		return 0;
	i++;
	size_t id = i; /* ident[pid]: */
	while (i < len && !is_space(p[i]) && p[i] != ':' && p[i] != '[')
		i++;
	if (i == id)
		return 0;
	if (i < len && p[i] == '[') {
		while (i < len && p[i] != ']')
			i++;
		i++;
	}
	if (i >= len || p[i] != ':')
		return 0;
	i++;
	return i < len && p[i] == ' ' ? i + 1 : i;
}

/* kubectl logs --prefix: `[pod/name/container] ` */
static size_t kubectl_prefix(const char *p, size_t len)
{
	if (len < 6 || memcmp(p, "[pod/", 5) != 0)
		return 0;
	const char *e = memchr(p, ']', len);
	if (!e)
		return 0;
	size_t i = (size_t)(e - p) + 1;
	return skip_spaces(p, len, i);
}

/* Ray / vLLM process prefix: `(Name pid=1, ip=...) `, `(pid=1) `,
 * `(raylet) `; an actor's name as its __repr__ gives it may hold one
 * parenthesized part (`(ActorWorker(infer-0) pid=1, ) `) */
static size_t process_prefix(const char *p, size_t len)
{
	if (len < 4 || p[0] != '(')
		return 0;
	size_t i = 1;
	bool inner = false;
	for (; i < len && i < 120; i++) {
		if (p[i] == '(' && !inner && i > 1)
			inner = true;
		else if (p[i] == ')' && inner)
			inner = false;
		else if (!is_word(p[i]) && !strchr(" =,.:-", p[i]))
			break;
	}
	if (i >= len || p[i] != ')' || i == 1)
		return 0;
	bool pid = memmem(p, i, "pid=", 4) != NULL;
	if (!pid && !(i == 7 && memcmp(p + 1, "raylet", 6) == 0))
		return 0;
	i++;
	if (i < len && !is_space(p[i]))
		return 0;
	/* one space: a traceback's frame keeps its indentation */
	return i < len ? i + 1 : i;
}

/* A quote or box mark a paste put in front: `> ` (markdown), `│ `, `▎ `,
 * `┃ ` (UTF-8 box drawing). */
static size_t quote_prefix(const char *p, size_t len)
{
	if (len >= 1 && p[0] == '>')
		return len >= 2 && p[1] == ' ' ? 2 : 1;
	static const char *const marks[] = { "\xe2\x94\x82", "\xe2\x96\x8e", "\xe2\x94\x83", "\xe2\x95\x91" };
	for (size_t k = 0; k < sizeof(marks) / sizeof(marks[0]); k++)
		if (len >= 3 && memcmp(p, marks[k], 3) == 0)
			return len >= 4 && p[3] == ' ' ? 4 : 3;
	return 0;
}

/* torch.distributed's rank prefix: `[rank0]: `, `[rank12]:` */
static size_t rank_prefix(const char *p, size_t len)
{
	if (len < 8 || memcmp(p, "[rank", 5) != 0)
		return 0;
	size_t i = 5;
	while (i < len && is_digit(p[i]))
		i++;
	if (i == 5 || i + 1 >= len || p[i] != ']' || p[i + 1] != ':')
		return 0;
	/* one space: a traceback's frame keeps its indentation */
	return i + 2 < len && p[i + 2] == ' ' ? i + 3 : i + 2;
}

static int level_word(const char *p, size_t len, size_t *end);

static bool is_dns(char c) { return is_lower(c) || is_digit(c) || c == '-'; }

/* stern's and kubetail's prefix: `<pod> <container> `, the pod's name as
 * Kubernetes makes it (small letters, digits and hyphens, at least one
 * hyphen: its controller's hash), then the container's; taken only where
 * a vLLM line follows it (a process prefix, a level or a date). */
static size_t pod_prefix(const char *p, size_t len)
{
	size_t i = 0, hy = 0;
	while (i < len && i < 253 && (is_dns(p[i]) || p[i] == '.'))
		hy += p[i++] == '-';
	if (i < 8 || !hy || !is_lower(p[0]) || i >= len || p[i] != ' ')
		return 0;
	size_t c = ++i;
	while (i < len && i - c < 64 && is_dns(p[i]))
		i++;
	if (i == c || !is_lower(p[c]) || i + 1 >= len || p[i] != ' ')
		return 0;
	i++;
	size_t e;
	if (p[i] == '(' || level_word(p + i, len - i, &e) >= 0 || (is_digit(p[i]) && digits(p, len, i, 4)))
		return i;
	return 0;
}

/* A wrapper's tag in front of each line it relays from vLLM: `[vLLM] `,
 * `[Info] (Process) `: a bracketed name (a letter, then letters, digits,
 * `_.-`, at most 24 bytes, with a small letter in it: an all-capitals
 * `[ERROR]` is a record's own level), then optionally a parenthesized
 * name. What follows is the line as the wrapped program printed it. */
static size_t tag_prefix(const char *p, size_t len)
{
	if (len < 5 || p[0] != '[' || !is_alpha(p[1]))
		return 0;
	size_t i = 1;
	bool lower = false;
	while (i < len && i <= 25 && (is_word(p[i]) || p[i] == '.' || p[i] == '-'))
		lower |= is_lower(p[i++]);
	if (!lower || i > 25 || i + 2 >= len || p[i] != ']' || p[i + 1] != ' ' || is_space(p[i + 2]))
		return 0;
	i += 2;
	if (p[i] == '(') {
		size_t j = i + 1;
		while (j < len && j - i <= 25 && is_word(p[j]))
			j++;
		if (j > i + 1 && j + 1 < len && p[j] == ')' && p[j + 1] == ' ')
			i = j + 2;
	}
	return i;
}

/* A Java server's log4j record that relays a worker process's output
 * (TorchServe: `[INFO ] W-9000-model_1.0-stdout MODEL_LOG - `): a
 * bracketed level, the relaying thread (its name ends in `-stdout` or
 * `-stderr`), the logger, ` - `. What follows is the worker's line as it
 * printed it (a frame keeps its indentation); the relay's level is not
 * the line's. */
static size_t relay_prefix(const char *p, size_t len)
{
	size_t i;
	if (len < 16 || p[0] != '[' || level_word(p + 1, len - 1, &i) < 0)
		return 0;
	i = skip_spaces(p, len, i + 1);
	if (i + 1 >= len || p[i] != ']' || p[i + 1] != ' ')
		return 0;
	size_t t = i + 2;
	for (i = t; i < len && i - t < 128 && !is_space(p[i]);)
		i++;
	if (i - t < 8 || i >= len || (memcmp(p + i - 7, "-stdout", 7) && memcmp(p + i - 7, "-stderr", 7)))
		return 0;
	size_t l = ++i;
	while (i < len && i - l < 128 && !is_space(p[i]))
		i++;
	if (i == l || i + 3 > len || memcmp(p + i, " - ", 3))
		return 0;
	return i + 3;
}

static size_t layer(const char *p, size_t len)
{
	size_t k;
	/* a markdown list item in front of another layer: `- 2024-06-22T...` */
	if (len > 2 && (p[0] == '-' || p[0] == '*') && p[1] == ' ' && layer(p + 2, len - 2))
		return 2;
	if ((k = quote_prefix(p, len)) || (k = rank_prefix(p, len)) || (k = compose_prefix(p, len)) || (k = iso_prefix(p, len)) || (k = journald_prefix(p, len)) ||
	    (k = kubectl_prefix(p, len)) || (k = process_prefix(p, len)) || (k = tag_prefix(p, len)) ||
	    (k = pod_prefix(p, len)) || (k = relay_prefix(p, len)))
		return k;
	return 0;
}

/* --- record headers ------------------------------------------------------ */

static const char *const levels[] = { "INFO", "WARNING", "ERROR", "DEBUG", "CRITICAL", "WARN", "FATAL" };

/* A level word at p followed by sep; its index or -1, *end after the word. */
static int level_word(const char *p, size_t len, size_t *end)
{
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
		size_t n = strlen(levels[l]);
		if (len > n && memcmp(p, levels[l], n) == 0 && (p[n] == ' ' || p[n] == ':' || p[n] == ']')) {
			*end = n;
			return (int)l;
		}
	}
	return -1;
}

/* The header of a record: returns the offset of its message (0 when the
 * line has no header and is not otherwise a record start), *lvl the level
 * index (-1 when none). */
static size_t record_header(const char *p, size_t len, int *lvl, bool *start)
{
	size_t i;
	*lvl = level_word(p, len, &i);
	*start = false;
	if (*lvl >= 0) {
		*start = true;
		/* vLLM: `LEVEL mm-dd hh:mm:ss[.fff] [file.py:1] ` or `file.py:1] ` */
		size_t j = i + 1, k;
		if (p[i] == ' ' && (k = digits(p, len, j, 2)) && k < len && p[k] == '-' &&
		    (k = digits(p, len, k + 1, 2)) && k < len && p[k] == ' ' && (k = clock(p, len, k + 1))) {
			if (k < len && p[k] == '.')
				for (k++; k < len && is_digit(p[k]); k++)
					;
			const char *close = memchr(p + k, ']', len - k);
			if (close && close - (p + k) < 96) {
				k = (size_t)(close - p) + 1;
				return k < len && p[k] == ' ' ? k + 1 : k;
			}
			return k;
		}
		/* uvicorn / logging: `INFO:     msg`, `ERROR: msg` */
		if (p[i] == ':')
			return skip_spaces(p, len, i + 1);
		return i;
	}
	/* glog: `E0310 15:07:20.123456  123 file.cc:12] ` */
	if (len > 20 && strchr("IWEF", p[0]) && digits(p, len, 1, 4) && p[5] == ' ' && clock(p, len, 6)) {
		*start = true;
		const char *close = memchr(p, ']', len < 96 ? len : 96);
		return close ? (size_t)(close - p) + 1 : 0;
	}
	/* NCCL: `host:pid:tid [0] NCCL INFO ...` */
	const char *nccl = len < 160 ? memmem(p, len, " NCCL ", 6) : memmem(p, 160, " NCCL ", 6);
	if (nccl && nccl > p && nccl[-1] == ']' && !memchr(p, ' ', (size_t)(nccl - p) - 4)) {
		*start = true;
		return 0;
	}
	return 0;
}

/* `Name: ...`, `pkg.mod.Name: ...` or a bare `Name` at the end of the
 * line, where the name looks like an exception class. */
static bool exception_line(const char *p, size_t len)
{
	size_t i = 0, last = 0;
	bool dotted = false;
	if (!len || !(is_alpha(p[0]) || p[0] == '_'))
		return false;
	while (i < len && (is_word(p[i]) || p[i] == '.')) {
		if (p[i] == '.') {
			dotted = true;
			last = i + 1;
		}
		i++;
	}
	if (i < len && p[i] != ':')
		return false;
	if (i < len && i + 1 < len && p[i + 1] != ' ')
		return false;
	static const char *const ends[] = { "Error", "Exception", "Interrupt", "Exit", "Failed",
					    "Failure", "Fault", "Warning" };
	for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++) {
		size_t n = strlen(ends[k]);
		if (i - last >= n && memcmp(p + i - n, ends[k], n) == 0)
			return true;
	}
	return dotted && i < len && is_upper(p[last]);
}

size_t norm_prefix_len(const char *s, size_t n)
{
	size_t i = 0, k;
	for (int round = 0; round < 8 && i < n && (k = layer(s + i, n - i)); round++)
		i += k;
	return i;
}

bool norm_process(const char *s, size_t n, char *name, size_t cap)
{
	char buf[512];
	size_t len = strip_ansi(s, n < sizeof(buf) ? n : sizeof(buf), buf);
	size_t i = 0, k;
	*name = '\0';
	for (int round = 0; round < 8 && i < len; round++) {
		const char *p = buf + i;
		if ((k = process_prefix(p, len - i))) {
			size_t e = 1;
			while (e < k && p[e] != ' ' && p[e] != ')' && p[e] != ',')
				e++;
			size_t nl = e - 1 < cap - 1 ? e - 1 : cap - 1;
			memcpy(name, p + 1, nl);
			name[nl] = '\0';
			if (strncmp(name, "pid=", 4) == 0)
				snprintf(name, cap, "%s", "pid");
			return true;
		}
		if (!(k = layer(p, len - i)))
			break;
		i += k;
	}
	return false;
}

size_t norm_line(const char *s, size_t n, char *out, struct norm *info)
{
	size_t len = memchr(s, '\x1b', n) || memchr(s, '[', n) ? strip_ansi(s, n, out)
							       : (memcpy(out, s, n), n);
	while (len && (out[len - 1] == '\r' || out[len - 1] == '\n'))
		len--;
	/* a boxed paste: `│ text      │` */
	if (len >= 3 && memcmp(out + len - 3, "\xe2\x94\x82", 3) == 0) {
		len -= 3;
		while (len && out[len - 1] == ' ')
			len--;
	}
	size_t skip = norm_prefix_len(out, len);
	if (skip) {
		memmove(out, out + skip, len - skip);
		len -= skip;
	}
	if (!info)
		return len;
	memset(info, 0, sizeof(*info));
	if (skip_spaces(out, len, 0) == len) {
		info->kind = NK_BLANK;
		return len;
	}
	int lvl;
	bool start;
	size_t b = record_header(out, len, &lvl, &start);
	info->body = b;
	info->quiet_level = lvl == 0 || lvl == 1 || lvl == 3 || lvl == 5;
	const char *m = out + b;
	size_t ml = len - b;
	if (ml && is_space(m[0])) {
		info->kind = start ? NK_RECORD : NK_INDENT;
		/* a frame inside a logged traceback keeps its indentation */
		if (start && b)
			info->kind = NK_INDENT;
		return len;
	}
	if (ml >= 34 && memcmp(m, "Traceback (most recent call last):", 34) == 0)
		info->traceback = true;
	else if ((ml >= 22 && memcmp(m, "During handling of the", 22) == 0) ||
		 (ml >= 22 && memcmp(m, "The above exception wa", 22) == 0))
		info->chained = true;
	else if (exception_line(m, ml))
		info->exception = true;
	/* what a shell prints when the process dies */
	static const char *const deaths[] = { "Killed", "Aborted (core dumped)",
					      "Segmentation fault (core dumped)", "Bus error (core dumped)" };
	bool death = false;
	for (size_t d = 0; d < sizeof(deaths) / sizeof(deaths[0]); d++)
		death |= ml == strlen(deaths[d]) && memcmp(m, deaths[d], ml) == 0;
	if (start || death || info->traceback || info->chained || info->exception || out[0] == '[' ||
	    out[0] == '{')
		info->kind = NK_RECORD;
	else
		info->kind = NK_CONT;
	return len;
}
