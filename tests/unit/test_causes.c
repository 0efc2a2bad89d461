/*
 * test_causes.c — the rules that carry triage from the logs they were
 * written from to logs of other projects: where a failure happened (the
 * engine's loops and the request paths mean serving, the call a cut
 * paste was making, messages that name a phase only when nothing else
 * does), deaths whose native stack is not the cause, tracebacks as
 * notebooks print them, process prefixes that keep a frame's indentation,
 * and the caller-API family named from its root exception. Each case
 * fails without its rule.
 *
 * The log lines here are written for these tests, in the shapes vLLM,
 * Python, IPython, torch and Ray print; they are not taken from real logs
 * (those are in tests/fixtures/logs/).
 */
#include "testutil.h"

#include "triage_helpers.h"


/* The engine's loops, its output paths and the request handlers run only
 * once start-up is over: serving, whatever progress line came before. */
static void test_serving_frames(void **state)
{
	(void)state;
	static const char *const fns[] = {
		FRAME("vllm/v1/engine/core.py", "run_busy_loop"),
		FRAME("vllm/v1/engine/core.py", "_process_engine_step"),
		FRAME("vllm/engine/async_llm_engine.py", "run_engine_loop"),
		FRAME("vllm/engine/async_llm_engine.py", "engine_step"),
		FRAME("vllm/engine/async_llm_engine.py", "step_async"),
		FRAME("vllm/v1/engine/core_client.py", "get_output_async"),
		FRAME("vllm/v1/engine/async_llm.py", "output_handler"),
		FRAME("vllm/engine/multiprocessing/client.py", "_process_request"),
		/* a request handler, whatever its function */
		FRAME("vllm/entrypoints/openai/serving_chat.py", "some_handler"),
	};
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++) {
		/* a request's traceback is fatal when a death follows it */
		char *log = xasprintf("INFO 07-13 10:00:00 [loader.py:1] Loading model weights took 3 GiB\n"
				      "Traceback (most recent call last):\n%s    x = y()\nFooError: x\nKilled\n",
				      fns[i]);
		expect_phase(log, PHASE_SERVING);
		free(log);
	}
	/* not a serving function: the progress line decides */
	expect_phase("INFO 07-13 10:00:00 [loader.py:1] Loading model weights took 3 GiB\n"
		     "Traceback (most recent call last):\n" FRAME("vllm/v1/engine/core.py", "run_engine_core")
		     "    x = y()\nFooError: x\n", PHASE_LOAD);
}

/* A paste cut after a frame's code line: the function that line calls
 * names the phase (here the busy loop: serving), in the walk of a
 * traceback with its header and in one read from the tail. */
static void test_code_call(void **state)
{
	(void)state;
	const char *body = FRAME("vllm/v1/engine/core.py", "run_engine_core")
		"    engine_core.run_busy_loop()\n";
	char *with_header = xasprintf("INFO 07-13 10:00:00 [loader.py:1] Loading model weights took 3 GiB\n"
				      "ERROR 07-13 10:00:01 [core.py:1] Traceback (most recent call last):\n%s", body);
	char *headless = xasprintf("INFO 07-13 10:00:00 [loader.py:1] Loading model weights took 3 GiB\n%s", body);
	expect_phase(with_header, PHASE_SERVING);
	expect_phase(headless, PHASE_SERVING);
	free(with_header);
	free(headless);
	/* a call no phase is known for leaves the progress line's */
	expect_phase("INFO 07-13 10:00:00 [loader.py:1] Loading model weights took 3 GiB\n"
		     FRAME("vllm/v1/engine/core.py", "run_engine_core") "    engine_core.frobnicate()\n",
		     PHASE_LOAD);
}

/* Messages of the engine's loop dying under a running server. */
static void test_serving_messages(void **state)
{
	(void)state;
	expect_phase("Traceback (most recent call last):\n" FRAME("x/client.py", "f")
		     "vllm.engine.multiprocessing.MQEngineDeadError: Engine loop is not running. Inspect the "
		     "stacktrace to find the original error.\n", PHASE_SERVING);
	expect_phase("Traceback (most recent call last):\n" FRAME("x/client.py", "f")
		     "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
		     "(above) for the root cause.\n", PHASE_SERVING);
}

/* "unexpected keyword argument" names pre-start only when no progress
 * line names a phase: a caller's argument may be rejected by EngineArgs
 * before the engine starts, or by a server class built after it. */
static void test_weak_message(void **state)
{
	(void)state;
	const char *tb = "Traceback (most recent call last):\n  File \"/srv/app.py\", line 3, in start\n"
			 "    Foo(x=1)\nTypeError: Foo.__init__() got an unexpected keyword argument 'x'\n";
	expect_phase(tb, PHASE_PRESTART);
	char *after = xasprintf("INFO 07-13 10:00:00 [loader.py:1] Loading model weights took 3 GiB\n%s", tb);
	expect_phase(after, PHASE_LOAD);
	free(after);
	/* a message that names its phase outright still wins over the line */
	expect_phase("INFO 07-13 10:00:00 [loader.py:1] Loading model weights took 3 GiB\n"
		     "Traceback (most recent call last):\n  File \"/srv/app.py\", line 3, in start\n    f()\n"
		     "RuntimeError: CUDA out of memory occurred when warming up sampler\n", PHASE_WARMUP);
}

