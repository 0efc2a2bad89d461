/*
 * test_lifecycle.c — the lifecycle reader and its verdict (lifecycle.c,
 * tail.c, verdict.c): process kinds from prefixes, chained tracebacks,
 * survived tracebacks, serving-time crashes, native deaths, the container
 * runtime's errors, exit codes, phases, and the same verdict however the
 * input is split. Most run with no signature at all: the verdict must not
 * need one.
 *
 * The log lines here are written for these tests, in the shapes vLLM,
 * Python, Ray, docker and the NVIDIA container runtime print; they are not
 * taken from real logs (those are in tests/fixtures/logs/).
 */
#include "testutil.h"

#include "triage_helpers.h"

static const char *frames =
	"  File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py\", line 700, in run_engine_core\n"
	"    engine_core = EngineCoreProc(*args, **kwargs)\n"
	"  File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py\", line 1800, in load_model\n"
	"    self.model = get_model(vllm_config=self.vllm_config)\n";

/* A traceback in the process a prefix names: its kind. */
static void expect_proc(const char *prefix, enum triage_proc want)
{
	char *log = xasprintf("%sERROR 07-13 10:00:00 [core.py:1] Traceback (most recent call last):\n"
			      "%sERROR 07-13 10:00:00 [core.py:1]   File \"/x/vllm/v1/engine/core.py\", line 7, in f\n"
			      "%sERROR 07-13 10:00:00 [core.py:1] FooError: bar\n", prefix, prefix, prefix);
	struct triage *t = run(&none, log, 0);
	const struct triage_life *L = triage_life(t);
	assert_int_equal(L->n_tbs, 1);
	if (L->tbs[0].proc != want)
		fail_msg("prefix '%s': process %s, expected %s", prefix, triage_proc_kind(L->tbs[0].proc),
			 triage_proc_kind(want));
	assert_true(L->procs & (1u << want));
	assert_string_equal(L->tbs[0].type, "FooError");
	triage_free(t);
	free(log);
}

static void test_process_kinds(void **state)
{
	(void)state;
	expect_proc("", PROC_NONE);                                      /* V0's engine */
	expect_proc("(APIServer pid=1) ", PROC_API);                     /* V1 */
	expect_proc("(EngineCore_DP0 pid=77) ", PROC_ENGINE);
	expect_proc("(EngineCore pid=51) ", PROC_ENGINE);
	expect_proc("(VllmWorker rank=0 pid=9) ", PROC_WORKER);
	expect_proc("(Worker_TP1 pid=60) ", PROC_WORKER);
	expect_proc("(VllmWorkerProcess pid=144) ", PROC_WORKER);        /* V0 multiprocessing */
	expect_proc("(RayWorkerWrapper pid=643, ip=10.0.0.2) ", PROC_WORKER); /* Ray */
	expect_proc("(raylet) ", PROC_RAY);
	expect_proc("(LLMRayActor pid=2171417, ip=10.1.1.1) ", PROC_RAY);
	expect_proc("vllm-1  | (EngineCore_DP0 pid=7) ", PROC_ENGINE);   /* under compose's prefix */
	expect_proc("\x1b[1;36m(EngineCore_DP0 pid=7)\x1b[0;0m ", PROC_ENGINE); /* coloured */
}

/* The verdict of text run with no signature. */
static void verdict_alone(const char *text, struct triage_verdict *v, struct triage **out)
{
	*out = run(&none, text, 0);
	triage_verdict(*out, v);
}

/* A traceback raised from another: the root is the first of the chain. */
static void test_chained(void **state)
{
	(void)state;
	static const char *const banners[] = {
		"The above exception was the direct cause of the following exception:",
		"During handling of the above exception, another exception occurred:",
	};
	for (size_t i = 0; i < 2; i++) {
		char *log = xasprintf("Traceback (most recent call last):\n%s"
				      "KeyError: 'model.layers.0.foo'\n\n%s\n\n"
				      "Traceback (most recent call last):\n%s"
				      "RuntimeError: Engine core initialization failed. See root cause above.\n",
				      frames, banners[i], frames);
		struct triage *t;
		struct triage_verdict v;
		verdict_alone(log, &v, &t);
		const struct triage_life *L = triage_life(t);
		assert_true(v.fatal && v.structural);
		assert_int_equal(L->n_tbs, 2);
		assert_int_equal(L->tbs[1].chained_from, 0);
		assert_string_equal(v.type, "KeyError");
		assert_string_equal(v.message, "'model.layers.0.foo'");
		assert_int_equal(v.line, 6);
		assert_string_equal(v.frame, "vllm/v1/worker/gpu_model_runner.py:1800 in load_model");
		assert_int_equal(v.phase, PHASE_LOAD);
		assert_null(v.cause); /* no known cause */
		triage_free(t);
		free(log);
	}
	/* without the banner, two tracebacks are not chained */
	char *log = xasprintf("Traceback (most recent call last):\n%sKeyError: 'a'\n"
			      "INFO 07-13 10:00:01 [x.py:1] something else\n"
			      "Traceback (most recent call last):\n%sValueError: b\n", frames, frames);
	struct triage *t = run(&none, log, 0);
	assert_int_equal(triage_life(t)->tbs[1].chained_from, -1);
	triage_free(t);
	free(log);
}

