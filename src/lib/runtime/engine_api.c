/*
 * engine_api.c — the Engine API calls on containers and images (start,
 * inspect, list a compose project, inspect an image); see engine_api.h.
 * Requests go through engine_http.c, bodies are decoded by engine_json.c,
 * and an engine 404 becomes "no such container/image 'X'".
 */
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "../util/cleanup.h"
#include "engine_int.h"

#define LIST_CAP ((size_t)8 << 20)
#define INSPECT_CAP ((size_t)4 << 20)

int engine_start_container(const struct engine *e, const char *id, struct err **err)
{
	/* a '/' would change the path: refused like the characters engine_check_ref refuses */
	if (engine_check_ref("container", id, err) < 0)
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

/* GET the JSON of the container or image ref names (path: a format with
 * one %s) into b; an engine 404 is -2 with *err "no such WHAT 'REF'". */
static int get_named(struct engine *e, const char *what, const char *ref, const char *path_fmt,
		     struct buf *b, struct err **err)
{
	if (engine_check_ref(what, ref, err) < 0)
		return -1;
	_cleanup_free_ char *path = xasprintf(path_fmt, ref);
	long code = 0;
	int rc = engine_get(e, path, NULL, b, &code, err);
	if (rc == -2 && code == 404) {
		err_free(*err);
		*err = NULL;
		err_set(err, EXIT_RUNTIME, "no such %s '%s'", what, ref);
		return -2;
	}
	return rc < 0 ? -1 : 0;
}

int engine_inspect_gone(struct engine *e, const char *id, struct engine_container *c,
			struct err **err)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, INSPECT_CAP);
	int rc = get_named(e, "container", id, "/containers/%s/json", &b, err);
	if (rc < 0)
		return rc;
	if (engine_parse_inspect(buf_str(&b), c, err) < 0)
		return err_wrap(err, "docker engine at '%s'", e->sock);
	return 0;
}

int engine_inspect(struct engine *e, const char *id, struct engine_container *c,
		   struct err **err)
{
	return engine_inspect_gone(e, id, c, err) < 0 ? -1 : 0;
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
		int rc = engine_inspect_gone(e, raw.c[i].id, &l->c[l->n], &ie);
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

int engine_image_inspect(struct engine *e, const char *ref, struct engine_image *im,
			 struct err **err)
{
	memset(im, 0, sizeof(*im));
	_cleanup_buf_ struct buf b;
	buf_init(&b, INSPECT_CAP);
	if (get_named(e, "image", ref, "/images/%s/json", &b, err) < 0)
		return -1;
	if (engine_parse_image(buf_str(&b), im, err) < 0)
		return err_wrap(err, "docker engine at '%s'", e->sock);
	return 0;
}
