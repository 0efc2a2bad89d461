/*
 * fleet.c — the deployed fleet from .env, boot-log phases, /health.
 *
 * The memory window closes at `init engine (profile, create kv cache, warmup
 * model) took`: by then the KV cache is allocated and CUDA graphs are
 * captured, so the engine's memory no longer grows into a neighbour's
 * profiling. What remains (the API server coming up) may overlap the next
 * role's window safely.
 */
#include <curl/curl.h>
#include <string.h>

#include "../deploy/deploy.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "fleet.h"

int fleet_load(struct fleet *f, const char *dir, struct err **err)
{
	memset(f, 0, sizeof(*f));
	_cleanup_free_ char *p = xasprintf("%s/.env", dir);
	struct env_file env;
	int have_env = deploy_env_read(dir, &env, err);
	if (have_env < 0)
		return -1;
	if (!have_env)
		return err_set(err, EXIT_CONFIG, "no deployment in '%s': run `lobes init --apply` first",
			       dir);
	f->dir = xstrdup(dir);
	const char *v;
	f->profile = xstrdup((v = env_get(&env, "LOBES_PROFILE")) ? v : "unknown");
	f->card = xstrdup((v = env_get(&env, "LOBES_CARD")) ? v : "unknown");
	f->bringup = xstrdup((v = env_get(&env, "LOBES_BRINGUP")) ? v : "one-at-a-time");
	f->project = xstrdup((v = env_get(&env, "COMPOSE_PROJECT_NAME")) ? v : "lobes");
	int rc = 0;
	for (int r = 0; r < ROLE__COUNT; r++) {
		struct fleet_role *fr = &f->roles[r];
		_cleanup_free_ char *kf = env_key((enum role_id)r, "feasible");
		_cleanup_free_ char *kp = env_key((enum role_id)r, "port");
		_cleanup_free_ char *ku = env_key((enum role_id)r, "gpu_mem_util");
		_cleanup_free_ char *km = env_key((enum role_id)r, "model");
		fr->feasible = (v = env_get(&env, kf)) && strcmp(v, "true") == 0;
		if (!fr->feasible)
			continue;
		char *end;
		long port = (v = env_get(&env, kp)) ? strtol(v, &end, 10) : 0;
		double util = (v = env_get(&env, ku)) ? strtod(v, &end) : 0;
		if (port <= 0 || port > 65535 || util <= 0 || util > 1) {
			rc = err_set(err, EXIT_CONFIG, "%s: %s or %s is missing or out of range", p, kp, ku);
			break;
		}
		fr->port = (int)port;
		fr->util = util;
		fr->model = xstrdup((v = env_get(&env, km)) ? v : "");
	}
	/* Bring-up order: LOBES_ORDER, then any feasible role it leaves out. */
	bool placed[ROLE__COUNT] = { 0 };
	_cleanup_free_ char *order = xstrdup((v = env_get(&env, "LOBES_ORDER")) ? v : "");
	char *save = NULL;
	for (char *t = strtok_r(order, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int r = role_from_name(str_strip(t));
		if (r >= 0 && f->roles[r].feasible && !placed[r]) {
			placed[r] = true;
			f->order[f->n_order++] = (enum role_id)r;
		}
	}
	for (int r = 0; r < ROLE__COUNT; r++)
		if (f->roles[r].feasible && !placed[r])
			f->order[f->n_order++] = (enum role_id)r;
	env_file_free(&env);
	if (rc < 0)
		fleet_free(f);
	return rc;
}

void fleet_free(struct fleet *f)
{
	free(f->dir);
	free(f->profile);
	free(f->card);
	free(f->bringup);
	free(f->project);
	for (int r = 0; r < ROLE__COUNT; r++)
		free(f->roles[r].model);
	memset(f, 0, sizeof(*f));
}

void log_phase_scan(const char *log, struct log_phase *p)
{
	static const struct {
		const char *marker, *phase;
	} steps[] = {
		{ "Starting to load model", "loading weights" },
		{ "Model loading took", "profiling memory" },
		{ "Available KV cache memory:", "allocating KV cache" },
		{ "GPU KV cache size:", "warming up" },
		{ "init engine (profile, create kv cache, warmup model) took", "starting API server" },
		{ "Application startup complete.", "ready" },
	};
	memset(p, 0, sizeof(*p));
	p->phase = "starting";
	/* The latest start-up in the log counts (a restarted container appends). */
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		if (strstr(log, steps[i].marker))
			p->phase = steps[i].phase;
	}
	p->window_closed = strstr(log, steps[4].marker) || strstr(log, steps[5].marker) ||
			   strstr(log, "Starting vLLM API server");
	p->startup_complete = strstr(log, steps[5].marker) != NULL;
}

static size_t discard(char *p, size_t s, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return s * n;
}

char *http_url_for_bind(const char *bind, int port, const char *path)
{
	if (!bind || !*bind || !strcmp(bind, "0.0.0.0"))
		bind = "127.0.0.1";
	else if (!strcmp(bind, "::") || !strcmp(bind, "[::]"))
		bind = "::1";
	bool v6 = strchr(bind, ':') && bind[0] != '[';
	return xasprintf("http://%s%s%s:%d%s", v6 ? "[" : "", bind, v6 ? "]" : "", port, path);
}

int http_health_at(const char *bind, int port, int timeout_ms)
{
	CURL *c = curl_easy_init();
	if (!c)
		return 0;
	_cleanup_free_ char *url = http_url_for_bind(bind, port, "/health");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	long code = 0;
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	return (int)code;
}

int http_health(int port, int timeout_ms)
{
	return http_health_at("127.0.0.1", port, timeout_ms);
}
