/*
 * test_evidence.c — verify/evidence.c without a Docker daemon: the ways
 * verify_collect refuses (an unknown role, no deployment, an engine that
 * cannot be reached, a role with no container — the last against a fake
 * engine on a unix socket that lists none), the decision verify_decide
 * writes (a route, or undecided), the text form of a record, and what
 * evidence_write puts on disk (names that never overwrite, 0600 files in a
 * 0700 dir, secrets masked, a failure reported). The collection itself runs
 * against a real daemon in tests/integration/verify.t.
 */
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/util/fs.h"
#include "../../src/lib/verify/evidence.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lobes-evidence.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct question question(const char *role)
{
	return (struct question){ .id = (char *)"q-test", .title = (char *)"a test question",
				  .role = (char *)role, .undecided = (char *)"boot it and look",
				  .file = (char *)"q.yaml" };
}

/* ---- a fake engine that lists no container ---- */

static int fake_fd = -1;
static pthread_t fake_th;

static void *fake_serve(void *arg)
{
	(void)arg;
	for (;;) {
		char req[4096];
		int c = test_accept_head(fake_fd, req, sizeof(req));
		if (c < 0)
			return NULL;
		const char *body = strncmp(req, "GET /_ping", 10) == 0 ? "OK" : "[]";
		char out[256];
		int len = snprintf(out, sizeof(out),
				   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
				   "Api-Version: 1.50\r\nConnection: close\r\n\r\n%s",
				   strlen(body), body);
		test_send_all(c, out, (size_t)len);
		close(c);
	}
}

static void test_collect_refusals(void **state)
{
	(void)state;
	struct obs_set obs = { 0 };
	struct err *e = NULL;
	struct question q = question("brain");
	struct verify_opts o = { .dir = dir };
	assert_null(verify_collect(&q, &o, &obs, &e));
	assert_int_equal(e->code, EXIT_CONFIG);
	assert_string_equal(e->msg, "question 'q-test' names unknown role 'brain'");
	err_free(e);
	e = NULL;
	/* the option's role wins over the question's */
	q = question("cortex");
	o.role = "brain";
	assert_null(verify_collect(&q, &o, &obs, &e));
	assert_string_equal(e->msg, "question 'q-test' names unknown role 'brain'");
	err_free(e);
	e = NULL;
	o.role = NULL;

	/* no .env: no deployment */
	assert_null(verify_collect(&q, &o, &obs, &e));
	assert_int_equal(e->code, EXIT_CONFIG);
	_cleanup_free_ char *want = xasprintf("no deployment in '%s': run `lobes init --apply` first", dir);
	assert_string_equal(e->msg, want);
	err_free(e);
	e = NULL;

	_cleanup_free_ char *env = xasprintf("%s/.env", dir);
	const char *text = "LOBES_PROFILE=test\nLOBES_CARD=test-card\nCOMPOSE_PROJECT_NAME=proj\n";
	assert_int_equal(fs_write_atomic(env, text, strlen(text), 0600, NULL), 0);
	_cleanup_free_ char *sock = xasprintf("%s/engine.sock", dir);
	_cleanup_free_ char *host = xasprintf("unix://%s", sock);
	const char *saved = getenv("DOCKER_HOST");
	_cleanup_free_ char *saved_host = saved ? xstrdup(saved) : NULL;
	setenv("DOCKER_HOST", host, 1);

	/* nobody listens on the engine's socket */
	obs_free(&obs);
	memset(&obs, 0, sizeof(obs));
	assert_null(verify_collect(&q, &o, &obs, &e));
	assert_int_equal(e->code, EXIT_RUNTIME);
	assert_string_contains(e->msg, "could not verify");
	assert_string_contains(e->msg, sock);
	err_free(e);
	e = NULL;
	/* the box was looked at before the engine */
	bool known = false;
	assert_string_equal(obs_get(&obs, "box.card", &known), "test-card");
	assert_true(known);

	/* an engine that lists no container for the project */
	fake_fd = test_listen_unix(sock, 8);
	assert_true(fake_fd >= 0);
	assert_int_equal(pthread_create(&fake_th, NULL, fake_serve, NULL), 0);
	obs_free(&obs);
	memset(&obs, 0, sizeof(obs));
	assert_null(verify_collect(&q, &o, &obs, &e));
	assert_int_equal(e->code, EXIT_RUNTIME);
	assert_string_equal(e->msg, "could not verify: role 'cortex' has no container in project 'proj' "
				    "(bring the fleet up with `lobes serve --apply`)");
	err_free(e);
	shutdown(fake_fd, SHUT_RDWR);
	pthread_join(fake_th, NULL);
	close(fake_fd);
	obs_free(&obs);
	saved_host ? setenv("DOCKER_HOST", saved_host, 1) : unsetenv("DOCKER_HOST");
}

