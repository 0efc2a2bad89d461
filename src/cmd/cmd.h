/*
 * cmd.h — what every subcommand gets from main(): the global options and the
 * output helpers. A command parses its own options, calls the library, builds
 * its result as one jansson object, and prints it as text or --json from that
 * object. It returns an exit code; on failure it may hand an error to main
 * through ctx->err (main prints it, nothing else does).
 */
#ifndef LOBES_CMD_H
#define LOBES_CMD_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "../lib/util/err.h"

struct command;

struct ctx {
	bool json;             /* --json */
	bool color;            /* stdout is a TTY and NO_COLOR unset and no --no-color */
	bool dir_given;        /* --dir was on the command line */
	char *dir;             /* deploy dir: --dir, else $LOBES_DIR, else ~/.lobes */
	const struct command *cmd;
	const struct command *commands; /* the whole table (src/main.c): -h, man, completions */
	size_t n_commands;
	struct err *err;       /* set by a command to have main print it */
};

struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct ctx *ctx);
	const char *synopsis; /* one line: "lobes detect [--json]" */
	const char *summary;  /* one line for `lobes --help` */
	const char *help;     /* the options, printed by `lobes VERB -h` and the man page */
};

/* The command table and the global help's sections (table.c). */
extern const struct command cmd_table[];
extern const size_t cmd_table_len;
extern const char *const cmd_exit_codes_help;
extern const char *const cmd_environment_help;

/* Print the usage of ctx->cmd to stream. */
void cmd_usage(const struct ctx *ctx, FILE *stream);
/* Report a usage error ("lobes VERB: MSG", then the synopsis) and return 2. */
int cmd_usage_error(const struct ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Hand an error to main and return its exit code. */
int cmd_fail(struct ctx *ctx, struct err *e);

/* Print result as JSON (pretty, sorted as built) to stdout. */
void out_json(const json_t *result);
/* Color helpers: return the escape or "" when color is off. */
const char *c_bold(const struct ctx *c);
const char *c_red(const struct ctx *c);
const char *c_yellow(const struct ctx *c);
const char *c_green(const struct ctx *c);
const char *c_dim(const struct ctx *c);
const char *c_reset(const struct ctx *c);

/* Getters for optional strings in a JSON object; return "" / fallback. */
const char *jstr(const json_t *o, const char *key);

/* The gateway beside serve and stop (gateway_life.c). */
#include "../lib/runtime/runtime.h"
struct gw_life {
	bool skip; /* --no-gateway */
	struct bgproc proc;
	char *bind; /* from the settings; NULL when they did not load (stop) */
	int port, drain_s;
};
void gw_life_close(struct gw_life *l);
/* The deploy dir's fleet, and its gateway's life: the gateway's settings read
 * (an error only when need_settings) and its process found. Opened together
 * (serve, stop); on failure neither is left open. */
int gw_life_open_fleet(struct fleet *f, struct gw_life *l, const char *dir, bool skip,
		       bool need_settings, struct err **err);
/* What serve (up) or stop would do: {action: start|reload|external|skip |
 * stop|none, ok, url?, log?, pid?}. */
json_t *gw_life_plan(const struct gw_life *l, bool up);
/* Do it: serve's start/reload, stop's stop; ok false with error on failure. */
json_t *gw_life_up(struct gw_life *l);
json_t *gw_life_down(struct gw_life *l);
void gw_life_print(const json_t *g, bool applied);
/* The log collector (collector_life.c): serve's start (action start,
 * running or skip), stop's stop (stop or none); applied only with apply.
 * {action, ok, pid?, log?, killed?, error?}. */
json_t *collector_up(const char *dir, bool skip, bool apply);
json_t *collector_down(const char *dir, bool apply);
void collector_print(const json_t *c, bool applied);

#define CMD(name) int cmd_##name(int argc, char **argv, struct ctx *ctx)
CMD(detect);
CMD(explain);
CMD(render);
CMD(init);
CMD(serve);
CMD(stop);
CMD(verify);
CMD(triage);
CMD(status);
CMD(probe);
CMD(doctor);
CMD(gateway);
CMD(keys);
CMD(bench);
CMD(eval);
CMD(completion);
CMD(switch);
CMD(top);
CMD(logs);
/* Help texts kept beside their command (src/main.c's table points at them). */
extern const char cmd_top_help[];
extern const char cmd_logs_help[];

#endif
