/*
 * test_lifecycle3.c — the rules written from the consumed held-out split 3
 * (tests/fixtures/logs/heldout3/): a fatal signature inside a traceback its
 * process survived names no cause and flags nothing; a wrapper's tag in
 * front of the lines it relays from vLLM is peeled, and so is stern's
 * `<pod> <container> `; frames whose indentation a wrapper took are still
 * frames; a paste that ends inside a traceback of a server never
 * seen started is fatal whatever phase its progress lines name; deaths
 * more runtimes print (exit codes of kubectl describe and systemd, Ray's
 * dead workers, glibc aborts, torchrun's signals, containerd and
 * Kubernetes never running the image), the signal an exit code names, and
 * an entry point's top level that is the server running, not an import;
 * a request's own path through uvicorn and Starlette means serving; a
 * stack faulthandler dumps at a crash, whose root is the crash.
 * Each case fails without its rule.
 *
 * The log lines here are written for these tests, in the shapes vLLM,
 * Python and the wrappers print; they are not taken from real logs (those
 * are in tests/fixtures/logs/).
 */
#include "testutil.h"

#include "triage_helpers.h"

/* A request's error the API server answered (400) and went on serving:
 * the chat-template signature matches the exception, but the process
 * survived it — clean, no cause. The same exception that ends the log
 * (nothing answered after it) stays fatal with that cause. */
static void test_survived_signature(void **state)
{
	(void)state;
	const char *tb =
		"(APIServer pid=9) ERROR 03-05 16:30:27 [serving.py:323] Traceback (most recent call last):\n"
		"(APIServer pid=9) ERROR 03-05 16:30:27 [serving.py:323]   File "
		"\"/app/lib/python3.12/site-packages/vllm/renderers/hf.py\", line 451, in safe_apply_chat_template\n"
		"(APIServer pid=9) ERROR 03-05 16:30:27 [serving.py:323]     raise ChatTemplateResolutionError(\n"
		"(APIServer pid=9) ERROR 03-05 16:30:27 [serving.py:323] "
		"vllm.entrypoints.chat_utils.ChatTemplateResolutionError: As of transformers v4.44, default chat "
		"template is no longer allowed, so you must provide a chat template if the tokenizer does not "
		"define one.\n";
	char *served = xasprintf("%s(APIServer pid=9) INFO:     127.0.0.1:52662 - \"POST /v1/chat/completions "
				 "HTTP/1.1\" 400 Bad Request\n", tb);
	struct triage_verdict v;
	struct triage *t = verdict_of(&shipped, served, &v);
	assert_false(v.fatal);
	assert_null(v.cause);
	assert_null(triage_cause(t));
	triage_free(t);
	free(served);
	t = verdict_of(&shipped, tb, &v);
	assert_true(v.fatal);
	assert_non_null(v.cause);
	assert_string_equal(v.cause->sig->id, "chat-template-missing");
	triage_free(t);
	/* followed by other lines but no answer: nothing says it survived,
	 * the signature still names the cause */
	char *more = xasprintf("%s(APIServer pid=9) INFO 03-05 16:30:28 [loggers.py:1] Engine 000: Avg prompt "
			       "throughput: 0.0 tokens/s\n", tb);
	t = verdict_of(&shipped, more, &v);
	assert_true(v.fatal);
	assert_non_null(v.cause);
	triage_free(t);
	free(more);
}

/* A wrapper's tag in front of each relayed line goes: `[vLLM] `, a
 * level tag in any case with a process word after it; an all-capitals
 * level tag, a tag with a space or a digit first, and a tag alone stay.
 * A timestamp in CJK brackets goes as a bracketed one does. */
