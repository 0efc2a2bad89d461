/*
 * test_peers.c — gateway/peers.c: every way a peers.yaml can be wrong, each
 * refused with its file:line:column and the words that say what was
 * expected; the key file's checks (absent, readable by others, a
 * directory, empty, two words); and what a good file gives: the box name,
 * each role's mode, peer and position, the key stripped and kept, the
 * hosted_by a load sets. tests/cases/peers.t runs the file through the
 * command line; this pins each refusal's position and text.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/gateway/gateway.h"
#include "../../src/lib/util/fs.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lobes-peers.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	/* spark.key: a good key; wide.key: 0640; two.key: two words; empty.key */
	const struct { const char *name, *text; mode_t mode; } keys[] = {
		{ "spark.key", "  k-spark-1\n", 0600 }, { "wide.key", "k\n", 0640 },
		{ "two.key", "k1 k2\n", 0600 },         { "empty.key", " \n", 0600 },
		{ "orin.key", "k-orin", 0400 },
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, keys[i].name);
		FILE *f = fopen(p, "w");
		if (!f)
			return -1;
		fputs(keys[i].text, f);
		fclose(f);
		if (chmod(p, keys[i].mode) < 0)
			return -1;
	}
	_cleanup_free_ char *sub = xasprintf("%s/adir.key", dir);
	return mkdir(sub, 0700);
}

