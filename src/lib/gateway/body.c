/*
 * body.c — what routing needs from a request body, read in one streaming
 * pass (yajl's event parser) instead of jansson's document tree: the
 * top-level `model` and `stream`, with the same verdict on the body's
 * validity jansson would give (route.c).
 *
 * Why: every relayed request's body is validated before it is routed
 * (duplicate keys refused, so the gateway and the engine cannot read
 * different models from one body). Building the whole tree with jansson
 * cost ~37 ns a byte (6 µs for the bench's 158-byte chat, over 0.8 ms for a
 * 36 KB conversation); yajl validates at ~1-7 ns a byte and builds nothing
 * (docs/benchmarks/gateway.md, "Profile").
 *
 * The verdict must be jansson's, so this pass answers only when it is sure
 * and leaves every other body to jansson (GW_BODY_UNSURE), which then gives
 * its own error text as before:
 *   - syntax, UTF-8, trailing bytes, a top level that is not an object:
 *     yajl refuses what jansson refuses;
 *   - a key seen twice in one object (at any depth): keys are hashed per
 *     object; any equal hash is left to jansson (a collision only costs
 *     the slow path);
 *   - what yajl takes and jansson does not: "\u0000" in a string or key,
 *     a lone surrogate escape (yajl writes '?'), an integer outside
 *     long long, a real that overflows, nesting deeper than jansson's 2048,
 *     UTF-8 forms only jansson checks, a vertical tab or form feed (yajl's
 *     whitespace);
 *   - a `model` that is neither a string nor null (route.c's 400).
 * Those checks may raise false alarms (a "\\ud8" in text): a false alarm
 * costs the slow path, never a different answer.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "../util/err.h"
#include "gateway.h"

#define MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */

struct key_seen {
	unsigned long long obj; /* which object (a serial number) */
	unsigned long long hash;
};

struct scan {
	int depth;
	unsigned long long serial;   /* objects opened so far */
	unsigned long long *stack;   /* the serial of each open object or 0 (array) */
	size_t n_stack, a_stack;
	struct key_seen *seen; /* open addressing; a zero hash marks a free slot */
	size_t n_seen, a_seen;
	bool top_key_model, top_key_stream; /* the key just read is the top level's */
	struct gw_body *out;
	yajl_handle h;
	size_t end; /* just past the top-level object's '}' */
};

static unsigned long long fnv(const unsigned char *s, size_t n)
{
	unsigned long long h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h ? h : 1;
}

static bool seen_insert(struct scan *s, unsigned long long obj, unsigned long long h);

static void seen_grow(struct scan *s)
{
	struct key_seen *old = s->seen;
	size_t n = s->a_seen;
	s->a_seen = n ? n * 2 : 64;
	s->seen = xcalloc(s->a_seen, sizeof(*s->seen));
	s->n_seen = 0;
	for (size_t i = 0; i < n; i++)
		if (old[i].hash)
			seen_insert(s, old[i].obj, old[i].hash);
	free(old);
}

/* False when (obj, h) was there already. */
static bool seen_insert(struct scan *s, unsigned long long obj, unsigned long long h)
{
	if ((s->n_seen + 1) * 2 > s->a_seen)
		seen_grow(s);
	size_t m = s->a_seen - 1, i = (size_t)((h ^ (obj * 0x9e3779b97f4a7c15ull)) & m);
	for (; s->seen[i].hash; i = (i + 1) & m)
		if (s->seen[i].hash == h && s->seen[i].obj == obj)
			return false;
	s->seen[i].obj = obj;
	s->seen[i].hash = h;
	s->n_seen++;
	return true;
}

static int push(struct scan *s, unsigned long long serial)
{
	if (++s->depth > MAX_DEPTH)
		return 0;
	if (s->n_stack == s->a_stack) {
		s->a_stack = s->a_stack ? s->a_stack * 2 : 16;
		s->stack = xrealloc(s->stack, s->a_stack * sizeof(*s->stack));
	}
	s->stack[s->n_stack++] = serial;
	return 1;
}

static int pop(void *ctx)
{
	struct scan *s = ctx;
	if (--s->depth == 0)
		s->end = yajl_get_bytes_consumed(s->h);
	s->n_stack--;
	return 1;
}

/* A value just ended: was it the top level's `model` or `stream`? */
static void value_seen(struct scan *s)
{
	s->top_key_model = s->top_key_stream = false;
}

static int on_null(void *ctx)
{
	struct scan *s = ctx;
	value_seen(s); /* a null model is no model */
	return 1;
}

static int on_bool(void *ctx, int b)
{
	struct scan *s = ctx;
	if (s->top_key_model)
		return 0; /* not a string: route.c's 400, from jansson */
	if (s->top_key_stream)
		s->out->stream = b != 0;
	value_seen(s);
	return 1;
}

