/*
 * test_checkpoint.c — facts/checkpoint.c against fixtures of a Hugging Face
 * cache built in a temporary directory: each way a snapshot can be laid out
 * (ref, no ref, a ref that names nothing), each way its JSON can be
 * malformed, each KV-scale scheme and each native-context rule. Every
 * assertion checks the fact and the reason the reader gives for it, so a
 * reader that picks the wrong key, file or snapshot fails here.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/facts/facts.h"
#include "../../src/lib/util/fs.h"
#include "../../src/lib/util/strv.h"

static char hub[64];

static size_t count(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

static int setup(void **state)
{
	(void)state;
	snprintf(hub, sizeof(hub), "/tmp/lobes-ckpt.XXXXXX");
	return mkdtemp(hub) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", hub);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write hub/REL (its directories made) with TEXT. */
static void put(const char *rel, const char *text)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", hub, rel);
	_cleanup_free_ char *d = xstrdup(p);
	*strrchr(d, '/') = 0;
	assert_int_equal(fs_mkdirs(d, 0700, NULL), 0);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Read model "o/NAME" whose one snapshot "r" has CONFIG (NULL: none) and
 * HFQ as hf_quant_config.json (NULL: none). */
static void read_with(const char *name, const char *config, const char *hfq,
		      struct checkpoint_facts *c)
{
	if (config) {
		_cleanup_free_ char *rel = xasprintf("models--o--%s/snapshots/r/config.json", name);
		put(rel, config);
	}
	if (hfq) {
		_cleanup_free_ char *rel = xasprintf("models--o--%s/snapshots/r/hf_quant_config.json", name);
		put(rel, hfq);
	}
	if (!config && !hfq) {
		_cleanup_free_ char *rel = xasprintf("models--o--%s/snapshots/r/README.md", name);
		put(rel, "x");
	}
	_cleanup_free_ char *id = xasprintf("o/%s", name);
	assert_int_equal(checkpoint_facts_read_in(hub, id, c, NULL), 0);
}

static void test_not_cached_or_no_model(void **state)
{
	(void)state;
	struct checkpoint_facts c;
	assert_int_equal(checkpoint_facts_read_in(hub, "o/absent", &c, NULL), 0);
	assert_false(c.found);
	assert_int_equal(c.kv_scales, TRI_UNKNOWN);
	assert_string_equal(c.kv_scales_why, "'o/absent' is not in the Hugging Face cache");
	checkpoint_facts_free(&c);

	assert_int_equal(checkpoint_facts_read_in(hub, "", &c, NULL), 0);
	assert_false(c.found);
	assert_string_equal(c.kv_scales_why, "no model");
	checkpoint_facts_free(&c);
	assert_int_equal(checkpoint_facts_read_in(hub, NULL, &c, NULL), 0);
	assert_string_equal(c.kv_scales_why, "no model");
	checkpoint_facts_free(&c);

	/* a snapshots directory with nothing in it is not a cached model */
	_cleanup_free_ char *empty = xasprintf("%s/models--o--empty/snapshots", hub);
	assert_int_equal(fs_mkdirs(empty, 0700, NULL), 0);
	assert_int_equal(checkpoint_facts_read_in(hub, "o/empty", &c, NULL), 0);
	assert_false(c.found);
	checkpoint_facts_free(&c);
}

