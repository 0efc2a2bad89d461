/*
 * engine_api.c — Docker Engine API client over the unix socket; see
 * engine_api.h.
 *
 * One GET helper does all transport: a fresh curl easy handle per request
 * (no connection reuse to reason about), CURLOPT_UNIX_SOCKET_PATH, a
 * connect bound and a whole-request bound, and a write callback that fills
 * a capped buf — through the log demultiplexer for log streams. Errors name
 * the socket ("docker engine at 'SOCK': ...") so an operator knows which
 * daemon was asked.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "engine_api.h"

#define LIST_CAP ((size_t)8 << 20)
#define INSPECT_CAP ((size_t)4 << 20)
#define LOG_CAP_DEFAULT ((size_t)8 << 20)
#define CONNECT_TIMEOUT_MS 3000L

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* ---- helpers ------------------------------------------------------------ */

static char *jdup(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return xstrdup(s ? s : "");
}

/* A NULL-terminated copy of a JSON array of strings (null or absent: an
 * empty vector). Non-string members are skipped. */
static char **jstrv(const json_t *a)
{
	size_t n = json_is_array(a) ? json_array_size(a) : 0, k = 0;
	char **v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (s)
			v[k++] = xstrdup(s);
	}
	return v;
}

static const char *str_or(const char *s) { return s ? s : ""; }

static char **strv_empty(void) { return xcalloc(1, sizeof(char *)); }

static const char *label(const json_t *labels, const char *key)
{
	const char *s = json_string_value(json_object_get(labels, key));
	return s ? s : "";
}

const char *engine_env_get(char *const *env, const char *key)
{
	size_t kl = strlen(key);
	for (; env && *env; env++)
		if (strncmp(*env, key, kl) == 0 && (*env)[kl] == '=')
			return *env + kl + 1;
	return NULL;
}

int engine_parse_time(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (!p || tm.tm_year < 70)
		return -1;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	long off = 0;
	if (*p == 'Z') {
		p++;
	} else if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) &&
		   isdigit((unsigned char)p[2]) && p[3] == ':' && isdigit((unsigned char)p[4]) &&
		   isdigit((unsigned char)p[5])) {
		off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600L + ((p[4] - '0') * 10 + (p[5] - '0')) * 60L;
		if (*p == '-')
			off = -off;
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = t - off;
	return 0;
}

/* ---- socket and transport ------------------------------------------------ */

char *engine_sock_from_host(const char *docker_host, struct err **err)
{
	if (!docker_host || !*docker_host)
		return xstrdup(ENGINE_DEFAULT_SOCK);
	if (strncmp(docker_host, "unix://", 7) == 0 && docker_host[7])
		return xstrdup(docker_host + 7);
	err_set(err, EXIT_CONFIG,
		"DOCKER_HOST '%s' is not a unix socket (unix:///PATH); the engine is reached "
		"over its local socket only", docker_host);
	return NULL;
}

int engine_open(struct engine *e, struct err **err)
{
	memset(e, 0, sizeof(*e));
	e->sock = engine_sock_from_host(getenv("DOCKER_HOST"), err);
	if (!e->sock)
		return -1;
	e->timeout_ms = ENGINE_TIMEOUT_MS;
	pthread_once(&curl_once, curl_init_once);
	return 0;
}

void engine_close(struct engine *e)
{
	free(e->sock);
	e->sock = NULL;
}

struct sink {
	CURL *h;
	struct buf *body;        /* 2xx payload */
	struct buf *errbody;     /* anything else */
	struct log_demux *demux; /* non-NULL: 2xx body is a log stream */
	bool overflow;
};

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n = size * nmemb;
	long code = 0;
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &code);
	int rc;
	if (code < 200 || code >= 300) {
		(void)buf_add(s->errbody, p, n); /* an error body may be cut short */
		rc = 0;
	} else if (s->demux)
		rc = log_demux_feed(s->demux, p, n, s->body);
	else
		rc = buf_add(s->body, p, n);
	if (rc < 0) {
		s->overflow = true;
		return 0; /* abort the transfer */
	}
	return n;
}

/* The "message" of an engine error body, or the body itself. Caller frees. */
static char *error_message(const char *body)
{
	json_auto_t *j = json_loads(body, 0, NULL);
	const char *m = json_string_value(json_object_get(j, "message"));
	_cleanup_free_ char *s = xstrdup(m ? m : body);
	return xstrdup(str_strip(s));
}

