/*
 * engine_int.h — internal to the Engine API client (engine_http.c,
 * engine_json.c, engine_api.c, engine_logs.c): the one request path, the
 * path-safety check, the inspect that tells "gone" apart, and the JSON
 * helpers the decoders share.
 */
#ifndef LOBES_ENGINE_INT_H
#define LOBES_ENGINE_INT_H

#include "engine_api.h"

/* METHOD ("GET" or "POST", the latter with an empty body) path on the
 * engine. On 2xx the payload is in body (through demux when given) and 0 is
 * returned; *status gets the HTTP status. A non-2xx answer returns -2 with
 * *err naming the status and the engine's message (so a caller may map 404).
 * Transport failures return -1; a body over its cap, or a 2xx body cut
 * short by the time bound, returns -3 (body holds what came, possibly
 * ending inside a log frame or a line). */
int engine_request(const struct engine *e, const char *method, const char *path,
		   struct log_demux *demux, struct buf *body, long *status, struct err **err);
/* engine_request with GET. */
int engine_get(struct engine *e, const char *path, struct log_demux *demux, struct buf *body,
	       long *status, struct err **err);
/* A container id, name or image reference that is safe to put in a path. */
int engine_check_ref(const char *what, const char *ref, struct err **err);
/* Inspect; -2 (with *err) when the engine says there is no such container. */
int engine_inspect_gone(struct engine *e, const char *id, struct engine_container *c,
			struct err **err);

/* The string at key of object o, copied ("" when absent). */
char *engine_jdup(const json_t *o, const char *key);
/* A NULL-terminated copy of a JSON array of strings (null or absent: an
 * empty vector). Non-string members are skipped. */
char **engine_jstrv(const json_t *a);

#endif