static void test_snapshot_choice(void **state)
{
	(void)state;
	/* refs/main names the snapshot to read, even when it sorts first */
	put("models--o--ref/refs/main", "aaa\n");
	put("models--o--ref/snapshots/aaa/config.json", "{\"model_type\": \"chosen\"}");
	put("models--o--ref/snapshots/zzz/config.json", "{\"model_type\": \"latest\"}");
	struct checkpoint_facts c;
	assert_int_equal(checkpoint_facts_read_in(hub, "o/ref", &c, NULL), 0);
	assert_true(c.found);
	assert_string_equal(c.model_type, "chosen");
	checkpoint_facts_free(&c);

	/* a ref naming no snapshot, or a path, falls back to the last one */
	put("models--o--stale/refs/main", "gone");
	put("models--o--stale/snapshots/a1/config.json", "{\"model_type\": \"old\"}");
	put("models--o--stale/snapshots/b2/config.json", "{\"model_type\": \"new\"}");
	put("models--o--stale/snapshots/.tmp/config.json", "{\"model_type\": \"hidden\"}");
	assert_int_equal(checkpoint_facts_read_in(hub, "o/stale", &c, NULL), 0);
	assert_string_equal(c.model_type, "new");
	assert_string_contains(c.snapshot, "/snapshots/b2");
	checkpoint_facts_free(&c);
	put("models--o--stale/refs/main", "../a1");
	assert_int_equal(checkpoint_facts_read_in(hub, "o/stale", &c, NULL), 0);
	assert_string_equal(c.model_type, "new");
	checkpoint_facts_free(&c);
	put("models--o--stale/refs/main", "  \n");
	assert_int_equal(checkpoint_facts_read_in(hub, "o/stale", &c, NULL), 0);
	assert_string_equal(c.model_type, "new");
	checkpoint_facts_free(&c);

	/* an id without an org: models--NAME */
	put("models--solo/snapshots/r/config.json", "{\"model_type\": \"solo\"}");
	assert_int_equal(checkpoint_facts_read_in(hub, "solo", &c, NULL), 0);
	assert_string_equal(c.model_type, "solo");
	checkpoint_facts_free(&c);
}

static void test_malformed_json(void **state)
{
	(void)state;
	struct checkpoint_facts c;
	read_with("bad", "{\"model_type\": \n  \"x\",}", NULL, &c);
	assert_true(c.found);
	assert_int_equal(c.kv_scales, TRI_UNKNOWN);
	assert_false(c.has_config);
	assert_string_contains(c.kv_scales_why, "unreadable: config.json:2:");
	checkpoint_facts_free(&c);

	/* a bad hf_quant_config.json makes the scales unknown, even with a
	 * good config.json */
	read_with("badq", "{\"model_type\": \"llama\"}", "[1, 2", &c);
	assert_int_equal(c.kv_scales, TRI_UNKNOWN);
	assert_string_contains(c.kv_scales_why, "unreadable: hf_quant_config.json:1:");
	checkpoint_facts_free(&c);

	/* only hf_quant_config.json: config.json is missing */
	read_with("noconf", NULL, "{\"quantization\": {}}", &c);
	assert_int_equal(c.kv_scales, TRI_UNKNOWN);
	assert_string_equal(c.kv_scales_why, "config.json missing from the snapshot");
	checkpoint_facts_free(&c);
	read_with("nothing", NULL, NULL, &c);
	assert_true(c.found);
	assert_string_equal(c.kv_scales_why, "config.json missing from the snapshot");
	checkpoint_facts_free(&c);

	/* valid JSON that is not an object reads as stating nothing */
	read_with("arr", "[]", NULL, &c);
	assert_true(c.has_config);
	assert_null(c.architectures);
	assert_null(c.model_type);
	assert_int_equal(c.native_context, 0);
	assert_int_equal(c.kv_scales, TRI_FALSE);
	checkpoint_facts_free(&c);
}

/* Each KV-scale scheme: config.json and hf_quant_config.json (NULL: none)
 * of a snapshot, and what is read from them: the scales, the quant method
 * (NULL: none) and the reason. */
