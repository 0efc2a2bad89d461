/*
 * peers.c — load and validate <deploy-dir>/peers.yaml (format in peers.h).
 *
 * Strict like the other knowledge files: the text passes yaml_guard, then
 * libfyaml builds the tree; unknown keys, a peer without an origin, an
 * origin that is not http(s)://host[:port], a role name that is not a role,
 * a role naming an undeclared peer, both or neither of refer/proxy, and
 * refer/proxy of a role this box serves are errors with file:line:column.
 * A proxied role needs its peer's key file; the file must exist, have no
 * group/other permission bits and hold one word. The key is kept in memory
 * only (wiped on free) and never appears in a message.
 */
#include <curl/curl.h>
#include <errno.h>
#include <libfyaml.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/yaml_guard.h"
#include "../util/yaml_scalar.h"
#include "peers.h"

void gw_peers_free(struct gw_peers *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].origin);
		free(p->v[i].key_file);
		if (p->v[i].key) {
			explicit_bzero(p->v[i].key, strlen(p->v[i].key));
			free(p->v[i].key);
		}
		free(p->v[i].source);
	}
	free(p->v);
	for (int r = 0; r < ROLE__COUNT; r++) {
		for (size_t i = 0; i < p->role[r].n_fb; i++)
			free(p->role[r].fb[i].source);
		free(p->role[r].source);
	}
	free(p->path);
	free(p->box);
	free(p);
}

static void peers_freep(struct gw_peers **p) { gw_peers_free(*p); }


/* Where to point at a value: the value, or its key when the value has no
 * position of its own (absent, or empty as in "hand:" alone, which
 * libfyaml gives no token: it would read as 1:1). */
static struct fy_node *at(struct fy_node *v, struct fy_node *k)
{
	if (!v || (fy_node_is_scalar(v) && !fy_node_get_scalar_token(v)))
		return k;
	return v;
}



static bool name_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 64)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}

/* scheme://host[:port] with nothing after it (a "/" alone is dropped). */
char *gw_origin_normalise(const char *s)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *q = NULL, *user = NULL,
	     *frag = NULL, *out = NULL;
	if (!u || curl_url_set(u, CURLUPART_URL, s, 0) != CURLUE_OK)
		goto out;
	curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_PORT, &port, 0);
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	curl_url_get(u, CURLUPART_QUERY, &q, 0);
	curl_url_get(u, CURLUPART_USER, &user, 0);
	curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0);
	if (!scheme || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) || !host ||
	    q || user || frag || (path && strcmp(path, "/") != 0 && *path))
		goto out;
	out = port ? xasprintf("%s://%s:%s", scheme, host, port) : xasprintf("%s://%s", scheme, host);
out:
	curl_free(scheme), curl_free(host), curl_free(port), curl_free(path);
	curl_free(q), curl_free(user), curl_free(frag);
	curl_url_cleanup(u);
	return out;
}

/* Read a peer's key file: it must hold one word and be private. */
static int key_read(struct gw_peer *p, const char *name, struct fy_node *at, struct err **err)
{
	struct stat st;
	if (stat(p->key_file, &st) < 0)
		return gw_yaml_err(name, at, err, "key file '%s' of peer '%s': %s; expected a file holding the key that peer accepts",
			    p->key_file, p->name, strerror(errno));
	if (st.st_mode & 077)
		return gw_yaml_err(name, at, err,
			    "key file '%s' of peer '%s' has mode %04o; expected 0600 (chmod 600 '%s')",
			    p->key_file, p->name, (unsigned)(st.st_mode & 07777), p->key_file);
	struct err *e = NULL;
	_cleanup_free_ char *text = fs_read(p->key_file, 4096, NULL, &e);
	if (!text) {
		int rc = gw_yaml_err(name, at, err, "key file '%s' of peer '%s': %s", p->key_file, p->name,
			      e ? e->msg : "unreadable");
		err_free(e);
		return rc;
	}
	char *k = str_strip(text);
	bool bad = !*k || strpbrk(k, " \t\r\n");
	if (!bad)
		p->key = xstrdup(k);
	explicit_bzero(text, strlen(text));
	if (bad)
		return gw_yaml_err(name, at, err,
			    "key file '%s' of peer '%s' is empty or holds more than one word; expected the key alone",
			    p->key_file, p->name);
	return 0;
}

