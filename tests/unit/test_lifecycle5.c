/*
 * test_lifecycle5.c — the rules written from the consumed held-out split 5
 * (tests/fixtures/logs/heldout5/): a server seen answering a request (an
 * HTTP access line, whatever its status) had started, so an error record
 * after it does not make a paste that begins after the startup line fatal
 * unless the server shut down after it; IPython 8's frames (`File
 * path:line, in Class.method(args)`) are frames, so a notebook paste cut
 * inside such a traceback is fatal, with its vLLM frame. Each case fails
 * without its rule.
 *
 * The log lines here are written for these tests, in the shapes vLLM,
 * uvicorn and the proxies in front of it print; they are not taken from
 * real logs (those are in tests/fixtures/logs/).
 */
#include "testutil.h"

#include "triage_helpers.h"
#include "../../src/lib/triage/triage_int.h"

#define ERR_REQ "ERROR 05-01 01:51:54 [serving_chat.py:1] Error in chat_completion_full_generator - x\n"

static bool fatal_of(const char *log)
{
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, log, &v);
	bool f = v.fatal;
	triage_free(t);
	return f;
}

/* An access line before the error: the server was up; the request's
 * error is not the log's end. Any status counts (200, 400, 500), any HTTP
 * version, uvicorn's and a proxy's common log format alike. */
static void test_answered_before_error(void **state)
{
	(void)state;
	static const char *const answers[] = {
		"INFO:     10.0.0.1:32107 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
		"(APIServer pid=7) INFO:     127.0.0.1:36804 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request\n",
		"INFO:     127.0.0.1:1 - \"GET /v1/models HTTP/1.0\" 500 Internal Server Error\n",
		"10.0.0.9 - - [01/May/2025:01:51:54 +0000] \"POST /v1/completions HTTP/2.0\" 200 512\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(answers); i++) {
		char *log = xasprintf("%s" ERR_REQ, answers[i]);
		if (fatal_of(log))
			fail_msg("answer %zu: a request error after an answer was called fatal", i);
		free(log);
	}
	/* without the answer, a paste that never shows startup and ends in an
	 * error stays fatal */
	assert_true(fatal_of(ERR_REQ));
	/* the server shut down after the error: fatal, as after startup */
	assert_true(fatal_of("INFO:     10.0.0.1:1 - \"POST /v1/completions HTTP/1.1\" 200 OK\n"
			     "ERROR 05-01 01:51:55 [engine.py:1] Engine failed\n"
			     "INFO 05-01 01:51:56 [launcher.py:1] Shutting down FastAPI HTTP server.\n"));
}

/* Lines that name HTTP but are no access line do not count as an answer:
 * a URL in a message, a status without the request's closing quote, a
 * status that is no three-digit code. */
static void test_not_an_answer(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"INFO 05-01 01:51:50 [api.py:1] fetching https://example.org/x HTTP/1.1 200 OK\n",
		"INFO 05-01 01:51:50 [api.py:1] \"POST /v1/completions HTTP/1.1\" 20 OK\n",
		"INFO 05-01 01:51:50 [api.py:1] \"POST /v1/completions HTTP/1.1\" 2000 OK\n",
		"INFO 05-01 01:51:50 [api.py:1] \"POST /v1/completions HTTP/1.1\" 600 x\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		char *log = xasprintf("%s" ERR_REQ, lines[i]);
		if (!fatal_of(log))
			fail_msg("line %zu was read as an answer", i);
		free(log);
	}
}

/* A log that stops after an answer did not stop in a start-up step. */
static void test_answered_not_stopping(void **state)
{
	(void)state;
	struct triage *t = run(&none,
			       "INFO 05-06 07:08:09 [loader.py:1] Loading weights took 3.2 seconds\n"
			       "INFO:     10.0.0.1:1 - \"GET /health HTTP/1.1\" 200 OK\n",
			       0);
	assert_false(triage_life(t)->fatal);
	assert_int_equal(triage_life(t)->stops_in, PHASE_UNKNOWN);
	triage_free(t);
	t = run(&none, "INFO 05-06 07:08:09 [loader.py:1] Loading weights took 3.2 seconds\n", 0);
	assert_int_equal(triage_life(t)->stops_in, PHASE_LOAD);
	triage_free(t);
}

/* IPython 8 prints a frame as `File <path>:<line>, in <Class.method>(<args>)`
 * and the code lines under it with `--> N` on the failing one: a paste
 * that stops there is cut inside a traceback, fatal, and its innermost
 * vLLM frame (the method, not its class) names the phase. A line that
 * only looks so (no `.py:N`, no call) is not a frame. */
static void test_ipython8_frames(void **state)
{
	(void)state;
	const char *log =
		"File ~/conda/lib/python3.11/site-packages/vllm/executor/gpu_executor.py:36, in GPUExecutor._init_executor(self)\n"
		"     35 self.driver_worker.init_device()\n"
		"---> 36 self.driver_worker.load_model()\n"
		"\n"
		"File ~/conda/lib/python3.11/site-packages/vllm/worker/worker.py:139, in Worker.load_model(self)\n"
		"    138 def load_model(self):\n"
		"--> 139     self.model_runner.load_model()\n";
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, log, &v);
	assert_true(v.fatal);
	assert_int_equal(v.phase, PHASE_LOAD);
	assert_string_equal(v.frame, "vllm/worker/worker.py:139 in load_model");
	triage_free(t);
	static const char *const not_frames[] = {
		"File ~/conda/lib/python3.11/site-packages/vllm/worker/worker.py, in Worker.load_model(self)",
		"File ~/notes.txt:139, in Worker.load_model(self)",
		"File ~/conda/lib/vllm/worker/worker.py:139, in the end it failed",
	};
	for (size_t i = 0; i < ARRAY_SIZE(not_frames); i++) {
		char *frame = NULL;
		int strong = 0, weak = 0;
		if (lc_ipy_frame(not_frames[i], strlen(not_frames[i]), &frame, &strong, &weak))
			fail_msg("not a frame, read as one: %s", not_frames[i]);
		free(frame);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answered_before_error),
		cmocka_unit_test(test_not_an_answer),
		cmocka_unit_test(test_answered_not_stopping),
		cmocka_unit_test(test_ipython8_frames),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
