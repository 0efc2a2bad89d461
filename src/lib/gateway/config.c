/*
 * config.c — the gateway's snapshot of the deploy dir.
 *
 * Sources, later ones winning:
 *   data/gateway/aliases.yaml, data/gateway/pressure.yaml   (shipped knowledge)
 *   <dir>/.env        the fleet (<ROLE>_FEASIBLE, _PORT, _MODEL, _MAX_MODEL_LEN,
 *                     _QUANTIZATION, _TOOL_CALL_PARSER, _REASONING_PARSER) and
 *                     the LOBES_GATEWAY_* settings
 *   <dir>/gateway.yaml  operator aliases (`aliases: {name: role}`)
 *   the command line  bind, port, key file
 * The API key comes from LOBES_GATEWAY_KEY_FILE (default <dir>/gateway.key
 * when it exists), which must not be readable by group or others, or from
 * LOBES_GATEWAY_API_KEY in .env (itself 0600); it is the unnamed key
 * "default" beside the named keys of <dir>/keys.yaml (keys.c). Every bad value is an error
 * with its file and line and what was expected; nothing is half-applied:
 * a failed load leaves the caller's snapshot in use.
 *
 * The snapshot in use is held by a gw_live (config_int.h): a reference
 * under a mutex, swapped whole on reload, so a request or a loop reads one
 * consistent snapshot for as long as it keeps its reference.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <libfyaml.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../knowledge/knowledge.h"
#include "../deploy/deploy.h"
#include "../render/render.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/yaml_scalar.h"
#include "config_int.h"

static void role_free(struct gw_role *r)
{
	free(r->model);
	free(r->image);
	free(r->vllm_version);
	free(r->vllm_registry);
	free(r->quantization);
	free(r->tool_parser);
	free(r->reasoning_parser);
	free(r->hosted_by);
}

struct gw_config *gw_config_ref(struct gw_config *c)
{
	if (c)
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_SEQ_CST);
	return c;
}

void gw_config_unref(struct gw_config *c)
{
	if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_SEQ_CST) > 0)
		return;
	free(c->dir);
	free(c->profile);
	free(c->card);
	free(c->bind);
	free(c->peer_ca_file);
	if (c->key) {
		explicit_bzero(c->key, strlen(c->key));
		free(c->key);
	}
	free(c->key_source);
	for (int r = 0; r < ROLE__COUNT; r++)
		role_free(&c->roles[r]);
	for (size_t i = 0; i < c->n_aliases; i++) {
		free(c->aliases[i].name);
		free(c->aliases[i].source);
	}
	free(c->aliases);
	gw_peers_free(c->peers);
	gw_keys_free(c->keys);
	free(c);
}

static void cfg_freep(struct gw_config **c) { gw_config_unref(*c); }

void gw_live_init(struct gw_live *l, struct gw_config *c)
{
	pthread_mutex_init(&l->mu, NULL);
	l->cfg = gw_config_ref(c);
}

struct gw_config *gw_live_get(struct gw_live *l)
{
	pthread_mutex_lock(&l->mu);
	struct gw_config *c = gw_config_ref(l->cfg);
	pthread_mutex_unlock(&l->mu);
	return c;
}

struct gw_config *gw_live_swap(struct gw_live *l, struct gw_config *c)
{
	pthread_mutex_lock(&l->mu);
	struct gw_config *old = l->cfg;
	l->cfg = gw_config_ref(c);
	pthread_mutex_unlock(&l->mu);
	return old;
}

void gw_live_destroy(struct gw_live *l)
{
	gw_config_unref(l->cfg);
	l->cfg = NULL;
	pthread_mutex_destroy(&l->mu);
}

bool gw_bind_is_loopback(const char *bind)
{
	if (!strcmp(bind, "localhost") || !strcmp(bind, "::1"))
		return true;
	struct in_addr a;
	return inet_pton(AF_INET, bind, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* 1-based position of a scalar node as written (1:1 when unknown). */
static void node_mark(struct fy_node *n, int *line, int *col)
{
	struct fy_token *t = n && fy_node_is_scalar(n) ? fy_node_get_scalar_token(n) : NULL;
	const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
	*line = m ? m->line + 1 : 1;
	*col = m ? m->column + 1 : 1;
}

static int yerr(const char *name, struct fy_node *n, struct err **err, const char *what)
{
	int line, col;
	node_mark(n, &line, &col);
	return err_set(err, EXIT_CONFIG, "%s:%d:%d: %s", name, line, col, what);
}

