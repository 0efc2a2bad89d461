/*
 * test_knowledge_edges.c — malformed knowledge documents that
 * test_knowledge.c's table leaves out, each refused with its
 * file:line:column and what was expected: families (a match naming
 * nothing, model_id_when without both keys, an empty or card-only set,
 * bad patterns), images (refs without a sha256 digest or with a short one,
 * an unshipped registry), cards (compute capabilities and memory ranges
 * that are not numbers, empty detect markers, attention paths and
 * Kubernetes labels at their limits), traits (the numeric operators' values,
 * each fact's value check, an empty 'in'), and vllm_reg_check_arg on the
 * flag kinds test_vllm.c does not try (hrint, hrint-or-auto, bare flags
 * needing a value, the optional value, the memory share's bounds).
 */
#include "testutil.h"

#include "../../src/lib/knowledge/knowledge.h"
#include "../../src/lib/knowledge/vllm.h"

static const char EV[] = "evidence:\n  - kind: declared\n    observation: o\n";

/* The message loading yaml gives (caller frees), NULL when it loads. */
static char *load(const char *yaml)
{
	struct knowledge k = { 0 };
	struct err *e = NULL;
	char *m = NULL;
	if (knowledge_add_yaml(&k, "k.yaml", yaml, strlen(yaml), true, &e) < 0) {
		m = test_err_msg(e, EXIT_CONFIG);
		/* nothing was added */
		assert_int_equal(k.n_cards + k.n_traits + k.n_profiles, 0);
	}
	knowledge_free(&k);
	return m;
}

struct bad {
	const char *yaml; /* the document less its evidence */
	const char *msg;  /* after "k.yaml:" */
};

static void check_all(const struct bad *b, size_t n)
{
	size_t failed = 0;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *doc = xasprintf("%s%s", b[i].yaml, EV);
		_cleanup_free_ char *m = load(doc);
		_cleanup_free_ char *want = xasprintf("k.yaml:%s", b[i].msg);
		if (!m || strcmp(m, want) != 0) {
			print_message("case %zu:\n got: %s\nwant: %s\n%s\n", i, m ? m : "(loaded)", want, doc);
			failed++;
		}
	}
	if (failed)
		fail_msg("%zu of %zu cases", failed, n);
}

#define FAM "kind: family\nname: f\ndescription: d\n"

static const struct bad bad_families[] = {
	{ FAM "set: {tool_call_parser: hermes}\n",
	  "1:1: missing 'match' in a family; expected a mapping with architectures, model_type or "
	  "model_id" },
	{ FAM "match: {architectures: [X]}\n", "1:1: missing 'set' in a family; expected the knobs the "
					       "family sets" },
	{ FAM "match: {lane: generate}\nset: {tool_call_parser: hermes}\n",
	  "4:8: 'match' names nothing; expected architectures, model_type or model_id" },
	{ FAM "match: {model_id: [\"*x*\"], model_id_when: always}\nset: {tool_call_parser: hermes}\n",
	  "4:43: model_id_when: always needs both a model_id and architectures or model_type; "
	  "expected without-config or both keys" },
	{ FAM "match: {architectures: [X], model_id_when: always}\nset: {tool_call_parser: hermes}\n",
	  "4:44: model_id_when: always needs both a model_id and architectures or model_type; "
	  "expected without-config or both keys" },
	{ FAM "match: {architectures: [X], model_id_when: sometimes}\nset: {tool_call_parser: hermes}\n",
	  "4:44: model_id_when 'sometimes' is unknown; expected without-config or always" },
	{ FAM "match: {architectures: [X], lane: embed}\nset: {tool_call_parser: hermes}\n",
	  "4:35: lane 'embed' is unknown; expected generate or pooling" },
	{ FAM "match: {architectures: [\"Qwen3 ForCausalLM\"]}\nset: {tool_call_parser: hermes}\n",
	  "4:25: invalid architecture 'Qwen3 ForCausalLM' in 'architectures'; expected class names "
	  "such as Qwen3ForCausalLM" },
	{ FAM "match: {model_type: [\"\"]}\nset: {tool_call_parser: hermes}\n",
	  "4:22: invalid model_type '' in 'model_type'; expected config.json model_type values such as "
	  "qwen3" },
	{ FAM "match: {model_id: []}\nset: {tool_call_parser: hermes}\n",
	  "4:19: 'model_id' is an empty list; expected at least one entry" },
	{ FAM "match: {architectures: [X], colour: red}\nset: {tool_call_parser: hermes}\n",
	  "4:29: unknown key 'colour' in 'match'; expected one of architectures, model_type, model_id, "
	  "model_id_when, lane" },
	{ FAM "match: {architectures: [X]}\nset: {}\n",
	  "5:6: 'set' is empty; expected tool_call_parser, reasoning_parser, runner, convert, "
	  "hf_overrides or trust_remote_code" },
	{ FAM "match: {architectures: [X]}\nset: {gpu_mem_util: 0.5}\n",
	  "5:7: knob 'gpu_mem_util' does not follow from the model; expected tool_call_parser, "
	  "reasoning_parser, runner, convert, hf_overrides or trust_remote_code (the card's knobs "
	  "belong in a profile or trait)" },
};

