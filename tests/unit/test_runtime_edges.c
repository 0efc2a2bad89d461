/*
 * test_runtime_edges.c — the engine API's JSON readers on the answers a
 * container engine may give that test_engine_api.c's fake daemon does not:
 * RFC 3339 times with offsets either way, fractions and the engine's
 * "never" (year 1); container lists and inspects that are not the shape
 * the API promises (refused with EXIT_RUNTIME and what was wrong), and
 * partial ones (every string "" or "none", never NULL); the health read
 * from a list entry's Status text; the role lookup's preference for a
 * running container; image inspects. The fleet as the deploy dir's .env
 * says (ports and memory shares out of range refused with the key names,
 * the bring-up order from LOBES_ORDER with unknown, repeated and
 * infeasible names skipped), the start-up phase read from a boot log, and
 * the URL a bind address is reached at. The boot logs' store: only
 * NNNNNN.log names listed, in order, past its first 16; a logs path that
 * is a file; reopening or reading a boot that is not there.
 */
#include "testutil.h"

#include <time.h>
#include <unistd.h>

#include "../../src/lib/runtime/engine_api.h"
#include "../../src/lib/runtime/fleet.h"
#include "../../src/lib/runtime/logstore.h"
#include "../../src/lib/util/fs.h"

static void test_parse_time(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		time_t t;
	} good[] = {
		{ "2026-12-03T10:00:00Z", 1796292000 },
		/* an offset east is earlier in UTC, west later */
		{ "2026-12-03T10:00:00+02:30", 1796292000 - 9000 },
		{ "2026-12-03T10:00:00.123456789-01:00", 1796292000 + 3600 },
		{ "1970-01-01T00:00:00Z", 0 },
	};
	/* refused: the engine's "never", no zone, a dot without digits, a bad
	 * or short offset, text after the zone, NULL */
	static const char *const bad[] = {
		"0001-01-01T00:00:00Z",	     "1969-12-31T23:59:59Z",	  "2026-12-03T10:00:00",
		"2026-12-03T10:00:00.Z",     "2026-12-03T10:00:00+0200",  "2026-12-03T10:00:00+02:0",
		"2026-12-03T10:00:00+x2:00", "2026-12-03T10:00:00Zjunk",  "2026-12-03T10:00:00+02:00x",
		"yesterday",		     NULL,
	};
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		time_t t = 42;
		assert_int_equal(engine_parse_time(good[i].text, &t), 0);
		assert_int_equal(t, good[i].t);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		time_t t = 42;
		assert_int_equal(engine_parse_time(bad[i], &t), -1);
		assert_int_equal(t, 42); /* untouched */
	}
}