/* METHOD ("GET" or "POST", the latter with an empty body) path on the
 * engine. On 2xx the payload is in body (through demux when given) and 0 is
 * returned; *status gets the HTTP status. A non-2xx answer returns -2 with
 * *err naming the status and the engine's message (so a caller may map 404).
 * Transport failures return -1. */
static int engine_request(const struct engine *e, const char *method, const char *path,
			  struct log_demux *demux, struct buf *body, long *status, struct err **err)
{
	pthread_once(&curl_once, curl_init_once);
	CURL *h = curl_easy_init();
	if (!h)
		return err_set(err, EXIT_INTERNAL, "curl_easy_init failed");
	_cleanup_buf_ struct buf errbody;
	buf_init(&errbody, 64 << 10);
	struct sink s = { h, body, &errbody, demux, false };
	_cleanup_free_ char *url = xasprintf("http://localhost%s", path);
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, e->sock);
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
	}
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			 e->timeout_ms < CONNECT_TIMEOUT_MS ? e->timeout_ms : CONNECT_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, e->timeout_ms);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
	CURLcode rc = curl_easy_perform(h);
	long code = 0, oserr = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr);
	curl_easy_cleanup(h);
	if (status)
		*status = code;
	if (rc == CURLE_COULDNT_CONNECT || (rc != CURLE_OK && code == 0 && rc != CURLE_OPERATION_TIMEDOUT))
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': connect: %s", e->sock,
			       oserr ? strerror((int)oserr) : *errbuf ? errbuf : curl_easy_strerror(rc));
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': %s %s: no answer within %ld ms",
			       e->sock, method, path, e->timeout_ms);
	if (s.overflow && demux && demux->bad)
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': %s %s: malformed log stream",
			       e->sock, method, path);
	if (s.overflow)
		return err_set(err, EXIT_RUNTIME,
			       "docker engine at '%s': %s %s: response larger than %zu bytes", e->sock,
			       method, path, body->cap ? body->cap : BUF_DEFAULT_CAP);
	if (rc != CURLE_OK)
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': %s %s: %s", e->sock, method,
			       path, *errbuf ? errbuf : curl_easy_strerror(rc));
	if (code < 200 || code >= 300) {
		_cleanup_free_ char *m = error_message(buf_str(&errbody));
		err_set(err, EXIT_RUNTIME, "docker engine at '%s': %s %s: HTTP %ld%s%s", e->sock, method,
			path, code, *m ? ": " : "", m);
		return -2;
	}
	return 0;
}

static int engine_get(struct engine *e, const char *path, struct log_demux *demux,
		      struct buf *body, long *status, struct err **err)
{
	return engine_request(e, "GET", path, demux, body, status, err);
}

int engine_ping(struct engine *e, struct err **err)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 4096);
	if (engine_get(e, "/_ping", NULL, &b, NULL, err) < 0)
		return -1;
	if (strcmp(buf_str(&b), "OK") != 0)
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': /_ping answered '%.40s', not OK",
			       e->sock, buf_str(&b));
	return 0;
}

/* A container id, name or image reference that is safe to put in a path. */
static int check_ref(const char *what, const char *ref, struct err **err)
{
	if (!ref || !*ref || strpbrk(ref, "?#% \t\r\n"))
		return err_set(err, EXIT_INTERNAL, "%s '%s' cannot be named to the engine", what,
			       ref ? ref : "");
	return 0;
}

/* ---- containers ---------------------------------------------------------- */

int engine_start_container(const struct engine *e, const char *id, struct err **err)
{
	/* a '/' would change the path: refused like the characters check_ref refuses */
	if (check_ref("container", id, err) < 0)
		return -1;
	if (strchr(id, '/'))
		return err_set(err, EXIT_INTERNAL, "container '%s' cannot be named to the engine", id);
	_cleanup_buf_ struct buf b;
	buf_init(&b, 64 << 10);
	_cleanup_free_ char *path = xasprintf("/containers/%s/start", id);
	long code = 0;
	struct err *e2 = NULL;
	int rc = engine_request(e, "POST", path, NULL, &b, &code, &e2);
	if (rc == -2 && code == 304) { /* already running */
		err_free(e2);
		return 0;
	}
	if (rc == -2 && code == 404) {
		err_free(e2);
		return err_set(err, EXIT_RUNTIME, "no such container '%s'", id);
	}
	if (rc < 0) {
		if (err) {
			err_free(*err);
			*err = e2;
		} else {
			err_free(e2);
		}
		return -1;
	}
	return 0;
}