#define IMG "kind: image\nname: i\n"
#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct bad bad_images[] = {
	{ IMG "vllm: v\nregistry: 93d8f834d\n", "1:1: missing 'ref' in an image; expected "
						"name@sha256:<64 hex digits>" },
	{ IMG "ref: vllm/vllm-openai:latest\nvllm: v\nregistry: 93d8f834d\n",
	  "3:6: image ref 'vllm/vllm-openai:latest' is not pinned: a tag can move; expected "
	  "name@sha256:<64 hex digits>" },
	{ IMG "ref: vllm/vllm-openai@md5:" SHA "\nvllm: v\nregistry: 93d8f834d\n",
	  "3:6: image ref 'vllm/vllm-openai@md5:" SHA "' is pinned by a digest that is not sha256; "
	  "expected name@sha256:<64 hex digits>" },
	{ IMG "ref: vllm/vllm-openai@sha256:0123\nvllm: v\nregistry: 93d8f834d\n",
	  "3:6: image ref 'vllm/vllm-openai@sha256:0123' is a digest prefix (4 of the 64 hex "
	  "digits), which Docker rejects; expected the full digest" },
	{ IMG "ref: vllm/vllm-openai@sha256:" SHA "0\nvllm: v\nregistry: 93d8f834d\n",
	  "3:6: image ref 'vllm/vllm-openai@sha256:" SHA "0' is pinned by a digest that is not 64 "
	  "lower-case hex digits; expected name@sha256:<64 hex digits>" },
	{ IMG "ref: \"vllm/vllm-openai @sha256:" SHA "\"\nvllm: v\nregistry: 93d8f834d\n",
	  "3:6: image ref 'vllm/vllm-openai @sha256:" SHA "' is a reference with a space in it; "
	  "expected name@sha256:<64 hex digits>" },
	{ IMG "ref: \"@sha256:" SHA "\"\nvllm: v\nregistry: 93d8f834d\n",
	  "3:6: image ref '@sha256:" SHA "' is a digest without an image name; expected "
	  "name@sha256:<64 hex digits>" },
	{ IMG "ref: vllm/vllm-openai@sha256:" SHA "\nregistry: 93d8f834d\n",
	  "1:1: missing 'vllm' in an image; expected the vLLM version the image carries" },
	{ IMG "ref: vllm/vllm-openai@sha256:" SHA "\nvllm: v\nregistry: nosuch\n",
	  "5:11: registry 'nosuch' is not a shipped vLLM list; expected a folder under data/vllm/" },
	{ IMG "ref: vllm/vllm-openai@sha256:" SHA "\nvllm: v\nregistry: ../vllm\n",
	  "5:11: registry '../vllm' is not a shipped vLLM list; expected a folder under data/vllm/" },
};

#define CARD "kind: card\nname: c\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n"

