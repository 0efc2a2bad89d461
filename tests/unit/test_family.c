/* test_family.c — family_match on the shipped families: the config.json
 * decides (architectures or model_type), the model id only without one,
 * a family whose id must hold with a config wins by being more specific, a
 * lane restricts, an unknown checkpoint says what matched nothing, and two
 * families matching alike are an error naming both. */
#include "testutil.h"

#include "../../src/lib/knowledge/knowledge.h"

static struct knowledge K;

static int setup(void **state)
{
	(void)state;
	struct err *e = NULL;
	if (knowledge_load(&K, NULL, &e) < 0) {
		fprintf(stderr, "%s\n", e->msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	knowledge_free(&K);
	return 0;
}

/* The family name (or "-" for none) and, in *why, what decided. */
static const char *fam(const char *model, const char *arch, const char *mt, enum lane lane, char **why)
{
	char *archs[] = { (char *)arch, NULL };
	const struct family *f = NULL;
	struct err *e = NULL;
	bool cfg = arch || mt;
	assert_int_equal(family_match(&K, model, cfg, arch ? archs : NULL, mt, lane, &f, why, &e), 0);
	return f ? f->name : "-";
}

static void test_by_name_without_config(void **state)
{
	(void)state;
	char *why = NULL;
	assert_string_equal(fam("Qwen/Qwen3.5-4B", NULL, NULL, LANE_GENERATE, &why), "qwen3-xml-tools");
	assert_non_null(strstr(why, "(no config.json read)"));
	free(why);
	assert_string_equal(fam("unsloth/Qwen3.8-27B-NVFP4", NULL, NULL, LANE_GENERATE, &why),
			    "qwen3-xml-tools");
	free(why);
	/* Qwen3-8B is a dense Qwen3, never a Qwen3.8 */
	assert_string_equal(fam("Qwen/Qwen3-8B", NULL, NULL, LANE_GENERATE, &why), "qwen3-dense");
	free(why);
	assert_string_equal(fam("Qwen/Qwen3-Coder-30B-A3B-Instruct", NULL, NULL, LANE_GENERATE, &why),
			    "qwen3-coder");
	free(why);
	assert_string_equal(fam("liquidai/lfm2.5-1.2b-instruct", NULL, NULL, LANE_GENERATE, &why), "lfm2");
	free(why); /* patterns are case-insensitive */
	assert_string_equal(fam("Qwen/Qwen3-Reranker-0.6B", NULL, NULL, LANE_POOLING, &why),
			    "qwen3-reranker");
	free(why);
	/* lanes: the reranker's family is for pooling, the dense one for generate */
	assert_string_equal(fam("Qwen/Qwen3-Reranker-0.6B", NULL, NULL, LANE_GENERATE, &why), "-");
	assert_non_null(strstr(why, "no config.json read and model id 'Qwen/Qwen3-Reranker-0.6B' matches no family"));
	free(why);
}

static void test_config_decides(void **state)
{
	(void)state;
	char *why = NULL;
	/* a name that says Qwen3.8 with a dense Qwen3 config is a dense Qwen3 */
	assert_string_equal(fam("acme/Qwen3.8-Mislabeled", "Qwen3ForCausalLM", "qwen3", LANE_GENERATE, &why),
			    "qwen3-dense");
	assert_string_equal(why, "config.json architectures Qwen3ForCausalLM");
	free(why);
	/* and a Qwen3.5 config under any name is the XML-tools family */
	assert_string_equal(fam("acme/my-finetune", "Qwen3_5ForConditionalGeneration", "qwen3_5",
				LANE_GENERATE, &why), "qwen3-xml-tools");
	free(why);
	/* model_type alone is enough */
	assert_string_equal(fam("acme/x", NULL, "gemma4_text", LANE_GENERATE, &why), "gemma4");
	assert_string_equal(why, "config.json model_type gemma4_text");
	free(why);
	/* the id-always family wins over the config-only one: Qwen3-Coder is a Qwen3MoeForCausalLM */
	assert_string_equal(fam("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen3MoeForCausalLM", "qwen3_moe",
				LANE_GENERATE, &why), "qwen3-coder");
	free(why);
	assert_string_equal(fam("Qwen/Qwen3-30B-A3B", "Qwen3MoeForCausalLM", "qwen3_moe", LANE_GENERATE,
				&why), "qwen3-dense");
	free(why);
	/* with a config, a family with only a name pattern does not match */
	assert_string_equal(fam("mistralai/Foo-1B", "FooForCausalLM", "foo", LANE_GENERATE, &why), "-");
	assert_string_equal(why, "config.json architectures [FooForCausalLM], model_type foo match no family");
	free(why);
	assert_string_equal(fam("Qwen/Qwen3-Embedding-0.6B", "Qwen3ForCausalLM", "qwen3", LANE_POOLING, &why),
			    "qwen3-embedding");
	free(why);
}

static void test_tie_is_an_error(void **state)
{
	(void)state;
	const char *twin = "kind: family\nname: lfm2-twin\ndescription: d\n"
			   "match: {model_type: [lfm2], lane: generate}\nset: {tool_call_parser: hermes}\n"
			   "evidence:\n  - kind: declared\n    observation: o\n";
	struct err *e = NULL;
	assert_int_equal(knowledge_add_yaml(&K, "twin.yaml", twin, strlen(twin), true, &e), 0);
	char *archs[] = { "Lfm2ForCausalLM", NULL };
	const struct family *f = NULL;
	char *why = NULL;
	assert_int_equal(family_match(&K, "LiquidAI/LFM2-1.2B", true, archs, "lfm2", LANE_GENERATE, &f, &why,
				      &e), -1);
	assert_null(f);
	assert_int_equal(e->code, EXIT_CONFIG);
	assert_non_null(strstr(e->msg, "matches families 'lfm2' (data/families/lfm2.yaml:"));
	assert_non_null(strstr(e->msg, "and 'lfm2-twin' (twin.yaml:2:7) alike"));
	err_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_name_without_config),
		cmocka_unit_test(test_config_decides),
		cmocka_unit_test(test_tie_is_an_error),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
