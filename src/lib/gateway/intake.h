/*
 * intake.h — the reading of a request head (intake.c): framing rules and
 * the errors answered once the body is in. Internal to the gateway's HTTP
 * front (server.c), the layer above the relay.
 */
#ifndef LOBES_GATEWAY_INTAKE_H
#define LOBES_GATEWAY_INTAKE_H

#include "relay.h"

/* Answer a head with ambiguous or unsupported body framing (400/501, the
 * connection then closes) and set *answered; else MHD_YES, *answered false. */
enum MHD_Result intake_framing(struct req *q, struct MHD_Connection *c, bool *answered);
/* Answer the error q->early decided at the head (404, 405, 401). */
enum MHD_Result intake_answer_early(struct req *q, struct MHD_Connection *c);

#endif