int gw_aliases_parse(struct gw_config *c, const char *text, size_t len, const char *name,
		     struct err **err)
{
	struct fy_document *d = gw_yaml_parse(text, len, name, err);
	if (!d)
		return -1;
	int rc = 0;
	struct fy_node *root = fy_document_root(d);
	if (!root || fy_node_is_null(root))
		goto out;
	if (!fy_node_is_mapping(root)) {
		rc = yerr(name, root, err, "the top level is not a mapping; expected `aliases:`");
		goto out;
	}
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(root, &it))) {
		struct fy_node *k = fy_node_pair_key(p), *v = fy_node_pair_value(p);
		const char *ks = fy_node_is_scalar(k) ? yaml_scalar0(k, NULL) : NULL;
		if (!ks || strcmp(ks, "aliases") != 0) {
			rc = yerr(name, k, err, "unknown key; expected `aliases`");
			goto out;
		}
		if (!v || fy_node_is_null(v))
			continue;
		if (!fy_node_is_mapping(v)) {
			rc = yerr(name, v, err, "'aliases' is not a mapping; expected NAME: ROLE lines");
			goto out;
		}
		void *it2 = NULL;
		struct fy_node_pair *ap;
		while ((ap = fy_node_mapping_iterate(v, &it2))) {
			struct fy_node *ak = fy_node_pair_key(ap), *av = fy_node_pair_value(ap);
			const char *an = fy_node_is_scalar(ak) ? yaml_scalar0(ak, NULL) : NULL;
			const char *rn = av && fy_node_is_scalar(av) ? yaml_scalar0(av, NULL) : NULL;
			if (!an || !*an || strlen(an) > 256) {
				rc = yerr(name, ak, err, "alias name is empty or not a string; expected a name");
				goto out;
			}
			int role = rn ? role_from_name(rn) : -1;
			if (role < 0) {
				_cleanup_free_ char *m = xasprintf(
					"alias '%s' names '%s'; expected a role (cortex, senses, hand, embedder or reranker)",
					an, rn ? rn : "");
				rc = yerr(name, av ? av : ak, err, m);
				goto out;
			}
			if (role_from_name(an) >= 0) {
				_cleanup_free_ char *m = xasprintf(
					"alias '%s' is a role name; expected a name that is not a role", an);
				rc = yerr(name, ak, err, m);
				goto out;
			}
			int line, col;
			node_mark(ak, &line, &col);
			size_t i = 0;
			while (i < c->n_aliases && strcmp(c->aliases[i].name, an) != 0)
				i++;
			if (i == c->n_aliases) {
				c->aliases = xrealloc(c->aliases, (c->n_aliases + 1) * sizeof(*c->aliases));
				c->aliases[c->n_aliases++].name = xstrdup(an);
				c->aliases[i].source = NULL;
			}
			c->aliases[i].role = (enum role_id)role;
			free(c->aliases[i].source);
			c->aliases[i].source = xasprintf("%s:%d:%d", name, line, col);
		}
	}
out:
	fy_document_destroy(d);
	return rc;
}

/* data/gateway/pressure.yaml: thresholds and the cards where iowait lies. */
static int pressure_parse(struct gw_config *c, const struct embedded_file *f, struct err **err)
{
	struct fy_document *d = gw_yaml_parse(f->data, f->len, f->path, err);
	if (!d)
		return -1;
	int rc = 0;
	struct fy_node *root = fy_document_root(d);
	const char *s;
	char *end;
	if ((s = fy_node_mapping_lookup_scalar0_by_simple_key(root, "swap_max_percent", -1)))
		c->swap_max = strtod(s, &end);
	if ((s = fy_node_mapping_lookup_scalar0_by_simple_key(root, "iowait_max_percent", -1)))
		c->iowait_max = strtod(s, &end);
	struct fy_node *lies = fy_node_mapping_lookup_by_string(root, "iowait_lies_on", -1);
	if (lies && fy_node_is_sequence(lies)) {
		void *it = NULL;
		struct fy_node *n;
		while ((n = fy_node_sequence_iterate(lies, &it)))
			if (fy_node_is_scalar(n) && c->card && !strcmp(yaml_scalar0(n, NULL), c->card))
				c->iowait_off_by_card = true;
	} else {
		rc = yerr(f->path, root, err, "missing iowait_lies_on; expected a list of cards");
	}
	fy_document_destroy(d);
	return rc;
}

const struct embedded_file *gw_embedded(const char *path)
{
	for (size_t i = 0; i < embedded_files_count; i++)
		if (!strcmp(embedded_files[i].path, path))
			return &embedded_files[i];
	return NULL;
}

