/*
 * test_vllm.c — the recorded vLLM lists (data/vllm/) and the one check of a
 * rendered argument against them; removed.txt only names replacements the
 * recorded versions accept; every shipped image is pinned and recorded.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/lib/knowledge/knowledge.h"
#include "../../src/lib/util/cleanup.h"
#include "../../src/lib/util/fs.h"
#include "testutil.h"

static const char *const versions[] = { "93d8f834d", "5a4c8d992" };

static void test_lists_load(void **state)
{
	(void)state;
	for (size_t v = 0; v < 2; v++) {
		struct vllm_reg r;
		assert_int_equal(vllm_reg_load(&r, versions[v], NULL), 0);
		assert_string_contains(r.provenance, versions[v]);
		assert_string_equal(vllm_reg_flag_kind(&r, "--port"), "int");
		assert_string_equal(vllm_reg_flag_kind(&r, "--enforce-eager"), "bool");
		assert_null(vllm_reg_flag_kind(&r, "--task"));
		assert_true(vllm_reg_has_env(&r, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"));
		assert_false(vllm_reg_has_env(&r, "VLLM_ATTENTION_BACKEND"));
		assert_true(vllm_reg_has_tool_parser(&r, "qwen3_coder"));
		assert_true(vllm_reg_has_reasoning_parser(&r, "gemma4"));
		size_t n = 0;
		while (r.envs[n])
			n++;
		/* the complete registries: 272 keys at 93d8f834d (FACTS.md), more later */
		assert_true(n >= 272);
		vllm_reg_free(&r);
	}
	struct vllm_reg r;
	struct err *e = NULL;
	assert_int_equal(vllm_reg_load(&r, "nosuch", &e), -1);
	assert_string_contains(e->msg, "data/vllm/nosuch/");
	err_free(e);
	vllm_reg_free(&r);
}

static void check(const struct vllm_reg *r, const char *flag, const char *val, bool ok, const char *why)
{
	char *w = NULL;
	int rc = vllm_reg_check_arg(r, flag, val, &w);
	if ((rc == 0) != ok)
		fail_msg("%s=%s: expected %s, got %s", flag, val ? val : "(bare)", ok ? "ok" : "refused",
			 w ? w : "ok");
	if (why)
		assert_string_contains(w, why);
	free(w);
}

static void test_check_arg(void **state)
{
	(void)state;
	struct vllm_reg r;
	assert_int_equal(vllm_reg_load(&r, "93d8f834d", NULL), 0);
	check(&r, "--port", "8001", true, NULL);
	check(&r, "--port", "auto", false, "not an integer");
	check(&r, "--gpu-memory-utilization", "0.45", true, NULL);
	check(&r, "--gpu-memory-utilization", "none", false, "not a number");
	check(&r, "--gpu-memory-utilization", "1.5", false, "outside (0,1]");
	check(&r, "--max-model-len", "", false, "empty value");
	check(&r, "--enforce-eager", NULL, true, NULL);
	check(&r, "--enforce-eager", "true", false, "takes no value");
	check(&r, "--kv-cache-dtype", "fp8", true, NULL);
	check(&r, "--kv-cache-dtype", "fp9", false, "expected one of");
	check(&r, "--runner", "pooling", true, NULL);
	check(&r, "--convert", "classify", true, NULL);
	check(&r, "--task", "embed", false, "has no flag --task");
	check(&r, "--speculative-config", "{\"method\": \"mtp\", \"num_speculative_tokens\": 2}", true, NULL);
	check(&r, "--speculative-config", "{\"method\": \"mtp\"", false, "not a JSON object");
	check(&r, "--hf-overrides", "[1]", false, "not a JSON object");
	check(&r, "--attention-config", "{\"backend\": \"TRITON_ATTN\"}", true, NULL);
	check(&r, "--attention-config", "{\"backend\": \"NO_SUCH_ATTN\"}", false, "not a backend");
	check(&r, "--attention-config", "{\"use_cudnn_prefill\": true}", false, "refuses unknown keys");
	check(&r, "--tool-call-parser", "gemma4", true, NULL);
	check(&r, "--tool-call-parser", "kimi_k3", false, "not registered in vLLM 93d8f834d");
	check(&r, "--reasoning-parser", "inkling", false, "not registered in vLLM 93d8f834d");
	check(&r, "--quantization", "compressed-tensors", true, NULL);
	check(&r, "--quantization", "none", false, "not a quantization method");
	check(&r, "--max-lora-rank", "32", true, NULL);
	check(&r, "--max-lora-rank", "33", false, "expected one of");
	vllm_reg_free(&r);
	assert_int_equal(vllm_reg_load(&r, "5a4c8d992", NULL), 0);
	check(&r, "--tool-call-parser", "kimi_k3", true, NULL);
	check(&r, "--reasoning-parser", "inkling", true, NULL);
	vllm_reg_free(&r);
}