static int parse_peer(struct gw_peers *ps, struct fy_node *k, struct fy_node *v, const char *name,
		      const char *dir, struct err **err)
{
	const char *pn = gw_yaml_scalar(k);
	if (!name_ok(pn))
		return gw_yaml_err(name, k, err, "peer name '%s' is not valid; expected letters, digits, '-', '_' or '.'",
			    pn ? pn : "");
	for (size_t i = 0; i < ps->n; i++)
		if (!strcmp(ps->v[i].name, pn))
			return gw_yaml_err(name, k, err, "peer '%s' is declared twice; expected each peer once", pn);
	if (!v || !fy_node_is_mapping(v))
		return gw_yaml_err(name, at(v, k), err, "peer '%s' is not a mapping; expected origin: and key_file:", pn);
	ps->v = xrealloc(ps->v, (ps->n + 1) * sizeof(*ps->v));
	struct gw_peer *p = &ps->v[ps->n++];
	memset(p, 0, sizeof(*p));
	p->name = xstrdup(pn);
	int line, col;
	gw_yaml_mark(k, &line, &col);
	p->source = xasprintf("%s:%d:%d", name, line, col);
	void *it = NULL;
	struct fy_node_pair *fp;
	struct fy_node *key_at = NULL;
	while ((fp = fy_node_mapping_iterate(v, &it))) {
		struct fy_node *fk = fy_node_pair_key(fp), *fv = fy_node_pair_value(fp);
		const char *ks = gw_yaml_scalar(fk), *vs = gw_yaml_scalar(fv);
		if (ks && !strcmp(ks, "origin")) {
			if (!vs || !(p->origin = gw_origin_normalise(vs)))
				return gw_yaml_err(name, at(fv, fk), err,
					    "origin '%s' of peer '%s' is not valid; expected http(s)://HOST[:PORT] of its gateway",
					    vs ? vs : "", pn);
		} else if (ks && !strcmp(ks, "key_file")) {
			if (!vs || !*vs)
				return gw_yaml_err(name, at(fv, fk), err,
					    "key_file of peer '%s' is empty; expected a path", pn);
			p->key_file = vs[0] == '/' ? xstrdup(vs) : xasprintf("%s/%s", dir, vs);
			key_at = fv;
		} else {
			return gw_yaml_err(name, fk, err, "unknown key '%s' in peer '%s'; expected origin or key_file",
				    ks ? ks : "", pn);
		}
	}
	if (!p->origin)
		return gw_yaml_err(name, k, err, "peer '%s' has no origin; expected origin: http(s)://HOST[:PORT]", pn);
	if (p->key_file && key_read(p, name, key_at, err) < 0)
		return -1;
	return 0;
}

/* One entry of a role's fallback list: a peer name or {port: N}. */
static int parse_fallback_item(struct gw_peers *ps, const struct gw_config *c, int r,
			       struct fy_node *n, const char *name, struct err **err)
{
	const char *rn = role_name((enum role_id)r);
	struct gw_fallback f = { .peer = -1 };
	const char *pn = gw_yaml_scalar(n);
	if (pn) {
		for (size_t i = 0; i < ps->n; i++)
			if (!strcmp(ps->v[i].name, pn))
				f.peer = (int)i;
		if (f.peer < 0)
			return gw_yaml_err(name, n, err, "fallback '%s' of role '%s' is not a declared peer; expected a peer "
				    "declared under peers: or {port: N}", pn, rn);
		if (!ps->v[f.peer].key)
			return gw_yaml_err(name, n, err, "fallback peer '%s' of role '%s' has no key_file; expected the key "
				    "that peer accepts", pn, rn);
	} else {
		struct fy_node *pv = n && fy_node_is_mapping(n) && fy_node_mapping_item_count(n) == 1
					     ? fy_node_mapping_lookup_by_string(n, "port", FY_NT) : NULL;
		const char *ps_ = gw_yaml_scalar(pv);
		char *end = NULL;
		long port = ps_ ? strtol(ps_, &end, 10) : 0;
		if (!ps_ || *end || port < 1 || port > 65535)
			return gw_yaml_err(name, at(pv, n), err, "fallback of role '%s' is not valid; expected a peer "
				    "name or {port: N} (1-65535), another replica of its engine on this box", rn);
		if (c->roles[r].feasible && port == c->roles[r].port)
			return gw_yaml_err(name, pv, err, "fallback port %ld of role '%s' is its own engine's port; "
				    "expected another replica's", port, rn);
		f.port = (int)port;
	}
	for (size_t i = 0; i < ps->role[r].n_fb; i++)
		if (ps->role[r].fb[i].peer == f.peer && ps->role[r].fb[i].port == f.port)
			return gw_yaml_err(name, n, err, "fallback of role '%s' is listed twice; expected each once", rn);
	if (ps->role[r].n_fb == GW_FALLBACK_MAX)
		return gw_yaml_err(name, n, err, "role '%s' has more than %d fallbacks; expected at most %d", rn,
			    GW_FALLBACK_MAX, GW_FALLBACK_MAX);
	int line, col;
	gw_yaml_mark(n, &line, &col);
	f.source = xasprintf("%s:%d:%d", name, line, col);
	ps->role[r].fb[ps->role[r].n_fb++] = f;
	return 0;
}

