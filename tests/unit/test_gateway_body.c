/*
 * test_gateway_body.c — the streaming body pass that routing uses
 * (body.c): whenever it gives a verdict it is jansson's (the same model and
 * stream, a valid object), over the bodies where the two parsers read
 * apart (each must be left to jansson), the usual shapes (each must be
 * read by the pass itself, or the speed is not there), and every one-byte
 * change of a chat body at every position.
 */
#include "testutil.h"
#include "../../src/lib/gateway/gateway.h"

static const char *CHAT =
	"{\"model\":\"cortex\",\"messages\":[{\"role\":\"user\",\"content\":\"What is the capital city "
	"of France? Reply with only the city name.\"}],\"max_tokens\":16,\"temperature\":0,"
	"\"stream\":true,\"n\":-1.5e3}";

/* The pass agrees with jansson whenever it answers; returns its verdict. */
static enum gw_body_verdict agrees(const char *b, size_t n)
{
	struct gw_body f;
	enum gw_body_verdict v = gw_body_scan(b, n, &f);
	if (v == GW_BODY_OK) {
		json_error_t je;
		json_t *j = json_loadb(b, n, JSON_REJECT_DUPLICATES, &je);
		if (!json_is_object(j))
			fail_msg("the pass took a body jansson refuses: %.*s (%s)", (int)n, b, je.text);
		json_t *m = json_object_get(j, "model");
		assert_true(!m || json_is_null(m) || json_is_string(m));
		const char *ms = json_string_value(m);
		if (!ms != !f.model || (ms && strcmp(ms, f.model) != 0))
			fail_msg("model: jansson '%s', the pass '%s' in %.*s", ms ? ms : "(none)",
				 f.model ? f.model : "(none)", (int)n, b);
		assert_int_equal(f.stream, json_is_true(json_object_get(j, "stream")));
		json_decref(j);
	} else {
		assert_null(f.model);
	}
	gw_body_free(&f);
	return v;
}

static void sure(const char *b, const char *model, bool stream)
{
	struct gw_body f;
	if (gw_body_scan(b, strlen(b), &f) != GW_BODY_OK)
		fail_msg("left to jansson, expected read by the pass: %s", b);
	if (model)
		assert_string_equal(f.model, model);
	else
		assert_null(f.model);
	assert_int_equal(f.stream, stream);
	gw_body_free(&f);
	assert_int_equal(agrees(b, strlen(b)), GW_BODY_OK);
}

static void unsure(const char *b, size_t n)
{
	if (agrees(b, n) != GW_BODY_UNSURE)
		fail_msg("read by the pass, expected left to jansson: %.*s", (int)n, b);
}
#define UNSURE(lit) unsure(lit, sizeof(lit) - 1)

static void test_body_usual_shapes(void **state)
{
	(void)state;
	sure(CHAT, "cortex", true);
	sure("{}", NULL, false);
	sure(" {\"model\" : null , \"stream\" : false}\n", NULL, false);
	sure("{\"mod\\u0065l\":\"hand\"}", "hand", false); /* an escaped key is the key */
	sure("{\"model\":\"org/Big-27B\",\"stream\":\"true\"}", "org/Big-27B", false);
	sure("{\"stream\":1,\"model\":\"caf\xc3\xa9\"}", "caf\xc3\xa9", false);
	sure("{\"a\":{\"stream\":true,\"model\":\"x\"},\"model\":\"y\"}", "y", false); /* nested: not the top */
	sure("{\"a\":[{\"model\":1},{\"model\":2}],\"b\":{\"model\":3}}", NULL, false); /* same key, different objects */
	sure("{\"x\":\"a \\\\ud800 b\"}", NULL, false); /* an escaped backslash, then text */
	sure("{\"n\":9223372036854775807,\"m\":-9223372036854775808,\"r\":1e308,\"u\":1e-400}", NULL, false);
	sure("{\"model\":\"\xf0\x9f\x98\x80\",\"stream\":true}", "\xf0\x9f\x98\x80", true);
}

