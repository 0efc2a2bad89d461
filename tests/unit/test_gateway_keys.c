/*
 * test_gateway_keys.c — the gateway's named API keys (keys.c) and their
 * limiter (keyuse.c): keys.yaml's strict, positioned errors; the stored
 * hash; the key a bearer names among several; allowlists; which keys may
 * carry X-Lobes-Hop; the window's boundaries (the first request opens it,
 * exactly rpm pass in it, the next passes at its end, not a millisecond
 * before); tokens charged after the answer; a concurrent slot released
 * however the request ended, and never taken by a refused one.
 */
#include "testutil.h"
#include "../../src/lib/gateway/gateway.h"
#include "../../src/lib/gateway/keyuse.h"

#define H1 "sha256:2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"

static struct gw_keys *parse(const char *text, struct err **e)
{
	return gw_keys_parse(text, strlen(text), "K.yaml", e);
}

static void bad(const char *text, const char *want)
{
	struct err *e = NULL;
	struct gw_keys *k = parse(text, &e);
	if (k || !e || !strstr(e->msg, want))
		fail_msg("keys.yaml\n%s\n  got  %s\n  want %s", text, e ? e->msg : "(loaded)", want);
	assert_int_equal(e->code, EXIT_CONFIG);
	err_free(e);
}

static void test_parse(void **state)
{
	(void)state;
	char h[GW_KEY_HASH_TEXT];
	gw_key_hash_text("secret", h);
	assert_string_equal(h, H1); /* sha256("secret"), as `sha256sum` prints it */
	struct err *e = NULL;
	struct gw_keys *k = parse("keys:\n  - name: alice\n    hash: " H1 "\n    roles: [cortex, hand]\n"
				  "    requests_per_minute: 3\n    tokens_per_minute: 50\n    concurrent: 2\n"
				  "  - name: spark\n    hash: sha256:" "00000000000000000000000000000000"
				  "00000000000000000000000000000000\n    peer: true\n", &e);
	assert_non_null(k);
	assert_int_equal(k->n_named, 2);
	assert_string_equal(k->v[0].name, "alice");
	assert_int_equal(k->v[0].rpm, 3);
	assert_int_equal(k->v[0].tpm, 50);
	assert_int_equal(k->v[0].concurrent, 2);
	assert_false(k->v[0].peer);
	assert_true(k->v[1].peer);
	assert_true(gw_key_allows(&k->v[0], ROLE_CORTEX) && gw_key_allows(&k->v[0], ROLE_HAND));
	assert_false(gw_key_allows(&k->v[0], ROLE_EMBEDDER));
	assert_true(gw_key_allows(&k->v[1], ROLE_EMBEDDER)); /* no list: every role */
	gw_keys_free(k);
	k = parse("keys:\n", &e); /* null: no keys */
	assert_non_null(k);
	assert_int_equal(k->n, 0);
	gw_keys_free(k);

	bad("keys:\n  - name: a\n    hash: " H1 "\n    colour: red\n",
	    "K.yaml:4:5: unknown key 'colour' in key 'a'; expected name, hash");
	bad("keys:\n  - name: a\n    hash: " H1 "\n  - name: a\n    hash: " H1 "\n",
	    "K.yaml:4:11: key name 'a' is used twice (first at K.yaml:2:11)");
	bad("keys:\n  - name: a\n", "K.yaml:2:11: key 'a' has no hash");
	bad("keys:\n  - name: a\n    hash: sha256:abc\n", "K.yaml:3:11: hash of key 'a' is not valid");
	bad("keys:\n  - name: a\n    hash: " H1 "\n    roles: [cortex, brain]\n",
	    "K.yaml:4:21: 'brain' in roles of key 'a' is not a role");
	bad("keys:\n  - name: a\n    hash: " H1 "\n    roles: []\n", "K.yaml:4:5: roles of key 'a'");
	bad("keys:\n  - name: a\n    hash: " H1 "\n    concurrent: 0\n",
	    "K.yaml:4:17: concurrent of key 'a' is '0'; expected a whole number");
	bad("keys:\n  - name: a\n    hash: " H1 "\n    requests_per_minute: 1.5\n",
	    "K.yaml:4:26: requests_per_minute of key 'a' is '1.5'");
	bad("keys:\n  - name: a\n    hash: " H1 "\n    peer: yes\n", "K.yaml:4:11: peer of key 'a' is 'yes'");
	bad("keys:\n  - name: default\n    hash: " H1 "\n", "K.yaml:2:11: key name 'default' is not valid");
	bad("keys:\n  - name: 'a b'\n    hash: " H1 "\n", "K.yaml:2:12: key name 'a b' is not valid");
	bad("keys: {a: 1}\n", "K.yaml:1:8: 'keys' is not a list");
	bad("tokens: []\n", "K.yaml:1:1: unknown key 'tokens'; expected keys");
	bad("keys: []\n---\nkeys: []\n", "K.yaml:3:1: a second YAML document");
}

