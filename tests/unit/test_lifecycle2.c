/*
 * test_lifecycle2.c — the lifecycle rules written from the consumed
 * held-out split 2 (tests/fixtures/logs/heldout2/): phases read from a
 * request reaching the server (request lines, the ASGI server's frames),
 * from an application's import, from a caller's generation step; each
 * case fails without its rule; native crash handlers' backtraces; the
 * no-platform, tensor-parallel and quantization-capability families;
 * where a log with no error stops (stops_in). test_causes.c has the rules written from split 1.
 *
 * The log lines here are written for these tests, in the shapes vLLM,
 * Python, uvicorn, starlette and Ray print; they are not taken from real
 * logs (those are in tests/fixtures/logs/).
 */
#include "testutil.h"

#include "triage_helpers.h"

#define LOADED "INFO 07-13 10:00:00 [loader.py:1] Loading model weights took 3 GiB\n"

/* A request line after the load (V0's engine logs each request it adds,
 * the API server each one it receives): a worker's traceback after it
 * fails while serving. */
static void test_request_lines(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"INFO 08-01 20:15:27 async_llm_engine.py:173] Added request chat-1.\n",
		"INFO 08-01 20:15:27 logger.py:36] Received request chatcmpl-1: prompt: 'x'\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		char *log = xasprintf(LOADED "%s"
				      "(RayWorkerWrapper pid=4) ERROR 08-01 20:15:29 worker_base.py:382] Error "
				      "executing method start_worker_execution_loop.\n"
				      "(RayWorkerWrapper pid=4) ERROR 08-01 20:15:29 worker_base.py:382] Traceback "
				      "(most recent call last):\n"
				      "(RayWorkerWrapper pid=4) ERROR 08-01 20:15:29 worker_base.py:382] "
				      FRAME("vllm/worker/worker_base.py", "execute_method"),
				      lines[i]);
		expect_phase(log, PHASE_SERVING);
		free(log);
	}
	/* without the request line the load line decides */
	expect_phase(LOADED "(RayWorkerWrapper pid=4) ERROR 08-01 20:15:29 worker_base.py:382] Traceback "
		     "(most recent call last):\n(RayWorkerWrapper pid=4) ERROR 08-01 20:15:29 worker_base.py:382] "
		     FRAME("vllm/worker/worker_base.py", "execute_method"), PHASE_LOAD);
}

/* A traceback through the ASGI server's request path (uvicorn's
 * run_asgi, starlette's call_next) is a request: the server was up. */
static void test_asgi_frames(void **state)
{
	(void)state;
	static const char *const frames[] = {
		FRAME("uvicorn/protocols/http/httptools_impl.py", "run_asgi"),
		FRAME("starlette/middleware/base.py", "call_next"),
	};
	for (size_t i = 0; i < ARRAY_SIZE(frames); i++) {
		char *log = xasprintf(LOADED "Exception in ASGI application\nTraceback (most recent call last):\n"
				      "%s    result = await app(scope)\n" FRAME("fastapi/applications.py", "__call__")
				      "    await super().__call__(scope)\n", frames[i]);
		expect_phase(log, PHASE_SERVING);
		free(log);
	}
	expect_phase(LOADED "Exception in ASGI application\nTraceback (most recent call last):\n"
		     FRAME("fastapi/applications.py", "__call__") "    await super().__call__(scope)\n",
		     PHASE_LOAD);
}

/* An application's import (Ray Serve's import_attr, importlib's
 * import_module) fails before any engine: pre-start — unless a progress
 * line says the engine was further (vLLM imports model code lazily). */
static void test_import_frames(void **state)
{
	(void)state;
	const char *tb = "Deploying app 'llm' failed with exception:\nTraceback (most recent call last):\n"
			 FRAME("ray/serve/_private/application_state.py", "build_serve_application")
			 "    app = f(import_attr(import_path), args)\n" FRAME("ray/_private/utils.py", "import_attr")
			 "    module = importlib.import_module(module_name)\n"
			 FRAME("importlib/__init__.py", "import_module")
			 "    return _bootstrap._gcd_import(name[level:], package, level)\n";
	expect_phase(tb, PHASE_PRESTART);
	char *after = xasprintf(LOADED "%s", tb);
	expect_phase(after, PHASE_LOAD);
	free(after);
}

/* A caller's generation step (`generate_sequences` of an RL trainer's
 * rollout worker) names serving when nothing else names a phase. */
