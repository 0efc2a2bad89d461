/* common.c — shared output helpers for subcommands; see cmd.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../lib/util/secret.h"
#include "cmd.h"

void cmd_usage(const struct ctx *ctx, FILE *stream)
{
	fprintf(stream, "usage: %s\n", ctx->cmd->synopsis);
	if (ctx->cmd->help && *ctx->cmd->help)
		fprintf(stream, "\n%s", ctx->cmd->help);
}

int cmd_usage_error(const struct ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "lobes %s: ", ctx->cmd->name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fprintf(stderr, "usage: %s\n", ctx->cmd->synopsis);
	return EXIT_USAGE;
}

int cmd_fail(struct ctx *ctx, struct err *e)
{
	int code = e ? e->code : EXIT_INTERNAL;
	err_free(ctx->err);
	ctx->err = e;
	return code;
}

void out_json(const json_t *result)
{
	/* every --json output goes through the one masking rule (secret.h) */
	json_auto_t *masked = json_deep_copy(result);
	secret_mask_json(masked);
	json_dumpf(masked ? masked : result, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
}

#define COLOR(fn, code) \
	const char *fn(const struct ctx *c) { return c->color ? code : ""; }
COLOR(c_bold, "\033[1m")
COLOR(c_red, "\033[31m")
COLOR(c_yellow, "\033[33m")
COLOR(c_green, "\033[32m")
COLOR(c_dim, "\033[2m")
COLOR(c_reset, "\033[0m")

const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}