static void test_body_read_apart_left_to_jansson(void **state)
{
	(void)state;
	UNSURE("");
	UNSURE("[1]");
	UNSURE("[{\"model\":\"x\"}]");
	UNSURE("\"model\"");
	UNSURE("{\"model\":1}");
	UNSURE("{\"model\":true}");
	UNSURE("{\"model\":[\"cortex\"]}");
	UNSURE("{\"model\":{\"a\":1}}");
	UNSURE("{\"model\":\"hand\",\"model\":\"cortex\"}");
	UNSURE("{\"mod\\u0065l\":\"hand\",\"model\":\"cortex\"}");
	UNSURE("{\"a\":{\"k\":1,\"k\":2}}");		  /* a duplicate at depth: jansson refuses it */
	UNSURE("{\"a\":[{\"k\":1,\"j\":0,\"k\":2}]}");
	UNSURE("{\"x\":\"a\\u0000b\"}");		  /* NUL in a string */
	UNSURE("{\"a\\u0000\":1}");			  /* NUL in a key */
	UNSURE("{\"x\":\"\\ud800\"}");			  /* a lone surrogate */
	UNSURE("{\"x\":\"\\uDC00x\"}");
	UNSURE("{\"x\":\"\\ud83d\\ude00\"}");		  /* a pair: valid, still left to jansson */
	UNSURE("{\"x\":\"\xc0\x80\"}");			  /* overlong */
	UNSURE("{\"x\":\"\xe0\x80\xaf\"}");
	UNSURE("{\"x\":\"\xed\xa0\x80\"}");		  /* an encoded surrogate */
	UNSURE("{\"x\":\"\xf4\x90\x80\x80\"}");		  /* past U+10FFFF */
	UNSURE("{\"x\":\"\xff\"}");
	UNSURE("{\"x\":\"\xc3\"}");
	UNSURE("{\"n\":9223372036854775808}");		  /* jansson: too big integer */
	UNSURE("{\"n\":-9223372036854775809}");
	UNSURE("{\"r\":1e400}");			  /* real number overflow */
	UNSURE("{\"n\":01}");
	UNSURE("{\"n\":1.}");
	UNSURE("{\"n\":.5}");
	UNSURE("{\"n\":+1}");
	UNSURE("{\"a\":1,}");
	UNSURE("{\"a\":1} x");
	UNSURE("{\"a\":1}{}");
	UNSURE("{\"a\":1 /* c */}");
	UNSURE("{'a':1}");
	UNSURE("{\"a\":\"tab\there\"}");
	UNSURE("{\"a\":\"\\x\"}");
	UNSURE("{\"a\":NaN}");
	UNSURE("{\"a\":1");
	UNSURE("{\"a\":1}\0");
	UNSURE("{\"mod\\u0065l\"\v:\"chat\"}"); /* \v, \f: whitespace to yajl only */
	UNSURE("{\"a\":1\f}");
	UNSURE("{\"modeut\":\"x\"}\"/v1.co"); /* an unterminated string after the object */
	UNSURE("{\"a\":1} \"");
	UNSURE("\f{}");
	/* nesting: jansson stops at 2048 levels */
	char deep[2 * 2050 + 16];
	size_t n = 0;
	deep[n++] = '{';
	memcpy(deep + n, "\"a\":", 4);
	n += 4;
	for (int i = 0; i < 2048; i++)
		deep[n++] = '[';
	for (int i = 0; i < 2048; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	unsure(deep, n);
}

/* Every one-byte change of a chat body: the pass never reads one apart. */
static void test_body_every_byte_changed(void **state)
{
	(void)state;
	const unsigned char subs[] = { '"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', 'e', '-',
				       'u', 'a', 0, 0x01, 0x80, 0xc3, 0xed, 0xff };
	size_t n = strlen(CHAT);
	char *b = xcalloc(1, n + 2);
	int ok = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(subs); k++) {
			memcpy(b, CHAT, n);
			b[i] = (char)subs[k];
			ok += agrees(b, n) == GW_BODY_OK;
			/* and with the byte removed, or doubled */
			memcpy(b, CHAT, i);
			memcpy(b + i, CHAT + i + 1, n - i - 1);
			agrees(b, n - 1);
			memcpy(b, CHAT, i + 1);
			memcpy(b + i + 1, CHAT + i, n - i);
			agrees(b, n + 1);
		}
	assert_true(ok > 100); /* text changes inside strings stay on the fast pass */
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body_usual_shapes),
		cmocka_unit_test(test_body_read_apart_left_to_jansson),
		cmocka_unit_test(test_body_every_byte_changed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