/* Tracebacks a process survives are not fatal. */
static void test_survived(void **state)
{
	(void)state;
	struct triage *t;
	struct triage_verdict v;
	/* logged as a warning, the boot goes on */
	verdict_alone("WARNING 07-13 10:00:00 [utils.py:1] Traceback (most recent call last):\n"
		   "WARNING 07-13 10:00:00 [utils.py:1]   File \"/x/vllm/utils.py\", line 3, in probe\n"
		   "WARNING 07-13 10:00:00 [utils.py:1] OSError: probe failed\n"
		   "INFO 07-13 10:00:01 [loader.py:1] Loading weights took 3.1 seconds\n", &v, &t);
	assert_false(v.fatal);
	assert_int_equal(triage_life(t)->n_tbs, 1);
	assert_false(triage_life(t)->tbs[0].fatal);
	triage_free(t);
	/* ... and it is not the root when the log later ends in an error */
	verdict_alone("WARNING 07-13 10:00:00 [utils.py:1] Traceback (most recent call last):\n"
		   "WARNING 07-13 10:00:00 [utils.py:1]   File \"/x/vllm/utils.py\", line 3, in probe\n"
		   "WARNING 07-13 10:00:00 [utils.py:1] OSError: probe failed\n"
		   "ERROR 07-13 10:00:01 [x.py:1] the frobnicator refused to frob\n", &v, &t);
	assert_true(v.fatal);
	assert_null(v.type);
	assert_string_equal(v.message, "the frobnicator refused to frob");
	triage_free(t);
	/* a download that failed and was retried: the log goes on to start */
	verdict_alone("ERROR 07-13 10:00:00 [hf.py:1] Traceback (most recent call last):\n"
		   "ERROR 07-13 10:00:00 [hf.py:1]   File \"/x/huggingface_hub/file_download.py\", line 9, in get\n"
		   "ERROR 07-13 10:00:00 [hf.py:1] requests.exceptions.ConnectionError: reset by peer\n"
		   "INFO 07-13 10:00:05 [hf.py:2] retrying download\n"
		   "INFO 07-13 10:01:00 [loader.py:1] Loading weights took 30.1 seconds\n"
		   "INFO:     Application startup complete.\n", &v, &t);
	assert_false(v.fatal);
	triage_free(t);
	/* a request the API server answered with 400 while serving */
	verdict_alone("INFO:     Application startup complete.\n"
		   "(APIServer pid=1) ERROR 07-13 10:02:00 [serving_chat.py:200] Error in preprocessing prompt inputs\n"
		   "(APIServer pid=1) ERROR 07-13 10:02:00 [serving_chat.py:200] Traceback (most recent call last):\n"
		   "(APIServer pid=1) ERROR 07-13 10:02:00 [serving_chat.py:200]   File \"/x/vllm/entrypoints/openai/serving_chat.py\", line 183, in create_chat_completion\n"
		   "(APIServer pid=1) ERROR 07-13 10:02:00 [serving_chat.py:200] ValueError: This model's maximum context length is 4096 tokens.\n"
		   "(APIServer pid=1) INFO:     127.0.0.1:5000 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request\n",
		   &v, &t);
	assert_false(v.fatal);
	triage_free(t);
	/* the same request error, pasted without the start (a request's frames) */
	verdict_alone("(APIServer pid=1) ERROR 07-13 10:02:00 [serving_chat.py:200] Traceback (most recent call last):\n"
		   "(APIServer pid=1) ERROR 07-13 10:02:00 [serving_chat.py:200]   File \"/x/vllm/entrypoints/openai/serving_chat.py\", line 183, in create_chat_completion\n"
		   "(APIServer pid=1) ERROR 07-13 10:02:00 [serving_chat.py:200] ValueError: This model's maximum context length is 4096 tokens.\n",
		   &v, &t);
	assert_false(v.fatal);
	triage_free(t);
	/* an interrupt is a stop, not a failure */
	verdict_alone("Traceback (most recent call last):\n  File \"/x/vllm/entrypoints/cli/main.py\", line 3, in main\n"
		   "KeyboardInterrupt\n", &v, &t);
	assert_false(v.fatal);
	triage_free(t);
}