static void test_tag_prefix(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "[vLLM] Traceback (most recent call last):", "Traceback (most recent call last):" },
		{ "[Info] (Process) (EngineCore pid=4) ValueError: x", "ValueError: x" },
		{ "2026-06-09 14:01:52.983 [Error] (Process) ValueError: x", "ValueError: x" },
		{ "[ERROR] 2025-08-14 ERR99999 x", "[ERROR] 2025-08-14 ERR99999 x" },
		{ "[W609 14:01:53.8 ProcessGroupNCCL.cpp:1554] Warning: x",
		  "[W609 14:01:53.8 ProcessGroupNCCL.cpp:1554] Warning: x" },
		{ "[0] NCCL INFO x", "[0] NCCL INFO x" },
		{ "[vLLM]", "[vLLM]" },
		/* a timestamp in CJK brackets, the Ray prefix right after it */
		{ "\xe3\x80\x90" "2024-12-13 15:37:21" "\xe3\x80\x91" "(VLLMPolicyInference pid=13628, ip=10.66.159.53) "
		  "AttributeError: x", "AttributeError: x" },
		{ "\xe3\x80\x90" "2024-12-13 15:37:21 x", "\xe3\x80\x90" "2024-12-13 15:37:21 x" },
		{ "[vLLM]  indented", "[vLLM]  indented" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_norm(i, cases[i].in, cases[i].out);
}

/* stern's `<pod> <container> ` prefix goes where a vLLM line follows it,
 * so the API server's traceback under it is read (its process, its root);
 * two words before a message that is not a vLLM line stay. */
static void test_pod_prefix(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "ms-decode-6c8f9c4df6-vh88z vllm (APIServer pid=1) ERROR 10-27 22:25:30 [async_llm.py:480] x",
		  "ERROR 10-27 22:25:30 [async_llm.py:480] x" },
		{ "vllm-7d9f8b-abcde server INFO 10-27 22:25:30 [api_server.py:1] x",
		  "INFO 10-27 22:25:30 [api_server.py:1] x" },
		{ "vllm-7d9f8b-abcde main 2025-10-27T22:25:30Z INFO x", "INFO x" },
		{ "node-exporter-1 said hello there", "node-exporter-1 said hello there" },
		{ "nohyphens vllm INFO x", "nohyphens vllm INFO x" },
		{ "Pod-Name-1 vllm INFO x", "Pod-Name-1 vllm INFO x" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_norm(i, cases[i].in, cases[i].out);
	const char *log =
		"ms-decode-6c8f9c4df6-vh88z vllm (APIServer pid=1) ERROR 10-27 22:25:30 [async_llm.py:480] Traceback (most recent call last):\n"
		"ms-decode-6c8f9c4df6-vh88z vllm (APIServer pid=1) ERROR 10-27 22:25:30 [async_llm.py:480]   File "
		"\"/opt/vllm/vllm/v1/engine/async_llm.py\", line 439, in output_handler\n"
		"ms-decode-6c8f9c4df6-vh88z vllm (APIServer pid=1) ERROR 10-27 22:25:30 [async_llm.py:480] "
		"vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.\n";
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, log, &v);
	assert_true(v.fatal);
	assert_string_equal(v.type, "vllm.v1.engine.exceptions.EngineDeadError");
	assert_string_equal(v.process, "api-server");
	assert_int_equal(v.phase, PHASE_SERVING);
	triage_free(t);
}

#define INIT_DONE "INFO 03-27 11:37:40 [core.py:151] init engine (profile, create kv cache, warmup model) took 64.76 seconds\n"

/* A paste that ends inside a traceback (no exception line yet) of a
 * server never seen started is fatal, even when the last progress line
 * says the engine had finished its start-up (which reads as serving);
 * once startup complete was seen, a main process's cut traceback after
 * it is not judged so. */