static void test_decide(void **state)
{
	(void)state;
	struct question_set s = { 0 };
	struct err *e = NULL;
	assert_int_equal(questions_load(&s, NULL, &e), 0);
	const struct question *q = question_find(&s, "attention-backend-env");
	assert_non_null(q);

	/* nothing observed: undecided, the question's own action */
	struct obs_set obs = { 0 };
	json_auto_t *rec = json_object();
	assert_null(verify_decide(q, &obs, rec));
	json_t *d = json_object_get(rec, "decision");
	assert_true(json_is_null(json_object_get(d, "route")));
	assert_string_equal(json_string_value(json_object_get(d, "answer")), "undecided");
	assert_string_equal(json_string_value(json_object_get(d, "action")), q->undecided);
	assert_true(json_is_string(json_object_get(rec, "routing")));

	/* the observations of a dead env: its route, answer and action */
	obs_put(&obs, "env.VLLM_ATTENTION_BACKEND", "FLASHINFER");
	obs_put(&obs, "log.env-attention-backend-unknown", "present");
	json_auto_t *rec2 = json_object();
	const struct q_route *r = verify_decide(q, &obs, rec2);
	assert_non_null(r);
	assert_string_equal(r->id, "env-dead");
	d = json_object_get(rec2, "decision");
	assert_string_equal(json_string_value(json_object_get(d, "route")), "env-dead");
	assert_string_equal(json_string_value(json_object_get(d, "answer")), r->answer);
	assert_string_equal(json_string_value(json_object_get(d, "action")), r->action);
	obs_free(&obs);
	questions_free(&s);
}

/* A record as verify_collect and verify_decide build it. */
static json_t *record(void)
{
	json_error_t je;
	json_t *r = json_loads(
		"{\"question\": {\"id\": \"q-test\", \"title\": \"a test question\", \"file\": \"q.yaml\"},"
		" \"date\": \"2026-12-03T10:00:00Z\", \"deploy_dir\": \"/d\", \"profile\": \"thor\","
		" \"role\": \"cortex\","
		" \"box\": {\"card\": \"thor\", \"facts\": {\"gpu_name\": {\"value\": \"NVIDIA Thor\"},"
		"   \"hostname\": {\"value\": null}}},"
		" \"container\": {\"name\": \"lobes_cortex_1\", \"id\": \"abc\", \"state\": \"running\","
		"   \"restarts\": 2, \"image\": \"vllm/vllm-openai:x\", \"image_id\": \"sha256:1\","
		"   \"args\": [\"serve\", \"m/x\", \"--hf-token=hf_abcdefghijklmnopqrstu\"],"
		"   \"env\": {\"VLLM_A\": \"1\", \"HF_TOKEN\": \"hf_zyxwvutsrqponmlkjihg\"}},"
		" \"image\": {\"id\": \"sha256:1\", \"repo_digests\": [\"vllm/vllm-openai@sha256:d1\"]},"
		" \"vllm_version\": {\"value\": \"0.20.0\", \"source\": \"boot log\"},"
		" \"checkpoint\": {\"model\": \"m/x\", \"kv_scales\": \"absent\", \"kv_scales_why\": \"plain\"},"
		" \"boot_log\": {\"lines\": 40, \"matches\": [{\"line\": 7, \"signature\": \"sig-a\","
		"   \"severity\": \"warning\", \"text\": \"a matched line\"}]},"
		" \"probe\": {\"probe\": \"chat\", \"status\": \"pass\", \"summary\": \"answered\"},"
		" \"observations\": {\"box.card\": \"thor\", \"checkpoint.kv_scales\": null},"
		" \"decision\": {\"route\": null, \"answer\": \"undecided\", \"action\": \"boot it\"},"
		" \"routing\": \"no route matched\\n\"}",
		JSON_PRESERVE_ORDER, &je);
	assert_non_null(r);
	return r;
}