static const struct env_entry *env_find(const struct env_file *e, const char *key)
{
	const struct env_entry *hit = NULL;
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->e[i].key, key))
			hit = &e->e[i];
	return hit;
}

/* An integer setting in [lo, hi]; absent leaves *out as it is. */
static int env_int(const struct env_file *e, const char *path, const char *key, long lo, long hi,
		   long *out, struct err **err)
{
	const struct env_entry *v = env_find(e, key);
	if (!v)
		return 0;
	char *end;
	errno = 0;
	long n = strtol(v->value, &end, 10);
	if (errno || end == v->value || *end || n < lo || n > hi)
		return err_set(err, EXIT_CONFIG, "%s:%d: %s '%s' is not valid; expected an integer %ld-%ld",
			       path, v->line, key, v->value, lo, hi);
	*out = n;
	return 0;
}

static int env_setting(struct gw_config *c, const struct env_file *e, const char *path,
		       struct err **err)
{
	long v;
#define INT_KEY(key, lo, hi, field)                                                   \
	do {                                                                          \
		v = (long)c->field;                                                   \
		if (env_int(e, path, key, lo, hi, &v, err) < 0)                       \
			return -1;                                                    \
		c->field = (__typeof__(c->field))v;                                    \
	} while (0)
	INT_KEY("LOBES_GATEWAY_PORT", 0, 65535, port);
	INT_KEY("LOBES_GATEWAY_MAX_BODY_BYTES", 1024, 1L << 30, max_body);
	INT_KEY("LOBES_GATEWAY_MAX_CONNECTIONS", 1, 65536, max_connections);
	INT_KEY("LOBES_GATEWAY_MAX_BUFFERED_BYTES", 1L << 20, 1L << 40, max_buffered);
	INT_KEY("LOBES_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS", 1, 65536, max_conn_per_addr);
	INT_KEY("LOBES_GATEWAY_HEADER_TIMEOUT", 1, 3600, header_timeout_s);
	INT_KEY("LOBES_GATEWAY_MIN_UPLOAD_RATE", 0, 1L << 30, min_upload_rate);
	INT_KEY("LOBES_GATEWAY_CONNECT_TIMEOUT", 1, 3600, connect_timeout_s);
	INT_KEY("LOBES_GATEWAY_READ_TIMEOUT", 1, 86400, read_timeout_s);
	INT_KEY("LOBES_GATEWAY_FIRST_BYTE_TIMEOUT", 1, 86400, first_byte_timeout_s);
	INT_KEY("LOBES_GATEWAY_REQUEST_TIMEOUT", 0, 86400, request_timeout_s);
	INT_KEY("LOBES_GATEWAY_IDLE_TIMEOUT", 1, 86400, idle_timeout_s);
	INT_KEY("LOBES_GATEWAY_DRAIN_TIMEOUT", 0, 86400, drain_timeout_s);
	INT_KEY("LOBES_GATEWAY_HEALTH_INTERVAL_MS", 50, 3600000, health_interval_ms);
	INT_KEY("LOBES_GATEWAY_HEALTH_TIMEOUT_MS", 50, 600000, health_timeout_ms);
	INT_KEY("LOBES_GATEWAY_SWAP_MAX", 0, 100, swap_max);
	INT_KEY("LOBES_GATEWAY_IOWAIT_MAX", 0, 100, iowait_max);
	INT_KEY("LOBES_GATEWAY_WORKERS", 1, 64, workers);
#undef INT_KEY
	long all = 1024;
	if (env_int(e, path, "LOBES_GATEWAY_MAX_INFLIGHT", 1, 1000000, &all, err) < 0)
		return -1;
	const struct env_entry *ma = env_find(e, "LOBES_GATEWAY_METRICS_AUTH");
	if (ma && strcmp(ma->value, "none") != 0 && strcmp(ma->value, "key") != 0)
		return err_set(err, EXIT_CONFIG, "%s:%d: LOBES_GATEWAY_METRICS_AUTH '%s' is not valid; "
			       "expected none or key", path, ma->line, ma->value);
	c->observe_keyed = ma && !strcmp(ma->value, "key");
	const struct env_entry *b = env_find(e, "LOBES_GATEWAY_BIND");
	if (b) {
		free(c->bind);
		c->bind = xstrdup(b->value);
	}
	const struct env_entry *ca = env_find(e, "LOBES_GATEWAY_PEER_CA_FILE");
	if (ca && *ca->value) { /* relative to the deploy dir */
		char *p = ca->value[0] == '/' ? xstrdup(ca->value) : xasprintf("%s/%s", c->dir, ca->value);
		free(c->peer_ca_file);
		c->peer_ca_file = p;
		if (access(p, R_OK) != 0)
			return err_set(err, EXIT_CONFIG, "%s:%d: LOBES_GATEWAY_PEER_CA_FILE '%s' cannot be "
				       "read: %s; expected a PEM file of the CAs that sign the peers' "
				       "https certificates", path, ca->line, ca->value, strerror(errno));
	}
	for (int r = 0; r < ROLE__COUNT; r++) {
		_cleanup_free_ char *k = env_key((enum role_id)r, "x");
		k[strlen(k) - 2] = 0; /* "CORTEX" */
		_cleanup_free_ char *kc = xasprintf("LOBES_GATEWAY_MAX_INFLIGHT_%s", k);
		long n = all;
		if (env_int(e, path, kc, 1, 1000000, &n, err) < 0)
			return -1;
		c->roles[r].max_inflight = (int)n;
		_cleanup_free_ char *kp = xasprintf("LOBES_GATEWAY_PEER_%s", k);
		const struct env_entry *p = env_find(e, kp);
		if (p && *p->value && !(c->roles[r].hosted_by = gw_origin_normalise(p->value)))
			return err_set(err, EXIT_CONFIG,
				       "%s:%d: %s '%s' is not valid; expected http(s)://HOST[:PORT] of the "
				       "box that serves the role",
				       path, p->line, kp, p->value);
	}
	return 0;
}

