/*
 * http.c — the plain requests of measure/: one JSON POST and one GET of
 * /version, each bounded, through libcurl's easy interface. The load itself
 * goes through bench.c's multi loop; these are eval's questions (one at a
 * time, order matters more than speed) and the box's description.
 */
#include <curl/curl.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "measure.h"
#include "measure_int.h"

#define MAX_BODY ((size_t)64 << 20)

static size_t on_body(char *p, size_t size, size_t n, void *cls)
{
	return buf_add(cls, p, size * n) < 0 ? 0 : size * n;
}

/* One request: body NULL = GET. The status, or -1 with err. */
static long request(const char *url, const char *bearer, const char *body, double timeout_s,
		    struct buf *out, struct err **err)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdrs = NULL;
	long status = 0;

	if (!h)
		return err_set(err, EXIT_INTERNAL, "the HTTP client cannot be set up");
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	if (bearer) {
		_cleanup_free_ char *auth = xasprintf("Authorization: Bearer %s", bearer);
		hdrs = curl_slist_append(hdrs, auth);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	if (body)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
	CURLcode cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	if (cc != CURLE_OK)
		return err_set(err, EXIT_RUNTIME, "'%s': %s", url, curl_easy_strerror(cc));
	return status;
}

long measure_post_json(const char *origin, const char *path, const char *bearer,
		       const json_t *body, double timeout_s, json_t **out, struct err **err)
{
	_cleanup_free_ char *url = xasprintf("%s%s", origin, path);
	_cleanup_free_ char *text = json_dumps(body, JSON_COMPACT);
	struct buf b;

	*out = NULL;
	buf_init(&b, MAX_BODY);
	long status = request(url, bearer, text, timeout_s, &b, err);
	if (status >= 0) {
		json_error_t je;
		*out = json_loads(buf_str(&b), 0, &je);
		if (!json_is_object(*out)) {
			json_decref(*out);
			*out = NULL;
			status = err_set(err, EXIT_RUNTIME, "'%s' answered %ld with no JSON object", url,
					 status);
		}
	}
	buf_free(&b);
	return status;
}

long measure_get_text(const char *origin, const char *path, const char *bearer, double timeout_s,
		      char **out, struct err **err)
{
	_cleanup_free_ char *url = xasprintf("%s%s", origin, path);
	struct buf b;

	*out = NULL;
	buf_init(&b, MAX_BODY);
	long status = request(url, bearer, NULL, timeout_s, &b, err);
	if (status >= 0)
		*out = buf_take(&b);
	buf_free(&b);
	return status;
}

char *measure_engine_version(const char *origin, const char *bearer, double timeout_s)
{
	_cleanup_free_ char *url = xasprintf("%s/version", origin);
	struct err *e = NULL;
	struct buf b;
	char *v = NULL;

	buf_init(&b, 1 << 16);
	if (request(url, bearer, NULL, timeout_s, &b, &e) == 200) {
		json_error_t je;
		json_auto_t *j = json_loads(buf_str(&b), 0, &je);
		if (json_is_string(json_object_get(j, "version")))
			v = xstrdup(json_string_value(json_object_get(j, "version")));
	}
	err_free(e);
	buf_free(&b);
	return v;
}

char *measure_first_model(const char *origin, const char *bearer, double timeout_s, struct err **err)
{
	_cleanup_free_ char *url = xasprintf("%s/v1/models", origin);
	struct buf b;
	char *id = NULL;

	buf_init(&b, MAX_BODY);
	long status = request(url, bearer, NULL, timeout_s, &b, err);
	if (status == 200) {
		json_error_t je;
		json_auto_t *j = json_loads(buf_str(&b), 0, &je);
		const char *s = json_string_value(
			json_object_get(json_array_get(json_object_get(j, "data"), 0), "id"));
		if (s)
			id = xstrdup(s);
	}
	if (!id && status >= 0)
		err_set(err, EXIT_RUNTIME, "'%s' answered %ld without a model id", url, status);
	buf_free(&b);
	return id;
}