static void test_text(void **state)
{
	(void)state;
	json_auto_t *r = record();
	_cleanup_free_ char *t = evidence_text(r);
	assert_string_contains(t, "lobes verify: q-test\nquestion: a test question\ndate: 2026-12-03T10:00:00Z\n");
	assert_string_contains(t, "box: card thor, gpu_name NVIDIA Thor, compute_cap unknown, mem_total unknown,"
				  " memory_model unknown, hostname unknown\n");
	assert_string_contains(t, "container: lobes_cortex_1 (running, restarts 2)\n");
	assert_string_contains(t, "image: vllm/vllm-openai:x (id sha256:1), digest vllm/vllm-openai@sha256:d1\n");
	assert_string_contains(t, "vLLM: 0.20.0 (from boot log)\n");
	assert_string_contains(t, "effective args: serve m/x --hf-token=");
	assert_string_contains(t, "env (VLLM_*, HF_*): VLLM_A=1 HF_TOKEN=");
	assert_string_contains(t, "checkpoint: m/x: kv scales absent (plain)\n");
	assert_string_contains(t, "  L7 [sig-a] a matched line\n");
	assert_string_contains(t, "probe: chat pass (answered)\n");
	assert_string_contains(t, "  box.card = thor\n  checkpoint.kv_scales = unknown\n");
	assert_string_contains(t, "decision: undecided — undecided\naction: boot it\nrouting:\nno route matched\n");
	assert_null(strstr(t, "experiment:"));

	/* a kv-cache-dtype experiment: both runs and the comparison */
	json_error_t je;
	json_t *x = json_loads(
		"{\"knob\": \"kv_cache_dtype\", \"operator_value\": \"auto\", \"env_restored_byte_for_byte\": true,"
		" \"runs\": {\"auto\": {\"side\": {\"label\": \"--kv-cache-dtype auto\"}, \"ready_ms\": 1200,"
		"   \"answers\": [1, 2]}, \"fp8\": {\"side\": {\"label\": \"--kv-cache-dtype fp8\"},"
		"   \"ready_ms\": 900, \"answers\": [1]}},"
		" \"comparison\": {\"logprobs\": {\"kld_mean\": 0.25, \"kld_p99\": 0.5, \"kld_note\": \"n\","
		"   \"same_top\": 0.75, \"dlogp_max\": 1.5, \"ppl_a\": 2, \"ppl_b\": 3, \"ppl_ratio\": 1.5},"
		"   \"tasks\": {\"tasks\": 4, \"accuracy_a\": 0.5, \"accuracy_b\": 0.25, \"agreement\": 0.75}}}",
		0, &je);
	assert_non_null(x);
	json_object_set_new(r, "experiment", x);
	json_object_del(r, "probe");
	json_object_set_new(json_object_get(r, "decision"), "route", json_string("r1"));
	_cleanup_free_ char *t2 = evidence_text(r);
	assert_string_contains(t2, "experiment: kv_cache_dtype, the operator's auto; .env put back byte for byte: yes\n");
	assert_string_contains(t2, "  run auto: --kv-cache-dtype auto, ready after 1200 ms, 2 answers\n");
	assert_string_contains(t2, "  run fp8: --kv-cache-dtype fp8, ready after 900 ms, 1 answers\n");
	assert_string_contains(t2, "  KLD(auto||fp8) mean 0.250000 p99 0.500000 (n)\n  same top 0.7500, |dlogp| max "
				   "1.500000, perplexity auto 2.0000 fp8 3.0000 ratio 1.5000\n  tasks 4: exact match "
				   "auto 0.500 fp8 0.250, agreement 0.750\n");
	assert_string_contains(t2, "decision: r1 — undecided\n");
	assert_null(strstr(t2, "probe:"));
	json_object_set_new(x, "env_restored_byte_for_byte", json_false());
	_cleanup_free_ char *t3 = evidence_text(r);
	assert_string_contains(t3, ".env put back byte for byte: NO\n");
}