static void container_init_empty(struct engine_container *c)
{
	memset(c, 0, sizeof(*c));
	c->id = xstrdup("");
	c->name = xstrdup("");
	c->project = xstrdup("");
	c->service = xstrdup("");
	c->role = xstrdup("");
	c->profile = xstrdup("");
	c->state = xstrdup("");
	c->health = xstrdup("none");
	c->started_at = xstrdup("");
	c->finished_at = xstrdup("");
	c->error = xstrdup("");
	c->image = xstrdup("");
	c->image_id = xstrdup("");
	c->entrypoint = strv_empty();
	c->cmd = strv_empty();
	c->args = strv_empty();
	c->env = strv_empty();
	c->labels = json_object();
}

void engine_container_free(struct engine_container *c)
{
	if (!c)
		return;
	free(c->id);
	free(c->name);
	free(c->project);
	free(c->service);
	free(c->role);
	free(c->profile);
	free(c->state);
	free(c->health);
	free(c->started_at);
	free(c->finished_at);
	free(c->error);
	free(c->image);
	free(c->image_id);
	strv_free(c->entrypoint);
	strv_free(c->cmd);
	strv_free(c->args);
	strv_free(c->env);
	json_decref(c->labels);
	memset(c, 0, sizeof(*c));
}

void engine_container_list_free(struct engine_container_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		engine_container_free(&l->c[i]);
	free(l->c);
	l->c = NULL;
	l->n = 0;
}

static void set_str(char **dst, char *val)
{
	free(*dst);
	*dst = val;
}

static void set_labels(struct engine_container *c, json_t *labels)
{
	if (!json_is_object(labels))
		return;
	json_decref(c->labels);
	c->labels = json_deep_copy(labels);
	set_str(&c->project, xstrdup(label(labels, "com.docker.compose.project")));
	set_str(&c->service, xstrdup(label(labels, "com.docker.compose.service")));
	set_str(&c->role, xstrdup(label(labels, "lobes.role")));
	set_str(&c->profile, xstrdup(label(labels, "lobes.profile")));
}

/* A name as the engine writes it ("/lobes_cortex_1") without the slash. */
static char *strip_slash(const char *s)
{
	return xstrdup(s && *s == '/' ? s + 1 : s ? s : "");
}

/* The health in a list entry's Status text ("Up 3 minutes (healthy)"). */
static const char *health_of_status(const char *status)
{
	if (strstr(status, "(unhealthy)"))
		return "unhealthy";
	if (strstr(status, "(healthy)"))
		return "healthy";
	if (strstr(status, "(health: starting)"))
		return "starting";
	return "none";
}

int engine_parse_list(const char *body, struct engine_container_list *l, struct err **err)
{
	memset(l, 0, sizeof(*l));
	json_error_t je;
	json_auto_t *j = json_loads(body, 0, &je);
	if (!json_is_array(j))
		return err_set(err, EXIT_RUNTIME, "container list: %s",
			       j ? "not a JSON array" : je.text);
	l->c = xcalloc(json_array_size(j) + 1, sizeof(*l->c));
	size_t i;
	json_t *o;
	json_array_foreach(j, i, o) {
		if (!json_is_object(o) || !json_is_string(json_object_get(o, "Id"))) {
			engine_container_list_free(l);
			return err_set(err, EXIT_RUNTIME, "container list: entry %zu has no Id", i);
		}
		struct engine_container *c = &l->c[l->n++];
		container_init_empty(c);
		set_str(&c->id, jdup(o, "Id"));
		const char *nm = json_string_value(json_array_get(json_object_get(o, "Names"), 0));
		set_str(&c->name, strip_slash(nm));
		set_labels(c, json_object_get(o, "Labels"));
		set_str(&c->state, jdup(o, "State"));
		set_str(&c->health, xstrdup(health_of_status(str_or(json_string_value(json_object_get(o, "Status"))))));
		set_str(&c->image, jdup(o, "Image"));
		set_str(&c->image_id, jdup(o, "ImageID"));
	}
	return 0;
}

