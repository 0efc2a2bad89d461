/* test_secret.c — the one masking rule: which names are secret (any case),
 * argv flags in both forms, Authorization headers, hf_ tokens, values
 * remembered from the environment, JSON records. */
#include "testutil.h"

#include "../../src/lib/util/secret.h"

static void test_names(void **state)
{
	(void)state;
	const char *yes[] = { "HF_TOKEN", "hf_token", "NGC_KEY", "DB_PASS", "PRIVATE_KEY", "VLLM_API_KEY",
			      "api_key", "--api-key", "Authorization", "aws_secret_access_key",
			      "DB_PASSWORD", "GOOGLE_CREDENTIALS", "x-api-key", "tokenizer_token",
			      "GITHUB_TOKEN", "access_token", "HUGGING_FACE_HUB_TOKEN", "authtoken",
			      "x-auth-token", "refresh_token", "token", "hfToken", "api_token_value" };
	const char *no[] = { "max_tokens", "MAX_NUM_BATCHED_TOKENS", "CORTEX_PORT", "LOBES_PROFILE",
			     "--max-model-len", "kv_cache_dtype", "LOBES_KEEP_BACKUPS", "model", "key", "key_source",
			     "api_key_file", "HF_TOKEN_PATH", "classifier_from_token", "tokenizer",
			     "--tokenizer", "tokenizer_mode", "detokenize", "pad_token_id", "eos_token_ids",
			     "bos_token", "token_type_ids", "max_tokens_per_doc", "image_token",
			     "keys.yaml", "/d/keys.yml" };
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		if (!secret_name(yes[i]))
			fail_msg("'%s' should be secret", yes[i]);
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		if (secret_name(no[i]))
			fail_msg("'%s' should not be secret", no[i]);
}

static void check(const char *in, const char *want)
{
	_cleanup_free_ char *got = secret_mask_text(in);
	if (strcmp(got, want) != 0)
		fail_msg("mask(\"%s\")\n  got  \"%s\"\n  want \"%s\"", in, got, want);
}

