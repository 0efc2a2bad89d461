/*
 * engine_logs.c — a container's boot log from the Engine API: the logs
 * request, raw for a TTY container, through the stream's frame decoder
 * (engine_demux.c).
 */
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "engine_int.h"

#define LOG_CAP_DEFAULT ((size_t)8 << 20)

int engine_logs(struct engine *e, const char *id, const struct engine_log_opts *o,
		char **text, struct err **err)
{
	return engine_logs_upto(e, id, o, text, NULL, err);
}

int engine_logs_upto(struct engine *e, const char *id, const struct engine_log_opts *o,
		     char **text, bool *truncated, struct err **err)
{
	if (truncated)
		*truncated = false;
	struct engine_container c;
	if (engine_inspect_gone(e, id, &c, err) < 0)
		return -1;
	bool tty = c.tty;
	engine_container_free(&c);
	_cleanup_free_ char *tail = o && o->tail >= 0 ? xasprintf("%ld", o->tail) : xstrdup("all");
	_cleanup_free_ char *path = xasprintf(
		"/containers/%s/logs?stdout=1&stderr=1&tail=%s&since=%lld.%09ld%s", id, tail,
		o ? (long long)o->since : 0LL, o ? o->since_ns : 0L,
		o && o->timestamps ? "&timestamps=1" : "");
	_cleanup_buf_ struct buf b;
	buf_init(&b, o && o->cap ? o->cap : LOG_CAP_DEFAULT);
	struct log_demux d;
	log_demux_init(&d, tty);
	struct err *ge = NULL;
	int rc = engine_get(e, path, &d, &b, NULL, &ge);
	if (rc == -3 && truncated) { /* cap reached: what fit, the rest is left unread */
		err_free(ge);
		*truncated = true;
		*text = buf_take(&b);
		return 0;
	}
	if (rc < 0) {
		if (err)
			*err = ge;
		else
			err_free(ge);
		return -1;
	}
	if (!tty && (d.hdr_len || d.left))
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': GET %s: log stream ends mid-frame",
			       e->sock, path);
	*text = buf_take(&b);
	return 0;
}
