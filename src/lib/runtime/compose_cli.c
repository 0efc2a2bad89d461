/*
 * compose_cli.c — detect and run the compose CLI in a deploy dir; see
 * compose_cli.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../deploy/deploy.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "compose_cli.h"

/* Append s (copied) to the NULL-terminated vector *v of length *n. */
static void strv_push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

/* Split s on spaces and tabs into a NULL-terminated vector (empty: no
 * words). */
static char **split_words(const char *s, size_t *n)
{
	_cleanup_free_ char *copy = xstrdup(s);
	char **v = xcalloc(1, sizeof(*v)), *save = NULL;
	*n = 0;
	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		strv_push(&v, n, w);
	return v;
}

/* Run `CMD... version`; on exit 0 return the first output line (owned).
 * *timed_out is set when it was killed at the bound (slow or hung, not
 * absent). */
static char *probe(char *const *cmd, bool *timed_out)
{
	size_t n = 0;
	char **argv = xcalloc(1, sizeof(*argv));
	for (char *const *p = cmd; *p; p++)
		strv_push(&argv, &n, *p);
	strv_push(&argv, &n, "version");
	struct proc_result res;
	char *line = NULL;
	if (proc_run(argv, COMPOSE_PROBE_TIMEOUT_MS, 64 << 10, &res, NULL) == 0) {
		if (res.timed_out)
			*timed_out = true;
		else if (res.status == 0) {
			const char *o = buf_str(&res.out);
			line = xasprintf("%.*s", (int)strcspn(o, "\n"), o);
		}
	}
	proc_result_free(&res);
	strv_free(argv);
	return line;
}

/* --- the compose v1 probe cache ---------------------------------------------
 *
 * `docker-compose version` (v1) starts a Python interpreter: over a second
 * on a small board, for every doctor and serve. Its answer only changes
 * when the program does, so it is kept in $XDG_CACHE_HOME/lobes/compose.json
 * (default ~/.cache/lobes/), keyed by the program's resolved path, size and
 * modification time (ns): an upgrade, a reinstall or a different binary
 * earlier in PATH misses the cache and is probed again. Only successful
 * probes are kept; v2 (`docker compose`, a Go plugin) is always probed.
 * The cache is an optimisation: any problem reading or writing it means a
 * probe, never an error. LOBES_COMPOSE_CACHE=0 turns it off. */

/* The cache key of program name found in PATH ("PATH:SIZE:MTIME_NS"), or
 * NULL when it is not found. */
static char *program_key(const char *name)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = xstrdup(path && *path ? path : "/usr/bin:/bin");
	char *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		_cleanup_free_ char *p = xasprintf("%s/%s", *d ? d : ".", name);
		struct stat st;
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode) || access(p, X_OK) < 0)
			continue;
		_cleanup_free_ char *real = realpath(p, NULL);
		return xasprintf("%s:%lld:%lld", real ? real : p, (long long)st.st_size,
				 (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
	}
	return NULL;
}

static char *cache_path(void)
{
	const char *off = getenv("LOBES_COMPOSE_CACHE");
	if (off && strcmp(off, "0") == 0)
		return NULL; /* the test suite: its stubs change behaviour, not mtime */
	const char *x = getenv("XDG_CACHE_HOME");
	if (x && *x == '/')
		return xasprintf("%s/lobes/compose.json", x);
	const char *h = getenv("HOME");
	return h && *h ? xasprintf("%s/.cache/lobes/compose.json", h) : NULL;
}

/* The cached version line for key, or NULL. */
static char *cache_get(const char *key)
{
	_cleanup_free_ char *p = cache_path();
	if (!p || !fs_exists(p))
		return NULL;
	_cleanup_free_ char *text = fs_read(p, 64 << 10, NULL, NULL);
	json_auto_t *j = text ? json_loads(text, 0, NULL) : NULL;
	const char *v = json_string_value(json_object_get(json_object_get(j, "v1"), key));
	return v ? xstrdup(v) : NULL;
}

/* Remember key → version (the one entry of the v1 cache). */
static void cache_put(const char *key, const char *version)
{
	_cleanup_free_ char *p = cache_path();
	if (!p)
		return;
	_cleanup_free_ char *dir = xasprintf("%.*s", (int)(strrchr(p, '/') - p), p);
	if (fs_mkdirs(dir, 0700, NULL) < 0)
		return;
	json_auto_t *j = json_pack("{s:{s:s}}", "v1", key, version);
	_cleanup_free_ char *text = j ? json_dumps(j, JSON_SORT_KEYS) : NULL;
	if (text)
		fs_write_atomic(p, text, strlen(text), 0600, NULL);
}

int compose_detect(char ***cmd, int *cli, char **version, struct err **err)
{
	const char *env = getenv("LOBES_COMPOSE");
	size_t n = 0;
	if (env) {
		char **v = split_words(env, &n);
		if (n > 0) {
			*cmd = v;
			*cli = 0;
			if (version)
				*version = xstrdup("");
			return 0;
		}
		strv_free(v);
	}
	static const char *const v2[] = { "docker", "compose", NULL };
	static const char *const v1[] = { "docker-compose", NULL };
	const char *const *tries[] = { v2, v1 };
	bool slow = false;
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *key = i == 1 ? program_key("docker-compose") : NULL;
		/* v1 without a version asked for: found in PATH is enough (see
		 * compose_cli.h); its first real run reports a broken install */
		char *line = key && !version ? xstrdup("") : key ? cache_get(key) : NULL;
		if (!line) {
			line = probe((char *const *)tries[i], &slow);
			if (line && key)
				cache_put(key, line);
		}
		if (!line)
			continue;
		char **v = xcalloc(1, sizeof(*v));
		n = 0;
		for (const char *const *p = tries[i]; *p; p++)
			strv_push(&v, &n, *p);
		*cmd = v;
		*cli = i == 0 ? 2 : 1;
		if (version)
			*version = line;
		else
			free(line);
		return 0;
	}
	if (slow)
		return err_set(err, EXIT_RUNTIME,
			       "no compose CLI answered: 'docker compose version' or 'docker-compose "
			       "version' was still running after %d s; name yours in LOBES_COMPOSE",
			       COMPOSE_PROBE_TIMEOUT_MS / 1000);
	return err_set(err, EXIT_CONFIG,
		       "no compose CLI: neither 'docker compose version' nor 'docker-compose version' "
		       "works; install one, or name yours in LOBES_COMPOSE");
}