static void test_lookup_and_hop(void **state)
{
	(void)state;
	struct err *e = NULL;
	struct gw_config c = { .dir = (char *)"/nonexistent" };
	assert_int_equal(gw_keys_load(&c, &e), 0);
	assert_false(gw_auth_required(&c)); /* no key at all */
	assert_null(gw_key_of(&c, "Bearer secret"));
	assert_true(gw_key_hop_trusted(&c, NULL)); /* loopback only: no loop between such boxes */
	char h2[GW_KEY_HASH_TEXT];
	gw_key_hash_text("other-secret", h2);
	_cleanup_free_ char *y = xasprintf("keys:\n  - name: alice\n    hash: " H1 "\n"
					   "  - name: spark\n    hash: %s\n    peer: true\n", h2);
	c.keys = parse(y, &e);
	assert_non_null(c.keys);
	assert_true(gw_auth_required(&c));
	assert_string_equal(gw_key_of(&c, "Bearer secret")->name, "alice");
	assert_string_equal(gw_key_of(&c, "Bearer  other-secret")->name, "spark");
	assert_null(gw_key_of(&c, "Bearer secre"));
	assert_null(gw_key_of(&c, "Bearer " H1)); /* the stored hash is not a key */
	assert_false(gw_key_hop_trusted(&c, gw_key_of(&c, "Bearer secret")));
	assert_true(gw_key_hop_trusted(&c, gw_key_of(&c, "Bearer other-secret")));
	assert_false(gw_key_hop_trusted(&c, NULL));
	gw_keys_free(c.keys);
}

static void test_window_boundaries(void **state)
{
	(void)state;
	struct gw_window w;
	gw_window_init(&w);
	struct gw_limits l = { .rpm = 3 };
	struct gw_verdict v;
	double t0 = 1000000;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(gw_window_admit(&w, &l, t0 + i * 1000, &v), GW_LIM_OK);
		assert_int_equal(v.req_remaining, 2 - i);
		gw_window_release(&w);
	}
	assert_int_equal(gw_window_admit(&w, &l, t0 + 5000, &v), GW_LIM_REQUESTS);
	assert_int_equal(v.req_limit, 3);
	assert_int_equal(v.req_remaining, 0);
	assert_true(v.reset_ms > 54999 && v.reset_ms < 55001); /* the window began at the first */
	assert_true(v.retry_after_s == 55);
	assert_int_equal(gw_window_admit(&w, &l, t0 + GW_KEY_WINDOW_MS - 1, &v), GW_LIM_REQUESTS);
	assert_true(v.retry_after_s == 1);
	assert_int_equal(gw_window_admit(&w, &l, t0 + GW_KEY_WINDOW_MS, &v), GW_LIM_OK);
	assert_int_equal(v.req_remaining, 2); /* a new window */
	assert_true(v.reset_ms == GW_KEY_WINDOW_MS);
}