static const struct bad bad_cards[] = {
	{ CARD "detect:\n  compute_cap: \"12.x\"\n",
	  "7:16: compute_cap '12.x' is not a compute capability; expected MAJOR.MINOR such as \"12.1\"" },
	{ CARD "detect:\n  compute_cap: \".1\"\n",
	  "7:16: compute_cap '.1' is not a compute capability; expected MAJOR.MINOR such as \"12.1\"" },
	{ CARD "detect:\n  compute_cap: \"12.\"\n",
	  "7:16: compute_cap '12.' is not a compute capability; expected MAJOR.MINOR such as \"12.1\"" },
	{ CARD "detect:\n  memory_gib: [4, lots]\n",
	  "7:19: memory_gib entry 'lots' is not a number; expected a [min, max] pair of GiB with 0 <= "
	  "min < max" },
	{ CARD "detect:\n  memory_gib: [4, \" 8\"]\n",
	  "7:19: memory_gib entry ' 8' is not a number; expected a [min, max] pair of GiB with 0 <= "
	  "min < max" },
	{ CARD "detect:\n  memory_gib: [4, [8]]\n",
	  "7:19: an entry of 'memory_gib' is a sequence; expected a [min, max] pair of GiB with 0 <= "
	  "min < max" },
	{ CARD "detect:\n  memory_gib: [4, ~]\n",
	  "7:19: an entry of 'memory_gib' is empty; expected a [min, max] pair of GiB with 0 <= "
	  "min < max" },
	{ CARD "detect:\n  name_markers: []\n", "7:17: 'name_markers' is an empty list; expected at "
						"least one entry" },
	{ CARD "attention_path:\n  generate: \"\"\n",
	  "7:13: attention path '' is not a backend name; expected an UPPER_CASE name such as "
	  "FLASH_ATTN" },
	{ CARD "attention_path:\n  embed: FLASH_ATTN\n",
	  "7:3: unknown lane 'embed' in 'attention_path'; expected one of generate, pooling" },
	{ CARD "kubernetes:\n  gpu_product: \"-Thor\"\n  compute_major: '11'\n  compute_minor: '0'\n",
	  "7:16: '-Thor' is not a label value; expected 1-63 letters, digits, '-', '_' or '.', "
	  "starting and ending with a letter or digit" },
	{ CARD "kubernetes:\n  gpu_product: "
	       "a123456789b123456789c123456789d123456789e123456789f123456789g123\n"
	       "  compute_major: '11'\n  compute_minor: '0'\n",
	  "7:16: 'a123456789b123456789c123456789d123456789e123456789f123456789g123' is not a label "
	  "value; expected 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter "
	  "or digit" },
	{ CARD "profile: \"a/b\"\n", "6:10: profile 'a/b' is invalid; expected a non-empty name "
				"without '/', '..' or spaces" },
};

#define TRAIT "kind: trait\nname: t\ncause: c\n"

static const struct bad bad_traits[] = {
	{ TRAIT "when:\n  - fact: card.mem_gib\n    ge: lots\n",
	  "6:9: 'ge' value 'lots' is not a number; expected a number" },
	{ TRAIT "when:\n  - fact: role.max_model_len\n    lt: \"1.2.3\"\n",
	  "6:9: 'lt' value '1.2.3' is not a number; expected a number" },
	{ TRAIT "when:\n  - fact: card.mem_gib\n    eq: \"-\"\n",
	  "6:9: 'eq' value '-' is invalid for card.mem_gib; expected a number of GiB" },
	{ TRAIT "when:\n  - fact: role.name\n    eq: brain\n",
	  "6:9: 'eq' value 'brain' is invalid for role.name; expected one of cortex, senses, hand, embedder, reranker" },
	{ TRAIT "when:\n  - fact: checkpoint.hetero_head_dim\n    eq: maybe\n",
	  "6:9: 'eq' value 'maybe' is invalid for checkpoint.hetero_head_dim; expected true or false" },
	{ TRAIT "when:\n  - fact: card.compute_cap\n    eq: \"12\"\n",
	  "6:9: 'eq' value '12' is invalid for card.compute_cap; expected MAJOR.MINOR such as \"12.1\"" },
	{ TRAIT "when:\n  - fact: role.model\n    eq: \"a b\"\n",
	  "6:9: 'eq' value 'a b' is invalid for role.model; expected a value without spaces" },
	{ TRAIT "when:\n  - fact: card.id\n    in: []\n",
	  "6:9: 'in' is an empty list; expected at least one entry" },
	{ TRAIT "when:\n  - fact: card.id\n    eq: \"\"\n",
	  "6:9: 'eq' value '' is invalid for card.id; expected a non-empty name without '/', '..' or spaces" },
	{ TRAIT "dead_env: [\"1X\"]\n",
	  "4:12: invalid environment variable name '1X' in 'dead_env'; expected UPPER_CASE "
	  "environment variable names" },
	{ TRAIT "dead_env: [X-Y]\n",
	  "4:12: invalid environment variable name 'X-Y' in 'dead_env'; expected UPPER_CASE "
	  "environment variable names" },
};

static void test_families(void **state)
{
	(void)state;
	check_all(bad_families, sizeof(bad_families) / sizeof(bad_families[0]));
}

