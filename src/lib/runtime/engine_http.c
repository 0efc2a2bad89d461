/*
 * engine_http.c — the transport of the Engine API client: the socket
 * DOCKER_HOST names, and the one request path every call goes through.
 *
 * A fresh curl easy handle per request (no connection reuse to reason
 * about), CURLOPT_UNIX_SOCKET_PATH, a connect bound and a whole-request
 * bound, and a write callback that fills a capped buf — through the log
 * demultiplexer for log streams. Errors name the socket ("docker engine at
 * 'SOCK': ...") so an operator knows which daemon was asked.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "engine_int.h"

#define CONNECT_TIMEOUT_MS 3000L

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

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

int engine_request(const struct engine *e, const char *method, const char *path,
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
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		err_set(err, EXIT_RUNTIME, "docker engine at '%s': %s %s: no answer within %ld ms",
			e->sock, method, path, e->timeout_ms);
		/* a 2xx body cut short by the bound: what came is there, as for
		 * a body over its cap (a log read on by the next pass) */
		return code >= 200 && code < 300 && body->len ? -3 : -1;
	}
	if (s.overflow && demux && demux->bad)
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': %s %s: malformed log stream",
			       e->sock, method, path);
	if (s.overflow) {
		err_set(err, EXIT_RUNTIME, "docker engine at '%s': %s %s: response larger than %zu bytes",
			e->sock, method, path, body->cap ? body->cap : BUF_DEFAULT_CAP);
		return -3; /* body holds what fit (engine_logs_upto reads on from there) */
	}
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

int engine_get(struct engine *e, const char *path, struct log_demux *demux,
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

int engine_check_ref(const char *what, const char *ref, struct err **err)
{
	if (!ref || !*ref || strpbrk(ref, "?#% \t\r\n"))
		return err_set(err, EXIT_INTERNAL, "%s '%s' cannot be named to the engine", what,
			       ref ? ref : "");
	return 0;
}
