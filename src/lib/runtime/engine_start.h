/*
 * engine_start.h — start a container that compose created, through the
 * Docker Engine API (POST /containers/ID/start over the unix socket).
 *
 * Compose stays the lifecycle tool: it creates every container (`up
 * --no-start`: configuration, labels, recreation on change) and tears the
 * fleet down. Starting an already-created container is a single engine call
 * with exactly `docker start`'s meaning, and it costs milliseconds where a
 * compose run costs a Python start-up (about a second on a small box); the
 * bring-up starts one role per memory window, so that cost would otherwise
 * be paid between every two windows. This file only starts: reads stay in
 * engine_api.h.
 */
#ifndef LOBES_ENGINE_START_H
#define LOBES_ENGINE_START_H

#include "../util/err.h"
#include "engine_api.h"

/* Start container `id` (a full or short id, or a name) of engine e. 0 when
 * the engine started it (204) or it was already running (304). A missing
 * container is EXIT_RUNTIME "no such container 'ID'"; any other answer is
 * EXIT_RUNTIME naming the socket, the HTTP status and the engine's message;
 * an unreachable engine is EXIT_RUNTIME "docker engine at 'SOCK': connect:
 * ...". Bounded by e->timeout_ms. An id that cannot be put in a path is
 * EXIT_INTERNAL. */
int engine_start_container(const struct engine *e, const char *id, struct err **err);

#endif