static int parse_fallbacks(struct gw_peers *ps, const struct gw_config *c, int r,
			   struct fy_node *k, struct fy_node *v, const char *name, struct err **err)
{
	const char *rn = role_name((enum role_id)r);
	if (!v || !fy_node_is_sequence(v) || !fy_node_sequence_item_count(v))
		return gw_yaml_err(name, at(v, k), err, "fallback of role '%s' is not a list; expected [PEER | {port: N}, ...]",
			    rn);
	if (!c->roles[r].feasible && ps->role[r].mode != GW_PEER_PROXY)
		return gw_yaml_err(name, k, err, "role '%s' has a fallback but is neither served here nor proxied; "
			    "expected fallback only for a role with a primary", rn);
	void *it = NULL;
	struct fy_node *n;
	while ((n = fy_node_sequence_iterate(v, &it)))
		if (parse_fallback_item(ps, c, r, n, name, err) < 0)
			return -1;
	return 0;
}

static int parse_role(struct gw_peers *ps, const struct gw_config *c, struct fy_node *k,
		      struct fy_node *v, const char *name, struct err **err)
{
	const char *rn = gw_yaml_scalar(k);
	int r = rn ? role_from_name(rn) : -1;
	if (r < 0)
		return gw_yaml_err(name, k, err,
			    "'%s' is not a role; expected cortex, senses, hand, embedder or reranker",
			    rn ? rn : "");
	if (ps->role[r].source)
		return gw_yaml_err(name, k, err, "role '%s' is given twice; expected each role once", rn);
	if (!v || !fy_node_is_mapping(v) || fy_node_mapping_item_count(v) < 1)
		return gw_yaml_err(name, at(v, k), err,
			    "role '%s' is not a mapping; expected {refer: PEER}, {proxy: PEER} and/or {fallback: [...]}",
			    rn);
	struct fy_node *fk = NULL, *fv = NULL;
	void *it = NULL;
	struct fy_node_pair *fp;
	while ((fp = fy_node_mapping_iterate(v, &it))) {
		struct fy_node *mk = fy_node_pair_key(fp), *mv = fy_node_pair_value(fp);
		const char *ms = gw_yaml_scalar(mk), *pn = gw_yaml_scalar(mv);
		if (ms && !strcmp(ms, "fallback")) {
			fk = mk, fv = mv;
			continue;
		}
		enum gw_peer_mode mode = ms && !strcmp(ms, "refer")   ? GW_PEER_REFER
					 : ms && !strcmp(ms, "proxy") ? GW_PEER_PROXY
								      : GW_PEER_NONE;
		if (mode == GW_PEER_NONE)
			return gw_yaml_err(name, mk, err, "'%s' for role '%s' is not a mode; expected refer, proxy or fallback",
				    ms ? ms : "", rn);
		if (ps->role[r].mode != GW_PEER_NONE)
			return gw_yaml_err(name, mk, err, "role '%s' has both refer and proxy; expected one", rn);
		int pi = -1;
		for (size_t i = 0; pn && i < ps->n; i++)
			if (!strcmp(ps->v[i].name, pn))
				pi = (int)i;
		if (pi < 0)
			return gw_yaml_err(name, at(mv, mk), err, "role '%s' names peer '%s'; expected a peer declared under peers:",
				    rn, pn ? pn : "");
		if (c->roles[r].feasible)
			return gw_yaml_err(name, k, err,
				    "role '%s' is feasible on this box (profile '%s') and served here; expected %s only for a role this box does not serve",
				    rn, c->profile, ms);
		if (mode == GW_PEER_PROXY && !ps->v[pi].key)
			return gw_yaml_err(name, mv, err,
				    "role '%s' is proxied to peer '%s', which has no key_file; expected the key that peer accepts",
				    rn, pn);
		ps->role[r].mode = mode;
		ps->role[r].peer = pi;
	}
	if (fk && ps->role[r].mode == GW_PEER_REFER)
		return gw_yaml_err(name, fk, err, "role '%s' is referred and has a fallback; expected fallback only "
			    "for a role served here or proxied", rn);
	if (fk && parse_fallbacks(ps, c, r, fk, fv, name, err) < 0)
		return -1;
	int line, col;
	gw_yaml_mark(k, &line, &col);
	ps->role[r].source = xasprintf("%s:%d:%d", name, line, col);
	return 0;
}

