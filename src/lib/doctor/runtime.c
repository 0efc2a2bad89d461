/*
 * runtime.c — checks "docker", "compose", "gpu-runtime": the docker engine
 * and its nvidia runtime through the docker CLI (proc_run, bounded: `docker
 * version`, `docker info`; the Engine API client has no /info call), and
 * compose through compose_detect(), the same order `lobes serve` uses (doctor
 * asks for the version line, so a v1 docker-compose is run, where serve only
 * finds it in PATH).
 */
#include <string.h>

#include "../runtime/runtime.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "doctor_int.h"

void check_runtime(struct doctor_ctx *x)
{
	struct doctor_report *r = x->r;
	const char *docker = x->docker;
	const struct card *card = x->card;
	bool reachable = false;
	struct run_out o;
	char *ver[] = { (char *)docker, "version", "--format", "{{.Server.Version}}", NULL };
	run_cmd(ver, DOCKER_TIMEOUT_MS, &o);
	_cleanup_free_ char *sv = first_line(o.out);
	if (o.rc == 0 && *sv) {
		reachable = true;
		doc_add(r, "docker", SEV_OK, "docker engine %s reachable (through '%s')", sv, docker);
	} else {
		struct check *c = doc_add(r, "docker", SEV_ERROR, "docker engine not reachable: %s",
				      o.why ? o.why : "no server version in the answer");
		c->remedy = xstrdup(o.rc == -1 ? "install docker (docker.io) and start it"
					       : "start the docker daemon, or check DOCKER_HOST and the "
						 "permissions on /var/run/docker.sock");
	}
	run_out_free(&o);

	/* The same detection `lobes serve` uses (LOBES_COMPOSE, else v2, else v1). */
	_cleanup_strv_ char **ccmd = NULL;
	int cli = 0;
	_cleanup_free_ char *cver = NULL;
	struct err *e = NULL;
	if (compose_detect(&ccmd, &cli, &cver, &e) == 0) {
		_cleanup_buf_ struct buf cmd;
		buf_init(&cmd, 0);
		for (char **w = ccmd; w && *w; w++)
			buf_printf(&cmd, "%s%s", cmd.len ? " " : "", *w);
		doc_add(r, "compose", SEV_OK, "compose %s ('%s')%s%s",
		    cli == 2 ? "v2" : cli == 1 ? "v1" : "from LOBES_COMPOSE", buf_str(&cmd),
		    cver && *cver ? " " : "", cver ? cver : "");
	} else {
		struct check *c = doc_add(r, "compose", SEV_ERROR, "%s", e->msg);
		c->remedy = xstrdup("install the compose plugin (docker-compose-plugin) or docker-compose");
		err_free(e);
	}

	if (!reachable) {
		doc_add(r, "gpu-runtime", SEV_INFO, "not checked: the docker engine is not reachable");
		return;
	}
	char *info[] = { (char *)docker, "info", "--format", "{{json .Runtimes}}", NULL };
	run_cmd(info, DOCKER_TIMEOUT_MS, &o);
	json_auto_t *rt = o.rc == 0 ? json_loads(o.out, 0, NULL) : NULL;
	if (rt && json_is_object(rt) && json_object_get(rt, "nvidia")) {
		doc_add(r, "gpu-runtime", SEV_OK, "docker has the nvidia runtime");
	} else {
		_cleanup_buf_ struct buf names;
		buf_init(&names, 0);
		const char *k;
		json_t *v;
		json_object_foreach(rt, k, v)
			buf_printf(&names, "%s%s", names.len ? ", " : "", k);
		struct check *c = doc_add(r, "gpu-runtime", card ? SEV_ERROR : SEV_WARNING,
				      "docker has no nvidia runtime (runtimes: %s)%s",
				      names.len ? buf_str(&names) : o.why ? o.why : "none reported",
				      card ? "" : "; the card is unknown, so this box may have no GPU");
		c->remedy = xstrdup("install the NVIDIA Container Toolkit, run `nvidia-ctk runtime configure "
				    "--runtime=docker` and restart docker");
	}
	run_out_free(&o);
}
