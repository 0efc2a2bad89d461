/*
 * keys_file.c — `lobes keys` edits of <deploy-dir>/keys.yaml (keys.h).
 *
 * An edit reads and checks the whole file (a bad one is refused with its
 * position, nothing written), applies one change, writes the file anew
 * (mode 0600; comments are not kept) as one commit under the deploy dir's
 * lock (deploy_put_files): the commit is refused when another writer
 * changed the file since it was read. A new key is 256 bits from
 * getrandom(2), written as "sk-lobes-" and 64 hex digits; only its SHA-256
 * is stored, and the key is handed to the caller once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../deploy/deploy.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "gateway.h"

char *gw_key_generate(struct err **err)
{
	unsigned char r[32];
	size_t got = 0;
	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err_errno(err, EXIT_RUNTIME, errno, "getrandom");
			return NULL;
		}
		got += (size_t)n;
	}
	static const char hex[] = "0123456789abcdef";
	char *k = xcalloc(1, 9 + 2 * sizeof(r) + 1);
	memcpy(k, "sk-lobes-", 9);
	for (size_t i = 0; i < sizeof(r); i++) {
		k[9 + 2 * i] = hex[r[i] >> 4];
		k[10 + 2 * i] = hex[r[i] & 15];
	}
	explicit_bzero(r, sizeof(r));
	return k;
}

char *gw_keys_render(const struct gw_keys *ks)
{
	static const char hex[] = "0123456789abcdef";
	struct buf b;
	buf_init(&b, 0);
	buf_adds(&b, "# keys.yaml: the named API keys of this box's gateway (docs/gateway.md).\n"
		     "# Written by `lobes keys`; each key is stored as its SHA-256 only.\n");
	buf_adds(&b, ks->n_named ? "keys:\n" : "keys: []\n");
	for (size_t i = 0; i < ks->n_named; i++) {
		const struct gw_key *k = &ks->v[i];
		char h[2 * GW_KEY_HASH_BYTES + 1];
		for (int j = 0; j < GW_KEY_HASH_BYTES; j++) {
			h[2 * j] = hex[k->hash[j] >> 4];
			h[2 * j + 1] = hex[k->hash[j] & 15];
		}
		h[2 * GW_KEY_HASH_BYTES] = 0;
		buf_printf(&b, "  - name: \"%s\"\n    hash: sha256:%s\n", k->name, h);
		if (k->roles) {
			buf_adds(&b, "    roles: [");
			const char *sep = "";
			for (int r = 0; r < ROLE__COUNT; r++)
				if (k->roles & (1u << r)) {
					buf_printf(&b, "%s%s", sep, role_name((enum role_id)r));
					sep = ", ";
				}
			buf_adds(&b, "]\n");
		}
		if (k->rpm)
			buf_printf(&b, "    requests_per_minute: %ld\n", k->rpm);
		if (k->tpm)
			buf_printf(&b, "    tokens_per_minute: %ld\n", k->tpm);
		if (k->concurrent)
			buf_printf(&b, "    concurrent: %ld\n", k->concurrent);
		if (k->peer)
			buf_adds(&b, "    peer: true\n");
	}
	return buf_take(&b);
}

static int roles_of(const char *list, unsigned *out, struct err **err)
{
	_cleanup_free_ char *copy = xstrdup(list);
	char *save = NULL;
	*out = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *w = str_strip(t);
		int r = role_from_name(w);
		if (r < 0)
			return err_set(err, EXIT_USAGE, "--roles: '%s' is not a role; expected a comma-"
				       "separated list of cortex, senses, hand, embedder, reranker", w);
		*out |= 1u << r;
	}
	if (!*out)
		return err_set(err, EXIT_USAGE, "--roles is empty; expected a comma-separated list of roles");
	return 0;
}

static struct gw_key *find(struct gw_keys *ks, const char *name)
{
	for (size_t i = 0; i < ks->n_named; i++)
		if (!strcmp(ks->v[i].name, name))
			return &ks->v[i];
	return NULL;
}

static void set_hash(struct gw_key *k, const char *secret)
{
	char t[GW_KEY_HASH_TEXT];
	gw_key_hash_text(secret, t);
	for (int i = 0; i < GW_KEY_HASH_BYTES; i++) {
		char pair[3] = { t[7 + 2 * i], t[8 + 2 * i], 0 };
		k->hash[i] = (unsigned char)strtoul(pair, NULL, 16);
	}
	explicit_bzero(t, sizeof(t));
}

/* Apply e to ks in memory; a new key's value in *secret. */
static int edit(struct gw_keys *ks, const struct gw_keys_edit *e, const char *path, char **secret,
		struct err **err)
{
	struct gw_key *k = find(ks, e->name);
	if (e->op == GW_KEYS_ADD) {
		if (!gw_key_name_ok(e->name))
			return err_set(err, EXIT_USAGE, "key name '%s' is not valid; expected 1-64 of "
				       "A-Z a-z 0-9 - _ . (not default, none, unknown or other)", e->name);
		if (k)
			return err_set(err, EXIT_CONFIG, "key '%s' exists already in %s; rotate it with "
				       "`lobes keys rotate %s` or pick another name", e->name, path, e->name);
		unsigned roles = 0;
		if (e->roles && roles_of(e->roles, &roles, err) < 0)
			return -1;
		if (!(*secret = gw_key_generate(err)))
			return -1;
		ks->v = xrealloc(ks->v, (ks->n_named + 1) * sizeof(*ks->v));
		k = &ks->v[ks->n_named++];
		ks->n = ks->n_named;
		memset(k, 0, sizeof(*k));
		k->name = xstrdup(e->name);
		k->source = xstrdup(path);
		k->roles = roles;
		k->rpm = e->rpm;
		k->tpm = e->tpm;
		k->concurrent = e->concurrent;
		k->peer = e->peer;
		set_hash(k, *secret);
		return 0;
	}
	if (!k)
		return err_set(err, EXIT_CONFIG, "no key named '%s' in %s; `lobes keys list` shows them",
			       e->name, path);
	if (e->op == GW_KEYS_ROTATE) {
		if (!(*secret = gw_key_generate(err)))
			return -1;
		set_hash(k, *secret);
		return 0;
	}
	free(k->name);
	free(k->source);
	size_t i = (size_t)(k - ks->v);
	memmove(k, k + 1, (ks->n_named - i - 1) * sizeof(*k));
	ks->n = --ks->n_named;
	return 0;
}

int gw_keys_apply(const char *dir, const struct gw_keys_edit *e, char **secret, struct err **err)
{
	*secret = NULL;
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *path = xasprintf("%s/keys.yaml", dir);
	struct gw_keys *ks = gw_keys_read_text(dir, &text, err);
	if (!ks)
		return -1;
	int rc = edit(ks, e, path, secret, err);
	_cleanup_free_ char *out = rc < 0 ? NULL : gw_keys_render(ks);
	gw_keys_free(ks);
	if (rc == 0) {
		struct deploy_put p = { .name = "keys.yaml", .expect = text, .data = out, .mode = 0600 };
		rc = deploy_put_files(dir, &p, 1, 0, err);
	}
	if (rc < 0 && *secret) {
		explicit_bzero(*secret, strlen(*secret));
		free(*secret);
		*secret = NULL;
	}
	return rc;
}