static int teardown(void **state)
{
	(void)state;
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A Thor-like box: cortex and embedder served here, the rest not. */
static struct gw_config box(void)
{
	struct gw_config c = { .profile = (char *)"thor" };
	c.roles[ROLE_CORTEX].feasible = true;
	c.roles[ROLE_EMBEDDER].feasible = true;
	return c;
}

/* The error parsing TEXT gives (NULL: it parsed). */
static char *refusal(const char *text)
{
	struct gw_config c = box();
	struct err *e = NULL;
	struct gw_peers *p = gw_peers_parse(&c, text, strlen(text), "peers.yaml", dir, &e);
	if (p) {
		assert_null(e);
		gw_peers_free(p);
		return NULL;
	}
	return test_err_msg(e, EXIT_CONFIG);
}

#define REFUSED(text, want)                                          \
	do {                                                         \
		_cleanup_free_ char *_m = refusal(text);             \
		if (!_m)                                             \
			fail_msg("accepted: %s", text);              \
		if (strcmp(_m, want) != 0)                           \
			fail_msg("refusal\n  got  %s\n  want %s", _m, want); \
	} while (0)

#define SPARK "peers:\n  spark:\n    origin: http://10.0.0.2:8001\n    key_file: spark.key\n"

static void test_top_level(void **state)
{
	(void)state;
	REFUSED("- a\n- b\n", "peers.yaml:1:3: the top level is not a mapping; expected box:, peers: and roles:");
	REFUSED("box: thor\ncolour: red\n", "peers.yaml:2:1: unknown key 'colour'; expected box, peers or roles");
	REFUSED("box: th/or\n",
		"peers.yaml:1:6: box name 'th/or' is not valid; expected letters, digits, '-', '_' or '.'");
	REFUSED("box: [a]\n",
		"peers.yaml:1:7: box name '' is not valid; expected letters, digits, '-', '_' or '.'");
	REFUSED("box: ''\n", "peers.yaml:1:7: box name '' is not valid; expected letters, digits, '-', '_' or '.'");
	/* 64 characters is a name, 65 is not */
	char name[80], text[100];
	memset(name, 'a', 64);
	name[64] = 0;
	snprintf(text, sizeof(text), "box: %s\n", name);
	assert_null(refusal(text));
	name[64] = 'a', name[65] = 0;
	snprintf(text, sizeof(text), "box: %s\n", name);
	_cleanup_free_ char *m = refusal(text);
	assert_non_null(m);
	assert_string_contains(m, "peers.yaml:1:6: box name");
	REFUSED("peers: [a]\n", "peers.yaml:1:9: 'peers' is not a mapping; expected NAME: {origin:, key_file:}");
	REFUSED("roles: x\n", "peers.yaml:1:8: 'roles' is not a mapping; expected ROLE: {refer|proxy: PEER}");
	/* an empty file is refused; empty sections declare nothing */
	REFUSED("", "peers.yaml:1:1: invalid YAML: parse error; expected a mapping");
	assert_null(refusal("peers:\nroles:\n"));
}

static void test_peer_entries(void **state)
{
	(void)state;
	REFUSED("peers:\n  sp ark: {origin: http://h}\n",
		"peers.yaml:2:3: peer name 'sp ark' is not valid; expected letters, digits, '-', '_' or '.'");
	REFUSED("peers:\n  spark: http://h\n",
		"peers.yaml:2:10: peer 'spark' is not a mapping; expected origin: and key_file:");
	REFUSED("peers:\n  spark:\n",
		"peers.yaml:2:3: peer 'spark' is not a mapping; expected origin: and key_file:");
	REFUSED("peers:\n  spark: {key_file: spark.key}\n",
		"peers.yaml:2:3: peer 'spark' has no origin; expected origin: http(s)://HOST[:PORT]");
	REFUSED("peers:\n  spark: {origin: http://h, colour: red}\n",
		"peers.yaml:2:29: unknown key 'colour' in peer 'spark'; expected origin or key_file");
	REFUSED("peers:\n  spark: {origin: http://h, key_file: ''}\n",
		"peers.yaml:2:40: key_file of peer 'spark' is empty; expected a path");
	REFUSED("peers:\n  spark: {origin: [http://h]}\n",
		"peers.yaml:2:20: origin '' of peer 'spark' is not valid; expected http(s)://HOST[:PORT] of its gateway");
	const char *bad_origins[] = { "ftp://h:1", "http://h/v1", "http://h?x=1", "http://u@h",
				      "http://h#f", "h:8001", "not a url" };
	for (size_t i = 0; i < sizeof(bad_origins) / sizeof(bad_origins[0]); i++) {
		_cleanup_free_ char *t = xasprintf("peers:\n  spark: {origin: '%s'}\n", bad_origins[i]);
		_cleanup_free_ char *want = xasprintf("peers.yaml:2:20: origin '%s' of peer 'spark' is not valid; "
						      "expected http(s)://HOST[:PORT] of its gateway",
						      bad_origins[i]);
		REFUSED(t, want);
	}
}

/* The refusal of a peer whose key_file is FILE (under the deploy dir) is
 * "peers.yaml:2:39: key file 'DIR/FILE' of peer 'spark'" and then TAIL. */
static void key_refused(const char *file, const char *tail)
{
	_cleanup_free_ char *t = xasprintf("peers:\n  spark: {origin: http://h, key_file: %s}\n", file);
	_cleanup_free_ char *want = xasprintf("peers.yaml:2:39: key file '%s/%s' of peer 'spark'%s", dir, file,
					      tail);
	REFUSED(t, want);
}

static void test_key_files(void **state)
{
	(void)state;
	key_refused("nope.key", ": No such file or directory; expected a file holding the key that peer accepts");
	_cleanup_free_ char *wide = xasprintf(" has mode 0640; expected 0600 (chmod 600 '%s/wide.key')", dir);
	key_refused("wide.key", wide);
	key_refused("two.key", " is empty or holds more than one word; expected the key alone");
	key_refused("empty.key", " is empty or holds more than one word; expected the key alone");
	/* a directory passes the mode check and fails the read, with the reason */
	_cleanup_free_ char *adir = xasprintf("%s/adir.key", dir);
	assert_int_equal(chmod(adir, 0700), 0);
	_cleanup_free_ char *t = xasprintf("peers:\n  spark: {origin: http://h, key_file: %s}\n", adir);
	_cleanup_free_ char *m = refusal(t);
	assert_non_null(m);
	_cleanup_free_ char *head = xasprintf("peers.yaml:2:39: key file '%s' of peer 'spark': ", adir);
	assert_string_contains(m, head);
	/* no key in any message */
	assert_null(strstr(m, "k-spark"));
}

static void test_roles(void **state)
{
	(void)state;
	REFUSED(SPARK "roles:\n  brain: {refer: spark}\n",
		"peers.yaml:6:3: 'brain' is not a role; expected cortex, senses, hand, embedder or reranker");
	REFUSED(SPARK "roles:\n  hand: spark\n",
		"peers.yaml:6:9: role 'hand' is not a mapping; expected {refer: PEER}, {proxy: PEER} and/or {fallback: [...]}");
	REFUSED(SPARK "roles:\n  hand: {refer: spark, proxy: spark}\n",
		"peers.yaml:6:24: role 'hand' has both refer and proxy; expected one");
	REFUSED(SPARK "roles:\n  hand:\n",
		"peers.yaml:6:3: role 'hand' is not a mapping; expected {refer: PEER}, {proxy: PEER} and/or {fallback: [...]}");
	REFUSED(SPARK "roles:\n  hand: {send: spark}\n",
		"peers.yaml:6:10: 'send' for role 'hand' is not a mode; expected refer, proxy or fallback");
	REFUSED(SPARK "roles:\n  hand: {refer: orin}\n",
		"peers.yaml:6:17: role 'hand' names peer 'orin'; expected a peer declared under peers:");
	REFUSED(SPARK "roles:\n  hand: {refer: [spark]}\n",
		"peers.yaml:6:18: role 'hand' names peer ''; expected a peer declared under peers:");
	REFUSED(SPARK "roles:\n  cortex: {refer: spark}\n",
		"peers.yaml:6:3: role 'cortex' is feasible on this box (profile 'thor') and served here; "
		"expected refer only for a role this box does not serve");
	REFUSED(SPARK "roles:\n  embedder: {proxy: spark}\n",
		"peers.yaml:6:3: role 'embedder' is feasible on this box (profile 'thor') and served here; "
		"expected proxy only for a role this box does not serve");
	REFUSED("peers:\n  orin: {origin: http://h}\nroles:\n  hand: {proxy: orin}\n",
		"peers.yaml:4:17: role 'hand' is proxied to peer 'orin', which has no key_file; "
		"expected the key that peer accepts");
	/* a key given twice is refused before peers.c sees it */
	_cleanup_free_ char *twice = refusal(SPARK "roles:\n  hand: {refer: spark}\n  hand: {refer: spark}\n");
	assert_non_null(twice);
	assert_string_contains(twice, "peers.yaml:7:3: ");
	_cleanup_free_ char *twice2 = refusal(SPARK "  spark: {origin: http://h}\n");
	assert_non_null(twice2);
	assert_string_contains(twice2, "peers.yaml:5:3: ");
	/* refer needs no key */
	assert_null(refusal("peers:\n  orin: {origin: http://h}\nroles:\n  hand: {refer: orin}\n"));
}

static void test_good_file(void **state)
{
	(void)state;
	struct gw_config c = box();
	_cleanup_free_ char *abskey = xasprintf("%s/orin.key", dir);
	_cleanup_free_ char *text = xasprintf(
		"box: thor-1\n" SPARK "  orin:\n    origin: HTTPS://Orin.local:9443/\n    key_file: %s\n"
		"roles:\n  hand: {proxy: spark}\n  senses: {refer: orin}\n  reranker: {proxy: orin}\n", abskey);
	struct err *e = NULL;
	struct gw_peers *p = gw_peers_parse(&c, text, strlen(text), "P", dir, &e);
	assert_null(e);
	assert_non_null(p);
	assert_string_equal(p->box, "thor-1");
	assert_string_equal(p->path, "P");
	assert_int_equal(p->n, 2);
	assert_string_equal(p->v[0].name, "spark");
	assert_string_equal(p->v[0].origin, "http://10.0.0.2:8001");
	_cleanup_free_ char *rel = xasprintf("%s/spark.key", dir);
	assert_string_equal(p->v[0].key_file, rel);
	assert_string_equal(p->v[0].key, "k-spark-1");
	assert_string_equal(p->v[0].source, "P:3:3");
	assert_string_equal(p->v[1].origin, "https://Orin.local:9443");
	assert_string_equal(p->v[1].key_file, abskey);
	assert_string_equal(p->v[1].key, "k-orin");
	assert_int_equal(p->role[ROLE_HAND].mode, GW_PEER_PROXY);
	assert_int_equal(p->role[ROLE_HAND].peer, 0);
	assert_string_equal(p->role[ROLE_HAND].source, "P:10:3");
	assert_int_equal(p->role[ROLE_SENSES].mode, GW_PEER_REFER);
	assert_int_equal(p->role[ROLE_SENSES].peer, 1);
	assert_int_equal(p->role[ROLE_RERANKER].mode, GW_PEER_PROXY);
	assert_int_equal(p->role[ROLE_RERANKER].peer, 1);
	assert_int_equal(p->role[ROLE_CORTEX].mode, GW_PEER_NONE);
	assert_int_equal(p->role[ROLE_CORTEX].peer, -1);

	/* the proxy peer of each role, as the relay asks */
	c.peers = p;
	assert_ptr_equal(gw_role_proxy_peer(&c, ROLE_HAND), &p->v[0]);
	assert_ptr_equal(gw_role_proxy_peer(&c, ROLE_RERANKER), &p->v[1]);
	assert_null(gw_role_proxy_peer(&c, ROLE_SENSES));  /* referred, not proxied */
	assert_null(gw_role_proxy_peer(&c, ROLE_CORTEX));
	assert_null(gw_role_proxy_peer(&c, -1));
	assert_null(gw_role_proxy_peer(&c, ROLE__COUNT));
	/* a role that became feasible here is never sent away */
	c.roles[ROLE_HAND].feasible = true;
	assert_null(gw_role_proxy_peer(&c, ROLE_HAND));
	assert_string_equal(gw_box_name(&c), "thor-1");
	gw_peers_free(p);
	c.peers = NULL;
	assert_null(gw_role_proxy_peer(&c, ROLE_RERANKER));
	assert_string_equal(gw_box_name(&c), "thor");
	gw_peers_free(NULL);

	/* no box: the profile names the box, or "box" without one */
	c = box();
	p = gw_peers_parse(&c, "peers: {}\n", 10, "P", dir, &e);
	assert_non_null(p);
	assert_string_equal(p->box, "thor");
	gw_peers_free(p);
	c.profile = NULL;
	p = gw_peers_parse(&c, "roles: {}\n", 10, "P", dir, &e);
	assert_non_null(p);
	assert_string_equal(p->box, "box");
	c.peers = p;
	assert_string_equal(gw_box_name(&c), "box");
	gw_peers_free(p);
}

static void test_load(void **state)
{
	(void)state;
	char d2[] = "/tmp/lobes-peers-load.XXXXXX";
	assert_non_null(mkdtemp(d2));
	struct gw_config c = box();
	c.dir = d2;
	struct err *e = NULL;
	/* absent: nothing read, nothing set */
	assert_int_equal(gw_peers_load(&c, &e), 0);
	assert_null(c.peers);
	assert_null(c.roles[ROLE_HAND].hosted_by);

	_cleanup_free_ char *path = xasprintf("%s/peers.yaml", d2);
	const char *good = "peers:\n  orin: {origin: 'http://10.0.0.3:8001/'}\nroles:\n  hand: {refer: orin}\n";
	assert_int_equal(fs_write_atomic(path, good, strlen(good), 0600, NULL), 0);
	c.roles[ROLE_HAND].hosted_by = xstrdup("http://stale");
	assert_int_equal(gw_peers_load(&c, &e), 0);
	assert_null(e);
	assert_non_null(c.peers);
	assert_string_equal(c.roles[ROLE_HAND].hosted_by, "http://10.0.0.3:8001");
	assert_null(c.roles[ROLE_SENSES].hosted_by);
	/* a reload replaces the peers */
	assert_int_equal(gw_peers_load(&c, &e), 0);
	assert_string_equal(c.peers->v[0].name, "orin");

	/* a bad file: -1 with the path in the message, the peers kept */
	const char *bad = "roles:\n  hand: {refer: nobody}\n";
	assert_int_equal(fs_write_atomic(path, bad, strlen(bad), 0600, NULL), 0);
	struct gw_peers *kept = c.peers;
	assert_int_equal(gw_peers_load(&c, &e), -1);
	assert_non_null(e);
	_cleanup_free_ char *want = xasprintf("%s:2:17: role 'hand' names peer 'nobody'", path);
	assert_string_contains(e->msg, want);
	err_free(e);
	e = NULL;
	assert_ptr_equal(c.peers, kept);
	/* a peers.yaml that cannot be read */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(gw_peers_load(&c, &e), -1);
	assert_non_null(e);
	assert_string_contains(e->msg, "FIFO");
	err_free(e);

	gw_peers_free(c.peers);
	free(c.roles[ROLE_HAND].hosted_by);
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", d2);
	assert_int_equal(system(cmd), 0);
}

static void test_origin_normalise(void **state)
{
	(void)state;
	const struct { const char *in, *out; } cases[] = {
		{ "http://h", "http://h" },
		{ "http://h/", "http://h" },
		{ "https://H.example:8443", "https://H.example:8443" },
		{ "http://[::1]:8001/", "http://[::1]:8001" },
		{ "http://h/x", NULL },
		{ "http://h?q", NULL },
		{ "http://u:p@h", NULL },
		{ "http://h#x", NULL },
		{ "gopher://h", NULL },
		{ "", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *o = gw_origin_normalise(cases[i].in);
		if (cases[i].out == NULL && o)
			fail_msg("'%s' normalised to '%s'; expected a refusal", cases[i].in, o);
		if (cases[i].out && (!o || strcmp(o, cases[i].out) != 0))
			fail_msg("'%s' normalised to '%s'; expected '%s'", cases[i].in, o ? o : "(null)",
				 cases[i].out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_level),
		cmocka_unit_test(test_peer_entries),
		cmocka_unit_test(test_key_files),
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_good_file),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_origin_normalise),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