struct gw_peers *gw_peers_parse(const struct gw_config *c, const char *text, size_t len,
				const char *name, const char *dir, struct err **err)
{
	_cleanup_(peers_freep) struct gw_peers *ps = xcalloc(1, sizeof(*ps));
	ps->path = xstrdup(name);
	for (int r = 0; r < ROLE__COUNT; r++)
		ps->role[r].peer = -1;
	struct fy_document *d = gw_yaml_parse(text, len, name, err);
	if (!d)
		return NULL;
	int rc = 0;
	struct fy_node *root = fy_document_root(d);
	struct fy_node *peers = NULL, *roles = NULL;
	if (root && !fy_node_is_null(root) && !fy_node_is_mapping(root)) {
		rc = gw_yaml_err(name, root, err, "the top level is not a mapping; expected box:, peers: and roles:");
		goto out;
	}
	void *it = NULL;
	struct fy_node_pair *p;
	while (root && fy_node_is_mapping(root) && (p = fy_node_mapping_iterate(root, &it))) {
		struct fy_node *k = fy_node_pair_key(p), *v = fy_node_pair_value(p);
		const char *ks = gw_yaml_scalar(k);
		if (ks && !strcmp(ks, "box")) {
			if (!name_ok(gw_yaml_scalar(v))) {
				rc = gw_yaml_err(name, at(v, k), err, "box name '%s' is not valid; expected letters, digits, '-', '_' or '.'",
					  gw_yaml_scalar(v) ? gw_yaml_scalar(v) : "");
				goto out;
			}
			ps->box = xstrdup(gw_yaml_scalar(v));
		} else if (ks && !strcmp(ks, "peers")) {
			peers = v;
		} else if (ks && !strcmp(ks, "roles")) {
			roles = v;
		} else {
			rc = gw_yaml_err(name, k, err, "unknown key '%s'; expected box, peers or roles", ks ? ks : "");
			goto out;
		}
	}
	if (peers && !fy_node_is_null(peers)) {
		if (!fy_node_is_mapping(peers)) {
			rc = gw_yaml_err(name, peers, err, "'peers' is not a mapping; expected NAME: {origin:, key_file:}");
			goto out;
		}
		it = NULL;
		while ((p = fy_node_mapping_iterate(peers, &it)))
			if ((rc = parse_peer(ps, fy_node_pair_key(p), fy_node_pair_value(p), name, dir, err)) < 0)
				goto out;
	}
	if (roles && !fy_node_is_null(roles)) {
		if (!fy_node_is_mapping(roles)) {
			rc = gw_yaml_err(name, roles, err, "'roles' is not a mapping; expected ROLE: {refer|proxy: PEER}");
			goto out;
		}
		it = NULL;
		while ((p = fy_node_mapping_iterate(roles, &it)))
			if ((rc = parse_role(ps, c, fy_node_pair_key(p), fy_node_pair_value(p), name, err)) < 0)
				goto out;
	}
	if (!ps->box)
		ps->box = xstrdup(c->profile ? c->profile : "box");
out:
	fy_document_destroy(d);
	return rc < 0 ? NULL : TAKE_PTR(ps);
}

int gw_peers_load(struct gw_config *c, struct err **err)
{
	_cleanup_free_ char *path = xasprintf("%s/peers.yaml", c->dir);
	if (!fs_exists(path))
		return 0;
	size_t len = 0;
	_cleanup_free_ char *text = fs_read(path, YAML_GUARD_MAX_BYTES, &len, err);
	if (!text)
		return -1;
	struct gw_peers *ps = gw_peers_parse(c, text, len, path, c->dir, err);
	if (!ps)
		return -1;
	for (int r = 0; r < ROLE__COUNT; r++) {
		if (ps->role[r].mode == GW_PEER_NONE)
			continue;
		free(c->roles[r].hosted_by);
		c->roles[r].hosted_by = xstrdup(ps->v[ps->role[r].peer].origin);
	}
	gw_peers_free(c->peers);
	c->peers = ps;
	return 0;
}

const struct gw_peer *gw_role_proxy_peer(const struct gw_config *c, int role)
{
	if (!c->peers || role < 0 || role >= ROLE__COUNT || c->roles[role].feasible ||
	    c->peers->role[role].mode != GW_PEER_PROXY)
		return NULL;
	return &c->peers->v[c->peers->role[role].peer];
}

const struct gw_fallback *gw_role_fallbacks(const struct gw_config *c, int role, size_t *n)
{
	*n = c->peers && role >= 0 && role < ROLE__COUNT ? c->peers->role[role].n_fb : 0;
	return *n ? c->peers->role[role].fb : NULL;
}

const char *gw_box_name(const struct gw_config *c)
{
	return c->peers && c->peers->box ? c->peers->box : c->profile;
}