static int roles_from_env(struct gw_config *c, const struct env_file *e, const char *path,
			  struct err **err)
{
	for (int r = 0; r < ROLE__COUNT; r++) {
		struct gw_role *gr = &c->roles[r];
		_cleanup_free_ char *kf = env_key((enum role_id)r, "FEASIBLE");
		_cleanup_free_ char *kp = env_key((enum role_id)r, "PORT");
		_cleanup_free_ char *km = env_key((enum role_id)r, "MODEL");
		_cleanup_free_ char *kl = env_key((enum role_id)r, "MAX_MODEL_LEN");
		_cleanup_free_ char *kq = env_key((enum role_id)r, "QUANTIZATION");
		_cleanup_free_ char *kt = env_key((enum role_id)r, "TOOL_CALL_PARSER");
		_cleanup_free_ char *kr = env_key((enum role_id)r, "REASONING_PARSER");
		const char *v;
		gr->feasible = (v = env_get(e, kf)) && !strcmp(v, "true");
		gr->model = xstrdup((v = env_get(e, km)) ? v : "");
		gr->quantization = xstrdup((v = env_get(e, kq)) ? v : "");
		_cleanup_free_ char *ki = env_key((enum role_id)r, "IMAGE");
		gr->image = xstrdup((v = env_get(e, ki)) ? v : "");
		if ((v = env_get(e, kt)) && *v && strcmp(v, "none") != 0)
			gr->tool_parser = xstrdup(v);
		if ((v = env_get(e, kr)) && *v && strcmp(v, "none") != 0)
			gr->reasoning_parser = xstrdup(v);
		long len = 0;
		if (env_int(e, path, kl, 1, 1L << 30, &len, err) < 0)
			return -1;
		gr->max_model_len = len;
		if (!gr->feasible)
			continue;
		long port = 0;
		if (env_int(e, path, kp, 1, 65535, &port, err) < 0)
			return -1;
		if (!port)
			return err_set(err, EXIT_CONFIG, "%s: %s is missing; expected the port of feasible role '%s'",
				       path, kp, role_name((enum role_id)r));
		gr->port = (int)port;
	}
	return 0;
}

