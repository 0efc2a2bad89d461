/*
 * test_phase5.c — the phase definitions settled with held-out split 5
 * consumed (docs/triage.md, "Phase definitions settled with split 5
 * consumed"): the engine's configuration built from the arguments and the
 * model's own config (EngineArgs and its parser, the config classes'
 * constructors and checks, get_config, V0's initialize_cluster and its
 * tokenizer) is pre-start, even after a progress line of the engine's
 * start; an import of a name vLLM lacks is pre-start; the sleep mode's
 * wake_up is serving, and so, when nothing else names a step, are a
 * caller's chat turn and training step; the sampler's dummy run that
 * profile_run calls too names warm-up only when nothing around it names a
 * step. Each case fails without its rule.
 *
 * The log lines here are written for these tests, in the shapes vLLM and
 * Python print; they are not taken from real logs (those are in
 * tests/fixtures/logs/).
 */
#include "testutil.h"

#include "triage_helpers.h"

#define TB "Traceback (most recent call last):\n"
/* a progress line the engine prints as it starts: load, without a frame
 * that names an earlier step */
#define ENGINE_START "INFO 05-06 07:08:09 [llm_engine.py:1] Initializing an LLM engine (v0.6.3) with config: x\n"

/* The configuration built from the arguments: pre-start, whatever
 * progress line came before, through the frames of every era. */
static void test_config_frames(void **state)
{
	(void)state;
	static const char *const frames[] = {
		/* EngineArgs, any of its functions, on Linux and Windows */
		FRAME("vllm/engine/arg_utils.py", "__post_init__"),
		FRAME("vllm/engine/arg_utils.py", "create_model_config"),
		"  File \"C:\\venv\\Lib\\site-packages\\vllm\\engine\\arg_utils.py\", line 235, in "
		"__post_init__\n",
		/* the model's config.json fetched */
		FRAME("vllm/transformers_utils/config.py", "get_config"),
		/* the config classes: vllm/config.py, the vllm/config/ package */
		FRAME("vllm/config.py", "__init__"),
		FRAME("vllm/config.py", "_get_and_verify_max_len"),
		FRAME("vllm/config/model.py", "__post_init__"),
		FRAME("vllm/config/parallel.py", "verify_with_model_config"),
		/* V0's function names on a frame or on a code line */
		FRAME("vllm/engine/llm_engine.py", "from_engine_args")
		"    engine_configs = engine_args.create_engine_configs()\n",
		FRAME("vllm/entrypoints/openai/cli_args.py", "make_arg_parser"),
		FRAME("vllm/entrypoints/cli/serve.py", "subparser_init")
		"    serve_parser = AsyncEngineArgs.add_cli_args(serve_parser)\n",
		FRAME("vllm/entrypoints/openai/run_batch.py", "main")
		"    engine_args = AsyncEngineArgs.from_cli_args(args)\n",
		FRAME("vllm/engine/ray_utils.py", "initialize_cluster"),
		FRAME("vllm/engine/llm_engine.py", "_init_tokenizer"),
	};
	for (size_t i = 0; i < ARRAY_SIZE(frames); i++) {
		char *log = xasprintf(ENGINE_START TB FRAME("app/run.py", "main") "%sValueError: x\n", frames[i]);
		expect_phase(log, PHASE_PRESTART);
		free(log);
	}
	/* the same file's other functions, another library's get_config, and
	 * a config class outside vllm/ name nothing: the progress line does */
	static const char *const others[] = {
		FRAME("vllm/config.py", "get_num_layers"),
		FRAME("vllm/transformers_utils/config.py", "uses_mrope"),
		FRAME("ray/serve/config.py", "get_config"),
		FRAME("myapp/config.py", "__init__"),
	};
	for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
		char *log = xasprintf(ENGINE_START TB "%sValueError: x\n", others[i]);
		expect_phase(log, PHASE_LOAD);
		free(log);
	}
	/* a step named inside the configuration's call still wins */
	expect_phase(TB FRAME("vllm/engine/arg_utils.py", "create_engine_config")
		     FRAME("vllm/model_executor/model_loader/loader.py", "load_model") "ValueError: x\n",
		     PHASE_LOAD);
}

/* An import of a name the installed vLLM does not have: pre-start, unless
 * a frame names the step that imported it. */
static void test_cannot_import(void **state)
{
	(void)state;
	expect_phase(ENGINE_START TB FRAME("myapp/rollout.py", "<module>")
		     "    from vllm.model_executor.utils import set_weight_attrs\n"
		     "ImportError: cannot import name 'set_weight_attrs' from 'vllm.model_executor.utils'\n",
		     PHASE_PRESTART);
	expect_phase(TB FRAME("vllm/worker/model_runner.py", "load_model")
		     "ImportError: cannot import name 'X' from 'transformers'\n", PHASE_LOAD);
}

/* The sleep mode waking an engine: it had started, serving (a progress
 * line of the start before it notwithstanding). */
static void test_wake_up(void **state)
{
	(void)state;
	expect_phase(ENGINE_START TB FRAME("myapp/trainer.py", "fit") "    llm.wake_up()\n"
		     FRAME("vllm/device_allocator/cumem.py", "wake_up")
		     "RuntimeError: CUDA Error: out of memory\n", PHASE_SERVING);
}

/* A caller's chat turn and training step: serving when nothing else names
 * a step, not over a progress line that does. */
static void test_caller_steps(void **state)
{
	(void)state;
	static const char *const steps[] = {
		FRAME("myapp/chat.py", "run_chat") "    for text in model.stream_chat(messages):\n",
		FRAME("myapp/eval.py", "answer") "    outputs = llm.chat(conversation)\n",
		FRAME("transformers/trainer.py", "training_step"),
	};
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		char *log = xasprintf(TB FRAME("myapp/main.py", "main") "%sRuntimeError: x\n", steps[i]);
		expect_phase(log, PHASE_SERVING);
		free(log);
		log = xasprintf(ENGINE_START TB "%sRuntimeError: x\n", steps[i]);
		expect_phase(log, PHASE_LOAD);
		free(log);
	}
}

/* The sampler's and pooler's dummy runs: warm-up alone, profile under
 * profile_run (V1's profile_run calls them too). */
static void test_dummy_runs(void **state)
{
	(void)state;
	static const char *const runs[] = { "_dummy_sampler_run", "_dummy_pooler_run" };
	for (size_t i = 0; i < ARRAY_SIZE(runs); i++) {
		char *log = xasprintf(TB FRAME("vllm/v1/worker/gpu_worker.py", "determine_available_memory")
				      FRAME("vllm/v1/worker/gpu_model_runner.py", "profile_run")
				      FRAME("vllm/v1/worker/gpu_model_runner.py", "%s") "RuntimeError: x\n", runs[i]);
		expect_phase(log, PHASE_PROFILE);
		free(log);
		log = xasprintf(TB FRAME("vllm/v1/worker/gpu_model_runner.py", "%s") "RuntimeError: x\n", runs[i]);
		expect_phase(log, PHASE_WARMUP);
		free(log);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_frames),
		cmocka_unit_test(test_cannot_import),
		cmocka_unit_test(test_wake_up),
		cmocka_unit_test(test_caller_steps),
		cmocka_unit_test(test_dummy_runs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