static const struct kv_case {
	const char *name, *config, *hfq;
	enum tri kv;
	const char *quant_method, *why;
} kv_cases[] = {
	{ "plain", "{}", NULL, TRI_FALSE, NULL,
	  "config.json has no quantization_config (unquantized checkpoint, no KV scales)" },
	{ "mo", "{}", "{\"quantization\": {\"kv_cache_quant_algo\": \"FP8\"}}", TRI_TRUE, "modelopt",
	  "hf_quant_config.json quantization.kv_cache_quant_algo: FP8" },
	{ "monull", "{}", "{\"quantization\": {\"kv_cache_quant_algo\": null}}", TRI_FALSE, "modelopt",
	  "hf_quant_config.json quantization.kv_cache_quant_algo: null" },
	/* hf_quant_config.json without a quantization object: config.json decides */
	{ "moempty", "{\"quantization_config\": {\"quant_method\": \"fp8\"}}", "{\"producer\": {}}", TRI_FALSE,
	  "fp8", "config.json quantization_config.kv_cache_scheme: absent" },
	{ "cmo", "{\"quantization_config\": {\"quant_method\": \"modelopt\", \"kv_cache_quant_algo\": \"FP8\"}}",
	  NULL, TRI_TRUE, "modelopt", "config.json quantization_config.kv_cache_quant_algo: FP8" },
	{ "cmonull", "{\"quantization_config\": {\"quant_method\": \"modelopt\"}}", NULL, TRI_FALSE, "modelopt",
	  "config.json quantization_config.kv_cache_quant_algo: null" },
	{ "ct", "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\","
		" \"kv_cache_scheme\": {\"num_bits\": 8}}}",
	  NULL, TRI_TRUE, "compressed-tensors", "config.json quantization_config.kv_cache_scheme: set" },
	{ "ctnull", "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"kv_cache_scheme\": null}}",
	  NULL, TRI_FALSE, "compressed-tensors", "config.json quantization_config.kv_cache_scheme: null" },
	/* no quant_method at all */
	{ "nqm", "{\"quantization_config\": {\"kv_cache_scheme\": {}}}", NULL, TRI_TRUE, NULL,
	  "config.json quantization_config.kv_cache_scheme: set" },
	/* a quantization_config that is not an object is none */
	{ "qstr", "{\"quantization_config\": \"fp8\"}", NULL, TRI_FALSE, NULL,
	  "config.json has no quantization_config (unquantized checkpoint, no KV scales)" },
};

static void test_kv_scale_schemes(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(kv_cases); i++) {
		const struct kv_case *k = &kv_cases[i];
		struct checkpoint_facts c;
		read_with(k->name, k->config, k->hfq, &c);
		assert_int_equal(c.kv_scales, k->kv);
		if (k->quant_method)
			assert_string_equal(c.quant_method, k->quant_method);
		else
			assert_null(c.quant_method);
		assert_string_equal(c.kv_scales_why, k->why);
		checkpoint_facts_free(&c);
	}
}

static void test_identity(void **state)
{
	(void)state;
	struct checkpoint_facts c;
	read_with("id", "{\"architectures\": [\"LlamaForCausalLM\", \"\", 3, \"Extra\"],"
		  " \"model_type\": \"llama\"}", NULL, &c);
	assert_true(c.has_config);
	assert_int_equal(count(c.architectures), 2);
	assert_string_equal(c.architectures[0], "LlamaForCausalLM");
	assert_string_equal(c.architectures[1], "Extra");
	assert_string_equal(c.model_type, "llama");
	checkpoint_facts_free(&c);

	/* text_config is read only where the top level is silent */
	read_with("tc", "{\"text_config\": {\"architectures\": [\"Inner\"], \"model_type\": \"inner\"}}",
		  NULL, &c);
	assert_int_equal(count(c.architectures), 1);
	assert_string_equal(c.architectures[0], "Inner");
	assert_string_equal(c.model_type, "inner");
	checkpoint_facts_free(&c);
	read_with("tc2", "{\"architectures\": [\"Outer\"], \"model_type\": \"outer\","
		  " \"text_config\": {\"architectures\": [\"Inner\"], \"model_type\": \"inner\"}}",
		  NULL, &c);
	assert_string_equal(c.architectures[0], "Outer");
	assert_int_equal(count(c.architectures), 1);
	assert_string_equal(c.model_type, "outer");
	checkpoint_facts_free(&c);
	/* an empty model_type is none */
	read_with("mt0", "{\"model_type\": \"\"}", NULL, &c);
	assert_null(c.model_type);
	checkpoint_facts_free(&c);

	/* head dimensions */
	read_with("hd", "{\"text_config\": {\"head_dim\": 256, \"global_head_dim\": 512}}", NULL, &c);
	assert_int_equal(c.hetero_head_dim, TRI_TRUE);
	checkpoint_facts_free(&c);
	read_with("hd2", "{\"head_dim\": 128, \"global_head_dim\": 128}", NULL, &c);
	assert_int_equal(c.hetero_head_dim, TRI_FALSE);
	checkpoint_facts_free(&c);
	read_with("hd3", "{\"head_dim\": 128}", NULL, &c);
	assert_int_equal(c.hetero_head_dim, TRI_FALSE);
	checkpoint_facts_free(&c);
}

