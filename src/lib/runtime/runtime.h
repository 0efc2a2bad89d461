/*
 * runtime.h — the runtime room's public face: the one header other rooms and the
 * commands include (docs/architecture.md). The pieces it gathers keep their
 * own design comments.
 */
#ifndef LOBES_RUNTIME_H
#define LOBES_RUNTIME_H

/* The room's other public pieces: include this header, not them. */
#include "bringup.h"
#include "compose_cli.h"
#include "engine_api.h"
#include "engine_metrics.h"
#include "fleet.h"
#include "bgproc.h"
#include "logstore.h"
#include "memory.h"
#include "serve_ops.h"
#include "view.h"
#endif
