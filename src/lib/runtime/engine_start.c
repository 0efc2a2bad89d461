/*
 * engine_start.c — POST /containers/ID/start over the engine's unix socket;
 * see engine_start.h.
 *
 * One bounded libcurl request with an empty body; the answer's body is read
 * only for an error message, into a capped buf. Nothing is reused between
 * calls.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <curl/curl.h>
#include <jansson.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "engine_start.h"

#define START_CONNECT_TIMEOUT_MS 3000L
#define START_ERRBODY_CAP ((size_t)64 << 10)

static pthread_once_t start_curl_once = PTHREAD_ONCE_INIT;
static void start_curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	(void)buf_add(ud, p, size * nmemb); /* an error body may be cut short */
	return size * nmemb;
}

/* The engine's "message" in an error body, else the body; caller frees. */
static char *message_of(const char *body)
{
	json_auto_t *j = json_loads(body, 0, NULL);
	const char *m = json_string_value(json_object_get(j, "message"));
	_cleanup_free_ char *s = xstrdup(m ? m : body);
	return xstrdup(str_strip(s));
}

int engine_start_container(const struct engine *e, const char *id, struct err **err)
{
	if (!id || !*id || strpbrk(id, "/?#% \t\r\n"))
		return err_set(err, EXIT_INTERNAL, "container '%s' cannot be named to the engine",
			       id ? id : "");
	pthread_once(&start_curl_once, start_curl_init);
	CURL *h = curl_easy_init();
	if (!h)
		return err_set(err, EXIT_INTERNAL, "curl_easy_init failed");
	_cleanup_buf_ struct buf body;
	buf_init(&body, START_ERRBODY_CAP);
	_cleanup_free_ char *path = xasprintf("/containers/%s/start", id);
	_cleanup_free_ char *url = xasprintf("http://localhost%s", path);
	char errbuf[CURL_ERROR_SIZE] = "";
	long timeout = e->timeout_ms > 0 ? e->timeout_ms : ENGINE_TIMEOUT_MS;
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, e->sock);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			 timeout < START_CONNECT_TIMEOUT_MS ? timeout : START_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
	CURLcode rc = curl_easy_perform(h);
	long code = 0, oserr = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr);
	curl_easy_cleanup(h);
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': POST %s: no answer within %ld ms",
			       e->sock, path, timeout);
	if (rc != CURLE_OK && code == 0)
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': connect: %s", e->sock,
			       oserr ? strerror((int)oserr) : *errbuf ? errbuf : curl_easy_strerror(rc));
	if (rc != CURLE_OK)
		return err_set(err, EXIT_RUNTIME, "docker engine at '%s': POST %s: %s", e->sock, path,
			       *errbuf ? errbuf : curl_easy_strerror(rc));
	if (code == 204 || code == 304)
		return 0;
	if (code == 404)
		return err_set(err, EXIT_RUNTIME, "no such container '%s'", id);
	_cleanup_free_ char *m = message_of(buf_str(&body));
	return err_set(err, EXIT_RUNTIME, "docker engine at '%s': POST %s: HTTP %ld%s%s", e->sock, path,
		       code, *m ? ": " : "", m);
}
