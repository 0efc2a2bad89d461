/*
 * verify.h — the verify room's public face: the one header other rooms and the
 * commands include (docs/architecture.md). The pieces it gathers keep their
 * own design comments.
 */
#ifndef LOBES_VERIFY_H
#define LOBES_VERIFY_H

/* The room's other public pieces: include this header, not them. */
#include "evidence.h"
#include "question.h"
#endif
