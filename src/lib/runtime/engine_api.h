/*
 * engine_api.h — the Docker Engine API over its unix socket (libcurl), for
 * what the compose CLI does not say well: each container's state, health,
 * effective command and environment, its boot log, and image metadata.
 *
 * Lifecycle (create, up, down) goes through the compose CLI (compose_cli.h);
 * this side reads, and starts a container compose already created. Paths are unversioned, so the daemon answers with its
 * own current API version (a pinned old version is refused by newer
 * daemons). Every call is bounded by a timeout and every body goes through
 * a capped struct buf. The JSON parsers are public so recorded bodies can be
 * tested without a socket.
 */
#ifndef LOBES_ENGINE_API_H
#define LOBES_ENGINE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <jansson.h>

#include "../util/buf.h"
#include "../util/err.h"

#define ENGINE_DEFAULT_SOCK "/var/run/docker.sock"
#define ENGINE_TIMEOUT_MS 10000

struct engine {
	char *sock;       /* socket path (owned) */
	long timeout_ms;  /* bound on one whole request */
};

/* Resolve the socket: DOCKER_HOST=unix://PATH, else ENGINE_DEFAULT_SOCK.
 * Connects to nothing. A DOCKER_HOST that is not unix:// is EXIT_CONFIG.
 * Release with engine_close(). */
int engine_open(struct engine *e, struct err **err);
void engine_close(struct engine *e);
/* The socket path DOCKER_HOST names (a unix:// URL), or the default when
 * it is unset or empty; NULL (EXIT_CONFIG) for another scheme. Caller frees. */
char *engine_sock_from_host(const char *docker_host, struct err **err);

/* POST /containers/ID/start: start a container compose created (`up
 * --no-start`). Compose stays the lifecycle tool (create, recreate, down);
 * a start is one engine call with `docker start`'s meaning, milliseconds
 * where a compose run costs a Python start-up between two memory windows.
 * 0 when started (204) or already running (304); "no such container 'ID'"
 * for a 404; other answers and transport failures are EXIT_RUNTIME naming
 * the socket; an id that cannot be put in a path is EXIT_INTERNAL. */
int engine_start_container(const struct engine *e, const char *id, struct err **err);

/* GET /_ping. 0 when the daemon answered OK; -1 with "docker engine at
 * 'SOCK': connect: REASON" (EXIT_RUNTIME) when it could not be reached. */
int engine_ping(struct engine *e, struct err **err);

/* One container, as list and inspect together describe it. Strings are
 * owned and never NULL ("" when absent); string vectors are owned,
 * NULL-terminated and never NULL. */
struct engine_container {
	char *id;          /* full id */
	char *name;        /* without the leading '/' */
	char *project;     /* label com.docker.compose.project */
	char *service;     /* label com.docker.compose.service */
	char *role;        /* label lobes.role */
	char *profile;     /* label lobes.profile */
	char *state;       /* created, running, paused, restarting, removing, exited, dead */
	char *health;      /* starting, healthy, unhealthy, or "none" (no healthcheck) */
	char *started_at;  /* RFC 3339 as the engine wrote it; "" when never started */
	char *finished_at;
	char *error;       /* State.Error */
	char *image;       /* Config.Image: the reference it was created from */
	char *image_id;    /* Image: sha256:... */
	int exit_code;
	int restart_count;
	int pid;
	bool oom_killed;
	bool tty;          /* Config.Tty: logs are a raw stream, not multiplexed */
	char **entrypoint; /* Config.Entrypoint */
	char **cmd;        /* Config.Cmd */
	char **args;       /* Args: what the entrypoint was really given */
	char **env;        /* Config.Env, KEY=VALUE */
	json_t *labels;    /* Config.Labels (owned reference; an object) */
};

struct engine_container_list {
	struct engine_container *c;
	size_t n;
};

void engine_container_free(struct engine_container *c);
void engine_container_list_free(struct engine_container_list *l);
/* The container of l serving role: matched by its lobes.role label, else by
 * its compose service name; a running one before any other; NULL: none. */
