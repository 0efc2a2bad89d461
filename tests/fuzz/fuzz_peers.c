/* fuzz_peers.c — an operator's peers.yaml (src/lib/gateway/peers.c): the
 * other boxes of the fleet and, per role this box does not serve, refer or
 * proxy. Input: the file's text. The box is a Thor-like one (hand and
 * senses infeasible); key files are looked up under a directory that does
 * not exist, so any key_file is an error with a position.
 * Invariants: an error is EXIT_CONFIG with "peers.yaml:L:C: " (see fuzz.h);
 * on success every referred or proxied role is infeasible here and names a
 * declared peer, every origin is http(s)://, a proxied role's peer has a
 * key, and the box has a name. See fuzz.h. */
#include "../../src/lib/gateway/gateway.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gw_config c = { .refs = 1, .profile = (char *)"thor", .card = (char *)"thor" };
	for (int r = 0; r < ROLE__COUNT; r++)
		c.roles[r].feasible = r != ROLE_HAND && r != ROLE_SENSES;
	_cleanup_free_ char *text = fuzz_cstr(data, size);
	struct err *e = NULL;
	struct gw_peers *p = gw_peers_parse(&c, text, size, "peers.yaml", "/nonexistent-dir", &e);
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
