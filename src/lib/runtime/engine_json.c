/*
 * engine_json.c — the Engine API's JSON bodies decoded into lobes'
 * structures: the container list, a container's inspect, an image's
 * inspect; the engine's timestamps and an environment lookup. Pure
 * functions of the body (engine_api.h), so recorded bodies are tested
 * without a socket.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "engine_int.h"

char *engine_jdup(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return xstrdup(s ? s : "");
}

char **engine_jstrv(const json_t *a)
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

const struct engine_container *engine_container_for_role(const struct engine_container_list *l,
							 const char *role)
{
	const struct engine_container *any = NULL;
	for (size_t i = 0; i < l->n; i++) {
		const struct engine_container *c = &l->c[i];
		if (strcmp(*c->role ? c->role : c->service, role) != 0)
			continue;
		if (strcmp(c->state, "running") == 0)
			return c;
		if (!any)
			any = c;
	}
	return any;
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
		set_str(&c->id, engine_jdup(o, "Id"));
		const char *nm = json_string_value(json_array_get(json_object_get(o, "Names"), 0));
		set_str(&c->name, strip_slash(nm));
		set_labels(c, json_object_get(o, "Labels"));
		set_str(&c->state, engine_jdup(o, "State"));
		set_str(&c->health, xstrdup(health_of_status(str_or(json_string_value(json_object_get(o, "Status"))))));
		set_str(&c->image, engine_jdup(o, "Image"));
		set_str(&c->image_id, engine_jdup(o, "ImageID"));
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
	set_str(&c->id, engine_jdup(j, "Id"));
	set_str(&c->name, strip_slash(json_string_value(json_object_get(j, "Name"))));
	set_str(&c->image_id, engine_jdup(j, "Image"));
	set_str(&c->image, engine_jdup(cfg, "Image"));
	set_labels(c, json_object_get(cfg, "Labels"));
	c->tty = json_is_true(json_object_get(cfg, "Tty"));
	strv_free(c->entrypoint);
	c->entrypoint = engine_jstrv(json_object_get(cfg, "Entrypoint"));
	strv_free(c->cmd);
	c->cmd = engine_jstrv(json_object_get(cfg, "Cmd"));
	strv_free(c->env);
	c->env = engine_jstrv(json_object_get(cfg, "Env"));
	strv_free(c->args);
	c->args = engine_jstrv(json_object_get(j, "Args"));
	c->restart_count = (int)json_integer_value(json_object_get(j, "RestartCount"));
	set_str(&c->state, engine_jdup(st, "Status"));
	set_str(&c->error, engine_jdup(st, "Error"));
	set_str(&c->started_at, engine_jdup(st, "StartedAt"));
	set_str(&c->finished_at, engine_jdup(st, "FinishedAt"));
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
	im->id = engine_jdup(j, "Id");
	im->repo_digests = engine_jstrv(json_object_get(j, "RepoDigests"));
	im->repo_tags = engine_jstrv(json_object_get(j, "RepoTags"));
	im->env = engine_jstrv(json_object_get(json_object_get(j, "Config"), "Env"));
	return 0;
}
