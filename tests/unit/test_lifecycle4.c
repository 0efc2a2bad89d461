/*
 * test_lifecycle4.c — the rules written from the consumed held-out split 4
 * (tests/fixtures/logs/heldout4/): a Java server's log4j record relaying a
 * worker's output (TorchServe) is a layer, peeled so that the worker's
 * traceback is read; the platform line vLLM prints as it is imported says
 * pre-start when no other progress line comes before the failure; the
 * engine writing out the input of a model step that raised is its death;
 * a tool's message that carries CPython's wording of a built-in exception
 * names its class; importlib's, FastAPI's endpoint and the engine's
 * request intake frames name their phases; a Ray actor's prefix may hold
 * its __repr__'s parentheses. Each case fails without its rule.
 *
 * The log lines here are written for these tests, in the shapes vLLM,
 * Python and the wrappers print; they are not taken from real logs (those
 * are in tests/fixtures/logs/).
 */
#include "testutil.h"

#include "triage_helpers.h"

/* A log4j record relaying a worker process's stdout or stderr goes, the
 * worker's indentation kept: a bracketed level, a thread whose name ends
 * in -stdout or -stderr, a logger, ` - `. A thread named otherwise, a
 * record without the dash, and a bracketed word that is no level stay. */
static void test_relay_prefix(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "2025-02-03T10:11:12,345 [INFO ] W-9001-llm_2.0-stdout MODEL_LOG -   File \"/a/vllm/x.py\", "
		  "line 3, in f", "  File \"/a/vllm/x.py\", line 3, in f" },
		{ "[WARN ] W-9001-llm_2.0-stderr MODEL_LOG - Traceback (most recent call last):",
		  "Traceback (most recent call last):" },
		{ "[ERROR] W-9001-llm-stderr org.example.Lifecycle - ValueError: x", "ValueError: x" },
		{ "[INFO ] main org.example.ModelServer - Loading model", "[INFO ] main org.example.ModelServer - Loading model" },
		{ "[INFO ] W-9001-llm-stdout MODEL_LOG no dash here", "[INFO ] W-9001-llm-stdout MODEL_LOG no dash here" },
		{ "[vllm ] W-9001-llm-stdout MODEL_LOG - x", "[vllm ] W-9001-llm-stdout MODEL_LOG - x" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_norm(i, cases[i].in, cases[i].out);
	/* a worker's traceback relayed so, cut before its exception line: fatal */
	const char *log =
		"2025-02-03T10:11:12,345 [INFO ] W-9001-llm_2.0-stdout MODEL_LOG - Traceback (most recent call last):\n"
		"2025-02-03T10:11:12,345 [INFO ] W-9001-llm_2.0-stdout MODEL_LOG -   File "
		"\"/srv/lib/python3.10/site-packages/vllm/engine/llm_engine.py\", line 20, in from_engine_args\n"
		"2025-02-03T10:11:12,346 [INFO ] W-9001-llm_2.0-stdout MODEL_LOG -     engine = cls(**args)\n";
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, log, &v);
	assert_true(v.fatal);
	assert_string_equal(v.frame, "vllm/engine/llm_engine.py:20 in from_engine_args");
	triage_free(t);
}

#define PLATFORM "INFO 05-06 07:08:09 [__init__.py:1] Automatically detected platform cuda.\n"

/* The platform line vLLM prints as it is imported is pre-start when it is
 * the last progress line before a death; any other progress line before
 * the death wins over it, even one printed before it (an engine process
 * imports vLLM again after the API server named its arguments). */
static void test_import_line(void **state)
{
	(void)state;
	expect_phase(PLATFORM "Aborted (core dumped)\n", PHASE_PRESTART);
	expect_phase("INFO 05-06 07:08:09 [api_server.py:1] vLLM API server version 0.9.0\n" PLATFORM
		     "Aborted (core dumped)\n", PHASE_LOAD);
	expect_phase(PLATFORM "INFO 05-06 07:08:10 [default_loader.py:1] Loading weights took 3.2 seconds\n"
		     "Aborted (core dumped)\n", PHASE_LOAD);
	/* with no progress line at all, load stays the default */
	expect_phase("Aborted (core dumped)\n", PHASE_LOAD);
	/* a clean log that stops after the import says it stops in pre-start */
	struct triage *t = run(&none, PLATFORM, 0);
	assert_false(triage_life(t)->fatal);
	assert_int_equal(triage_life(t)->stops_in, PHASE_PRESTART);
	triage_free(t);
}

/* The engine writing out the input of a model step that raised (V0's
 * model runner, V1's engine core) is the engine dying, even where the
 * paste stops before the error: fatal while serving. */
