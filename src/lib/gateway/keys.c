/*
 * keys.c — load <deploy-dir>/keys.yaml (format in keys.h), and find the key
 * a request names.
 *
 * Only a hash of each key is stored: SHA-256 by Nettle, which the build
 * already links through libmicrohttpd's GnuTLS (libmicrohttpd-dev depends
 * on libgnutls28-dev, which depends on nettle-dev), so no library is added.
 * A plain, unsalted hash is enough for these keys: `lobes keys` makes each
 * one from 256 random bits, so no dictionary or table can reverse it, and
 * one hash per request lets the gateway compare a caller's key with every
 * key in constant time. A slow password hash would add milliseconds to each
 * request for nothing.
 *
 * Strict like peers.yaml: one document, unknown keys, a duplicate name, a
 * bad hash, role or limit are errors with file:line:column.
 */
#include <errno.h>
#include <libfyaml.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/yaml_guard.h"
#include "../util/yaml_scalar.h"
#include "gateway.h"

static const char *const reserved[] = { GW_KEY_DEFAULT, "none", "unknown", "other", NULL };

static void key_free(struct gw_key *k)
{
	free(k->name);
	free(k->source);
	explicit_bzero(k->hash, sizeof(k->hash));
}

void gw_keys_free(struct gw_keys *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		key_free(&k->v[i]);
	free(k->v);
	free(k->path);
	free(k);
}

static void keys_freep(struct gw_keys **k) { gw_keys_free(*k); }

static void hash_of(const char *secret, unsigned char out[GW_KEY_HASH_BYTES])
{
	struct sha256_ctx h;
	sha256_init(&h);
	sha256_update(&h, strlen(secret), (const uint8_t *)secret);
	sha256_digest(&h, SHA256_DIGEST_SIZE, out);
	explicit_bzero(&h, sizeof(h));
}

void gw_key_hash_text(const char *secret, char out[GW_KEY_HASH_TEXT])
{
	unsigned char d[GW_KEY_HASH_BYTES];
	hash_of(secret, d);
	static const char hex[] = "0123456789abcdef";
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < GW_KEY_HASH_BYTES; i++) {
		out[7 + 2 * i] = hex[d[i] >> 4];
		out[8 + 2 * i] = hex[d[i] & 15];
	}
	out[7 + 2 * GW_KEY_HASH_BYTES] = 0;
	explicit_bzero(d, sizeof(d));
}

bool gw_key_name_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 64 || *s == '-' || *s == '.')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return false;
	for (const char *const *r = reserved; *r; r++)
		if (!strcasecmp(s, *r))
			return false;
	return true;
}




static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int parse_hash(struct gw_key *k, struct fy_node *v, const char *name, struct err **err)
{
	const char *s = gw_yaml_scalar(v);
	bool ok = s && strlen(s) == 7 + 2 * GW_KEY_HASH_BYTES && !strncmp(s, "sha256:", 7);
	for (int i = 0; ok && i < GW_KEY_HASH_BYTES; i++) {
		int hi = hex_digit(s[7 + 2 * i]), lo = hex_digit(s[8 + 2 * i]);
		ok = hi >= 0 && lo >= 0;
		k->hash[i] = (unsigned char)(hi * 16 + lo);
	}
	if (!ok)
		return gw_yaml_err(name, v, err, "hash of key '%s' is not valid; expected sha256: and 64 "
			    "lower-case hex digits (`lobes keys add` writes it)", k->name);
	return 0;
}

static int parse_roles(struct gw_key *k, struct fy_node *at, struct fy_node *v, const char *name,
		       struct err **err)
{
	if (!v || !fy_node_is_sequence(v) || !fy_node_sequence_item_count(v))
		return gw_yaml_err(name, v && fy_node_is_scalar(v) ? v : at, err, "roles of key '%s' is not a list of roles; expected e.g. "
			    "[cortex, hand] (leave it out for every role)", k->name);
	void *it = NULL;
	struct fy_node *n;
	while ((n = fy_node_sequence_iterate(v, &it))) {
		const char *s = gw_yaml_scalar(n);
		int r = s ? role_from_name(s) : -1;
		if (r < 0)
			return gw_yaml_err(name, n, err, "'%s' in roles of key '%s' is not a role; expected cortex, "
				    "senses, hand, embedder or reranker", s ? s : "", k->name);
		k->roles |= 1u << r;
	}
	return 0;
}

