/*
 * engine_demux.c — the frame decoder of a multiplexed log stream (8-byte
 * headers: stream, zeros, big-endian length), or the raw bytes of a TTY
 * container. Below the HTTP path (engine_http.c), which feeds it the body
 * as it arrives, and the logs request (engine_logs.c), which sets it up, so
 * neither calls the other for it.
 */
#include <string.h>

#include "engine_int.h"

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
