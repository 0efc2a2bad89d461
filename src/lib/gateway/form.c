/*
 * form.c — the route of a multipart/form-data request (the audio routes,
 * /v1/audio/transcriptions and /v1/audio/translations): the form's `model`
 * field read with libmicrohttpd's own multipart reader (a post processor
 * over the buffered body), never by hand. The body itself is relayed byte
 * for byte with the client's Content-Type (its boundary); the model is not
 * rewritten, so an alias or checkpoint id reaches the engine as sent.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "internal.h"

#define MODEL_MAX 256

struct form {
	char model[MODEL_MAX + 1];
	size_t len;
	bool seen, too_long;
};

static enum MHD_Result field(void *cls, enum MHD_ValueKind kind, const char *key,
			     const char *filename, const char *content_type,
			     const char *transfer_encoding, const char *data, uint64_t off,
			     size_t size)
{
	(void)kind, (void)filename, (void)content_type, (void)transfer_encoding;
	struct form *f = cls;
	if (!key || strcmp(key, "model") != 0)
		return MHD_YES;
	f->seen = true;
	if (off + size > MODEL_MAX) {
		f->too_long = true;
		return MHD_NO;
	}
	memcpy(f->model + off, data, size);
	if (off + size > f->len)
		f->len = (size_t)(off + size);
	f->model[f->len] = '\0';
	return MHD_YES;
}

int gw_route_form(struct req *q, struct MHD_Connection *c, struct gw_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->role = -1;
	struct form f = { 0 };
	struct MHD_PostProcessor *pp = MHD_create_post_processor(c, 16 * 1024, field, &f);
	if (!pp) {
		rt->status = 400;
		rt->type = "invalid_request_error";
		rt->code = "invalid_form";
		rt->message = xasprintf("%s takes multipart/form-data (a 'file' and a 'model' field); "
					"the request's Content-Type is not that",
					gw_endpoint_path(q->ep));
		return -1;
	}
	enum MHD_Result ok = MHD_post_process(pp, buf_str(&q->body), q->body.len);
	MHD_destroy_post_processor(pp);
	if (f.too_long || (ok != MHD_YES && !f.seen)) {
		rt->status = 400;
		rt->type = "invalid_request_error";
		rt->code = f.too_long ? "invalid_model" : "invalid_form";
		rt->message = xstrdup(f.too_long ? "the form's 'model' field is longer than 256 bytes"
						 : "the multipart/form-data body could not be read");
		return -1;
	}
	return gw_route_model(q->cfg, q->ep, f.seen && f.len ? f.model : NULL, rt);
}
