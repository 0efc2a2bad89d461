/*
 * engine_logs.c — a container's boot log from the Engine API: the
 * multiplexed stream's frame decoder (8-byte headers: stream, zeros,
 * big-endian length) and the logs request, raw for a TTY container.
 */
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "engine_int.h"

#define LOG_CAP_DEFAULT ((size_t)8 << 20)

void log_demux_init(struct log_demux *d, bool raw)
{
	memset(d, 0, sizeof(*d));
	d->raw = raw;
}

int log_demux_feed(struct log_demux *d, const void *p, size_t n, struct buf *out)
{
	const unsigned char *s = p;
	if (d->bad)
		return -1;
	if (d->raw)
		return buf_add(out, s, n);
	while (n > 0) {
		if (d->left > 0) {
			size_t k = n < d->left ? n : d->left;
			if (buf_add(out, s, k) < 0)
				return -1;
			s += k;
			n -= k;
			d->left -= k;
			continue;
		}
		size_t k = sizeof(d->hdr) - d->hdr_len;
		if (k > n)
			k = n;
		memcpy(d->hdr + d->hdr_len, s, k);
		d->hdr_len += k;
		s += k;
		n -= k;
		if (d->hdr_len < sizeof(d->hdr))
			break;
		/* stream 0 stdin, 1 stdout, 2 stderr, 3 system error; then zeros */
		if (d->hdr[0] > 3 || d->hdr[1] || d->hdr[2] || d->hdr[3]) {
			d->bad = true;
			return -1;
		}
		d->left = (size_t)d->hdr[4] << 24 | (size_t)d->hdr[5] << 16 | (size_t)d->hdr[6] << 8 |
			  (size_t)d->hdr[7];
		d->hdr_len = 0;
	}
	return 0;
}

int engine_logs(struct engine *e, const char *id, const struct engine_log_opts *o,
		char **text, struct err **err)
{
	struct engine_container c;
	if (engine_inspect_gone(e, id, &c, err) < 0)
		return -1;
	bool tty = c.tty;
	engine_container_free(&c);
	_cleanup_free_ char *tail = o && o->tail >= 0 ? xasprintf("%ld", o->tail) : xstrdup("all");
	_cleanup_free_ char *path = xasprintf("/containers/%s/logs?stdout=1&stderr=1&tail=%s&since=%lld",
					      id, tail, o ? (long long)o->since : 0LL);
	_cleanup_buf_ struct buf b;
	buf_init(&b, o && o->cap ? o->cap : LOG_CAP_DEFAULT);
	struct log_demux d;
	log_demux_init(&d, tty);
	if (engine_get(e, path, &d, &b, NULL, err) < 0)
		return -1;
	if (!tty && (d.hdr_len || d.left))
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': GET %s: log stream ends mid-frame",
			       e->sock, path);
	*text = buf_take(&b);
	return 0;
}