static void test_cut_at_end(void **state)
{
	(void)state;
	const char *cut = INIT_DONE
		"2025-03-27 11:37:40 | INFO | model_worker | Loading the model on worker 3967a16d\n"
		"2025-03-27 11:37:40 | ERROR | stderr | Traceback (most recent call last):\n"
		"2025-03-27 11:37:40 | ERROR | stderr |   File \"/x/lib/python3.10/runpy.py\", line 196, in _run_module_as_main\n"
		"2025-03-27 11:37:40 | ERROR | stderr |     return _run_code(code, main_globals, None,\n";
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, cut, &v);
	assert_true(v.fatal);
	assert_null(v.type);
	triage_free(t);
	/* the same traceback after startup complete: the API server may have
	 * answered it (no engine or worker said so, no death followed) */
	char *started = xasprintf("INFO:     Application startup complete.\n%s", cut + strlen(INIT_DONE));
	t = verdict_of(&none, started, &v);
	assert_false(v.fatal);
	triage_free(t);
	free(started);
}

/* Frames a wrapper relayed without their indentation (`[vLLM] File ...`)
 * are frames: a paste that stops inside vLLM's import is fatal before
 * start, with its vLLM frame. */
static void test_unindented_frames(void **state)
{
	(void)state;
	const char *log =
		"Starting vLLM server...\n"
		"[vLLM] Traceback (most recent call last):\n"
		"[vLLM] File \"<frozen runpy>\", line 198, in _run_module_as_main\n"
		"[vLLM] File \"/v/lib/python3.11/site-packages/vllm/entrypoints/openai/api_server.py\", line 34, in <module>\n"
		"[vLLM] from vllm.engine.arg_utils import AsyncEngineArgs\n"
		"[vLLM] File \"/v/lib/python3.11/site-packages/vllm/config/__init__.py\", line 5, in <module>\n"
		"[vLLM] from vllm.config.cache import CacheConfig\n";
	struct triage_verdict v;
	struct triage *t = verdict_of(&none, log, &v);
	assert_true(v.fatal);
	assert_int_equal(v.phase, PHASE_PRESTART);
	assert_string_equal(v.frame, "vllm/config/__init__.py:5 in <module>");
	triage_free(t);
}

/* Deaths more runtimes print: exit codes as kubectl describe and systemd
 * give them, Ray's dead or memory-killed workers, glibc's heap and stack
 * aborts, torchrun's report of a worker's signal, and the container
 * platform never running the image (containerd, an image with no build
 * for the host, Kubernetes that cannot pull it or place it on a GPU).
 * Each is fatal without any signature; an exit code 0 is not. */