static void test_generate_step(void **state)
{
	(void)state;
	const char *tb = "Traceback (most recent call last):\n" FRAME("verl/trainer/ppo/ray_trainer.py", "fit")
			 "    out = self.wg.generate_sequences(batch)\n"
			 FRAME("verl/single_controller/ray/base.py", "generate_sequences")
			 "    output = ray.get(output)\n"
			 "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n";
	expect_phase(tb, PHASE_SERVING);
	/* a name that only begins like it is not it */
	expect_phase("Traceback (most recent call last):\n" FRAME("x/y.py", "generated")
		     "    f()\nray.exceptions.ActorDiedError: The actor died unexpectedly.\n", PHASE_LOAD);
}

/* A log that ends in a native crash handler's backtrace (UCX's numbered
 * frames with addresses, here without their header, behind a Ray prefix)
 * is a native death with no Python exception; a numbered line without an
 * address and a call is not one. */
static void test_crash_backtrace(void **state)
{
	(void)state;
	const char *log = LOADED
		"(RayWorkerWrapper pid=7, ip=10.0.0.2) 17 0x0000000000150a7b _PyObject_MakeTpCall()  ???:0\n"
		"(RayWorkerWrapper pid=7, ip=10.0.0.2) 18 0x0000000000149096 _PyEval_EvalFrameDefault()  ???:0\n";
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, log, &v);
	assert_true(v.fatal);
	assert_null(v.type);
	assert_int_equal(v.line, 3);
	assert_int_equal(v.phase, PHASE_LOAD);
	const struct triage_life *L = triage_life(t);
	assert_non_null(L->death);
	assert_int_equal(L->death->kind, EV_NATIVE);
	triage_free(t);
	/* a table row is not a frame */
	t = verdict_of(&none, LOADED "17 0x10 requests\n18 0x11 requests\n", &v);
	assert_false(v.fatal);
	triage_free(t);
	/* absl's handler for a fatal signal, and UCX's header, are deaths */
	static const char *const heads[] = {
		"[2024-02-27 16:09:19,106 E 9 9] logging.cc:361: *** SIGSEGV received at time=1 on cpu 4 ***\n",
		"[1:2:0] ==== backtrace (tid:   5) ====\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(heads); i++) {
		char *l = xasprintf(LOADED "%sINFO 07-13 10:00:01 [x.py:1] waiting\n", heads[i]);
		t = verdict_of(&none, l, &v);
		if (!v.fatal)
			fail_msg("not fatal:\n%s", l);
		assert_int_equal(triage_life(t)->death->kind, EV_NATIVE);
		triage_free(t);
		free(l);
	}
}

/* No platform detected: the family from the INFO line vLLM prints, or
 * from a traceback through the platform interface's base class; the
 * configuration is built before any engine, so pre-start. */
static void test_no_platform(void **state)
{
	(void)state;
	static const char *const logs[] = {
		"INFO 08-29 04:29:54 [__init__.py:245] No platform detected, vLLM is running on "
		"UnspecifiedPlatform\n",
		"Traceback (most recent call last):\n" FRAME("vllm/engine/arg_utils.py", "create_engine_config")
		"    config = VllmConfig(\n" FRAME("vllm/platforms/interface.py", "is_async_output_supported")
		"    raise NotImplementedError\nNotImplementedError\n",
		"Traceback (most recent call last):\n" FRAME("vllm/config.py", "__init__")
		"    raise RuntimeError(\"Failed to infer device type\")\n"
		"RuntimeError: Failed to infer device type\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(logs); i++) {
		struct triage_verdict v;
		struct triage *t = verdict_of(&shipped, logs[i], &v);
		if (!v.fatal || !v.cause)
			fail_msg("no cause:\n%s", logs[i]);
		assert_string_equal(sig_cause_id(v.cause->sig), "no-platform-detected");
		if (v.phase != PHASE_PRESTART)
			fail_msg("phase %s:\n%s", triage_phase_name(v.phase), logs[i]);
		triage_free(t);
	}
	/* a traceback through another function of the interface is not it */
	struct triage_verdict v;
	struct triage *t = verdict_of(&shipped, "Traceback (most recent call last):\n"
				      FRAME("vllm/platforms/interface.py", "seed_everything")
				      "    f()\nValueError: x\n", &v);
	assert_true(!v.cause || strcmp(sig_cause_id(v.cause->sig), "no-platform-detected"));
	triage_free(t);
}

/* The cause of a log whose only line is one of a family's wordings, and
 * the phase it gets. */