static void test_images(void **state)
{
	(void)state;
	check_all(bad_images, sizeof(bad_images) / sizeof(bad_images[0]));
}

static void test_cards(void **state)
{
	(void)state;
	check_all(bad_cards, sizeof(bad_cards) / sizeof(bad_cards[0]));
}

static void test_traits(void **state)
{
	(void)state;
	check_all(bad_traits, sizeof(bad_traits) / sizeof(bad_traits[0]));
}

static void check(const struct vllm_reg *r, const char *flag, const char *val, const char *why)
{
	char *w = (char *)"sentinel";
	int rc = vllm_reg_check_arg(r, flag, val, &w);
	if (!why) {
		if (rc != 0)
			fail_msg("%s=%s refused: %s", flag, val ? val : "(bare)", w);
		assert_null(w);
		return;
	}
	if (rc == 0)
		fail_msg("%s=%s accepted; expected %s", flag, val ? val : "(bare)", why);
	if (strcmp(w, why) != 0)
		fail_msg("%s=%s\n got: %s\nwant: %s", flag, val ? val : "(bare)", w, why);
	free(w);
}

static void test_flag_kinds(void **state)
{
	(void)state;
	struct vllm_reg r;
	assert_int_equal(vllm_reg_load(&r, "93d8f834d", NULL), 0);
	/* hrint: digits with one k/m/g suffix */
	check(&r, "--max-num-batched-tokens", "8192", NULL);
	check(&r, "--max-num-batched-tokens", "8k", NULL);
	check(&r, "--max-num-batched-tokens", "2G", NULL);
	check(&r, "--max-num-batched-tokens", "8kb",
	      "--max-num-batched-tokens='8kb' is not an integer (1k style allowed)");
	check(&r, "--max-num-batched-tokens", "k",
	      "--max-num-batched-tokens='k' is not an integer (1k style allowed)");
	check(&r, "--max-num-batched-tokens", "8t",
	      "--max-num-batched-tokens='8t' is not an integer (1k style allowed)");
	/* hrint-or-auto: also auto and -1, nothing else negative */
	check(&r, "--max-model-len", "32k", NULL);
	check(&r, "--max-model-len", "auto", NULL);
	check(&r, "--max-model-len", "-1", NULL);
	check(&r, "--max-model-len", "-2", "--max-model-len='-2' is not an integer or auto");
	check(&r, "--max-model-len", "Auto", "--max-model-len='Auto' is not an integer or auto");
	/* int: the whole value, within range */
	check(&r, "--max-log-len", "-5", NULL);
	check(&r, "--max-log-len", "5x", "--max-log-len='5x' is not an integer");
	check(&r, "--max-log-len", "99999999999999999999", "--max-log-len='99999999999999999999' is not an integer");
	/* float: finite */
	check(&r, "--gpu-memory-utilization", "1", NULL);
	check(&r, "--gpu-memory-utilization", "0", "--gpu-memory-utilization='0' is outside (0,1]");
	check(&r, "--gpu-memory-utilization", "1e999", "--gpu-memory-utilization='1e999' is not a number");
	check(&r, "--gpu-memory-utilization", "nan", "--gpu-memory-utilization='nan' is not a number");
	/* a flag with a value given none; the optional value may be left out */
	check(&r, "--max-log-len", NULL, "--max-log-len needs a value (int) in vLLM 93d8f834d");
	check(&r, "--hf-token", NULL, NULL);
	check(&r, "--no-enable-auto-tool-choice", NULL, NULL);
	check(&r, "--headless", "1", "--headless takes no value in vLLM 93d8f834d (got '1')");
	/* a JSON flag given JSON that is not an object, and one with a
	 * backend that is not a string */
	check(&r, "--default-chat-template-kwargs", "[]",
	      "--default-chat-template-kwargs='[]' is not a JSON object (not an object at column -1)");
	check(&r, "--attention-config", "{\"backend\": 7}",
	      "--attention-config backend '(not a string)' is not a backend of vLLM 93d8f834d");
	check(&r, "--attention-config", "{\"backend\": \"auto\"}", NULL);
	check(&r, "--speculative-config", "{\"a\": 1, \"a\": 2}",
	      "--speculative-config='{\"a\": 1, \"a\": 2}' is not a JSON object (duplicate object key "
	      "near '\"a\"' at column 12)");
	vllm_reg_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_images),
		cmocka_unit_test(test_cards),
		cmocka_unit_test(test_traits),
		cmocka_unit_test(test_flag_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