static void test_more_deaths(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		enum triage_event_kind kind;
		int code;
		enum triage_phase phase;
	} cases[] = {
		{ "    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    137\n", EV_EXIT, 137,
		  PHASE_LOAD },
		{ "systemd[1]: vllm.service: Main process exited, code=exited, status=1/FAILURE\n", EV_EXIT, 1,
		  PHASE_LOAD },
		{ "(raylet) A worker died or was killed while executing a task by an unexpected system error.\n",
		  EV_PROC_DIED, -1, PHASE_LOAD },
		{ "(raylet) Task was killed due to the node running low on memory.\n", EV_KILLED, -1, PHASE_LOAD },
		{ "double free or corruption (out)\n", EV_NATIVE, -1, PHASE_LOAD },
		{ "free(): invalid pointer\n", EV_NATIVE, -1, PHASE_LOAD },
		{ "*** stack smashing detected ***: terminated\n", EV_NATIVE, -1, PHASE_LOAD },
		{ "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -11) local_rank: 0 "
		  "(pid: 42) of binary: /usr/bin/python3\nSignal 11 (SIGSEGV) received by PID 42\n", EV_NATIVE, -1,
		  PHASE_LOAD },
		{ "Signal 9 (SIGKILL) received by PID 42\n", EV_KILLED, -1, PHASE_LOAD },
		{ "docker: Error: failed to create shim task: OCI runtime create failed\n", EV_RUNTIME, -1,
		  PHASE_PRESTART },
		{ "docker: no matching manifest for linux/arm64/v8 in the manifest list entries.\n", EV_RUNTIME, -1,
		  PHASE_PRESTART },
		{ "vllm-0   0/1     ImagePullBackOff   0          2m\n", EV_RUNTIME, -1, PHASE_PRESTART },
		{ "  Warning  Failed     10s   kubelet  Error: ErrImagePull\n", EV_RUNTIME, -1, PHASE_PRESTART },
		{ "  Warning  FailedScheduling  default-scheduler  0/3 nodes are available: 3 Insufficient "
		  "nvidia.com/gpu.\n", EV_RUNTIME, -1, PHASE_PRESTART },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *log = xasprintf("INFO 07-13 10:00:00 [loader.py:1] Starting to load model /models/x...\n%s",
				      cases[i].line);
		struct triage_verdict v;
		struct triage *t = verdict_of(&none, log, &v);
		const struct triage_event *d = triage_life(t)->death;
		if (!v.fatal || !d)
			fail_msg("case %zu: not fatal:\n%s", i, log);
		if (d->kind != cases[i].kind)
			fail_msg("case %zu: death %s, expected %s", i, triage_event_name(d->kind),
				 triage_event_name(cases[i].kind));
		if (cases[i].code >= 0)
			assert_int_equal(d->code, cases[i].code);
		if (v.phase != cases[i].phase)
			fail_msg("case %zu: phase %s", i, triage_phase_name(v.phase));
		triage_free(t);
		free(log);
	}
	/* a zero exit is no death */
	static const char *const fine[] = {
		"INFO:     Application startup complete.\n      Exit Code:    0\n",
		"INFO:     Application startup complete.\nvllm.service: Main process exited, code=exited, status=0/SUCCESS\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(fine); i++) {
		struct triage_verdict v;
		struct triage *t = verdict_of(&none, fine[i], &v);
		if (v.fatal)
			fail_msg("fine %zu: fatal", i);
		triage_free(t);
	}
}

/* The top level of vLLM's entry point run as a script (`python -m
 * vllm.entrypoints.openai.api_server`) is the server running, not an
 * import: a traceback through it takes the phase of what follows (here
 * the load the progress line names); a top level elsewhere in vllm/ is an
 * import (test_unindented_frames). */
static void test_entrypoint_module(void **state)
{
	(void)state;
	expect_phase("INFO 02-01 10:00:00 [model_runner.py:1] Starting to load model /models/x...\n"
		     "Traceback (most recent call last):\n"
		     FRAME("vllm/entrypoints/openai/api_server.py", "<module>")
		     "    uvloop.run(run_server(args))\n"
		     FRAME("vllm/entrypoints/openai/api_server.py", "run_server")
		     "    async with build_async_engine_client(args) as engine_client:\n",
		     PHASE_LOAD);
	expect_phase("Traceback (most recent call last):\n"
		     FRAME("vllm/entrypoints/openai/api_server.py", "<module>")
		     "    from vllm.engine.arg_utils import AsyncEngineArgs\n"
		     FRAME("vllm/engine/arg_utils.py", "<module>")
		     "ModuleNotFoundError: No module named 'x'\n",
		     PHASE_PRESTART);
}

/* An HTTP request's own path through uvicorn's protocol handlers or the
 * exception wrapper Starlette puts around http scopes means serving; the
 * lifespan's start-up through the same middleware does not. */
static void test_request_path_frames(void **state)
{
	(void)state;
	static const char *const req[] = {
		FRAME("uvicorn/protocols/http/h11_impl.py", "handle_events"),
		FRAME("starlette/_exception_handler.py", "wrapped_app"),
	};
	for (size_t i = 0; i < ARRAY_SIZE(req); i++) {
		char *log = xasprintf("INFO 02-01 10:00:00 [model_runner.py:1] Loading model weights took 3 GiB\n"
				      "Traceback (most recent call last):\n"
				      FRAME("starlette/middleware/errors.py", "__call__") "%s"
				      "    raise exc\n", req[i]);
		expect_phase(log, PHASE_SERVING);
		free(log);
	}
	expect_phase("INFO 02-01 10:00:00 [model_runner.py:1] Loading model weights took 3 GiB\n"
		     "Traceback (most recent call last):\n"
		     FRAME("starlette/routing.py", "lifespan")
		     FRAME("starlette/middleware/errors.py", "__call__")
		     "    await self.app(scope, receive, _send)\n", PHASE_LOAD);
}