/* Each native-context rule: a config.json, the context read from it and
 * the reason (NULL: none). */
static const struct ctx_case {
	const char *name, *config;
	long long ctx;
	const char *why;
} ctx_cases[] = {
	/* the smallest stated length wins, whatever the key's order */
	{ "ctx", "{\"seq_length\": 8192, \"max_position_embeddings\": 32768}", 8192, "config.json seq_length" },
	{ "ctx1", "{\"max_position_embeddings\": 4096, \"n_positions\": 4096, \"seq_len\": 0,"
		  " \"max_seq_len\": \"2048\"}",
	  4096, "config.json max_position_embeddings" },
	/* text_config first; the top level only when it states none */
	{ "ctx2", "{\"max_position_embeddings\": 1000, \"text_config\": {\"max_position_embeddings\": 131072}}",
	  131072, "config.json text_config.max_position_embeddings" },
	{ "ctx3", "{\"max_position_embeddings\": 1000, \"text_config\": {\"x\": 1}}", 1000,
	  "config.json max_position_embeddings" },
	{ "ctx4", "{\"max_position_embeddings\": -5}", 0, NULL },
	/* rope scaling: linear and dynamic multiply the length */
	{ "lin", "{\"max_position_embeddings\": 4096, \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}}",
	  8192, "config.json max_position_embeddings 4096, linear rope factor 2" },
	{ "dyn", "{\"max_position_embeddings\": 4096, \"rope_parameters\": {\"rope_type\": \"dynamic\", \"factor\": 4}}",
	  16384, "config.json max_position_embeddings 4096, dynamic rope factor 4" },
	/* yarn from original_max_position_embeddings when stated */
	{ "yarn", "{\"max_position_embeddings\": 131072, \"rope_scaling\": {\"rope_type\":"
		  " \"yarn\", \"factor\": 4, \"original_max_position_embeddings\": 32768}}",
	  131072, "config.json max_position_embeddings 32768, yarn rope factor 4" },
	{ "yarn2", "{\"max_position_embeddings\": 1000, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 2}}",
	  2000, "config.json max_position_embeddings 1000, yarn rope factor 2" },
	/* linear ignores original_max_position_embeddings */
	{ "lin2", "{\"max_position_embeddings\": 1000, \"rope_scaling\": {\"rope_type\":"
		  " \"linear\", \"factor\": 2, \"original_max_position_embeddings\": 10}}",
	  2000, "config.json max_position_embeddings 1000, linear rope factor 2" },
	/* a factor of 1, another rope type, or no factor: the length as stated */
	{ "f1", "{\"max_position_embeddings\": 1000, \"rope_scaling\": {\"type\": \"linear\", \"factor\": 1}}",
	  1000, "config.json max_position_embeddings" },
	{ "llama3", "{\"max_position_embeddings\": 1000, \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8}}",
	  1000, "config.json max_position_embeddings" },
	{ "nof", "{\"max_position_embeddings\": 1000, \"rope_scaling\": {\"rope_type\": \"yarn\"}}", 1000,
	  "config.json max_position_embeddings" },
};