/* jansson refuses an integer outside long long and a real that overflows */
static int on_number(void *ctx, const char *p, size_t n)
{
	struct scan *s = ctx;
	if (s->top_key_model)
		return 0;
	char t[64];
	if (n >= sizeof(t))
		return 0; /* unsure: jansson decides */
	memcpy(t, p, n);
	t[n] = '\0';
	errno = 0;
	if (strpbrk(t, ".eE")) {
		double d = strtod(t, NULL);
		if (errno == ERANGE && isinf(d))
			return 0;
	} else {
		(void)strtoll(t, NULL, 10);
		if (errno == ERANGE)
			return 0;
	}
	value_seen(s);
	return 1;
}

static int on_string(void *ctx, const unsigned char *p, size_t n)
{
	struct scan *s = ctx;
	if (memchr(p, '\0', n))
		return 0; /* "\u0000": jansson refuses it */
	if (s->top_key_model) {
		free(s->out->model);
		s->out->model = xcalloc(1, n + 1);
		memcpy(s->out->model, p, n);
	}
	value_seen(s);
	return 1;
}

static int on_map_start(void *ctx)
{
	struct scan *s = ctx;
	if (s->top_key_model)
		return 0;
	value_seen(s);
	return push(s, ++s->serial);
}

static int on_map_key(void *ctx, const unsigned char *p, size_t n)
{
	struct scan *s = ctx;
	if (memchr(p, '\0', n) || !seen_insert(s, s->stack[s->n_stack - 1], fnv(p, n)))
		return 0; /* a NUL (refused) or maybe a duplicate key: jansson decides */
	bool top = s->depth == 1;
	s->top_key_model = top && n == 5 && !memcmp(p, "model", 5);
	s->top_key_stream = top && n == 6 && !memcmp(p, "stream", 6);
	return 1;
}

static int on_array_start(void *ctx)
{
	struct scan *s = ctx;
	if (s->depth == 0)
		return 0; /* the top level must be an object */
	if (s->top_key_model)
		return 0;
	value_seen(s);
	return push(s, 0);
}

static const yajl_callbacks callbacks = {
	.yajl_null = on_null,
	.yajl_boolean = on_bool,
	.yajl_number = on_number,
	.yajl_string = on_string,
	.yajl_start_map = on_map_start,
	.yajl_map_key = on_map_key,
	.yajl_end_map = pop,
	.yajl_start_array = on_array_start,
	.yajl_end_array = pop,
};

/* Bytes the two parsers read apart, found without parsing:
 *   - a "\u" escape of a surrogate half: yajl writes '?' for a lone one,
 *     jansson refuses the body;
 *   - UTF-8 that only jansson checks: an overlong form (C0, C1, E0 80-9F,
 *     F0 80-8F), an encoded surrogate (ED A0-BF), past U+10FFFF (F4 90-,
 *     F5-FF). yajl checks the count of continuation bytes;
 *   - a vertical tab or form feed: whitespace to yajl, not to JSON (the
 *     gateway fuzz target found it; so it found an unterminated string
 *     after the object, which yajl waits on: gw_body_scan allows only
 *     whitespace after the object's end). */
static bool read_apart(const char *body, size_t n)
{
	const unsigned char *b = (const unsigned char *)body;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = b[i];
		if (c == '\v' || c == '\f')
			return true; /* whitespace to yajl, an error to jansson */
		if (c < 0x80 && c != '\\')
			continue;
		unsigned char d = i + 1 < n ? b[i + 1] : 0;
		if (c == '\\') {
			if (d == 'u' && i + 3 < n && (b[i + 2] == 'd' || b[i + 2] == 'D') &&
			    strchr("89abcdefABCDEF", b[i + 3]) && b[i + 3])
				return true;
			i++; /* the escaped character */
			continue;
		}
		if (c < 0xc0)
			continue;
		if (c < 0xc2 || c > 0xf4 || (c == 0xe0 && d < 0xa0) || (c == 0xed && d >= 0xa0) ||
		    (c == 0xf0 && d < 0x90) || (c == 0xf4 && d >= 0x90))
			return true;
	}
	return false;
}

enum gw_body_verdict gw_body_scan(const char *body, size_t len, struct gw_body *out)
{
	memset(out, 0, sizeof(*out));
	if (!body || !len || read_apart(body, len))
		return GW_BODY_UNSURE;
	struct scan s = { .out = out };
	yajl_handle h = yajl_alloc(&callbacks, NULL, &s);
	if (!h)
		return GW_BODY_UNSURE;
	s.h = h;
	/* yajl's defaults are jansson's: UTF-8 checked, no comments, no
	 * trailing bytes, one value */
	bool ok = yajl_parse(h, (const unsigned char *)body, len) == yajl_status_ok &&
		  yajl_complete_parse(h) == yajl_status_ok && s.serial > 0 && s.end > 0;
	/* only JSON whitespace after the object: yajl takes an unterminated
	 * string there (it waits for the rest), jansson does not */
	for (size_t i = s.end; ok && i < len; i++)
		ok = body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r';
	yajl_free(h);
	free(s.stack);
	free(s.seen);
	if (!ok) {
		gw_body_free(out);
		return GW_BODY_UNSURE;
	}
	return GW_BODY_OK;
}

void gw_body_free(struct gw_body *b)
{
	free(b->model);
	memset(b, 0, sizeof(*b));
}
