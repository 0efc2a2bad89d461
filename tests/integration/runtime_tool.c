/*
 * runtime_tool.c — drives the runtime library from shell tests against a
 * real Docker daemon: the compose CLI wrapper and the Engine API client,
 * with nothing of a lobes command around them.
 *
 *   runtime-tool compose DIR ARGS...   compose_open(DIR), compose_run(ARGS):
 *                                      its stdout/stderr, then its exit status
 *   runtime-tool logs ID [TAIL]        engine_logs: the demultiplexed text
 *   runtime-tool args ID               engine_inspect: Args, one per line
 *   runtime-tool image REF             engine_image_inspect: Id, RepoDigests
 *   runtime-tool metrics PORT FOLDER   engine_metrics_scrape of 127.0.0.1:PORT with the
 *                                      names of data/vllm/FOLDER/: "KEY VALUE" per figure
 *
 * An error is printed as "runtime-tool: MSG" with its exit code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/runtime/compose_cli.h"
#include "../../src/lib/runtime/engine_api.h"
#include "../../src/lib/runtime/engine_metrics.h"
#include "../../src/lib/util/cleanup.h"

static int fail(struct err *e)
{
	int code = e->code;
	fprintf(stderr, "runtime-tool: %s\n", e->msg);
	err_free(e);
	return code;
}

int main(int argc, char **argv)
{
	struct err *e = NULL;
	if (argc == 4 && strcmp(argv[1], "metrics") == 0) {
		struct engine_metric_names n;
		struct engine_sample s;
		if (engine_metric_names_load(&n, argv[3], &e) < 0 ||
		    engine_metrics_scrape((int)strtol(argv[2], NULL, 10), 5000, &n, &s, &e) < 0) {
			engine_metric_names_free(&n);
			return fail(e);
		}
		for (int m = 0; m < EM__COUNT; m++)
			printf("%s %.17g\n", engine_metric_key((enum engine_metric)m), s.v[m]);
		engine_metric_names_free(&n);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "compose") == 0) {
		struct compose c;
		if (compose_open(&c, argv[2], &e) < 0)
			return fail(e);
		struct proc_result r;
		int rc = compose_run(&c, (const char *const *)argv + 3, COMPOSE_UP_TIMEOUT_MS, &r, &e);
		compose_free(&c);
		if (rc < 0)
			return fail(e);
		fputs(buf_str(&r.out), stdout);
		fputs(buf_str(&r.errb), stderr);
		rc = r.timed_out ? 124 : r.status;
		proc_result_free(&r);
		return rc;
	}
	struct engine en;
	if (argc < 3 || engine_open(&en, &e) < 0) {
		if (e)
			return fail(e);
		fprintf(stderr, "usage: runtime-tool compose DIR ARGS... | logs ID [TAIL] | args ID | image REF\n");
		return 2;
	}
	int rc = 0;
	if (strcmp(argv[1], "logs") == 0) {
		struct engine_log_opts o = { .tail = argc > 3 ? strtol(argv[3], NULL, 10) : -1 };
		_cleanup_free_ char *text = NULL;
		if (engine_logs(&en, argv[2], &o, &text, &e) < 0)
			rc = fail(e);
		else
			fputs(text, stdout);
	} else if (strcmp(argv[1], "args") == 0) {
		struct engine_container c;
		if (engine_inspect(&en, argv[2], &c, &e) < 0) {
			rc = fail(e);
		} else {
			for (char **a = c.args; *a; a++)
				printf("%s\n", *a);
			engine_container_free(&c);
		}
	} else if (strcmp(argv[1], "image") == 0) {
		struct engine_image im;
		if (engine_image_inspect(&en, argv[2], &im, &e) < 0) {
			rc = fail(e);
		} else {
			printf("%s\n", im.id);
			for (char **d = im.repo_digests; *d; d++)
				printf("%s\n", *d);
			engine_image_free(&im);
		}
	} else {
		rc = 2;
	}
	engine_close(&en);
	return rc;
}