static void test_native_context(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ctx_cases); i++) {
		const struct ctx_case *k = &ctx_cases[i];
		struct checkpoint_facts c;
		read_with(k->name, k->config, NULL, &c);
		assert_int_equal(c.native_context, k->ctx);
		if (k->why)
			assert_string_equal(c.native_context_why, k->why);
		else
			assert_null(c.native_context_why);
		checkpoint_facts_free(&c);
	}
}

static void test_cache_list_and_weights(void **state)
{
	(void)state;
	char h2[] = "/tmp/lobes-ckpt2.XXXXXX";
	assert_non_null(mkdtemp(h2));
	assert_null(checkpoint_cache_list(h2));
	_cleanup_free_ char *s1 = xasprintf("%s/models--zorg--b/snapshots/r", h2);
	_cleanup_free_ char *s2 = xasprintf("%s/models--aorg--a/snapshots/r", h2);
	_cleanup_free_ char *s3 = xasprintf("%s/models--nosnap/snapshots", h2);
	_cleanup_free_ char *s4 = xasprintf("%s/models--", h2);
	_cleanup_free_ char *s5 = xasprintf("%s/datasets--x--y/snapshots/r", h2);
	_cleanup_free_ char *s6 = xasprintf("%s/models--solo/snapshots/r", h2);
	const char *dirs[] = { s1, s2, s3, s4, s5, s6 };
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(fs_mkdirs(dirs[i], 0700, NULL), 0);
	char **ids = checkpoint_cache_list(h2);
	assert_int_equal(count(ids), 3);
	assert_string_equal(ids[0], "aorg/a");
	assert_string_equal(ids[1], "solo");
	assert_string_equal(ids[2], "zorg/b");
	strv_free(ids);
	_cleanup_free_ char *missing = xasprintf("%s/nope", h2);
	assert_null(checkpoint_cache_list(missing));

	/* weights: *.safetensors regular files only, symlinks followed */
	size_t n = 99;
	assert_int_equal(checkpoint_weights_bytes(s1, &n), -1);
	assert_int_equal(n, 0);
	assert_int_equal(checkpoint_weights_bytes(NULL, NULL), -1);
	const struct { const char *name; size_t bytes; } files[] = {
		{ "model-1.safetensors", 100 }, { "model-2.safetensors", 23 },
		{ "model.safetensors.index.json", 7 }, { "x.safetensor", 5 },
	};
	for (size_t i = 0; i < 4; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", s1, files[i].name);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		for (size_t k = 0; k < files[i].bytes; k++)
			fputc('x', f);
		fclose(f);
	}
	_cleanup_free_ char *blob = xasprintf("%s/blob", h2);
	FILE *f = fopen(blob, "w");
	assert_non_null(f);
	fputs("0123456789", f);
	fclose(f);
	_cleanup_free_ char *lnk = xasprintf("%s/model-3.safetensors", s1);
	assert_int_equal(symlink(blob, lnk), 0);
	_cleanup_free_ char *dangling = xasprintf("%s/model-4.safetensors", s1);
	assert_int_equal(symlink("/nonexistent/blob", dangling), 0);
	_cleanup_free_ char *dir = xasprintf("%s/sub.safetensors", s1);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(checkpoint_weights_bytes(s1, &n), 133);
	assert_int_equal(n, 3);
	assert_int_equal(checkpoint_weights_bytes(s1, NULL), 133);

	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", h2);
	assert_int_equal(system(cmd), 0);
}

