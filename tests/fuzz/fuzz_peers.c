/* fuzz_peers.c — an operator's peers.yaml (src/lib/gateway/peers.c): the
 * other boxes of the fleet and, per role this box does not serve, refer or
 * proxy. Input: the file's text. The box is a Thor-like one (hand and
 * senses infeasible); key files are looked up in a directory made once per
 * run that holds good ones (spark.key, orin.key: one word, mode 0600) and
 * bad ones (open.key 0644, empty.key, two.key with two words), so a
 * proxied role can be reached and every key_file refusal too.
 * Invariants: an error is EXIT_CONFIG with "peers.yaml:L:C: " (see fuzz.h);
 * on success every referred or proxied role is infeasible here and names a
 * declared peer, every origin is http(s)://, a proxied role's peer has a
 * key, and the box has a name. See fuzz.h. */
#include <stdbool.h>
#include <unistd.h>

#include "../../src/lib/gateway/gateway.h"
#include "fuzz.h"

static char keydir[] = "/tmp/lobes-fuzz-peers-XXXXXX";

static void keydir_remove(void)
{
	static const char *const names[] = { "spark.key", "orin.key", "open.key", "empty.key", "two.key" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char p[128];
		snprintf(p, sizeof(p), "%s/%s", keydir, names[i]);
		unlink(p);
	}
	rmdir(keydir);
}

static void key(const char *name, const char *text, mode_t mode)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", keydir, name);
	FILE *f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0 || chmod(p, mode) != 0)
		abort();
}

/* The key directory, made on the first input. */
static const char *keys(void)
{
	static bool made;
	if (!made) {
		if (!mkdtemp(keydir))
			abort();
		key("spark.key", "spark-secret\n", 0600);
		key("orin.key", "orin-secret", 0600);
		key("open.key", "open-secret\n", 0644);
		key("empty.key", "", 0600);
		key("two.key", "two words\n", 0600);
		atexit(keydir_remove);
		made = true;
	}
	return keydir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gw_config c = { .refs = 1, .profile = (char *)"thor", .card = (char *)"thor" };
	for (int r = 0; r < ROLE__COUNT; r++)
		c.roles[r].feasible = r != ROLE_HAND && r != ROLE_SENSES;
	_cleanup_free_ char *text = fuzz_cstr(data, size);
	struct err *e = NULL;
	struct gw_peers *p = gw_peers_parse(&c, text, size, "peers.yaml", keys(), &e);
	fuzz_check_err(p ? 0 : -1, e);
	if (!p)
		return 0;
	if (!p->box || !*p->box)
		abort();
	for (size_t i = 0; i < p->n; i++)
		if (strncmp(p->v[i].origin, "http://", 7) != 0 && strncmp(p->v[i].origin, "https://", 8) != 0)
			abort();
	for (int r = 0; r < ROLE__COUNT; r++) {
		if (p->role[r].mode == GW_PEER_NONE)
			continue;
		if (c.roles[r].feasible || p->role[r].peer < 0 || (size_t)p->role[r].peer >= p->n)
			abort();
		if (p->role[r].mode == GW_PEER_PROXY && !p->v[p->role[r].peer].key)
			abort();
	}
	gw_peers_free(p);
	return 0;
}