/* A native death's C++ stack (`frame #N:`) is not the root: the death's
 * event is, with the phase its message names. */
static void test_native_stack(void **state)
{
	(void)state;
	const char *log =
		"INFO 07-13 10:00:00 [loader.py:1] Loading model weights took 3 GiB\n"
		"(RayWorkerWrapper pid=5) [E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated "
		"with exception: CUDA error: unknown error\n"
		"(RayWorkerWrapper pid=5) Exception raised from c10_cuda_check_implementation at "
		"../c10/cuda/CUDAException.cpp:44 (most recent call first):\n"
		"(RayWorkerWrapper pid=5) frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 "
		"(0x7f in /x/torch/lib/libc10.so)\n"
		"(RayWorkerWrapper pid=5) frame #1: c10::detail::torchCheckFail(char const*) + 0x64 (0x7f in "
		"/x/torch/lib/libc10.so)\n";
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, log, &v);
	assert_true(v.fatal);
	assert_null(v.type);
	assert_int_equal(v.line, 2);
	assert_string_contains(v.message, "watchdog thread terminated");
	assert_int_equal(v.phase, PHASE_SERVING);
	triage_free(t);
}

/* Tracebacks as IPython and Colab print them: their frames make a paste
 * that stops inside one fatal, with the vLLM frame named. */
static void test_notebook_frames(void **state)
{
	(void)state;
	static const char *const logs[] = {
		"8 frames\n"
		"[/usr/lib/python3/dist-packages/vllm/utils.py](https://localhost:8080/#) in inner(*args, **kwargs)\n"
		"   1159 \n"
		"-> 1161             return fn(*args, **kwargs)\n"
		"\n"
		"[/usr/lib/python3/dist-packages/vllm/entrypoints/llm.py](https://localhost:8080/#) in __init__(self, model)\n"
		"    246         # Create the Engine\n"
		"--> 247         self.llm_engine = LLMEngine.from_engine_args(\n",
		"<ipython-input-3-abc> in <cell line: 0>()\n"
		"----> 1 llm = LLM(model='x')\n"
		"/usr/lib/python3/dist-packages/vllm/entrypoints/llm.py in __init__(self, model)\n"
		"--> 247         self.llm_engine = LLMEngine.from_engine_args(\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(logs); i++) {
		struct triage_verdict v;
		struct triage *t = verdict_of(&none, logs[i], &v);
		if (!v.fatal)
			fail_msg("case %zu: not fatal", i);
		assert_string_equal(v.frame, "vllm/entrypoints/llm.py in __init__");
		triage_free(t);
	}
	/* a line that only mentions a path is no frame */
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, "INFO 07-13 10:00:00 [x.py:1] see /x/vllm/llm.py in the docs (v1)\n", &v);
	assert_false(v.fatal);
	triage_free(t);
}

/* A process prefix keeps the indentation of the frame behind it: a paste
 * that starts inside an engine core's traceback is read as one. */
static void test_prefixed_frames(void **state)
{
	(void)state;
	const char *log =
		"(EngineCore_DP0 pid=7)     self.run()\n"
		"(EngineCore_DP0 pid=7)   File \"/x/vllm/v1/engine/core.py\", line 892, in _process_engine_step\n"
		"(EngineCore_DP0 pid=7)     outputs = self.step_fn()\n";
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, log, &v);
	assert_true(v.fatal);
	assert_string_equal(v.frame, "vllm/v1/engine/core.py:892 in _process_engine_step");
	assert_int_equal(v.phase, PHASE_SERVING);
	assert_string_equal(v.process, "engine-core");
	triage_free(t);
}

/* The caller-API family from its root exception, over the generic lines,
 * however the caller wraps the message. */
static void test_caller_api(void **state)
{
	(void)state;
	static const struct {
		const char *root;
		const char *sig;
	} cases[] = {
		{ "AttributeError: 'AsyncLLM' object has no attribute 'engine'", "caller-api-missing-attribute" },
		{ "ImportError: cannot import name 'Foo' from 'vllm.bar' (/x/vllm/bar.py)",
		  "caller-api-missing-attribute" },
		{ "TypeError: [address=0.0.0.0:1, pid=2] AsyncEngineArgs.__init__() got an unexpected keyword "
		  "argument 'foo'", "caller-unexpected-keyword" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *log = xasprintf("ERROR 07-13 10:00:00 [core.py:1] EngineCore failed to start.\n"
				      "Traceback (most recent call last):\n  File \"/srv/worker.py\", line 57, in __init__\n"
				      "    x = engine.y\n%s\n", cases[i].root);
		struct triage_verdict v;
		struct triage *t = verdict_of(&shipped, log, &v);
		assert_true(v.fatal);
		if (!v.cause || strcmp(v.cause->sig->id, cases[i].sig) != 0)
			fail_msg("case %zu: cause %s, expected %s", i, v.cause ? v.cause->sig->id : "(none)",
				 cases[i].sig);
		assert_string_equal(sig_cause_id(v.cause->sig), "caller-api-mismatch");
		triage_free(t);
		free(log);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serving_frames),
		cmocka_unit_test(test_code_call),
		cmocka_unit_test(test_serving_messages),
		cmocka_unit_test(test_weak_message),
		cmocka_unit_test(test_native_stack),
		cmocka_unit_test(test_notebook_frames),
		cmocka_unit_test(test_prefixed_frames),
		cmocka_unit_test(test_caller_api),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
