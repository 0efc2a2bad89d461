/*
 * test_probe_transport.c — probe_run against a one-connection server on
 * 127.0.0.1 that answers badly in each way tests/cases/probe.t's stand-in
 * does not: it closes without a word, sends a body past the 4 MiB cap,
 * sends part of an answer or only its head and then nothing (the
 * timeout, with what arrived), or sends something that is not HTTP. Each
 * is a FAIL of its own kind with its reason, never an error of the run;
 * the run's own refusals (no probes, a timeout that is not positive); the
 * status and failure names.
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../src/lib/probe/probe.h"

enum mode { CLOSE, HUGE, PARTIAL, HEAD_ONLY, NOT_HTTP };

struct server {
	int lfd, port;
	enum mode mode;
	pthread_t th;
};

static void *serve(void *arg)
{
	struct server *s = arg;
	char req[8192]; /* the request's head (the body is small and comes with it) */
	int fd = test_accept_head(s->lfd, req, sizeof(req));
	if (fd < 0)
		return NULL;
	switch (s->mode) {
	case CLOSE:
		break;
	case HUGE: {
		size_t n = ((size_t)5 << 20);
		char head[128];
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", n);
		test_send_all(fd, head, strlen(head));
		char *junk = xcalloc(1, 65536);
		memset(junk, ' ', 65536);
		for (size_t k = 0; k < n; k += 65536)
			test_send_all(fd, junk, 65536);
		free(junk);
		break;
	}
	case PARTIAL:
	case HEAD_ONLY: {
		const char *r = s->mode == PARTIAL
					? "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
					: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n";
		test_send_all(fd, r, strlen(r));
		/* then nothing, until the client gives up and closes */
		char c;
		while (recv(fd, &c, 1, 0) > 0)
			;
		break;
	}
	case NOT_HTTP:
		test_send_all(fd, "SSH-2.0-OpenSSH_9.2\r\n\r\n", 23);
		break;
	}
	close(fd);
	return NULL;
}

static void server_start(struct server *s, enum mode m)
{
	s->mode = m;
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->lfd >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->lfd, 1), 0);
	socklen_t l = sizeof(a);
	assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &l), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->th, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
	pthread_join(s->th, NULL);
	close(s->lfd);
}

/* Probe cortex against a server in mode m, bounded by timeout_s. */
static void probe_against(enum mode m, double timeout_s, struct probe *p)
{
	struct server s;
	server_start(&s, m);
	probe_init(p, ROLE_CORTEX, s.port, NULL);
	struct err *e = NULL;
	assert_int_equal(probe_run(p, 1, timeout_s, &e), 0);
	assert_null(e);
	server_stop(&s);
}

static void test_closed_without_answer(void **state)
{
	(void)state;
	struct probe p;
	probe_against(CLOSE, 60, &p);
	assert_int_equal(p.status, PROBE_FAIL);
	assert_int_equal(p.failure, PF_TRANSPORT);
	assert_string_equal(p.reason, "the connection closed without an answer");
	assert_string_equal(probe_failure_name(p.failure), "transport");
	probe_free(&p);
}

static void test_body_too_large(void **state)
{
	(void)state;
	struct probe p;
	probe_against(HUGE, 60, &p);
	assert_int_equal(p.failure, PF_MALFORMED);
	assert_string_equal(p.reason, "malformed body: larger than 4194304 bytes");
	probe_free(&p);
}

static void test_incomplete_answer(void **state)
{
	(void)state;
	struct probe p;
	probe_against(PARTIAL, 5, &p); /* generous: the part is sent at once */
	assert_int_equal(p.failure, PF_TIMEOUT);
	assert_string_equal(p.reason, "timed out after 5 s: the answer was incomplete (HTTP 200, 1 bytes)");
	assert_int_equal(p.http_status, 200);
	probe_free(&p);
	/* the head and no byte of the body: still an answer, not "no answer" */
	probe_against(HEAD_ONLY, 5, &p);
	assert_int_equal(p.failure, PF_TIMEOUT);
	assert_string_equal(p.reason, "timed out after 5 s: the answer was incomplete (HTTP 200, 0 bytes)");
	probe_free(&p);
}

static void test_not_http(void **state)
{
	(void)state;
	struct probe p;
	probe_against(NOT_HTTP, 60, &p);
	assert_int_equal(p.status, PROBE_FAIL);
	assert_int_equal(p.failure, PF_TRANSPORT);
	assert_non_null(p.reason);
	assert_true(strlen(p.reason) > 0);
	assert_int_equal(p.http_status, 0);
	probe_free(&p);
}

static void test_run_refusals_and_names(void **state)
{
	(void)state;
	struct err *e = NULL;
	assert_int_equal(probe_run(NULL, 0, 0, &e), 0); /* nothing to run */
	assert_null(e);
	struct probe p;
	probe_init(&p, ROLE_CORTEX, 1, NULL);
	assert_int_equal(probe_run(&p, 1, 0, &e), -1);
	assert_string_equal(e->msg, "probe timeout must be positive");
	assert_int_equal(e->code, EXIT_INTERNAL);
	err_free(e);
	e = NULL;
	assert_int_equal(probe_run(&p, 1, -1, &e), -1);
	err_free(e);
	probe_free(&p);
	assert_string_equal(probe_status_name(PROBE_PASS), "pass");
	assert_string_equal(probe_status_name(PROBE_FAIL), "fail");
	assert_string_equal(probe_status_name(PROBE_KNOWN_FAILURE), "known-failure");
	assert_string_equal(probe_status_name(PROBE_KNOWN_FAILURE_PASSED), "known-failure-passed");
	assert_null(probe_failure_name(PF_NONE));
	assert_string_equal(probe_failure_name(PF_WRONG), "wrong-answer");
	assert_string_equal(probe_failure_name(PF_TIMEOUT), "timeout");
	assert_string_equal(probe_failure_name(PF_REFUSED), "refused");
	assert_string_equal(probe_failure_name(PF_HTTP), "http");
	assert_string_equal(probe_failure_name(PF_MALFORMED), "malformed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closed_without_answer),
		cmocka_unit_test(test_body_too_large),
		cmocka_unit_test(test_incomplete_answer),
		cmocka_unit_test(test_not_http),
		cmocka_unit_test(test_run_refusals_and_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