/* Read the key: a file (mode without group/other bits) or .env's value. */
static int key_load(struct gw_config *c, const struct env_file *e, const char *env_path,
		    const char *key_file, struct err **err)
{
	const struct env_entry *kf = env_find(e, "LOBES_GATEWAY_KEY_FILE");
	_cleanup_free_ char *def = xasprintf("%s/gateway.key", c->dir);
	const char *path = key_file ? key_file : kf ? kf->value : fs_exists(def) ? def : NULL;
	if (path) {
		struct stat st;
		if (stat(path, &st) < 0)
			return err_errno(err, EXIT_CONFIG, errno, "API key file '%s'", path);
		if (st.st_mode & 077)
			return err_set(err, EXIT_CONFIG,
				       "API key file '%s' has mode %04o; expected 0600 (chmod 600 '%s')",
				       path, (unsigned)(st.st_mode & 07777), path);
		_cleanup_free_ char *text = fs_read(path, 4096, NULL, err);
		if (!text)
			return -1;
		char *k = str_strip(text);
		if (!*k || strpbrk(k, " \t\r\n"))
			return err_set(err, EXIT_CONFIG,
				       "API key file '%s' is empty or holds more than one word; expected the key alone",
				       path);
		c->key = xstrdup(k);
		explicit_bzero(text, strlen(text));
		c->key_source = xasprintf("file %s", path);
		return 0;
	}
	const struct env_entry *kv = env_find(e, "LOBES_GATEWAY_API_KEY");
	if (kv && *kv->value) {
		struct stat st;
		if (stat(env_path, &st) == 0 && (st.st_mode & 077))
			return err_set(err, EXIT_CONFIG,
				       "%s holds LOBES_GATEWAY_API_KEY but has mode %04o; expected 0600",
				       env_path, (unsigned)(st.st_mode & 07777));
		c->key = xstrdup(kv->value);
		c->key_source = xasprintf("%s LOBES_GATEWAY_API_KEY", env_path);
	}
	return 0;
}

struct gw_config *gw_config_load(const char *dir, const struct gw_overrides *o, struct err **err)
{
	_cleanup_(cfg_freep) struct gw_config *c = xcalloc(1, sizeof(*c));
	c->refs = 1;
	c->dir = xstrdup(dir);
	c->bind = xstrdup("127.0.0.1");
	c->port = 8000;
	c->max_body = 16u << 20;
	c->max_connections = 4096;
	c->max_buffered = 256u << 20;
	c->max_conn_per_addr = 1024;
	c->header_timeout_s = 10;
	c->min_upload_rate = 1024;
	c->connect_timeout_s = 2;
	c->first_byte_timeout_s = 300;
	c->read_timeout_s = 600;
	c->request_timeout_s = 0;
	c->idle_timeout_s = 60;
	c->drain_timeout_s = 30;
	c->health_interval_ms = 5000;
	c->health_timeout_ms = 3000;

	_cleanup_free_ char *path = xasprintf("%s/.env", dir);
	struct env_file env;
	int have_env = deploy_env_read(dir, &env, err);
	if (have_env < 0)
		return NULL;
	if (!have_env) {
		err_set(err, EXIT_CONFIG, "no deployment in '%s': run `lobes init --apply` first", dir);
		return NULL;
	}
	const char *v;
	c->profile = xstrdup((v = env_get(&env, "LOBES_PROFILE")) ? v : "unknown");
	c->card = xstrdup((v = env_get(&env, "LOBES_CARD")) ? v : "unknown");

	int rc = 0;
	const struct embedded_file *pf = gw_embedded("data/gateway/pressure.yaml");
	const struct embedded_file *af = gw_embedded("data/gateway/aliases.yaml");
	if (pf && pressure_parse(c, pf, err) < 0)
		rc = -1;
	if (!rc && af && gw_aliases_parse(c, af->data, af->len, af->path, err) < 0)
		rc = -1;
	if (!rc && (roles_from_env(c, &env, path, err) < 0 || env_setting(c, &env, path, err) < 0))
		rc = -1;
	if (!rc && key_load(c, &env, path, o ? o->key_file : NULL, err) < 0)
		rc = -1;
	env_file_free(&env);
	if (rc < 0)
		return NULL;

	_cleanup_free_ char *gy = xasprintf("%s/gateway.yaml", dir);
	if (fs_exists(gy)) {
		size_t len;
		_cleanup_free_ char *t = fs_read(gy, 1 << 20, &len, err);
		if (!t || gw_aliases_parse(c, t, len, gy, err) < 0)
			return NULL;
	}
	if (gw_peers_load(c, err) < 0) /* peers.yaml: after the roles it checks */
		return NULL;
	if (gw_keys_load(c, err) < 0) /* keys.yaml, then the default key */
		return NULL;
	gw_vllm_resolve(c); /* each engine's vLLM and the routes it serves (vroutes.c) */
	if (o && o->bind) {
		free(c->bind);
		c->bind = xstrdup(o->bind);
	}
	if (o && o->port)
		c->port = o->port < 0 ? 0 : o->port;
	if (!gw_bind_is_loopback(c->bind) && !gw_auth_required(c)) {
		err_set(err, EXIT_CONFIG,
			"refusing to listen on '%s' without an API key: put one in %s/gateway.key "
			"(mode 0600), add one with `lobes keys add NAME`, or bind 127.0.0.1",
			c->bind, dir);
		return NULL;
	}
	return TAKE_PTR(c);
}