void compose_free(struct compose *c)
{
	strv_free(c->cmd);
	free(c->version);
	free(c->dir);
	free(c->project);
	strv_free(c->files);
	memset(c, 0, sizeof(*c));
}

int compose_open(struct compose *c, const char *dir, struct err **err)
{
	memset(c, 0, sizeof(*c));
	if (compose_detect(&c->cmd, &c->cli, NULL, err) < 0)
		return -1;
	c->version = xstrdup("");
	c->dir = xstrdup(dir);
	c->files = xcalloc(1, sizeof(*c->files));
	struct env_file env;
	int have_env = deploy_env_read(dir, &env, err);
	if (have_env < 0) {
		compose_free(c);
		return -1;
	}
	if (!have_env)
		return 0;
	const char *p = env_get(&env, "COMPOSE_PROJECT_NAME");
	if (p && *p)
		c->project = xstrdup(p);
	const char *files = env_get(&env, "COMPOSE_FILE");
	const char *sep = env_get(&env, "COMPOSE_PATH_SEPARATOR");
	if (!sep || !*sep)
		sep = ":";
	size_t n = 0;
	if (files && *files) {
		_cleanup_free_ char *copy = xstrdup(files);
		char *save = NULL;
		for (char *f = strtok_r(copy, sep, &save); f; f = strtok_r(NULL, sep, &save))
			if (*f)
				strv_push(&c->files, &n, f);
	}
	env_file_free(&env);
	return 0;
}

char **compose_argv(const struct compose *c, const char *const *args)
{
	size_t n = 0;
	char **v = xcalloc(1, sizeof(*v));
	for (char **p = c->cmd; p && *p; p++)
		strv_push(&v, &n, *p);
	strv_push(&v, &n, "--project-directory");
	strv_push(&v, &n, c->dir);
	if (c->project) {
		strv_push(&v, &n, "-p");
		strv_push(&v, &n, c->project);
	}
	for (char **f = c->files; f && *f; f++) {
		strv_push(&v, &n, "-f");
		strv_push(&v, &n, *f);
	}
	for (const char *const *a = args; a && *a; a++)
		strv_push(&v, &n, *a);
	return v;
}

int compose_run(const struct compose *c, const char *const *args, int timeout_ms,
		struct proc_result *res, struct err **err)
{
	_cleanup_strv_ char **argv = compose_argv(c, args);
	if (proc_run_in(c->dir, argv, timeout_ms, COMPOSE_OUTPUT_CAP, res, err) < 0)
		return err_wrap(err, "compose");
	return 0;
}

int compose_up(const struct compose *c, const char *const *services, struct proc_result *res,
	       struct err **err)
{
	size_t n = 0;
	_cleanup_strv_ char **args = xcalloc(1, sizeof(*args));
	strv_push(&args, &n, "up");
	strv_push(&args, &n, "-d");
	strv_push(&args, &n, "--no-deps");
	for (const char *const *s = services; s && *s; s++)
		strv_push(&args, &n, *s);
	return compose_run(c, (const char *const *)args, COMPOSE_UP_TIMEOUT_MS, res, err);
}

int compose_create(const struct compose *c, const char *const *services, struct proc_result *res,
		   struct err **err)
{
	size_t n = 0;
	_cleanup_strv_ char **args = xcalloc(1, sizeof(*args));
	strv_push(&args, &n, "up");
	strv_push(&args, &n, "--no-start");
	strv_push(&args, &n, "--no-deps");
	for (const char *const *s = services; s && *s; s++)
		strv_push(&args, &n, *s);
	return compose_run(c, (const char *const *)args, COMPOSE_UP_TIMEOUT_MS, res, err);
}

int compose_down(const struct compose *c, struct proc_result *res, struct err **err)
{
	static const char *const args[] = { "down", NULL };
	return compose_run(c, args, COMPOSE_DOWN_TIMEOUT_MS, res, err);
}

int compose_ps(const struct compose *c, struct proc_result *res, struct err **err)
{
	static const char *const args[] = { "ps", NULL };
	return compose_run(c, args, COMPOSE_QUERY_TIMEOUT_MS, res, err);
}

int compose_config_check(const struct compose *c, struct proc_result *res, struct err **err)
{
	static const char *const args[] = { "config", "-q", NULL };
	return compose_run(c, args, COMPOSE_QUERY_TIMEOUT_MS, res, err);
}

int compose_result_check(const char *verb, const struct proc_result *res, struct err **err)
{
	if (res->timed_out)
		return err_set(err, EXIT_RUNTIME, "compose %s: timed out", verb);
	if (res->status == 0)
		return 0;
	/* the last non-blank line of stderr (else stdout) says why */
	_cleanup_free_ char *text = xstrdup(res->errb.len ? buf_str(&res->errb) : buf_str(&res->out));
	char *t = str_rstrip(text);
	char *nl = strrchr(t, '\n');
	const char *last = nl ? str_strip(nl + 1) : str_strip(t);
	return err_set(err, EXIT_RUNTIME, "compose %s: exit %d%s%s", verb, res->status,
		       *last ? ": " : "", last);
}