static void test_write(void **state)
{
	(void)state;
	json_auto_t *r = record();
	struct err *e = NULL;
	_cleanup_free_ char *d = xasprintf("%s/w", dir);
	assert_int_equal(mkdir(d, 0700), 0);
	char *names[3][2];
	for (int i = 0; i < 3; i++)
		assert_int_equal(evidence_write(d, r, &names[i][0], &names[i][1], &e), 0);
	/* never over an earlier record: -2, -3 */
	const char *want[3] = { "2026-12-03-q-test-thor", "2026-12-03-q-test-thor-2", "2026-12-03-q-test-thor-3" };
	for (int i = 0; i < 3; i++) {
		_cleanup_free_ char *txt = xasprintf("%s/evidence/%s.txt", d, want[i]);
		_cleanup_free_ char *js = xasprintf("%s/evidence/%s.json", d, want[i]);
		assert_string_equal(names[i][0], txt);
		assert_string_equal(names[i][1], js);
		struct stat st;
		assert_int_equal(stat(txt, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
		assert_int_equal(stat(js, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
		/* no secret reaches the disk, in either form */
		_cleanup_free_ char *t = fs_read(txt, 1 << 20, NULL, NULL);
		_cleanup_free_ char *j = fs_read(js, 1 << 20, NULL, NULL);
		assert_non_null(t);
		assert_non_null(j);
		assert_null(strstr(t, "hf_abcdefghijklmnopqrstu"));
		assert_null(strstr(j, "hf_abcdefghijklmnopqrstu"));
		assert_null(strstr(t, "hf_zyxwvutsrqponmlkjihg"));
		assert_null(strstr(j, "hf_zyxwvutsrqponmlkjihg"));
		assert_string_contains(t, "HF_TOKEN=<hidden>");
		json_auto_t *back = json_loads(j, 0, NULL);
		assert_non_null(back);
		assert_string_equal(json_string_value(json_object_get(back, "date")), "2026-12-03T10:00:00Z");
		free(names[i][0]);
		free(names[i][1]);
	}
	_cleanup_free_ char *ed = xasprintf("%s/evidence", d);
	struct stat st;
	assert_int_equal(stat(ed, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* the caller's record is not masked in place */
	const char *tok = json_string_value(json_object_get(json_object_get(json_object_get(r, "container"), "env"),
							     "HF_TOKEN"));
	assert_string_equal(tok, "hf_zyxwvutsrqponmlkjihg");

	/* evidence/ cannot be made: -1 with the reason */
	_cleanup_free_ char *d2 = xasprintf("%s/f", dir);
	assert_int_equal(mkdir(d2, 0700), 0);
	_cleanup_free_ char *blocker = xasprintf("%s/evidence", d2);
	assert_int_equal(fs_write_atomic(blocker, "x", 1, 0600, NULL), 0);
	char *t = NULL, *j = NULL;
	assert_int_equal(evidence_write(d2, r, &t, &j, &e), -1);
	assert_non_null(e);
	assert_string_contains(e->msg, "evidence");
	err_free(e);
	free(t);
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collect_refusals),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_write),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