/* The engine dies while serving: fatal, phase serving. */
static void test_serving_crash(void **state)
{
	(void)state;
	struct triage *t;
	struct triage_verdict v;
	verdict_alone("(APIServer pid=1) INFO:     Application startup complete.\n"
		   "(APIServer pid=1) INFO 07-13 10:05:00 [loggers.py:1] Engine 000: Avg prompt throughput: 10.0 tokens/s\n"
		   "(EngineCore_DP0 pid=77) ERROR 07-13 10:06:00 [core.py:1] EngineCore encountered a fatal error.\n"
		   "(EngineCore_DP0 pid=77) ERROR 07-13 10:06:00 [core.py:1] Traceback (most recent call last):\n"
		   "(EngineCore_DP0 pid=77) ERROR 07-13 10:06:00 [core.py:1]   File \"/x/vllm/v1/engine/core.py\", line 9, in run_busy_loop\n"
		   "(EngineCore_DP0 pid=77) ERROR 07-13 10:06:00 [core.py:1]   File \"/x/vllm/v1/worker/gpu_model_runner.py\", line 99, in execute_model\n"
		   "(EngineCore_DP0 pid=77) ERROR 07-13 10:06:00 [core.py:1] IndexError: index 7 is out of bounds\n"
		   "(APIServer pid=1) ERROR 07-13 10:06:00 [async_llm.py:1] AsyncLLM output_handler failed.\n"
		   "(APIServer pid=1) vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.\n"
		   "(APIServer pid=1) INFO:     Shutting down\n", &v, &t);
	assert_true(v.fatal && v.structural);
	assert_int_equal(v.phase, PHASE_SERVING);
	assert_string_equal(v.type, "IndexError");
	assert_string_equal(v.process, "engine-core");
	assert_string_equal(v.frame, "vllm/v1/worker/gpu_model_runner.py:99 in execute_model");
	assert_non_null(triage_life(t)->death);
	triage_free(t);
	/* an API server traceback while serving, with no death after it, is a
	 * request's; the same with the engine dead after it is fatal */
	verdict_alone("INFO:     Application startup complete.\n"
		   "Traceback (most recent call last):\n  File \"/x/vllm/entrypoints/x.py\", line 1, in handle\n"
		   "ValueError: odd request\nINFO 07-13 10:07:00 [loggers.py:1] Avg prompt throughput: 1.0 tokens/s\n",
		   &v, &t);
	assert_false(v.fatal);
	triage_free(t);
	/* ... also when the paste ends with it */
	verdict_alone("INFO:     Application startup complete.\n"
		   "Traceback (most recent call last):\n  File \"/x/vllm/entrypoints/x.py\", line 1, in handle\n"
		   "ValueError: odd request\n", &v, &t);
	assert_false(v.fatal);
	triage_free(t);
	verdict_alone("INFO:     Application startup complete.\n"
		   "Traceback (most recent call last):\n  File \"/x/vllm/entrypoints/x.py\", line 1, in handle\n"
		   "ValueError: odd request\nERROR 07-13 10:07:00 [async_llm.py:1] AsyncLLM output_handler failed.\n",
		   &v, &t);
	assert_true(v.fatal);
	assert_int_equal(v.phase, PHASE_SERVING);
	triage_free(t);
}

/* Deaths that leave no Python exception. */
static void test_native_death(void **state)
{
	(void)state;
	static const char *const ends[] = {
		"Fatal Python error: Segmentation fault\n",
		"Segmentation fault (core dumped)\n",
		"Aborted (core dumped)\n",
		"Killed\n",
		"/bin/sh: line 1:  4242 Killed                  vllm serve /models/x\n",
		"[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(ends); i++) {
		char *log = xasprintf("INFO 07-13 10:00:00 [loader.py:1] Starting to load model /models/x...\n%s", ends[i]);
		struct triage *t;
		struct triage_verdict v;
		verdict_alone(log, &v, &t);
		if (!v.fatal)
			fail_msg("'%s' is not fatal", ends[i]);
		assert_null(v.type); /* no Python exception */
		assert_non_null(triage_life(t)->death);
		assert_int_equal(v.phase, i == 5 ? PHASE_SERVING : PHASE_LOAD);
		triage_free(t);
		free(log);
	}
}