static void expect_cause(const char *log, const char *cause, enum triage_phase phase)
{
	struct triage_verdict v;
	struct triage *t = verdict_of(&shipped, log, &v);
	if (!v.fatal || !v.cause)
		fail_msg("no cause:\n%s", log);
	if (strcmp(sig_cause_id(v.cause->sig), cause))
		fail_msg("cause %s, expected %s:\n%s", sig_cause_id(v.cause->sig), cause, log);
	if (v.phase != phase)
		fail_msg("phase %s, expected %s:\n%s", triage_phase_name(v.phase), triage_phase_name(phase), log);
	triage_free(t);
}

/* A tensor-parallel size that does not divide the attention heads: the
 * configuration refuses it before any engine (both wordings: the
 * exception and pydantic's validation error). */
static void test_tp_not_divisible(void **state)
{
	(void)state;
	expect_cause("ValueError: Total number of attention heads (40) must be divisible by tensor parallel "
		     "size (3).\n", "tp-size-not-divisible", PHASE_PRESTART);
	expect_cause(LOADED "Value error, Total number of attention heads (64) must be divisible by tensor "
		     "parallel size (3).\n", "tp-size-not-divisible", PHASE_PRESTART);
}

/* A quantization method or scheme the card is too old for: the message
 * of each era, and compressed-tensors' check in a cut traceback; fp8 is
 * its own family. */
static void test_quantization_card(void **state)
{
	(void)state;
	expect_cause("ValueError: The quantization method gptq_marlin is not supported for the current GPU. "
		     "Minimum capability: 80. Current capability: 75.\n", "quantization-unsupported-card",
		     PHASE_LOAD);
	expect_cause("RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min "
		     "capability: 80. ', 'Current capability: 75.')\n", "quantization-unsupported-card",
		     PHASE_LOAD);
	expect_cause("INFO 10-06 22:12:30 [loader.py:1] Starting to load model x\n"
		     "ERROR 10-06 22:12:39 [multiproc_executor.py:597] Traceback (most recent call last):\n"
		     "ERROR 10-06 22:12:39 [multiproc_executor.py:597] "
		     FRAME("vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py",
			   "get_scheme")
		     "ERROR 10-06 22:12:39 [multiproc_executor.py:597]     "
		     "self._check_scheme_supported(scheme.get_min_capability())\n",
		     "quantization-unsupported-card", PHASE_LOAD);
	expect_cause("ValueError: The quantization method fp8 is not supported for the current GPU. Minimum "
		     "capability: 89. Current capability: 86.\n", "fp8-unsupported-card", PHASE_LOAD);
}

/* A log with no error that stops in a start-up step says which one
 * (stops_in); one past startup complete, one whose last progress line
 * says the server was up, and a fatal one do not. */
static void test_stops_in(void **state)
{
	(void)state;
	static const struct {
		const char *log;
		enum triage_phase want;
	} cases[] = {
		{ "INFO 05-16 14:53:28 api_server.py:149] vLLM API server version 0.4.0\n"
		  "Loading safetensors checkpoint shards:  40% Completed | 19/48\n", PHASE_LOAD },
		{ LOADED "INFO 07-13 10:00:02 [worker.py:1] Memory profiling takes 3.1 seconds\n", PHASE_PROFILE },
		{ LOADED "INFO:     Application startup complete.\n", PHASE_UNKNOWN },
		{ LOADED "INFO 07-13 10:00:02 [launcher.py:46] Route: /v1/models, Methods: GET\n", PHASE_UNKNOWN },
		{ LOADED "INFO 07-13 10:00:02 [x.py:1] waiting for workers\n", PHASE_LOAD },
		{ "INFO 07-13 10:00:02 [x.py:1] hello\n", PHASE_UNKNOWN },
		{ LOADED "RuntimeError: boom\n", PHASE_UNKNOWN },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct triage *t = run(&none, cases[i].log, 0);
		enum triage_phase got = triage_life(t)->stops_in;
		if (got != cases[i].want)
			fail_msg("stops_in %s, expected %s:\n%s", triage_phase_name(got),
				 triage_phase_name(cases[i].want), cases[i].log);
		triage_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_lines),
		cmocka_unit_test(test_asgi_frames),
		cmocka_unit_test(test_import_frames),
		cmocka_unit_test(test_generate_step),
		cmocka_unit_test(test_crash_backtrace),
		cmocka_unit_test(test_no_platform),
		cmocka_unit_test(test_tp_not_divisible),
		cmocka_unit_test(test_quantization_card),
		cmocka_unit_test(test_stops_in),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