static void test_tokens(void **state)
{
	(void)state;
	struct gw_window w;
	gw_window_init(&w);
	struct gw_limits l = { .tpm = 100 };
	struct gw_verdict v;
	assert_int_equal(gw_window_admit(&w, &l, 0, &v), GW_LIM_OK);
	assert_int_equal(gw_window_admit(&w, &l, 1, &v), GW_LIM_OK); /* tokens count when answered */
	gw_window_tokens(&w, 99, 10);
	gw_window_release(&w);
	assert_int_equal(gw_window_admit(&w, &l, 20, &v), GW_LIM_OK);
	assert_int_equal(v.tok_remaining, 1);
	gw_window_tokens(&w, 1, 30);
	assert_int_equal(gw_window_admit(&w, &l, 40, &v), GW_LIM_TOKENS);
	assert_int_equal(v.tok_limit, 100);
	assert_int_equal(v.tok_remaining, 0);
	assert_int_equal(v.req_limit, 0);
	assert_int_equal(gw_window_admit(&w, &l, GW_KEY_WINDOW_MS, &v), GW_LIM_OK);
	assert_int_equal(v.tok_remaining, 100);
	gw_window_tokens(&w, 0, GW_KEY_WINDOW_MS + 1); /* nothing charged */
	gw_window_tokens(&w, -5, GW_KEY_WINDOW_MS + 1);
	assert_int_equal(w.tokens, 0);
}

static void test_concurrent_release(void **state)
{
	(void)state;
	struct gw_keyuse u;
	gw_keyuse_init(&u);
	struct gw_keyuse_ent *e = gw_keyuse_get(&u, "alice");
	assert_ptr_equal(gw_keyuse_get(&u, "alice"), e);
	struct gw_limits l = { .concurrent = 2, .rpm = 100 };
	struct gw_verdict v;
	assert_int_equal(gw_keyuse_admit(&u, e, &l, 0, &v), GW_LIM_OK);
	assert_int_equal(gw_keyuse_admit(&u, e, &l, 1, &v), GW_LIM_OK);
	assert_int_equal(gw_keyuse_admit(&u, e, &l, 2, &v), GW_LIM_CONCURRENT);
	assert_true(v.retry_after_s == 1);
	assert_int_equal(e->w.open, 2); /* the refused one took no slot */
	assert_int_equal(e->w.requests, 2); /* nor a request of the window */
	/* one ends in an error (a 503, no usage): its slot is free again */
	gw_keyuse_done(&u, e, true, false, 0, 0, 3);
	assert_int_equal(gw_keyuse_admit(&u, e, &l, 4, &v), GW_LIM_OK);
	/* one is cancelled by its client mid-stream, with usage so far */
	gw_keyuse_done(&u, e, true, false, 5, 7, 5);
	gw_keyuse_done(&u, e, true, false, 0, 0, 6);
	assert_int_equal(e->w.open, 0);
	/* a request refused (not held) releases nothing */
	gw_keyuse_done(&u, e, false, false, 0, 0, 7);
	assert_int_equal(e->w.open, 0);
	assert_int_equal(e->throttled[GW_KU_THR_CONCURRENT], 1);
	assert_int_equal(e->prompt_tokens, 5);
	assert_int_equal(e->completion_tokens, 7);
	assert_int_equal(e->requests, 4);
	struct buf b;
	buf_init(&b, 0);
	gw_keyuse_render(&u, &b);
	assert_non_null(strstr(buf_str(&b), "lobes_gateway_key_requests_total{key=\"alice\"} 4\n"));
	assert_non_null(strstr(buf_str(&b),
			       "lobes_gateway_key_throttled_total{key=\"alice\",limit=\"concurrent\"} 1\n"));
	assert_non_null(strstr(buf_str(&b), "lobes_gateway_key_tokens_total{key=\"alice\",kind=\"completion\"} 7\n"));
	buf_free(&b);
	/* past the cap, names share "other": the label stays bounded */
	for (int i = 1; i < GW_KEYUSE_MAX; i++) {
		char n[16];
		snprintf(n, sizeof(n), "k%d", i);
		gw_keyuse_get(&u, n);
	}
	assert_string_equal(gw_keyuse_get(&u, "one-more")->name, "other");
	assert_ptr_equal(gw_keyuse_get(&u, "and-another"), gw_keyuse_get(&u, "one-more"));
	gw_keyuse_destroy(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_lookup_and_hop),
		cmocka_unit_test(test_window_boundaries),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_concurrent_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