const struct engine_container *engine_container_for_role(const struct engine_container_list *l,
							 const char *role);

/* Parse a GET /containers/json body into l (ids, names, labels, state and
 * image only: the rest needs an inspect). A body that is not a JSON array
 * of objects is EXIT_RUNTIME. */
int engine_parse_list(const char *body, struct engine_container_list *l, struct err **err);
/* Parse a GET /containers/ID/json body into c (initialised by the call;
 * free with engine_container_free). EXIT_RUNTIME when it is not an object
 * with an Id. */
int engine_parse_inspect(const char *body, struct engine_container *c, struct err **err);

/* Every container (running or not) of compose project `project`, each
 * inspected, ordered by name. l is initialised by the call. A container
 * that disappears between the list and its inspect is left out. */
int engine_list_project(struct engine *e, const char *project,
			struct engine_container_list *l, struct err **err);
/* Inspect one container by id or name. A missing one is EXIT_RUNTIME
 * "no such container 'X'". */
int engine_inspect(struct engine *e, const char *id, struct engine_container *c,
		   struct err **err);

struct engine_image {
	char *id;            /* sha256:... */
	char **repo_digests; /* NAME@sha256:..., NULL-terminated */
	char **repo_tags;
	char **env;          /* Config.Env */
};
void engine_image_free(struct engine_image *im);
int engine_parse_image(const char *body, struct engine_image *im, struct err **err);
/* GET /images/REF/json. A missing image is EXIT_RUNTIME "no such image". */
int engine_image_inspect(struct engine *e, const char *ref, struct engine_image *im,
			 struct err **err);

/* Value of KEY in a KEY=VALUE vector (Config.Env), or NULL. Borrowed. */
const char *engine_env_get(char *const *env, const char *key);

/* Container logs. A docker log stream without a TTY is multiplexed: each
 * frame is an 8-byte header (stream 1 stdout / 2 stderr, three zero
 * bytes, payload length big-endian u32) then the payload. The demultiplexer
 * is incremental: frames may be split anywhere across feeds. */
struct log_demux {
	unsigned char hdr[8];
	size_t hdr_len;   /* header bytes seen of the current frame */
	size_t left;      /* payload bytes still to come in the current frame */
	bool raw;         /* TTY stream: no framing, everything is payload */
	bool bad;         /* a header that is not a docker frame header was seen */
};
void log_demux_init(struct log_demux *d, bool raw);
/* Append the payload bytes of p[0..n) to out (stdout and stderr, in
 * stream order). -1 when out's cap is reached or a header is malformed
 * (d->bad is set then). */
int log_demux_feed(struct log_demux *d, const void *p, size_t n, struct buf *out);

struct engine_log_opts {
	long tail;       /* last N lines; < 0 for all */
	time_t since;    /* only lines since this time; 0 for all */
	size_t cap;      /* most bytes of text returned; 0 for 8 MiB */
	long since_ns;   /* nanoseconds added to since */
	bool timestamps; /* each line prefixed with its RFC 3339 time and a space */
};
/* The log text of container id (stdout and stderr interleaved as written),
 * into *text (owned by the caller). A log over cap is EXIT_RUNTIME. */
int engine_logs(struct engine *e, const char *id, const struct engine_log_opts *o,
		char **text, struct err **err);
/* engine_logs, but a log over cap, or one whose transfer outlasts the
 * engine's time bound, is not an error: *text holds the first bytes that
 * came (its last line may be cut short), *truncated is set, and the
 * transfer is dropped (a caller reads on with since= its last line). */
int engine_logs_upto(struct engine *e, const char *id, const struct engine_log_opts *o,
		     char **text, bool *truncated, struct err **err);

/* Parse an engine timestamp ("2024-05-01T12:34:56.123456789Z", or with a
 * +hh:mm offset) to a time_t. -1 for a malformed one and for the engine's
 * "never" (year 1). */
int engine_parse_time(const char *s, time_t *out);

#endif