static void test_failed_step_dump(void **state)
{
	(void)state;
	static const char *const dumps[] = {
		"INFO 05-06 07:08:09 model_runner_base.py:1] Writing input of failed execution to "
		"/tmp/err_execute_model_input_1.pkl...\n",
		"(EngineCore_DP0 pid=5) ERROR 05-06 07:08:09 [dump_input.py:1] Dumping input data for V1 LLM "
		"engine (v0.9.0) with config: model='x', \n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(dumps); i++) {
		char *log = xasprintf("INFO:     127.0.0.1:4000 - \"POST /v1/completions HTTP/1.1\" 200 OK\n%s",
				      dumps[i]);
		struct triage_verdict v;
		struct triage *t = verdict_of(&none, log, &v);
		if (!v.fatal || !triage_life(t)->death)
			fail_msg("case %zu: not fatal:\n%s", i, log);
		assert_int_equal(triage_life(t)->death->kind, EV_ENGINE_DEAD);
		assert_int_equal(v.phase, PHASE_SERVING);
		triage_free(t);
		free(log);
	}
}

/* A tool that prints a caught exception without its class (`Failed to
 * start: integer division or modulo by zero`) still names it, by the
 * wording CPython gives its built-in exceptions; other words name none. */
static void test_builtin_wording(void **state)
{
	(void)state;
	static const struct {
		const char *line, *type;
	} cases[] = {
		{ "2025-01-02 03:04:05.678 1 server ERROR [main.py:<module>():9] Failed to start model server: "
		  "integer division or modulo by zero\n", "ZeroDivisionError" },
		{ "ERROR 05-06 07:08:09 [launcher.py:1] Failed to launch: list index out of range\n", "IndexError" },
		{ "ERROR 05-06 07:08:09 [launcher.py:1] Failed to launch: 'NoneType' object has no attribute "
		  "'shape'\n", "AttributeError" },
		{ "ERROR 05-06 07:08:09 [launcher.py:1] Failed to launch: the server refused it\n", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct triage_verdict v;
		struct triage *t = verdict_of(&none, cases[i].line, &v);
		if (!v.fatal)
			fail_msg("case %zu: not fatal", i);
		if (cases[i].type ? !v.type || strcmp(v.type, cases[i].type) : v.type != NULL)
			fail_msg("case %zu: type %s, expected %s", i, v.type ? v.type : "(none)",
				 cases[i].type ? cases[i].type : "(none)");
		triage_free(t);
	}
}

/* Frames that name a phase in any app: importlib's own (`_find_and_load`,
 * under every import statement) pre-start when nothing later is named;
 * FastAPI calling a route's endpoint (`run_endpoint_function`) serving;
 * the engine taking a request in (`_add_processed_request`) serving when
 * nothing else is named. */
static void test_more_frames(void **state)
{
	(void)state;
	expect_phase("Traceback (most recent call last):\n"
		     "  File \"<frozen importlib._bootstrap>\", line 1027, in _find_and_load\n"
		     FRAME("myapp/core/__init__.py", "<module>")
		     "    from .model import Worker\n", PHASE_PRESTART);
	/* a progress line after the import started says it got further */
	expect_phase("INFO 05-06 07:08:09 [loader.py:1] Starting to load model /m...\n"
		     "Traceback (most recent call last):\n"
		     "  File \"<frozen importlib._bootstrap>\", line 1027, in _find_and_load\n"
		     "ImportError: x\n", PHASE_LOAD);
	expect_phase("Traceback (most recent call last):\n"
		     FRAME("fastapi/routing.py", "run_endpoint_function")
		     FRAME("myapp/serve/worker.py", "api_get_conv")
		     "NameError: name 'worker' is not defined\n", PHASE_SERVING);
	expect_phase("Traceback (most recent call last):\n"
		     FRAME("myapp/strategy.py", "start_server")
		     FRAME("vllm/v1/engine/llm_engine.py", "_add_processed_request")
		     "ValueError: x\n", PHASE_SERVING);
}

/* A Ray actor's prefix whose name its __repr__ gives holds one
 * parenthesized part; it goes like any process prefix (its frames are
 * then frames). Two nested parts, or a part first, stay. */
static void test_actor_repr_prefix(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "(ActorWorker(infer-0) pid=42, )   File \"/a/b.py\", line 1, in f",
		  "  File \"/a/b.py\", line 1, in f" },
		{ "(Rollout(a-1) pid=7, ip=10.0.0.2) INFO 05-06 07:08:09 [x.py:1] hi", "INFO 05-06 07:08:09 [x.py:1] hi" },
		{ "(A(b(c)) pid=1) x", "(A(b(c)) pid=1) x" },
		{ "((b) pid=1) x", "((b) pid=1) x" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_norm(i, cases[i].in, cases[i].out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relay_prefix),
		cmocka_unit_test(test_import_line),
		cmocka_unit_test(test_failed_step_dump),
		cmocka_unit_test(test_builtin_wording),
		cmocka_unit_test(test_more_frames),
		cmocka_unit_test(test_actor_repr_prefix),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