/* A stack faulthandler dumps at a native crash (most recent call first,
 * `line N in f` without a comma) is no traceback cut short: the crash is
 * the root, the dump's first vLLM frame is where, and the first phase its
 * frames name (the innermost) is the phase. */
static void test_fault_dump(void **state)
{
	(void)state;
	struct triage_verdict v;
	struct triage *t = verdict_of(&none,
		"INFO 02-01 10:00:00 [model_runner.py:1] Loading model weights took 3 GiB\n"
		"Fatal Python error: Segmentation fault\n"
		"\n"
		"Current thread 0x00007fcf597eb640 (most recent call first):\n"
		"  File \"/usr/lib/python3.10/site-packages/flashinfer/decode.py\", line 514 in begin_forward\n"
		"  File \"/usr/lib/python3.10/site-packages/vllm/attention/backends/flashinfer.py\", line 149 in begin_forward\n"
		"  File \"/usr/lib/python3.10/site-packages/vllm/worker/model_runner.py\", line 782 in capture\n"
		"  File \"/usr/lib/python3.10/site-packages/vllm/worker/model_runner.py\", line 725 in capture_model\n"
		"  File \"/usr/lib/python3.10/site-packages/vllm/worker/worker.py\", line 90 in load_model\n", &v);
	assert_true(v.fatal);
	assert_null(v.type);
	assert_string_equal(v.message, "Fatal Python error: Segmentation fault");
	assert_int_equal(v.line, 2);
	assert_string_equal(v.frame, "vllm/attention/backends/flashinfer.py:149 in begin_forward");
	assert_int_equal(v.phase, PHASE_GRAPH);
	triage_free(t);
}

/* An exit code names the signal a process died of: the shell's and
 * container runtimes' 128 + N, Python multiprocessing's -N (also read
 * from V0's `died, exit code: -11`); other codes name none. */
static void test_exit_signal(void **state)
{
	(void)state;
	assert_string_contains(triage_exit_signal(139), "SIGSEGV");
	assert_string_contains(triage_exit_signal(137), "SIGKILL");
	assert_string_contains(triage_exit_signal(134), "SIGABRT");
	assert_string_contains(triage_exit_signal(-11), "SIGSEGV");
	assert_string_contains(triage_exit_signal(-9), "SIGKILL");
	assert_null(triage_exit_signal(0));
	assert_null(triage_exit_signal(1));
	assert_null(triage_exit_signal(128));
	assert_null(triage_exit_signal(255));
	assert_null(triage_exit_signal(-1));
	struct triage_verdict v;
	struct triage *t = verdict_of(&none,
				      "INFO 07-13 10:00:00 [loader.py:1] Starting to load model x\n"
				      "ERROR 07-13 10:00:09 multiproc_worker_utils.py:120] Worker VllmWorkerProcess "
				      "pid 4242 died, exit code: -11\n", &v);
	assert_true(v.fatal);
	assert_int_equal(triage_life(t)->death->kind, EV_PROC_DIED);
	assert_int_equal(triage_life(t)->death->code, -11);
	triage_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_survived_signature),
		cmocka_unit_test(test_tag_prefix),
		cmocka_unit_test(test_cut_at_end),
		cmocka_unit_test(test_unindented_frames),
		cmocka_unit_test(test_more_deaths),
		cmocka_unit_test(test_pod_prefix),
		cmocka_unit_test(test_exit_signal),
		cmocka_unit_test(test_entrypoint_module),
		cmocka_unit_test(test_request_path_frames),
		cmocka_unit_test(test_fault_dump),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