static void test_list_refused(void **state)
{
	(void)state;
	static const struct {
		const char *body, *want;
	} bad[] = {
		{ "{\"Id\":\"a\"}", "container list: not a JSON array" },
		{ "[{\"Id\":\"a\"},", "container list: " },
		{ "[{\"Id\":\"a\"},{\"Names\":[\"/b\"]}]", "container list: entry 1 has no Id" },
		{ "[\"a\"]", "container list: entry 0 has no Id" },
		{ "[{\"Id\":7}]", "container list: entry 0 has no Id" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct engine_container_list l;
		struct err *e = NULL;
		assert_int_equal(engine_parse_list(bad[i].body, &l, &e), -1);
		assert_int_equal(e->code, EXIT_RUNTIME);
		if (strncmp(e->msg, bad[i].want, strlen(bad[i].want)) != 0)
			fail_msg("%s: got '%s', want '%s...'", bad[i].body, e->msg, bad[i].want);
		err_free(e);
		assert_int_equal(l.n, 0);
		assert_null(l.c);
	}
	/* bad JSON text: jansson's reason follows the prefix */
	struct engine_container_list l;
	struct err *e = NULL;
	assert_int_equal(engine_parse_list("[", &l, &e), -1);
	assert_true(strlen(e->msg) > strlen("container list: "));
	err_free(e);
}

static void test_list_partial_and_health(void **state)
{
	(void)state;
	struct engine_container_list l;
	struct err *e = NULL;
	assert_int_equal(engine_parse_list(
				 "[{\"Id\":\"1\",\"Names\":[\"/lobes-cortex-1\"],\"State\":\"running\","
				 "\"Status\":\"Up 3 minutes (unhealthy)\",\"Labels\":{\"lobes.role\":\"cortex\"}},"
				 "{\"Id\":\"2\",\"Names\":[\"plain\"],\"Status\":\"Up 1 second (health: starting)\","
				 "\"Labels\":[\"not\",\"an\",\"object\"]},"
				 "{\"Id\":\"3\",\"Status\":\"Up 2 hours (healthy)\",\"State\":\"exited\","
				 "\"Labels\":{\"com.docker.compose.service\":\"hand\",\"lobes.role\":7}},"
				 "{\"Id\":\"4\",\"Names\":[],\"Status\":7,"
				 "\"Labels\":{\"com.docker.compose.service\":\"hand\"},\"State\":\"running\"}]",
				 &l, &e),
			 0);
	assert_int_equal(l.n, 4);
	assert_string_equal(l.c[0].name, "lobes-cortex-1");
	assert_string_equal(l.c[0].health, "unhealthy");
	assert_string_equal(l.c[0].role, "cortex");
	assert_string_equal(l.c[1].name, "plain"); /* no slash to strip */
	assert_string_equal(l.c[1].health, "starting");
	assert_string_equal(l.c[1].role, ""); /* labels not an object: none */
	assert_string_equal(l.c[1].state, "");
	assert_string_equal(l.c[1].image, "");
	assert_string_equal(l.c[2].health, "healthy");
	assert_string_equal(l.c[2].name, "");
	assert_string_equal(l.c[2].role, ""); /* a non-string label is "" */
	assert_string_equal(l.c[2].service, "hand");
	assert_string_equal(l.c[3].health, "none");
	assert_string_equal(l.c[3].name, "");
	/* the role's container: by label, else by service; running first */
	assert_ptr_equal(engine_container_for_role(&l, "cortex"), &l.c[0]);
	assert_ptr_equal(engine_container_for_role(&l, "hand"), &l.c[3]);
	assert_null(engine_container_for_role(&l, "senses"));
	l.c[3].state[0] = 'X'; /* no longer "running": the first match is taken */
	assert_ptr_equal(engine_container_for_role(&l, "hand"), &l.c[2]);
	engine_container_list_free(&l);
	assert_int_equal(l.n, 0);
}

/* BODY refused as a container inspect (image: an image inspect) with
 * EXIT_RUNTIME and the message WANT; WANT NULL: bad JSON text, the
 * message "container inspect: " (or "image inspect: ") and jansson's
 * reason, not the one for a document of the wrong shape. */
static void refused(bool image, const char *body, const char *want)
{
	struct engine_container c;
	struct engine_image im;
	struct err *e = NULL;
	assert_int_equal(image ? engine_parse_image(body, &im, &e) : engine_parse_inspect(body, &c, &e), -1);
	assert_non_null(e);
	assert_int_equal(e->code, EXIT_RUNTIME);
	if (want) {
		assert_string_equal(e->msg, want);
	} else {
		const char *what = image ? "image inspect: " : "container inspect: ";
		_cleanup_free_ char *shape = xasprintf("%snot an object with an Id", what);
		assert_string_contains(e->msg, what);
		assert_true(strcmp(e->msg, shape) != 0);
	}
	err_free(e);
}

static void test_inspect(void **state)
{
	(void)state;
	refused(false, "[]", "container inspect: not an object with an Id");
	refused(false, "{\"Name\":\"/x\"}", "container inspect: not an object with an Id");
	refused(false, "{\"Id\":", NULL);
	struct engine_container c;
	struct err *e = NULL;
	/* a bare object: every field present and empty */
	assert_int_equal(engine_parse_inspect("{\"Id\":\"abc\"}", &c, &e), 0);
	assert_string_equal(c.id, "abc");
	assert_string_equal(c.name, "");
	assert_string_equal(c.health, "none");
	assert_string_equal(c.started_at, "");
	assert_non_null(c.entrypoint);
	assert_null(c.entrypoint[0]);
	assert_non_null(c.env);
	assert_false(c.tty);
	assert_false(c.oom_killed);
	engine_container_free(&c);
	/* never started (year 1) reads as ""; a real time is kept as written;
	 * an empty health status is "none"; non-strings in Env are skipped */
	assert_int_equal(engine_parse_inspect(
				 "{\"Id\":\"abc\",\"Name\":\"/lobes-hand-1\",\"Config\":{\"Tty\":true,"
				 "\"Env\":[\"A=1\",7,\"B=x=y\"],\"Labels\":{\"lobes.profile\":\"p\"}},"
				 "\"State\":{\"Status\":\"exited\",\"StartedAt\":\"0001-01-01T00:00:00Z\","
				 "\"FinishedAt\":\"2026-12-03T10:00:00.5+01:00\",\"OOMKilled\":true,"
				 "\"ExitCode\":137,\"Health\":{\"Status\":\"\"}},\"RestartCount\":3}",
				 &c, &e),
			 0);
	assert_string_equal(c.name, "lobes-hand-1");
	assert_string_equal(c.started_at, "");
	assert_string_equal(c.finished_at, "2026-12-03T10:00:00.5+01:00");
	assert_string_equal(c.health, "none");
	assert_string_equal(c.profile, "p");
	assert_true(c.tty);
	assert_true(c.oom_killed);
	assert_int_equal(c.exit_code, 137);
	assert_int_equal(c.restart_count, 3);
	assert_string_equal(c.env[0], "A=1");
	assert_string_equal(c.env[1], "B=x=y");
	assert_null(c.env[2]);
	/* env lookup: KEY= exactly, first match */
	assert_string_equal(engine_env_get(c.env, "B"), "x=y");
	assert_null(engine_env_get(c.env, "A=")); /* "A==" is not there */
	assert_null(engine_env_get(c.env, "C"));
	assert_null(engine_env_get(NULL, "A"));
	engine_container_free(&c);
}

static void test_image(void **state)
{
	(void)state;
	refused(true, "[\"sha256:x\"]", "image inspect: not an object with an Id");
	refused(true, "{", NULL);
	struct engine_image im;
	struct err *e = NULL;
	assert_int_equal(engine_parse_image("{\"Id\":\"sha256:1\",\"RepoDigests\":\"x\","
					    "\"RepoTags\":[\"v:1\"],\"Config\":{\"Env\":[\"P=/bin\"]}}",
					    &im, &e),
			 0);
	assert_string_equal(im.id, "sha256:1");
	assert_null(im.repo_digests[0]); /* not a list: empty */
	assert_string_equal(im.repo_tags[0], "v:1");
	assert_string_equal(im.env[0], "P=/bin");
	engine_image_free(&im);
	assert_null(im.id);
	engine_image_free(NULL);
}

/* fleet_load of a dir whose .env is text; the message on failure (caller
 * frees), NULL on success with *f filled. */
static char *fleet_of(const char *env, struct fleet *f, char **dirp)
{
	char *d = xstrdup("/tmp/lobes-rtedges.XXXXXX");
	assert_non_null(mkdtemp(d));
	*dirp = d;
	if (env) {
		_cleanup_free_ char *p = xasprintf("%s/.env", d);
		assert_int_equal(fs_write_atomic(p, env, strlen(env), 0600, NULL), 0);
	}
	struct err *e = NULL;
	if (fleet_load(f, d, &e) == 0)
		return NULL;
	return test_err_msg(e, EXIT_CONFIG);
}

static void rm_dir(char *d)
{
	_cleanup_free_ char *p = xasprintf("%s/.env", d);
	unlink(p);
	rmdir(d);
	free(d);
}

static void test_fleet_load(void **state)
{
	(void)state;
	struct fleet f;
	char *d;
	/* no .env */
	_cleanup_free_ char *m = fleet_of(NULL, &f, &d);
	_cleanup_free_ char *want = xasprintf("no deployment in '%s': run `lobes init --apply` first", d);
	assert_string_equal(m, want);
	rm_dir(d);
	/* out of range, each bound */
	static const char *bad[] = {
		"HAND_FEASIBLE=true\nHAND_PORT=0\nHAND_GPU_MEM_UTIL=0.5\n",
		"HAND_FEASIBLE=true\nHAND_PORT=65536\nHAND_GPU_MEM_UTIL=0.5\n",
		"HAND_FEASIBLE=true\nHAND_PORT=8002\nHAND_GPU_MEM_UTIL=0\n",
		"HAND_FEASIBLE=true\nHAND_PORT=8002\nHAND_GPU_MEM_UTIL=1.01\n",
		"HAND_FEASIBLE=true\nHAND_PORT=8002\n",
		"HAND_FEASIBLE=true\nHAND_GPU_MEM_UTIL=0.5\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		_cleanup_free_ char *mb = fleet_of(bad[i], &f, &d);
		_cleanup_free_ char *wb = xasprintf("%s/.env: HAND_PORT or HAND_GPU_MEM_UTIL is missing or "
						    "out of range", d);
		if (!mb || strcmp(mb, wb) != 0)
			fail_msg("%s: got %s", bad[i], mb ? mb : "(loaded)");
		assert_null(f.dir); /* freed on failure */
		rm_dir(d);
	}
	/* the bounds themselves, defaults, and the order: LOBES_ORDER's known,
	 * feasible, first-named roles, then the feasible ones it left out */
	_cleanup_free_ char *ok = fleet_of("CORTEX_FEASIBLE=true\nCORTEX_PORT=65535\nCORTEX_GPU_MEM_UTIL=1\n"
					   "HAND_FEASIBLE=true\nHAND_PORT=1\nHAND_GPU_MEM_UTIL=0.01\n"
					   "HAND_MODEL=m/h\nSENSES_FEASIBLE=false\nSENSES_PORT=0\n"
					   "EMBEDDER_FEASIBLE=TRUE\n"
					   "LOBES_ORDER= hand ,nosuch,senses,hand,\n",
					   &f, &d);
	assert_null(ok);
	assert_string_equal(f.profile, "unknown");
	assert_string_equal(f.card, "unknown");
	assert_string_equal(f.bringup, "one-at-a-time");
	assert_string_equal(f.project, "lobes");
	assert_int_equal(f.n_order, 2);
	assert_int_equal(f.order[0], ROLE_HAND);
	assert_int_equal(f.order[1], ROLE_CORTEX);
	assert_int_equal(f.roles[ROLE_CORTEX].port, 65535);
	assert_true(f.roles[ROLE_CORTEX].util == 1.0);
	assert_string_equal(f.roles[ROLE_CORTEX].model, "");
	assert_string_equal(f.roles[ROLE_HAND].model, "m/h");
	assert_false(f.roles[ROLE_SENSES].feasible);
	assert_false(f.roles[ROLE_EMBEDDER].feasible); /* "TRUE" is not "true" */
	fleet_free(&f);
	rm_dir(d);
}

static void test_log_phase(void **state)
{
	(void)state;
	/* a boot log so far, and the phase read from it */
	static const struct {
		const char *log, *phase;
		bool window_closed, startup_complete;
	} cases[] = {
		{ "", "starting", false, false },
		{ "INFO Starting to load model x\nINFO Model loading took 3 s\n", "profiling memory", false, false },
		{ "Available KV cache memory: 3 GiB\nGPU KV cache size: 1000 tokens\n", "warming up", false, false },
		{ "init engine (profile, create kv cache, warmup model) took 9 s\n", "starting API server", true, false },
		/* the API server's start alone closes the window */
		{ "Starting to load model\nStarting vLLM API server 0 on http://\n", "loading weights", true, false },
		{ "Application startup complete.\n", "ready", true, true },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct log_phase p;
		log_phase_scan(cases[i].log, &p);
		assert_string_equal(p.phase, cases[i].phase);
		assert_int_equal(p.window_closed, cases[i].window_closed);
		assert_int_equal(p.startup_complete, cases[i].startup_complete);
	}
}

static void test_url_for_bind(void **state)
{
	(void)state;
	static const struct {
		const char *bind, *want;
	} cases[] = {
		{ NULL, "http://127.0.0.1:8000/health" },
		{ "", "http://127.0.0.1:8000/health" },
		{ "0.0.0.0", "http://127.0.0.1:8000/health" },
		{ "::", "http://[::1]:8000/health" },
		{ "[::]", "http://[::1]:8000/health" },
		{ "::1", "http://[::1]:8000/health" },
		{ "fe80::2", "http://[fe80::2]:8000/health" },
		{ "[fe80::2]", "http://[fe80::2]:8000/health" },
		{ "10.0.0.5", "http://10.0.0.5:8000/health" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *u = http_url_for_bind(cases[i].bind, 8000, "/health");
		assert_string_equal(u, cases[i].want);
	}
}

static void test_logstore_edges(void **state)
{
	(void)state;
	char *d = xstrdup("/tmp/lobes-rtlogs.XXXXXX");
	assert_non_null(mkdtemp(d));
	_cleanup_free_ char *rd = logstore_role_dir(d, "hand");
	assert_int_equal(fs_mkdirs(rd, 0700, NULL), 0);
	/* 20 boots written out of order, and names that are not boots */
	for (unsigned i = 20; i >= 1; i--) {
		_cleanup_free_ char *p = xasprintf("%s/%06u.log", rd, i * 3);
		assert_int_equal(fs_write_atomic(p, "x\n", 2, 0600, NULL), 0);
	}
	const char *junk[] = { "000000.log", "1.log", "0000001.log", "00000a.log", "000003.log.1",
			       "000004.txt", "000005.logx" };
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", rd, junk[i]);
		assert_int_equal(fs_write_atomic(p, "y\n", 2, 0600, NULL), 0);
	}
	unsigned *nos = NULL;
	size_t n = 0;
	struct err *e = NULL;
	assert_int_equal(logstore_list(d, "hand", &nos, &n, &e), 0);
	assert_int_equal(n, 20);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nos[i], (unsigned)(3 * (i + 1)));
	free(nos);
	/* no logs for a role: none, not an error */
	assert_int_equal(logstore_list(d, "cortex", &nos, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_null(nos);
	/* a role's logs path that is a file */
	_cleanup_free_ char *sd = logstore_role_dir(d, "senses");
	assert_int_equal(fs_write_atomic(sd, "", 0, 0600, NULL), 0);
	assert_int_equal(logstore_list(d, "senses", &nos, &n, &e), -1);
	_cleanup_free_ char *want = xasprintf("open '%s': Not a directory", sd);
	assert_string_equal(e->msg, want);
	assert_int_equal(e->code, EXIT_RUNTIME);
	err_free(e);
	e = NULL;
	/* reopen: a boot that is there, with the default caps; one that is not */
	struct logstore_boot b;
	assert_int_equal(logstore_reopen(&b, d, "hand", 6, 0, 0, &e), 0);
	assert_int_equal(b.part_cap, LOGSTORE_PART_BYTES);
	assert_int_equal(b.keep, LOGSTORE_BOOTS);
	assert_int_equal(b.size, 2);
	assert_int_equal(logstore_write(&b, "more\n", 5, &e), 0);
	logstore_end(&b);
	size_t len = 0;
	_cleanup_free_ char *text = logstore_read(d, "hand", 6, &len, &e);
	assert_string_equal(text, "x\nmore\n");
	assert_int_equal(len, 7);
	/* the older part is read first */
	_cleanup_free_ char *t3 = logstore_read(d, "hand", 3, NULL, &e);
	assert_string_equal(t3, "y\nx\n");
	assert_int_equal(logstore_reopen(&b, d, "hand", 7, 0, 0, &e), -1);
	_cleanup_free_ char *w7 = xasprintf("open '%s/000007.log': No such file or directory", rd);
	assert_string_equal(e->msg, w7);
	err_free(e);
	e = NULL;
	assert_int_equal(b.fd, -1);
	assert_null(logstore_read(d, "hand", 7, NULL, &e));
	assert_non_null(e);
	err_free(e);
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_list_refused),
		cmocka_unit_test(test_list_partial_and_health),
		cmocka_unit_test(test_inspect),
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_fleet_load),
		cmocka_unit_test(test_log_phase),
		cmocka_unit_test(test_url_for_bind),
		cmocka_unit_test(test_logstore_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