/* The container runtime refuses to start the image: vLLM never ran. */
static void test_container_runtime(void **state)
{
	(void)state;
	static const char *const errs[] = {
		"docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n",
		"Error response from daemon: failed to create task for container: OCI runtime create failed: "
		"nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your "
		"driver to a newer version, or use an earlier cuda container: unknown\n",
		"exec /usr/bin/python3: exec format error\n",
		"docker: Error response from daemon: pull access denied for vllm/foo, repository does not exist.\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(errs); i++) {
		struct triage *t;
		struct triage_verdict v;
		verdict_alone(errs[i], &v, &t);
		assert_true(v.fatal && v.structural);
		assert_null(v.type);
		assert_int_equal(v.phase, PHASE_PRESTART);
		assert_int_equal(triage_life(t)->death->kind, EV_RUNTIME);
		triage_free(t);
		/* with the signatures, the cause is named: the runtime's own, and
		 * the driver for the CUDA requirement */
		t = run(&shipped, errs[i], 0);
		triage_verdict(t, &v);
		assert_non_null(v.cause);
		assert_string_equal(sig_cause_id(v.cause->sig), i == 1 ? "cuda-driver-too-old" : "container-runtime-error");
		triage_free(t);
	}
}

/* Exit codes, lifecycle markers and a log that never starts. */
static void test_markers(void **state)
{
	(void)state;
	struct triage *t;
	struct triage_verdict v;
	verdict_alone("vllm-1  | INFO:     Application startup complete.\nvllm-1 exited with code 0\n", &v, &t);
	assert_false(v.fatal);
	assert_int_equal(triage_life(t)->startup_line, 1);
	triage_free(t);
	verdict_alone("vllm-1  | INFO 07-13 10:00:00 [loader.py:1] Loading weights took 3.0 seconds\nvllm-1 exited with code 137\n", &v, &t);
	assert_true(v.fatal);
	assert_int_equal(triage_life(t)->death->code, 137);
	triage_free(t);
	/* V0's front end: the engine process failed to start */
	verdict_alone("INFO 07-13 10:00:00 [api_server.py:1] vLLM API server version 0.6.3\n"
		   "RuntimeError: Engine process failed to start. See stack trace for the root cause.\n", &v, &t);
	assert_true(v.fatal);
	triage_free(t);
	/* V1: a worker's fatal signal */
	verdict_alone("CRITICAL 07-13 10:00:00 [core_client.py:1] Got fatal signal from worker processes, shutting down. "
		   "See stack trace above for root cause issue.\n"
		   "INFO 07-13 10:00:00 [x.py:1] shutdown\n", &v, &t);
	assert_true(v.fatal);
	assert_int_equal(triage_life(t)->death->kind, EV_FATAL_SIGNAL);
	triage_free(t);
	/* never started, ends in an error line no signature knows */
	verdict_alone("INFO 07-13 10:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
		   "ERROR 07-13 10:00:01 [x.py:1] the frobnicator refused to frob\n", &v, &t);
	assert_true(v.fatal && v.structural);
	assert_string_equal(v.message, "the frobnicator refused to frob");
	triage_free(t);
	/* a boot that stops before startup on an INFO line is not fatal */
	verdict_alone("INFO 07-13 10:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
		   "INFO 07-13 10:00:01 [loader.py:1] Starting to load model x...\n", &v, &t);
	assert_false(v.fatal);
	triage_free(t);
	/* a failure before startup, then startup after a restart: recovered */
	verdict_alone("vllm-1 exited with code 1\nINFO:     Application startup complete.\n", &v, &t);
	assert_false(v.fatal);
	triage_free(t);
}

/* The phase: from a traceback's frames, its message, or the progress lines. */
static void test_phases(void **state)
{
	(void)state;
	static const struct {
		const char *log;
		enum triage_phase want;
	} cases[] = {
		{ "Traceback (most recent call last):\n  File \"/x/vllm/worker/worker.py\", line 1, in profile_run\n"
		  "FooError: x\n", PHASE_PROFILE },
		{ "Traceback (most recent call last):\n  File \"/x/vllm/worker/model_runner.py\", line 1, in capture_model\n"
		  "FooError: x\n", PHASE_GRAPH },
		{ "INFO 07-13 10:00:00 [model_runner.py:1] Capturing cudagraphs for decoding.\nFooError: x\n", PHASE_GRAPH },
		{ "INFO 07-13 10:00:00 [gpu_worker.py:1] Available KV cache memory: 3.2 GiB\n"
		  "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests.\n",
		  PHASE_WARMUP },
		{ "Traceback (most recent call last):\n  File \"/x/vllm/__init__.py\", line 3, in <module>\n"
		  "ImportError: libfoo.so.1: cannot open shared object file: No such file or directory\n", PHASE_PRESTART },
		{ "Traceback (most recent call last):\n  File \"/x/vllm/config.py\", line 3, in <module>\n"
		  "ImportError: cannot import name 'foo' from 'bar'\n", PHASE_PRESTART },
		{ "Traceback (most recent call last):\n  File \"/x/vllm/v1/engine/llm_engine.py\", line 1, in step\n"
		  "FooError: x\n", PHASE_SERVING },
		{ "FooError: x\n", PHASE_LOAD },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct triage *t;
		struct triage_verdict v;
		verdict_alone(cases[i].log, &v, &t);
		assert_true(v.fatal);
		if (v.phase != cases[i].want)
			fail_msg("case %zu: phase %s, expected %s", i, triage_phase_name(v.phase),
				 triage_phase_name(cases[i].want));
		triage_free(t);
	}
}