static int parse_limit(long *out, struct fy_node *v, const char *what, const char *kname,
		       const char *name, struct err **err)
{
	const char *s = gw_yaml_scalar(v);
	char *end;
	errno = 0;
	long n = s ? strtol(s, &end, 10) : -1;
	if (!s || errno || end == s || *end || n < 1 || n > 1000000000L)
		return gw_yaml_err(name, v, err, "%s of key '%s' is '%s'; expected a whole number 1-1000000000",
			    what, kname, s ? s : "");
	*out = n;
	return 0;
}

/* One entry of the keys list. */
static int parse_key(struct gw_keys *ks, struct fy_node *e, const char *name, struct err **err)
{
	if (!fy_node_is_mapping(e))
		return gw_yaml_err(name, e, err, "a key entry is not a mapping; expected name:, hash: and "
			    "optional roles:, requests_per_minute:, tokens_per_minute:, concurrent:, peer:");
	struct fy_node *nn = fy_node_mapping_lookup_by_string(e, "name", -1);
	const char *kn = gw_yaml_scalar(nn);
	if (!gw_key_name_ok(kn))
		return gw_yaml_err(name, nn ? nn : e, err, "key name '%s' is not valid; expected 1-64 of "
			    "A-Z a-z 0-9 - _ . (not default, none, unknown or other)", kn ? kn : "");
	for (size_t i = 0; i < ks->n; i++)
		if (!strcmp(ks->v[i].name, kn))
			return gw_yaml_err(name, nn, err, "key name '%s' is used twice (first at %s); expected "
				    "each name once", kn, ks->v[i].source);
	ks->v = xrealloc(ks->v, (ks->n + 1) * sizeof(*ks->v));
	struct gw_key *k = &ks->v[ks->n++];
	memset(k, 0, sizeof(*k));
	k->name = xstrdup(kn);
	int line, col;
	gw_yaml_mark(nn, &line, &col);
	k->source = xasprintf("%s:%d:%d", name, line, col);
	bool hashed = false;
	void *it = NULL;
	struct fy_node_pair *p;
	while ((p = fy_node_mapping_iterate(e, &it))) {
		struct fy_node *fk = fy_node_pair_key(p), *fv = fy_node_pair_value(p);
		const char *f = gw_yaml_scalar(fk);
		int rc = 0;
		if (f && !strcmp(f, "name"))
			continue;
		if (f && !strcmp(f, "hash"))
			rc = parse_hash(k, fv, name, err), hashed = true;
		else if (f && !strcmp(f, "roles"))
			rc = parse_roles(k, fk, fv, name, err);
		else if (f && !strcmp(f, "requests_per_minute"))
			rc = parse_limit(&k->rpm, fv, f, kn, name, err);
		else if (f && !strcmp(f, "tokens_per_minute"))
			rc = parse_limit(&k->tpm, fv, f, kn, name, err);
		else if (f && !strcmp(f, "concurrent"))
			rc = parse_limit(&k->concurrent, fv, f, kn, name, err);
		else if (f && !strcmp(f, "peer")) {
			const char *b = gw_yaml_scalar(fv);
			if (!b || (strcmp(b, "true") && strcmp(b, "false")))
				rc = gw_yaml_err(name, fv, err, "peer of key '%s' is '%s'; expected true or false",
					  kn, b ? b : "");
			k->peer = b && !strcmp(b, "true");
		} else
			rc = gw_yaml_err(name, fk, err, "unknown key '%s' in key '%s'; expected name, hash, roles, "
				  "requests_per_minute, tokens_per_minute, concurrent or peer", f ? f : "", kn);
		if (rc < 0)
			return -1;
	}
	if (!hashed)
		return gw_yaml_err(name, nn, err, "key '%s' has no hash; expected hash: sha256:<64 hex digits>",
			    kn);
	return 0;
}

struct gw_keys *gw_keys_parse(const char *text, size_t len, const char *name, struct err **err)
{
	struct fy_document *d = gw_yaml_parse(text, len, name, err);
	if (!d)
		return NULL;
	_cleanup_(keys_freep) struct gw_keys *ks = xcalloc(1, sizeof(*ks));
	struct fy_node *root = fy_document_root(d);
	int rc = 0;
	if (root && !fy_node_is_null(root) && !fy_node_is_mapping(root)) {
		rc = gw_yaml_err(name, root, err, "the top level is not a mapping; expected `keys:`");
		goto out;
	}
	void *it = NULL;
	struct fy_node_pair *p;
	while (root && !fy_node_is_null(root) && (p = fy_node_mapping_iterate(root, &it))) {
		struct fy_node *k = fy_node_pair_key(p), *v = fy_node_pair_value(p);
		const char *ks_ = gw_yaml_scalar(k);
		if (!ks_ || strcmp(ks_, "keys") != 0) {
			rc = gw_yaml_err(name, k, err, "unknown key '%s'; expected keys", ks_ ? ks_ : "");
			goto out;
		}
		if (!v || fy_node_is_null(v))
			continue;
		if (!fy_node_is_sequence(v)) {
			rc = gw_yaml_err(name, v, err, "'keys' is not a list; expected `- name: NAME` entries");
			goto out;
		}
		void *it2 = NULL;
		struct fy_node *e;
		while ((e = fy_node_sequence_iterate(v, &it2)))
			if ((rc = parse_key(ks, e, name, err)) < 0)
				goto out;
	}
	ks->n_named = ks->n;
out:
	fy_document_destroy(d);
	return rc < 0 ? NULL : TAKE_PTR(ks);
}