static void test_default_hub_from_env(void **state)
{
	(void)state;
	put("hfhome/hub/models--o--env/snapshots/r/config.json", "{\"model_type\": \"fromhome\"}");
	put("home/.cache/huggingface/hub/models--o--env/snapshots/r/config.json",
	    "{\"model_type\": \"fromuser\"}");
	put("hubcache/models--o--env/snapshots/r/config.json", "{\"model_type\": \"fromcache\"}");
	_cleanup_free_ char *hfhome = xasprintf("%s/hfhome", hub);
	_cleanup_free_ char *home = xasprintf("%s/home", hub);
	_cleanup_free_ char *cache = xasprintf("%s/hubcache", hub);
	const char *saved[3] = { getenv("HF_HUB_CACHE"), getenv("HF_HOME"), getenv("HOME") };
	_cleanup_free_ char *s0 = saved[0] ? xstrdup(saved[0]) : NULL;
	_cleanup_free_ char *s1 = saved[1] ? xstrdup(saved[1]) : NULL;
	_cleanup_free_ char *s2 = saved[2] ? xstrdup(saved[2]) : NULL;
	struct checkpoint_facts c;

	setenv("HOME", home, 1);
	setenv("HF_HOME", "", 1);
	setenv("HF_HUB_CACHE", "", 1);
	assert_int_equal(checkpoint_facts_read("o/env", &c, NULL), 0);
	assert_string_equal(c.model_type, "fromuser");
	checkpoint_facts_free(&c);
	setenv("HF_HOME", hfhome, 1);
	assert_int_equal(checkpoint_facts_read("o/env", &c, NULL), 0);
	assert_string_equal(c.model_type, "fromhome");
	checkpoint_facts_free(&c);
	setenv("HF_HUB_CACHE", cache, 1);
	assert_int_equal(checkpoint_facts_read("o/env", &c, NULL), 0);
	assert_string_equal(c.model_type, "fromcache");
	checkpoint_facts_free(&c);
	char **ids = checkpoint_cache_list(NULL);
	assert_int_equal(count(ids), 1);
	assert_string_equal(ids[0], "o/env");
	strv_free(ids);

	s0 ? setenv("HF_HUB_CACHE", s0, 1) : unsetenv("HF_HUB_CACHE");
	s1 ? setenv("HF_HOME", s1, 1) : unsetenv("HF_HOME");
	s2 ? setenv("HOME", s2, 1) : unsetenv("HOME");
}

static void test_json(void **state)
{
	(void)state;
	struct checkpoint_facts c;
	read_with("js", "{\"architectures\": [\"A\"], \"model_type\": \"m\","
		  " \"max_position_embeddings\": 2048, \"quantization_config\": {\"quant_method\":"
		  " \"compressed-tensors\", \"kv_cache_scheme\": {}}}", NULL, &c);
	json_auto_t *j = checkpoint_facts_json(&c);
	assert_true(json_is_true(json_object_get(j, "in_cache")));
	assert_string_equal(json_string_value(json_object_get(j, "kv_scales")), "present");
	assert_string_equal(json_string_value(json_object_get(j, "quant_method")), "compressed-tensors");
	assert_string_equal(json_string_value(json_object_get(j, "hetero_head_dim")), "false");
	assert_int_equal(json_integer_value(json_object_get(j, "native_context")), 2048);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "architectures"), 0)), "A");
	checkpoint_facts_free(&c);

	read_with("js2", "{}", NULL, &c);
	json_auto_t *j2 = checkpoint_facts_json(&c);
	assert_string_equal(json_string_value(json_object_get(j2, "kv_scales")), "absent");
	assert_true(json_is_null(json_object_get(j2, "native_context")));
	assert_true(json_is_null(json_object_get(j2, "quant_method")));
	assert_int_equal(json_array_size(json_object_get(j2, "architectures")), 0);
	checkpoint_facts_free(&c);

	assert_int_equal(checkpoint_facts_read_in(hub, "o/none", &c, NULL), 0);
	json_auto_t *j3 = checkpoint_facts_json(&c);
	assert_string_equal(json_string_value(json_object_get(j3, "kv_scales")), "unknown");
	assert_true(json_is_false(json_object_get(j3, "in_cache")));
	assert_string_equal(json_string_value(json_object_get(j3, "hetero_head_dim")), "unknown");
	checkpoint_facts_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_cached_or_no_model),
		cmocka_unit_test(test_snapshot_choice),
		cmocka_unit_test(test_malformed_json),
		cmocka_unit_test(test_kv_scale_schemes),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_native_context),
		cmocka_unit_test(test_cache_list_and_weights),
		cmocka_unit_test(test_default_hub_from_env),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