/* A paste that stops inside a traceback: fatal, no exception type (the
 * paste does not show it), the frame and phase from what it shows. */
static void test_cut_traceback(void **state)
{
	(void)state;
	struct triage *t;
	struct triage_verdict v;
	verdict_alone("  File \"/x/vllm/v1/worker/gpu_model_runner.py\", line 2200, in capture_model\n"
		   "    self._capture_cudagraphs(\n"
		   "  File \"/x/torch/cuda/graphs.py\", line 88, in capture_end\n"
		   "    super().capture_end()\n", &v, &t);
	assert_true(v.fatal && v.structural);
	assert_null(v.type);
	assert_int_equal(v.line, 1);
	assert_string_equal(v.frame, "vllm/v1/worker/gpu_model_runner.py:2200 in capture_model");
	assert_int_equal(v.phase, PHASE_GRAPH);
	triage_free(t);
}

/* The cause follows the root exception, not the earliest fatal line. */
static void test_cause_by_root(void **state)
{
	(void)state;
	const char *log = "(EngineCore_DP0 pid=7) ERROR 07-13 10:00:00 [core.py:1] EngineCore failed to start.\n"
			  "(EngineCore_DP0 pid=7) ERROR 07-13 10:00:00 [core.py:1] Traceback (most recent call last):\n"
			  "(EngineCore_DP0 pid=7) ERROR 07-13 10:00:00 [core.py:1]   File \"/x/vllm/v1/worker/gpu_worker.py\", line 9, in determine_available_memory\n"
			  "(EngineCore_DP0 pid=7) ERROR 07-13 10:00:00 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
			  "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above.\n";
	struct triage *t = run(&shipped, log, 0);
	struct triage_verdict v;
	triage_verdict(t, &v);
	assert_string_equal(v.type, "torch.OutOfMemoryError");
	assert_int_equal(v.phase, PHASE_PROFILE);
	assert_non_null(v.cause);
	assert_int_equal(v.cause->line_no, 4);
	assert_string_equal(sig_cause_id(v.cause->sig), "cuda-out-of-memory");
	triage_free(t);
}

/* The verdict does not depend on how the input is split. */
static void test_chunks(void **state)
{
	(void)state;
	char *log = xasprintf("INFO 07-13 10:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
			      "Traceback (most recent call last):\n%sKeyError: 'a'\n\n"
			      "The above exception was the direct cause of the following exception:\n\n"
			      "Traceback (most recent call last):\n%sRuntimeError: Engine core initialization failed.\n"
			      "Killed\n", frames, frames);
	struct triage *whole = run(&none, log, 0);
	struct triage_verdict w;
	triage_verdict(whole, &w);
	for (size_t chunk = 1; chunk < 90; chunk += 11) {
		struct triage *t = run(&none, log, chunk);
		struct triage_verdict v;
		triage_verdict(t, &v);
		assert_int_equal(v.fatal, w.fatal);
		assert_int_equal(v.phase, w.phase);
		assert_string_equal(v.type, w.type);
		assert_int_equal(v.line, w.line);
		assert_int_equal(triage_life(t)->n_tbs, triage_life(whole)->n_tbs);
		triage_free(t);
	}
	assert_string_equal(w.type, "KeyError");
	triage_free(whole);
	free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process_kinds),
		cmocka_unit_test(test_chained),
		cmocka_unit_test(test_survived),
		cmocka_unit_test(test_serving_crash),
		cmocka_unit_test(test_native_death),
		cmocka_unit_test(test_container_runtime),
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_cut_traceback),
		cmocka_unit_test(test_cause_by_root),
		cmocka_unit_test(test_chunks),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