int engine_parse_inspect(const char *body, struct engine_container *c, struct err **err)
{
	container_init_empty(c);
	json_error_t je;
	json_auto_t *j = json_loads(body, 0, &je);
	if (!json_is_object(j) || !json_is_string(json_object_get(j, "Id"))) {
		engine_container_free(c);
		return err_set(err, EXIT_RUNTIME, "container inspect: %s",
			       !j ? je.text : "not an object with an Id");
	}
	json_t *cfg = json_object_get(j, "Config");
	json_t *st = json_object_get(j, "State");
	set_str(&c->id, jdup(j, "Id"));
	set_str(&c->name, strip_slash(json_string_value(json_object_get(j, "Name"))));
	set_str(&c->image_id, jdup(j, "Image"));
	set_str(&c->image, jdup(cfg, "Image"));
	set_labels(c, json_object_get(cfg, "Labels"));
	c->tty = json_is_true(json_object_get(cfg, "Tty"));
	strv_free(c->entrypoint);
	c->entrypoint = jstrv(json_object_get(cfg, "Entrypoint"));
	strv_free(c->cmd);
	c->cmd = jstrv(json_object_get(cfg, "Cmd"));
	strv_free(c->env);
	c->env = jstrv(json_object_get(cfg, "Env"));
	strv_free(c->args);
	c->args = jstrv(json_object_get(j, "Args"));
	c->restart_count = (int)json_integer_value(json_object_get(j, "RestartCount"));
	set_str(&c->state, jdup(st, "Status"));
	set_str(&c->error, jdup(st, "Error"));
	set_str(&c->started_at, jdup(st, "StartedAt"));
	set_str(&c->finished_at, jdup(st, "FinishedAt"));
	c->exit_code = (int)json_integer_value(json_object_get(st, "ExitCode"));
	c->pid = (int)json_integer_value(json_object_get(st, "Pid"));
	c->oom_killed = json_is_true(json_object_get(st, "OOMKilled"));
	const char *h = json_string_value(json_object_get(json_object_get(st, "Health"), "Status"));
	set_str(&c->health, xstrdup(h && *h ? h : "none"));
	/* "never started" is year 1 in the engine's clock */
	time_t t;
	if (engine_parse_time(c->started_at, &t) < 0)
		set_str(&c->started_at, xstrdup(""));
	if (engine_parse_time(c->finished_at, &t) < 0)
		set_str(&c->finished_at, xstrdup(""));
	return 0;
}

/* Inspect; -2 (with *err) when the engine says there is no such container. */
static int inspect(struct engine *e, const char *id, struct engine_container *c, struct err **err)
{
	if (check_ref("container", id, err) < 0)
		return -1;
	_cleanup_buf_ struct buf b;
	buf_init(&b, INSPECT_CAP);
	_cleanup_free_ char *path = xasprintf("/containers/%s/json", id);
	long code = 0;
	int rc = engine_get(e, path, NULL, &b, &code, err);
	if (rc == -2 && code == 404) {
		err_free(*err);
		*err = NULL;
		err_set(err, EXIT_RUNTIME, "no such container '%s'", id);
		return -2;
	}
	if (rc < 0)
		return -1;
	if (engine_parse_inspect(buf_str(&b), c, err) < 0)
		return err_wrap(err, "docker engine at '%s'", e->sock);
	return 0;
}

int engine_inspect(struct engine *e, const char *id, struct engine_container *c,
		   struct err **err)
{
	return inspect(e, id, c, err) < 0 ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
	const struct engine_container *x = a, *y = b;
	return strcmp(x->name, y->name);
}

int engine_list_project(struct engine *e, const char *project,
			struct engine_container_list *l, struct err **err)
{
	memset(l, 0, sizeof(*l));
	_cleanup_free_ char *filter = NULL;
	{
		json_auto_t *f = json_pack("{s:[s+]}", "label", "com.docker.compose.project=", project);
		filter = json_dumps(f, JSON_COMPACT);
	}
	CURL *h = curl_easy_init();
	if (!h)
		return err_set(err, EXIT_INTERNAL, "curl_easy_init failed");
	char *esc = curl_easy_escape(h, filter, 0);
	_cleanup_free_ char *path = xasprintf("/containers/json?all=1&filters=%s", esc);
	curl_free(esc);
	curl_easy_cleanup(h);
	_cleanup_buf_ struct buf b;
	buf_init(&b, LIST_CAP);
	if (engine_get(e, path, NULL, &b, NULL, err) < 0)
		return -1;
	struct engine_container_list raw;
	if (engine_parse_list(buf_str(&b), &raw, err) < 0)
		return err_wrap(err, "docker engine at '%s'", e->sock);
	l->c = xcalloc(raw.n + 1, sizeof(*l->c));
	for (size_t i = 0; i < raw.n; i++) {
		struct err *ie = NULL;
		int rc = inspect(e, raw.c[i].id, &l->c[l->n], &ie);
		if (rc == -2) { /* removed since the list */
			err_free(ie);
			continue;
		}
		if (rc < 0) {
			engine_container_list_free(&raw);
			engine_container_list_free(l);
			*err = ie;
			return -1;
		}
		l->n++;
	}
	engine_container_list_free(&raw);
	qsort(l->c, l->n, sizeof(*l->c), by_name);
	return 0;
}