static void test_text(void **state)
{
	(void)state;
	check("vllm serve m --api-key sk-abc123 --port 8000", "vllm serve m --api-key <hidden> --port 8000");
	check("--api-key=sk-abc123", "--api-key=<hidden>");
	/* a positioned error about keys.yaml keeps its position */
	check("/d/keys.yaml:3:5: unknown key 'x'", "/d/keys.yaml:3:5: unknown key 'x'");
	check("VLLM_API_KEY=sk-abc123", "VLLM_API_KEY=<hidden>");
	check("ngc_key: abcd1234, next", "ngc_key: <hidden>, next");
	check("non-default args: {'model': 'x', 'api_key': 'sk-abc 123', 'port': 8001}",
	      "non-default args: {'model': 'x', 'api_key': '<hidden>', 'port': 8001}");
	check("args {'api_key': ['sk-abc123'], 'x': 1}", "args {'api_key': ['<hidden>'], 'x': 1}");
	check("{\"HF_TOKEN\": \"abc def\"}", "{\"HF_TOKEN\": \"<hidden>\"}");
	check("Authorization: Bearer abc.def-123", "Authorization: Bearer <hidden>");
	check("authorization=Basic dXNlcjpwYXNz", "authorization=Basic <hidden>");
	check("using hf_AbCdEfGhIjKlMnOpQrStUvWx12 to download", "using <hidden> to download");
	check("hf_short stays", "hf_short stays");
	/* a URL's userinfo, whatever the scheme; a URL without one is kept */
	check("origin 'http://user:canary-pw@10.0.0.2:8000' is not valid",
	      "origin 'http://<hidden>@10.0.0.2:8000' is not valid");
	check("https://tok@h/x and redis://:pw@h", "https://<hidden>@h/x and redis://<hidden>@h");
	check("{\"origin\": \"http://u:p@h\"}", "{\"origin\": \"http://<hidden>@h\"}");
	check("http://host:8000/v1?user=a@b", "http://host:8000/v1?user=a@b");
	/* a "'" may stand in a userinfo (RFC 3986 sub-delims); a masked value
	 * that ends inside a URL's userinfo (at ',' or ';') masks to its '@'
	 * (tests/fuzz/crashes/secret_url/) */
	check("x http://o'neil:canary-pw@h y", "x http://<hidden>@h y");
	check("'http://a'b:canary-pw@h'", "'http://<hidden>@h'");
	check("token=http://a,b:canary-pw@h rest", "token=<hidden>@h rest");
	check("api_key: ftp://u;x:canary-pw@h z", "api_key: <hidden>@h z");
	check("http://host/a@b mail x@y ://@h", "http://host/a@b mail x@y ://@h");
	/* the hf_ shape: exactly 20 letters/digits after the prefix is a token, 19 is not */
	check("x hf_abcdefghij0123456789 y", "x <hidden> y");
	check("x hf_abcdefghij012345678 y", "x hf_abcdefghij012345678 y");
	check("hf_ABCDEFGHIJ0123456789", "<hidden>");
	check("xhf_abcdefghij0123456789", "xhf_abcdefghij0123456789");
	check("'max_num_batched_tokens': 8192, max_tokens=16", "'max_num_batched_tokens': 8192, max_tokens=16");
	check("the key cache is ready", "the key cache is ready");
	check("known failure now passes: remove the entry", "known failure now passes: remove the entry");
	check("password: hunter22 Token=abcd1234", "password: <hidden> Token=<hidden>");
	check("", "");
	check("'DB_PASSWORD hunter22' is not an assignment", "'DB_PASSWORD <hidden>' is not an assignment");
	check("db_password hunter22", "db_password hunter22");
	check("--reset: no such key 'NO_SUCH_KEY' in .env", "--reset: no such key 'NO_SUCH_KEY' in .env");
	/* an ENV_NAME inside a sentence is followed by a word, not a value */
	check("/d/.env holds LOBES_GATEWAY_API_KEY but has mode 0644; expected 0600",
	      "/d/.env holds LOBES_GATEWAY_API_KEY but has mode 0644; expected 0600");
	check("/d/.env:3:1: 'HF_TOKEN hf-plain-1' is not an assignment",
	      "/d/.env:3:1: 'HF_TOKEN <hidden>' is not an assignment");
	check("x\nHF_TOKEN abcd1234\n", "x\nHF_TOKEN <hidden>\n");
	/* a tokenizer's token is configuration, a credential's is not */
	check("hf_overrides '{\"architectures\": [\"Qwen3ForSequenceClassification\"], "
	      "\"classifier_from_token\": [\"no\", \"yes\"]}'",
	      "hf_overrides '{\"architectures\": [\"Qwen3ForSequenceClassification\"], "
	      "\"classifier_from_token\": [\"no\", \"yes\"]}'");
	check("--tokenizer Qwen/Qwen3-0.6B --max-model-len 4096", "--tokenizer Qwen/Qwen3-0.6B --max-model-len 4096");
	check("pad_token_id: 151643, bos_token: '<s>'", "pad_token_id: 151643, bos_token: '<s>'");
	check("github_token: ghp-abcdef1234, access_token=ya29.abc", "github_token: <hidden>, access_token=<hidden>");
	secret_remember("s3cr3t-value");
	check("echo s3cr3t-value; xs3cr3t-valuex", "echo <hidden>; x<hidden>x");
}

static void test_environment(void **state)
{
	(void)state;
	/* read at first use: this test runs the binary's first mask after setenv */
	check("an env token: env-planted-0987", "an env token: <hidden>");
}

static void test_json(void **state)
{
	(void)state;
	json_t *j = json_pack("{s:{s:s, s:s}, s:[s, s, s, s, s], s:s}", "env", "DB_PASS", "pw-1",
			      "VLLM_PORT", "8000", "args", "--api-key", "sk-plain", "--port", "8001",
			      "--hf-token=hf_x", "log", "VLLM_API_KEY=sk-inlog");
	secret_mask_json(j);
	char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(s, "{\"args\":[\"--api-key\",\"<hidden>\",\"--port\",\"8001\",\"--hf-token=<hidden>\"],"
			       "\"env\":{\"DB_PASS\":\"<hidden>\",\"VLLM_PORT\":\"8000\"},"
			       "\"log\":\"VLLM_API_KEY=<hidden>\"}");
	free(s);
	json_decref(j);
	/* a value after a secret --flag is hidden elsewhere too */
	check("pw-1 and sk-plain", "pw-1 and <hidden>");
	/* "key" names a key, it is not one */
	json_t *k = json_pack("{s:s}", "key", "CORTEX_PORT");
	secret_mask_json(k);
	assert_string_equal(json_string_value(json_object_get(k, "key")), "CORTEX_PORT");
	json_decref(k);
	/* a render error's hf_overrides object keeps its values */
	json_t *h = json_pack("{s:[s, s], s:s}", "classifier_from_token", "no", "yes", "HF_TOKEN", "hf-plain-2");
	secret_mask_json(h);
	char *hs = json_dumps(h, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(hs, "{\"HF_TOKEN\":\"<hidden>\",\"classifier_from_token\":[\"no\",\"yes\"]}");
	free(hs);
	json_decref(h);
}

int main(void)
{
	setenv("SOME_SERVICE_TOKEN", "env-planted-0987", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
