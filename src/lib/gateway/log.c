/*
 * log.c — the access/event log and the clock of the gateway (log.h): a JSON
 * object becomes one compact line handed to the command's callback under a
 * mutex, so lines of different worker loops never interleave. The access
 * line of each request is formatted here directly (gw_access_format), in
 * the bytes jansson would write for it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "log.h"

void gw_log_init(struct gw_log *l, gw_log_fn fn, void *ud)
{
	l->fn = fn;
	l->ud = ud;
	pthread_mutex_init(&l->mu, NULL);
}

void gw_log_destroy(struct gw_log *l)
{
	pthread_mutex_destroy(&l->mu);
}

void gw_log_json(struct gw_log *l, json_t *obj)
{
	if (!obj)
		return;
	char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(obj);
	if (s && l->fn) {
		pthread_mutex_lock(&l->mu);
		l->fn(l->ud, s);
		pthread_mutex_unlock(&l->mu);
	}
	free(s);
}

void gw_log_text(struct gw_log *l, const char *line)
{
	if (!line || !l->fn)
		return;
	pthread_mutex_lock(&l->mu);
	l->fn(l->ud, line);
	pthread_mutex_unlock(&l->mu);
}

/* A JSON string: printable ASCII other than '"' and '\\' as is (what
 * jansson writes for them); anything else through jansson's encoder, and
 * text that is not UTF-8 with its bytes past ASCII or below 0x20 as '?'. */
static void add_str(struct buf *b, const char *s)
{
	s = s ? s : "";
	const char *p = s;
	while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
		p++;
	if (!*p) {
		buf_add(b, "\"", 1);
		buf_add(b, s, (size_t)(p - s));
		buf_add(b, "\"", 1);
		return;
	}
	json_t *j = json_string(s);
	char *t = NULL;
	if (!j) {
		t = xstrdup(s);
		for (char *c = t; c && *c; c++)
			if ((unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20)
				*c = '?';
		j = json_string(t ? t : "");
	}
	char *enc = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	free(t);
	if (enc)
		buf_add(b, enc, strlen(enc));
	else
		buf_add(b, "\"\"", 2);
	free(enc);
}

/* A real as jansson writes it with JSON_REAL_PRECISION(6): "%.6g", its
 * exponent without '+' or leading zeros, ".0" when it would read as an
 * integer. */
static void add_real(struct buf *b, double v)
{
	char t[64];
	if (!isfinite(v))
		v = 0;
	snprintf(t, sizeof(t), "%.6g", v);
	char *e = strchr(t, 'e');
	if (e) {
		char *d = e + 1, *s = e + 1;
		if (*s == '+')
			s++;
		else if (*s == '-')
			*d++ = *s++;
		while (*s == '0' && s[1])
			s++;
		memmove(d, s, strlen(s) + 1);
	} else if (!strchr(t, '.')) {
		size_t l = strlen(t);
		memcpy(t + l, ".0", 3);
	}
	buf_add(b, t, strlen(t));
}

char *gw_access_format(const struct gw_access *a)
{
	struct buf b;
	buf_init(&b, 0);
	char num[32];
	buf_adds(&b, "{\"id\":");
	add_str(&b, a->id);
	buf_adds(&b, ",\"method\":");
	add_str(&b, a->method);
	buf_adds(&b, ",\"path\":");
	add_str(&b, a->path);
	buf_adds(&b, ",\"role\":");
	add_str(&b, a->role);
	int n = snprintf(num, sizeof(num), ",\"status\":%d", a->status);
	buf_add(&b, num, (size_t)n);
	n = snprintf(num, sizeof(num), ",\"bytes\":%lld", a->bytes);
	buf_add(&b, num, (size_t)n);
	buf_adds(&b, ",\"outcome\":");
	add_str(&b, a->outcome);
	buf_adds(&b, ",\"upstream_ms\":");
	if (a->upstream_ms >= 0)
		add_real(&b, a->upstream_ms);
	else
		buf_adds(&b, "null");
	buf_adds(&b, ",\"total_ms\":");
	add_real(&b, a->total_ms);
	if (a->alias)
		buf_adds(&b, ",\"alias\":true");
	if (a->key) {
		buf_adds(&b, ",\"key\":");
		add_str(&b, a->key);
	}
	if (a->served_by) {
		buf_adds(&b, ",\"served_by\":");
		add_str(&b, a->served_by);
	}
	if (a->failed_over) {
		buf_adds(&b, ",\"failed_over\":");
		add_str(&b, a->failed_over);
	}
	if (a->trace_id) {
		buf_adds(&b, ",\"trace_id\":");
		add_str(&b, a->trace_id);
	}
	buf_adds(&b, "}");
	return buf_take(&b);
}

double gw_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