/* ---- images -------------------------------------------------------------- */

void engine_image_free(struct engine_image *im)
{
	if (!im)
		return;
	free(im->id);
	strv_free(im->repo_digests);
	strv_free(im->repo_tags);
	strv_free(im->env);
	memset(im, 0, sizeof(*im));
}

int engine_parse_image(const char *body, struct engine_image *im, struct err **err)
{
	memset(im, 0, sizeof(*im));
	json_error_t je;
	json_auto_t *j = json_loads(body, 0, &je);
	if (!json_is_object(j) || !json_is_string(json_object_get(j, "Id")))
		return err_set(err, EXIT_RUNTIME, "image inspect: %s",
			       !j ? je.text : "not an object with an Id");
	im->id = jdup(j, "Id");
	im->repo_digests = jstrv(json_object_get(j, "RepoDigests"));
	im->repo_tags = jstrv(json_object_get(j, "RepoTags"));
	im->env = jstrv(json_object_get(json_object_get(j, "Config"), "Env"));
	return 0;
}

int engine_image_inspect(struct engine *e, const char *ref, struct engine_image *im,
			 struct err **err)
{
	memset(im, 0, sizeof(*im));
	if (check_ref("image", ref, err) < 0)
		return -1;
	_cleanup_buf_ struct buf b;
	buf_init(&b, INSPECT_CAP);
	_cleanup_free_ char *path = xasprintf("/images/%s/json", ref);
	long code = 0;
	int rc = engine_get(e, path, NULL, &b, &code, err);
	if (rc == -2 && code == 404) {
		err_free(*err);
		*err = NULL;
		return err_set(err, EXIT_RUNTIME, "no such image '%s'", ref);
	}
	if (rc < 0)
		return -1;
	if (engine_parse_image(buf_str(&b), im, err) < 0)
		return err_wrap(err, "docker engine at '%s'", e->sock);
	return 0;
}

/* ---- logs ---------------------------------------------------------------- */

void log_demux_init(struct log_demux *d, bool raw)
{
	memset(d, 0, sizeof(*d));
	d->raw = raw;
}

int log_demux_feed(struct log_demux *d, const void *p, size_t n, struct buf *out)
{
	const unsigned char *s = p;
	if (d->bad)
		return -1;
	if (d->raw)
		return buf_add(out, s, n);
	while (n > 0) {
		if (d->left > 0) {
			size_t k = n < d->left ? n : d->left;
			if (buf_add(out, s, k) < 0)
				return -1;
			s += k;
			n -= k;
			d->left -= k;
			continue;
		}
		size_t k = sizeof(d->hdr) - d->hdr_len;
		if (k > n)
			k = n;
		memcpy(d->hdr + d->hdr_len, s, k);
		d->hdr_len += k;
		s += k;
		n -= k;
		if (d->hdr_len < sizeof(d->hdr))
			break;
		/* stream 0 stdin, 1 stdout, 2 stderr, 3 system error; then zeros */
		if (d->hdr[0] > 3 || d->hdr[1] || d->hdr[2] || d->hdr[3]) {
			d->bad = true;
			return -1;
		}
		d->left = (size_t)d->hdr[4] << 24 | (size_t)d->hdr[5] << 16 | (size_t)d->hdr[6] << 8 |
			  (size_t)d->hdr[7];
		d->hdr_len = 0;
	}
	return 0;
}

int engine_logs(struct engine *e, const char *id, const struct engine_log_opts *o,
		char **text, struct err **err)
{
	struct engine_container c;
	if (inspect(e, id, &c, err) < 0)
		return -1;
	bool tty = c.tty;
	engine_container_free(&c);
	_cleanup_free_ char *tail = o && o->tail >= 0 ? xasprintf("%ld", o->tail) : xstrdup("all");
	_cleanup_free_ char *path = xasprintf("/containers/%s/logs?stdout=1&stderr=1&tail=%s&since=%lld",
					      id, tail, o ? (long long)o->since : 0LL);
	_cleanup_buf_ struct buf b;
	buf_init(&b, o && o->cap ? o->cap : LOG_CAP_DEFAULT);
	struct log_demux d;
	log_demux_init(&d, tty);
	if (engine_get(e, path, &d, &b, NULL, err) < 0)
		return -1;
	if (!tty && (d.hdr_len || d.left))
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': GET %s: log stream ends mid-frame",
			       e->sock, path);
	*text = buf_take(&b);
	return 0;
}
