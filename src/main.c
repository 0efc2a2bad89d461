/*
 * main.c — global options, dispatch, exit codes, --help and the man page
 * (the command table and its help strings are src/cmd/table.c).
 *
 * Global options (--json, --dir D, --no-color) may appear before or after the
 * verb; they are taken out of argv before the verb sees it. The only place
 * that prints a fatal error is here. stdout is flushed and checked at exit so
 * a full disk or closed pipe is an error, not silent truncation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/util/cleanup.h"
#include "lib/util/secret.h"
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: lobes [--json] [--dir DIR] [--no-color] <command> [options]\n\n"
		   "Fits a local vLLM fleet to the NVIDIA machine it lands on.\n\ncommands:\n");
	for (size_t i = 0; i < cmd_table_len; i++)
		fprintf(f, "  %-10s %s\n", cmd_table[i].name, cmd_table[i].summary);
	fprintf(f, "\nglobal options:\n"
		   "  --json        machine-readable output (every command)\n"
		   "  --dir DIR     deploy directory (default $LOBES_DIR, else ~/.lobes)\n"
		   "  --no-color    no color even on a terminal (NO_COLOR is honoured too)\n"
		   "  -h, --help    this help; `lobes COMMAND -h` for a command's options\n"
		   "  --version     print the version\n\n%s\n%s",
		cmd_environment_help, cmd_exit_codes_help);
}

/* The man page source, generated from the same strings as --help. */
static void man(void)
{
	printf(".TH LOBES 1\n.SH NAME\nlobes \\- fit a local vLLM fleet to the NVIDIA machine it lands on\n"
	       ".SH SYNOPSIS\n.B lobes\n[\\-\\-json] [\\-\\-dir DIR] [\\-\\-no\\-color] COMMAND [options]\n"
	       ".SH COMMANDS\n");
	for (size_t i = 0; i < cmd_table_len; i++) {
		printf(".TP\n.B %s\n%s\n.nf\n", cmd_table[i].synopsis, cmd_table[i].summary);
		for (const char *p = cmd_table[i].help; *p; p++) {
			if (*p == '\\' || (*p == '-' && (p == cmd_table[i].help || p[-1] != '\\')))
				putchar('\\');
			putchar(*p);
		}
		printf(".fi\n");
	}
	printf(".SH ENVIRONMENT\n.nf\n");
	for (const char *p = cmd_environment_help; *p; p++) {
		if (*p == '\\' || *p == '-')
			putchar('\\');
		putchar(*p);
	}
	printf(".fi\n.SH EXIT STATUS\n.nf\n%s.fi\n", cmd_exit_codes_help);
}

static int finish(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "lobes: error: write to stdout failed: %s\n", strerror(errno));
		return code ? code : EXIT_RUNTIME;
	}
	return code;
}

int main(int argc, char **argv)
{
	struct ctx ctx = { 0 };
	_cleanup_free_ char *dir = NULL;
	bool no_color = false;
	/* Take global options out of argv, wherever they are (before "--"). */
	int out = 1;
	bool dashdash = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!dashdash && strcmp(a, "--") == 0) {
			dashdash = true;
			argv[out++] = argv[i];
		} else if (!dashdash && strcmp(a, "--json") == 0) {
			ctx.json = true;
		} else if (!dashdash && strcmp(a, "--no-color") == 0) {
			no_color = true;
		} else if (!dashdash && strcmp(a, "--dir") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "lobes: option '--dir' needs a directory\n");
				return EXIT_USAGE;
			}
			free(dir);
			dir = xstrdup(argv[++i]);
			ctx.dir_given = true;
		} else if (!dashdash && strncmp(a, "--dir=", 6) == 0) {
			free(dir);
			dir = xstrdup(a + 6);
			ctx.dir_given = true;
		} else {
			argv[out++] = argv[i];
		}
	}
	argc = out;
	argv[argc] = NULL;
	ctx.color = !no_color && !getenv("NO_COLOR") && isatty(STDOUT_FILENO);
	if (!dir) {
		const char *env = getenv("LOBES_DIR");
		const char *home = getenv("HOME");
		dir = env && *env ? xstrdup(env) : xasprintf("%s/.lobes", home && *home ? home : ".");
	}
	if (ctx.dir_given && !*dir) {
		fprintf(stderr, "lobes: option '--dir' needs a directory\n");
		return EXIT_USAGE;
	}
	ctx.dir = dir;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "-h") == 0 || strcmp(verb, "--help") == 0 || strcmp(verb, "help") == 0) {
		usage(stdout);
		return finish(0);
	}
	if (strcmp(verb, "--version") == 0 || strcmp(verb, "version") == 0) {
		if (ctx.json)
			printf("{\"version\": \"%s\"}\n", LOBES_VERSION);
		else
			printf("lobes %s\n", LOBES_VERSION);
		return finish(0);
	}
	if (strcmp(verb, "--man") == 0) {
		man();
		return finish(0);
	}
	for (size_t i = 0; i < cmd_table_len; i++) {
		if (strcmp(cmd_table[i].name, verb) != 0)
			continue;
		ctx.cmd = &cmd_table[i];
		ctx.commands = cmd_table;
		ctx.n_commands = cmd_table_len;
		for (int j = 2; j < argc; j++) {
			if (strcmp(argv[j], "--") == 0)
				break;
			if (strcmp(argv[j], "-h") == 0 || strcmp(argv[j], "--help") == 0) {
				cmd_usage(&ctx, stdout);
				return finish(0);
			}
		}
		optind = 1;
		int code = cmd_table[i].fn(argc - 1, argv + 1, &ctx);
		if (ctx.err) {
			/* an error quotes input (a .env line): the one masking rule */
			_cleanup_free_ char *msg = secret_mask_text(ctx.err->msg);
			fprintf(stderr, "lobes %s: error: %s\n", verb, msg);
			if (code == 0)
				code = ctx.err->code ? ctx.err->code : EXIT_INTERNAL;
			err_free(ctx.err);
		}
		return finish(code);
	}
	fprintf(stderr, "lobes: '%s' is not a command; see 'lobes --help'\n", verb);
	return EXIT_USAGE;
}
