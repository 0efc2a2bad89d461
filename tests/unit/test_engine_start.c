/*
 * test_engine_start.c — starting a created container through the Engine
 * API (engine_start_container, engine_api.h) against a fake engine on a unix socket that answers
 * POST /containers/ID/start as dockerd does (204 started, 304 already
 * running, 404 no such container, 500 with a message), and compose_create's
 * command line through a stub compose (LOBES_COMPOSE).
 */
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/runtime/runtime.h"
#include "../../src/lib/util/buf.h"
#include "../../src/lib/util/fs.h"

static struct {
	char dir[64];
	char sock[96];
	int fd;
	pthread_t th;
	char last[256]; /* "METHOD PATH" of the last request */
	pthread_mutex_t mu;
} fk = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* Answer each request by its path: .../run/start 204, .../up/start 304,
 * .../boom/start 500 with an engine message, anything else 404. */
static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		char req[2048];
		int c = test_accept_head(fk.fd, req, sizeof(req));
		if (c < 0)
			return NULL;
		char method[16] = "", path[200] = "";
		if (sscanf(req, "%15s %199s", method, path) != 2) {
			close(c);
			continue;
		}
		pthread_mutex_lock(&fk.mu);
		snprintf(fk.last, sizeof(fk.last), "%s %s", method, path);
		pthread_mutex_unlock(&fk.mu);
		int status = 404;
		const char *body = "{\"message\":\"No such container: gone\"}\n";
		if (strcmp(path, "/containers/run/start") == 0)
			status = 204, body = "";
		else if (strcmp(path, "/containers/up/start") == 0)
			status = 304, body = "";
		else if (strcmp(path, "/containers/boom/start") == 0)
			status = 500, body = "{\"message\":\"OCI runtime create failed: x\"}\n";
		char ans[512];
		snprintf(ans, sizeof(ans),
			 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s", status, strlen(body), body);
		test_send_all(c, ans, strlen(ans));
		close(c);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(fk.dir, sizeof(fk.dir), "/tmp/lobes-start-XXXXXX");
	if (!mkdtemp(fk.dir))
		return -1;
	snprintf(fk.sock, sizeof(fk.sock), "%s/docker.sock", fk.dir);
	fk.fd = test_listen_unix(fk.sock, 8);
	if (fk.fd < 0)
		return -1;
	return pthread_create(&fk.th, NULL, serve, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	shutdown(fk.fd, SHUT_RDWR);
	pthread_join(fk.th, NULL);
	close(fk.fd);
	unlink(fk.sock);
	rmdir(fk.dir);
	return 0;
}

static const char *last_request(void)
{
	static char copy[256];
	pthread_mutex_lock(&fk.mu);
	snprintf(copy, sizeof(copy), "%s", fk.last);
	pthread_mutex_unlock(&fk.mu);
	return copy;
}

static void test_start(void **state)
{
	(void)state;
	struct engine e = { .sock = fk.sock, .timeout_ms = 5000 };
	struct err *err = NULL;

	assert_int_equal(engine_start_container(&e, "run", &err), 0);
	assert_null(err);
	assert_string_equal(last_request(), "POST /containers/run/start");

	/* already running: docker start's 304 is success */
	assert_int_equal(engine_start_container(&e, "up", &err), 0);
	assert_null(err);

	assert_int_equal(engine_start_container(&e, "gone", &err), -1);
	assert_int_equal(err->code, EXIT_RUNTIME);
	assert_string_equal(err->msg, "no such container 'gone'");
	err_free(err);
	err = NULL;

	assert_int_equal(engine_start_container(&e, "boom", &err), -1);
	assert_int_equal(err->code, EXIT_RUNTIME);
	assert_string_contains(err->msg, "POST /containers/boom/start: HTTP 500: OCI runtime create failed: x");
	assert_string_contains(err->msg, fk.sock);
	err_free(err);
	err = NULL;

	/* an id that would change the path is refused before any request */
	assert_int_equal(engine_start_container(&e, "../x", &err), -1);
	assert_int_equal(err->code, EXIT_INTERNAL);
	err_free(err);
	err = NULL;
}

static void test_unreachable(void **state)
{
	(void)state;
	char sock[160];
	snprintf(sock, sizeof(sock), "%s/absent.sock", fk.dir);
	struct engine e = { .sock = sock, .timeout_ms = 2000 };
	struct err *err = NULL;
	assert_int_equal(engine_start_container(&e, "run", &err), -1);
	assert_int_equal(err->code, EXIT_RUNTIME);
	assert_string_contains(err->msg, "docker engine at '");
	assert_string_contains(err->msg, "': connect: ");
	err_free(err);
}

/* compose_create is `up --no-start --no-deps SERVICE...` in the deploy dir */
static void test_compose_create(void **state)
{
	(void)state;
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/lobes-create-XXXXXX");
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *stub = xasprintf("%s/stub-compose", dir);
	const char *script = "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done; echo\n";
	assert_int_equal(fs_write_atomic(stub, script, strlen(script), 0755, NULL), 0);
	_cleanup_free_ char *envp = xasprintf("%s/.env", dir);
	const char *env = "COMPOSE_PROJECT_NAME=p\nCOMPOSE_FILE=a.yml\n";
	assert_int_equal(fs_write_atomic(envp, env, strlen(env), 0600, NULL), 0);
	setenv("LOBES_COMPOSE", stub, 1);
	struct compose c;
	struct err *err = NULL;
	assert_int_equal(compose_open(&c, dir, &err), 0);
	struct proc_result r;
	const char *const svc[] = { "senses", "hand", NULL };
	assert_int_equal(compose_create(&c, svc, &r, &err), 0);
	assert_int_equal(r.status, 0);
	_cleanup_free_ char *want = xasprintf(
		"[--project-directory][%s][-p][p][-f][a.yml][up][--no-start][--no-deps][senses][hand]\n", dir);
	assert_string_equal(buf_str(&r.out), want);
	proc_result_free(&r);
	compose_free(&c);
	unsetenv("LOBES_COMPOSE");
	unlink(stub);
	unlink(envp);
	rmdir(dir);
}

/* The container of a role: by its lobes.role label, else by its service
 * name; a running one before an exited one whatever the order; none. */
static void test_container_for_role(void **state)
{
	(void)state;
	struct engine_container c[4] = { 0 };
	c[0] = (struct engine_container){ .role = (char *)"cortex", .service = (char *)"x", .state = (char *)"exited" };
	c[1] = (struct engine_container){ .role = (char *)"", .service = (char *)"hand", .state = (char *)"running" };
	c[2] = (struct engine_container){ .role = (char *)"cortex", .service = (char *)"y", .state = (char *)"running" };
	c[3] = (struct engine_container){ .role = (char *)"senses", .service = (char *)"cortex", .state = (char *)"running" };
	struct engine_container_list l = { c, 4 };
	assert_ptr_equal(engine_container_for_role(&l, "cortex"), &c[2]); /* running, label first */
	assert_ptr_equal(engine_container_for_role(&l, "hand"), &c[1]);   /* no label: the service */
	assert_ptr_equal(engine_container_for_role(&l, "senses"), &c[3]);
	assert_null(engine_container_for_role(&l, "embedder"));
	l.n = 1;
	assert_ptr_equal(engine_container_for_role(&l, "cortex"), &c[0]); /* an exited one when alone */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreachable, setup, teardown),
		cmocka_unit_test(test_compose_create),
		cmocka_unit_test(test_container_for_role),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