/* Every --attention-config replacement removed.txt gives is accepted by
 * both recorded versions (its JSON keys are AttentionConfig fields there). */
static void test_removed_replacements(void **state)
{
	(void)state;
	const char *text = NULL;
	for (size_t i = 0; i < embedded_files_count; i++)
		if (strcmp(embedded_files[i].path, "data/vllm-env/removed.txt") == 0)
			text = embedded_files[i].data;
	assert_non_null(text);
	_cleanup_free_ char *copy = xstrdup(text);
	size_t checked = 0;
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (*l == '#')
			continue;
		for (const char *p = strstr(l, "--attention-config='{"); p; p = strstr(p + 1, "--attention-config='{")) {
			const char *k = p + strlen("--attention-config='{");
			assert_true(*k == '"');
			_cleanup_free_ char *key = xasprintf("%.*s", (int)strcspn(k + 1, "\""), k + 1);
			for (size_t v = 0; v < 2; v++) {
				struct vllm_reg r;
				assert_int_equal(vllm_reg_load(&r, versions[v], NULL), 0);
				bool found = false;
				for (char **x = r.attention_config_keys; *x; x++)
					found = found || strcmp(*x, key) == 0;
				if (!found)
					fail_msg("removed.txt suggests --attention-config key '%s', which vLLM %s rejects",
						 key, versions[v]);
				vllm_reg_free(&r);
			}
			checked++;
		}
	}
	assert_true(checked >= 3);
	assert_null(strstr(text, "\"disable_flashinfer_prefill\": true"));
	assert_null(strstr(text, "\"use_cudnn_prefill\": true"));
}

