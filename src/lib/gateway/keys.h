/*
 * keys.h — the gateway's API keys: <deploy-dir>/keys.yaml (named keys, each
 * stored as a hash) and the single gateway.key, which stays one unnamed key
 * named "default". Read with the rest of the settings (config.c) into the
 * snapshot, so a SIGHUP swaps them whole with it.
 *
 *   keys:
 *     - name: alice
 *       hash: sha256:<64 hex digits>   # of the key; the key itself is never stored
 *       roles: [cortex, hand]          # optional allowlist (403 role_not_allowed)
 *       requests_per_minute: 60        # optional limits (429 rate_limited)
 *       tokens_per_minute: 100000
 *       concurrent: 4
 *     - name: spark
 *       hash: sha256:...
 *       peer: true                     # a peer box's key: its X-Lobes-Hop is believed
 *
 * The file must be 0600 and one YAML document; every error is EXIT_CONFIG
 * "PATH:LINE:COLUMN: what; expected what". Names are 1-64 of
 * A-Z a-z 0-9 - _ . ; "default", "none", "unknown" and "other" are the
 * gateway's own label values and may not name a key.
 */
#ifndef LOBES_GATEWAY_KEYS_H
#define LOBES_GATEWAY_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/err.h"

#define GW_KEY_HASH_BYTES 32
#define GW_KEY_DEFAULT "default"

struct gw_key {
	char *name;
	unsigned char hash[GW_KEY_HASH_BYTES]; /* SHA-256 of the key */
	unsigned roles;        /* bit (1 << role) per role allowed; 0: every role */
	long rpm, tpm;         /* requests / tokens per minute; 0: no limit */
	long concurrent;       /* requests at once; 0: no limit */
	bool peer;             /* a peer box's key: X-Lobes-Hop believed */
	char *source;          /* "PATH:L:C" of its entry, or "file PATH" for the default key */
};

struct gw_keys {
	char *path;            /* keys.yaml, NULL when absent */
	struct gw_key *v;      /* the named keys, then "default" (gateway.key) when set */
	size_t n;
	size_t n_named;        /* of v, from keys.yaml */
};

struct gw_config;

/* SHA-256 of secret as written in keys.yaml: "sha256:" and 64 hex digits
 * (out holds GW_KEY_HASH_TEXT bytes). */
#define GW_KEY_HASH_TEXT 72
void gw_key_hash_text(const char *secret, char out[GW_KEY_HASH_TEXT]);
/* A key name as keys.yaml allows it (reserved names are not). */
bool gw_key_name_ok(const char *name);
/* Parse keys.yaml text (name: its path, for positions). */
struct gw_keys *gw_keys_parse(const char *text, size_t len, const char *name, struct err **err);
void gw_keys_free(struct gw_keys *k);
/* Read <c->dir>/keys.yaml when it exists (0600 required) and add the default
 * key (c->key) after its entries: c->keys; NULL when there is no key at all. */
int gw_keys_load(struct gw_config *c, struct err **err);

/* Does c ask for a key at all (a keys.yaml entry or gateway.key)? */
bool gw_auth_required(const struct gw_config *c);
/* The key an Authorization header value names ("Bearer KEY"), compared by
 * hash in constant time over every key; NULL when none matches. */
const struct gw_key *gw_key_of(const struct gw_config *c, const char *authorization);
/* May k's requests go to role? (NULL k: a gateway without keys.) */
bool gw_key_allows(const struct gw_key *k, int role);
/* Is an X-Lobes-Hop header believed on a request with key k? Only from a
 * peer key; the default key counts as one while keys.yaml marks none (the
 * boxes of a fleet shared the one inbound key before named keys); a gateway
 * without any key (loopback only) believes it, so two such boxes can never
 * proxy a request to each other in a loop. */
bool gw_key_hop_trusted(const struct gw_config *c, const struct gw_key *k);

/* ---- keys_file.c: `lobes keys` edits of keys.yaml ---- */

enum gw_keys_op { GW_KEYS_ADD, GW_KEYS_REVOKE, GW_KEYS_ROTATE };

struct gw_keys_edit {
	enum gw_keys_op op;
	const char *name;
	const char *roles;  /* add: "a,b" or NULL */
	long rpm, tpm, concurrent; /* add: 0 none */
	bool peer;
};

/* A new key: "sk-lobes-" and 64 hex digits from getrandom(2) (caller
 * frees, wiping it). NULL with *err when the system has no randomness. */
char *gw_key_generate(struct err **err);
/* keys.yaml text for the named keys of k (comments are not kept). */
char *gw_keys_render(const struct gw_keys *k);
/* Apply e to <dir>/keys.yaml as one commit under the deploy dir's lock
 * (0600): add and rotate set *secret to the new key (the caller prints it
 * once and wipes it); a bad file, an unknown name (revoke, rotate), a name
 * taken (add), a bad role list: EXIT_CONFIG / EXIT_USAGE, nothing written. */
int gw_keys_apply(const char *dir, const struct gw_keys_edit *e, char **secret, struct err **err);
/* The named keys of <dir>/keys.yaml (an absent file: none); NULL on error. */
struct gw_keys *gw_keys_read_dir(const char *dir, struct err **err);
/* The same, and the file's text in *text (NULL when absent; caller frees). */
struct gw_keys *gw_keys_read_text(const char *dir, char **text, struct err **err);

#endif