/* keys.yaml of dir into *out (NULL when absent); its mode must be 0600.
 * text_out, when given, gets the file's text. */
static int keys_file_read(const char *dir, char **text_out, struct gw_keys **out, struct err **err)
{
	*out = NULL;
	_cleanup_free_ char *path = xasprintf("%s/keys.yaml", dir);
	struct stat st;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : err_errno(err, EXIT_CONFIG, errno, "keys file '%s'", path);
	if (st.st_mode & 077)
		return err_set(err, EXIT_CONFIG, "keys file '%s' has mode %04o; expected 0600 (chmod 600 '%s')",
			       path, (unsigned)(st.st_mode & 07777), path);
	size_t len = 0;
	char *text = fs_read(path, YAML_GUARD_MAX_BYTES, &len, err);
	if (!text)
		return -1;
	struct gw_keys *ks = gw_keys_parse(text, len, path, err);
	if (ks)
		ks->path = xstrdup(path);
	if (text_out && ks)
		*text_out = text;
	else
		free(text);
	*out = ks;
	return ks ? 0 : -1;
}

struct gw_keys *gw_keys_read_text(const char *dir, char **text, struct err **err)
{
	struct gw_keys *ks;
	*text = NULL;
	if (keys_file_read(dir, text, &ks, err) < 0)
		return NULL;
	return ks ? ks : xcalloc(1, sizeof(*ks));
}

struct gw_keys *gw_keys_read_dir(const char *dir, struct err **err)
{
	struct gw_keys *ks;
	if (keys_file_read(dir, NULL, &ks, err) < 0)
		return NULL;
	return ks ? ks : xcalloc(1, sizeof(*ks));
}

int gw_keys_load(struct gw_config *c, struct err **err)
{
	struct gw_keys *ks;
	if (keys_file_read(c->dir, NULL, &ks, err) < 0)
		return -1;
	if (c->key) {
		if (!ks)
			ks = xcalloc(1, sizeof(*ks));
		bool any_peer = false;
		for (size_t i = 0; i < ks->n; i++)
			any_peer |= ks->v[i].peer;
		ks->v = xrealloc(ks->v, (ks->n + 1) * sizeof(*ks->v));
		struct gw_key *k = &ks->v[ks->n++];
		memset(k, 0, sizeof(*k));
		k->name = xstrdup(GW_KEY_DEFAULT);
		hash_of(c->key, k->hash);
		k->peer = !any_peer;
		k->source = xstrdup(c->key_source ? c->key_source : "gateway.key");
	}
	c->keys = ks;
	return 0;
}

bool gw_auth_required(const struct gw_config *c)
{
	return c->keys && c->keys->n > 0;
}

const struct gw_key *gw_key_of(const struct gw_config *c, const char *authorization)
{
	if (!gw_auth_required(c) || !authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
		return NULL;
	const char *cand = authorization + 7;
	while (*cand == ' ')
		cand++;
	unsigned char h[GW_KEY_HASH_BYTES];
	hash_of(cand, h);
	const struct gw_key *hit = NULL;
	for (size_t i = 0; i < c->keys->n; i++) { /* every key, whatever matches */
		volatile unsigned char d = 0;
		for (int j = 0; j < GW_KEY_HASH_BYTES; j++)
			d |= h[j] ^ c->keys->v[i].hash[j];
		if (d == 0 && !hit)
			hit = &c->keys->v[i];
	}
	return hit;
}

bool gw_key_allows(const struct gw_key *k, int role)
{
	return !k || !k->roles || (role >= 0 && (k->roles & (1u << role)));
}

bool gw_key_hop_trusted(const struct gw_config *c, const struct gw_key *k)
{
	return !gw_auth_required(c) || (k && k->peer);
}