static void test_images(void **state)
{
	(void)state;
	struct knowledge k = { 0 };
	struct err *e = NULL;
	if (knowledge_load(&k, NULL, &e) < 0)
		fail_msg("%s", e->msg);
	assert_int_equal(k.n_images, 2);
	for (size_t i = 0; i < k.n_images; i++) {
		assert_true(image_ref_pinned(k.images[i].ref));
		struct vllm_reg r;
		assert_int_equal(vllm_reg_load(&r, k.images[i].registry, NULL), 0);
		/* the image's version is the one its lists were read at */
		assert_string_contains(r.provenance, k.images[i].vllm_version);
		vllm_reg_free(&r);
	}
	assert_string_equal(knowledge_image(&k, "vllm/vllm-openai@sha256:8bd082c274fae025b7079498fe1da65182ba1d4c2188c0f5a68c1042c38c3695")->registry, "5a4c8d992");
	/* every role of every shipped profile is pinned to a recorded image */
	for (size_t p = 0; p < k.n_profiles; p++)
		for (int r = 0; r < ROLE__COUNT; r++) {
			const char *img = k.profiles[p].roles[r].knobs[KNOB_IMAGE];
			const char *feas = k.profiles[p].roles[r].knobs[KNOB_FEASIBLE];
			if (!k.profiles[p].roles[r].present || (feas && strcmp(feas, "false") == 0))
				continue;
			assert_non_null(img);
			assert_non_null(knowledge_image(&k, img));
		}
	knowledge_free(&k);

	_cleanup_free_ char *why = image_ref_problem("vllm/vllm-openai@sha256:7c5a10e9");
	assert_string_contains(why, "a digest prefix (8 of the 64 hex digits)");
	free(why);
	why = image_ref_problem("vllm/vllm-openai:nightly");
	assert_string_contains(why, "not pinned");
	free(why);
	why = image_ref_problem("");
	assert_string_contains(why, "empty");
	free(why);
	why = image_ref_problem("vllm/vllm-openai@sha256:7C5A10E9A8B3C8642F4D0463A41215176C0DD834B4F0967287C7E3E517CF1BE9");
	assert_non_null(why);
	assert_null(image_ref_problem("vllm/vllm-openai@sha256:7c5a10e9a8b3c8642f4d0463a41215176c0dd834b4f0967287c7e3e517cf1be9"));

	const char *bad = "kind: image\nname: x\nref: vllm/vllm-openai@sha256:8bd082c2\nvllm: 1\nregistry: 5a4c8d992\n"
			  "evidence: [{kind: declared, observation: o}]\n";
	struct knowledge k2 = { 0 };
	assert_int_equal(knowledge_add_yaml(&k2, "img.yaml", bad, strlen(bad), false, &e), -1);
	assert_string_contains(e->msg, "img.yaml:3:6: image ref 'vllm/vllm-openai@sha256:8bd082c2' is a digest prefix");
	err_free(e);
	e = NULL;
	const char *noreg = "kind: image\nname: x\nref: a/b@sha256:8bd082c274fae025b7079498fe1da65182ba1d4c2188c0f5a68c1042c38c3695\n"
			    "vllm: 1\nregistry: nosuch\nevidence: [{kind: declared, observation: o}]\n";
	assert_int_equal(knowledge_add_yaml(&k2, "img.yaml", noreg, strlen(noreg), false, &e), -1);
	assert_string_contains(e->msg, "img.yaml:5:11: registry 'nosuch' is not a shipped vLLM list");
	err_free(e);
	knowledge_free(&k2);
}

static void test_json_knobs(void **state)
{
	(void)state;
	char *out = NULL;
	const char *expect = NULL;
	assert_int_equal(knob_canon(KNOB_SPECULATIVE_CONFIG, "{\"method\":\"mtp\",\"num_speculative_tokens\":2}", &out, &expect), 0);
	assert_string_equal(out, "{\"method\": \"mtp\", \"num_speculative_tokens\": 2}");
	free(out);
	assert_int_equal(knob_canon(KNOB_SPECULATIVE_CONFIG, "none", &out, &expect), 0);
	free(out);
	assert_int_equal(knob_canon(KNOB_HF_OVERRIDES, "{\"a\": 1", &out, &expect), -1);
	assert_string_contains(expect, "invalid JSON");
	assert_int_equal(knob_canon(KNOB_HF_OVERRIDES, "[1, 2]", &out, &expect), -1);
	assert_string_contains(expect, "not an object");
	assert_int_equal(knob_canon(KNOB_HF_OVERRIDES, "{\"a\": \"$X\"}", &out, &expect), -1);
	assert_int_equal(knob_canon(KNOB_TOOL_CALL_PARSER, "qwen3 coder", &out, &expect), -1);
	assert_int_equal(knob_canon(KNOB_IMAGE, "a/b@sha256:abc", &out, &expect), -1);
	assert_int_equal(knob_canon(KNOB_IMAGE, "lobes-standin:test", &out, &expect), 0);
	free(out);
	assert_int_equal(knob_canon(KNOB_SERVED_NAMES, "role,model", &out, &expect), 0);
	free(out);
	assert_int_equal(knob_canon(KNOB_SERVED_NAMES, "role,,model", &out, &expect), -1);
	assert_int_equal(knob_canon(KNOB_ENABLE_PREFIX_CACHING, "maybe", &out, &expect), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists_load),
		cmocka_unit_test(test_check_arg),
		cmocka_unit_test(test_removed_replacements),
		cmocka_unit_test(test_images),
		cmocka_unit_test(test_json_knobs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
