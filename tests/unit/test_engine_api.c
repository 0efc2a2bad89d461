/*
 * test_engine_api.c — the Docker Engine API client (parsers on recorded
 * bodies from tests/fixtures/engine/, the log demultiplexer with frames
 * split anywhere, the transport against a fake engine on a unix socket),
 * `lobes status` over that fake engine, the compose CLI wrapper (detection,
 * argv, working directory) and proc_run_in.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <jansson.h>

#include "../../src/cmd/cmd.h"
#include "../../src/lib/runtime/runtime.h"
#include "../../src/lib/util/fs.h"
#include "../../src/lib/util/proc.h"

static char *fixture(const char *name)
{
	_cleanup_free_ char *rel = xasprintf("tests/fixtures/engine/%s", name);
	_cleanup_free_ char *p = src_path(rel);
	struct err *e = NULL;
	char *s = fs_read(p, 0, NULL, &e);
	if (!s)
		fail_msg("%s", e->msg);
	return s;
}

static char *tmpdir(void)
{
	char t[] = "/tmp/lobes-engine-ut.XXXXXX";
	assert_non_null(mkdtemp(t));
	return xstrdup(t);
}

static void rm_rf(const char *dir)
{
	char *argv[] = { "rm", "-rf", (char *)dir, NULL };
	struct proc_result r;
	if (proc_run(argv, 10000, 0, &r, NULL) == 0)
		proc_result_free(&r);
}

/* ---- pure helpers -------------------------------------------------------- */

static void test_sock_from_host(void **state)
{
	(void)state;
	struct err *e = NULL;
	_cleanup_free_ char *a = engine_sock_from_host(NULL, &e);
	assert_string_equal(a, "/var/run/docker.sock");
	_cleanup_free_ char *b = engine_sock_from_host("", &e);
	assert_string_equal(b, "/var/run/docker.sock");
	_cleanup_free_ char *c = engine_sock_from_host("unix:///tmp/x/docker.sock", &e);
	assert_string_equal(c, "/tmp/x/docker.sock");
	assert_null(engine_sock_from_host("tcp://10.0.0.1:2375", &e));
	assert_int_equal(e->code, EXIT_CONFIG);
	assert_string_contains(e->msg, "'tcp://10.0.0.1:2375' is not a unix socket");
	err_free(e);
}

static void test_parse_time(void **state)
{
	(void)state;
	time_t t = 0;
	assert_int_equal(engine_parse_time("1970-01-01T00:01:40Z", &t), 0);
	assert_int_equal((long)t, 100);
	assert_int_equal(engine_parse_time("2026-01-05T10:02:11.483920931Z", &t), 0);
	assert_int_equal((long long)t, 1767607331LL);
	/* an offset is subtracted: 10:02:11+02:00 is 08:02:11Z */
	assert_int_equal(engine_parse_time("2026-01-05T10:02:11+02:00", &t), 0);
	assert_int_equal((long long)t, 1767607331LL - 7200);
	/* the engine's "never" and garbage */
	assert_int_equal(engine_parse_time("0001-01-01T00:00:00Z", &t), -1);
	assert_int_equal(engine_parse_time("2026-01-05T10:02:11", &t), -1);
	assert_int_equal(engine_parse_time("2026-01-05T10:02:11.Z", &t), -1);
	assert_int_equal(engine_parse_time("2026-01-05T10:02:11Zjunk", &t), -1);
	assert_int_equal(engine_parse_time("", &t), -1);
	assert_int_equal(engine_parse_time(NULL, &t), -1);
}

/* ---- log demultiplexer --------------------------------------------------- */

/* Append one docker log frame (stream, payload) to b. */
static void frame(struct buf *b, int stream, const char *payload, size_t n)
{
	unsigned char h[8] = { (unsigned char)stream, 0, 0, 0, (unsigned char)(n >> 24),
			       (unsigned char)(n >> 16), (unsigned char)(n >> 8), (unsigned char)n };
	assert_int_equal(buf_add(b, h, 8), 0);
	assert_int_equal(buf_add(b, payload, n), 0);
}

/* A stream of four frames: stdout, stderr, an empty one, a 300-byte one
 * (length needs two bytes), plus the text they carry. */
static void sample_stream(struct buf *stream, struct buf *want)
{
	buf_init(stream, 0);
	buf_init(want, 0);
	const char *a = "INFO 01-05 10:02:11 [api_server.py:1010] vLLM API server version 0.23.1\n";
	const char *b = "ERROR 01-05 10:02:40 [core.py:711] EngineCore failed to start.\n";
	frame(stream, 1, a, strlen(a));
	frame(stream, 2, b, strlen(b));
	frame(stream, 1, "", 0);
	char big[300];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	big[sizeof(big) - 1] = '\n';
	frame(stream, 1, big, sizeof(big));
	buf_adds(want, a);
	buf_adds(want, b);
	buf_add(want, big, sizeof(big));
}

static void test_demux_whole_and_split(void **state)
{
	(void)state;
	_cleanup_buf_ struct buf stream;
	_cleanup_buf_ struct buf want;
	sample_stream(&stream, &want);
	/* in one feed */
	{
		struct log_demux d;
		log_demux_init(&d, false);
		_cleanup_buf_ struct buf out;
		buf_init(&out, 0);
		assert_int_equal(log_demux_feed(&d, stream.data, stream.len, &out), 0);
		assert_int_equal(out.len, want.len);
		assert_memory_equal(out.data, want.data, want.len);
		assert_int_equal(d.hdr_len, 0);
		assert_int_equal(d.left, 0);
	}
	/* cut in two at every position: headers and payloads split anywhere */
	for (size_t cut = 0; cut <= stream.len; cut++) {
		struct log_demux d;
		log_demux_init(&d, false);
		_cleanup_buf_ struct buf out;
		buf_init(&out, 0);
		assert_int_equal(log_demux_feed(&d, stream.data, cut, &out), 0);
		assert_int_equal(log_demux_feed(&d, stream.data + cut, stream.len - cut, &out), 0);
		assert_int_equal(out.len, want.len);
		assert_memory_equal(out.data, want.data, want.len);
	}
	/* one byte at a time */
	{
		struct log_demux d;
		log_demux_init(&d, false);
		_cleanup_buf_ struct buf out;
		buf_init(&out, 0);
		for (size_t i = 0; i < stream.len; i++)
			assert_int_equal(log_demux_feed(&d, stream.data + i, 1, &out), 0);
		assert_int_equal(out.len, want.len);
		assert_memory_equal(out.data, want.data, want.len);
	}
	/* mid-frame at the end is visible to the caller */
	{
		struct log_demux d;
		log_demux_init(&d, false);
		_cleanup_buf_ struct buf out;
		buf_init(&out, 0);
		assert_int_equal(log_demux_feed(&d, stream.data, 12, &out), 0);
		assert_true(d.left > 0);
	}
}

static void test_demux_raw_bad_cap(void **state)
{
	(void)state;
	/* a TTY container's log is not framed */
	struct log_demux d;
	log_demux_init(&d, true);
	_cleanup_buf_ struct buf out;
	buf_init(&out, 0);
	const char raw[] = "\x01\x00\x00\x00 plain tty text\n";
	assert_int_equal(log_demux_feed(&d, raw, sizeof(raw) - 1, &out), 0);
	assert_int_equal(out.len, sizeof(raw) - 1);
	/* a header that is not a frame header fails, and stays failed */
	log_demux_init(&d, false);
	buf_reset(&out);
	const char *text = "INFO not multiplexed\n";
	assert_int_equal(log_demux_feed(&d, text, strlen(text), &out), -1);
	assert_true(d.bad);
	assert_int_equal(log_demux_feed(&d, "\x01\0\0\0\0\0\0\0", 8, &out), -1);
	/* the cap holds */
	_cleanup_buf_ struct buf stream;
	_cleanup_buf_ struct buf want;
	sample_stream(&stream, &want);
	_cleanup_buf_ struct buf small;
	buf_init(&small, 100);
	log_demux_init(&d, false);
	assert_int_equal(log_demux_feed(&d, stream.data, stream.len, &small), -1);
	assert_true(small.len <= 100);
}

/* ---- parsers on recorded bodies ------------------------------------------ */

static void test_parse_list(void **state)
{
	(void)state;
	_cleanup_free_ char *body = fixture("containers-list.json");
	struct engine_container_list l;
	struct err *e = NULL;
	assert_int_equal(engine_parse_list(body, &l, &e), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.c[0].name, "lobes_senses_1");
	assert_string_equal(l.c[0].project, "lobes");
	assert_string_equal(l.c[0].service, "senses");
	assert_string_equal(l.c[0].role, "senses");
	assert_string_equal(l.c[0].profile, "orin");
	assert_string_equal(l.c[0].state, "running");
	assert_string_equal(l.c[0].health, "healthy"); /* from "Up 2 hours (healthy)" */
	assert_string_equal(l.c[2].role, "reranker");
	assert_string_equal(l.c[2].state, "exited");
	assert_string_equal(l.c[2].health, "none");
	assert_string_equal(l.c[2].image, "vllm/vllm-openai@sha256:7c5a10e9");
	assert_int_equal(strncmp(l.c[2].image_id, "sha256:", 7), 0);
	assert_int_equal(strlen(l.c[2].id), 64);
	engine_container_list_free(&l);

	assert_int_equal(engine_parse_list("{\"message\": \"x\"}", &l, &e), -1);
	assert_int_equal(e->code, EXIT_RUNTIME);
	assert_string_contains(e->msg, "not a JSON array");
	err_free(e);
	e = NULL;
	assert_int_equal(engine_parse_list("[{\"Names\": []}]", &l, &e), -1);
	assert_string_contains(e->msg, "entry 0 has no Id");
	err_free(e);
	e = NULL;
	assert_int_equal(engine_parse_list("[", &l, &e), -1);
	err_free(e);
}

static void test_parse_inspect(void **state)
{
	(void)state;
	struct err *e = NULL;
	struct engine_container c;
	_cleanup_free_ char *senses = fixture("inspect-senses.json");
	assert_int_equal(engine_parse_inspect(senses, &c, &e), 0);
	assert_string_equal(c.name, "lobes_senses_1");
	assert_string_equal(c.role, "senses");
	assert_string_equal(c.state, "running");
	assert_string_equal(c.health, "healthy");
	assert_string_equal(c.started_at, "2026-01-05T10:02:11.483920931Z");
	assert_string_equal(c.finished_at, ""); /* year 1: never */
	assert_int_equal(c.restart_count, 0);
	assert_int_equal(c.pid, 4242);
	assert_false(c.tty);
	assert_string_equal(c.entrypoint[0], "vllm");
	assert_string_equal(c.entrypoint[1], "serve");
	assert_null(c.entrypoint[2]);
	assert_string_equal(c.cmd[0], "coolthor/gemma-4-12B-it-NVFP4A16");
	/* Args: what the process really got (entrypoint's own args included) */
	assert_string_equal(c.args[0], "serve");
	assert_string_equal(c.args[1], "coolthor/gemma-4-12B-it-NVFP4A16");
	bool found = false;
	for (char **a = c.args; *a; a++)
		found = found || strcmp(*a, "--attention-config={\"backend\": \"TRITON_ATTN\"}") == 0;
	assert_true(found);
	assert_string_equal(engine_env_get(c.env, "HF_HOME"), "/root/.cache/huggingface");
	assert_string_equal(engine_env_get(c.env, "VLLM_VERSION"), "0.23.1rc1.dev672+g93d8f834d");
	assert_null(engine_env_get(c.env, "VLLM"));
	assert_string_equal(json_string_value(json_object_get(c.labels, "com.docker.compose.version")),
			    "1.29.2");
	engine_container_free(&c);

	_cleanup_free_ char *exited = fixture("inspect-reranker-exited.json");
	assert_int_equal(engine_parse_inspect(exited, &c, &e), 0);
	assert_string_equal(c.state, "exited");
	assert_int_equal(c.exit_code, 1);
	assert_int_equal(c.restart_count, 2);
	assert_string_equal(c.health, "unhealthy");
	assert_string_equal(c.finished_at, "2026-01-05T12:03:02.998877665Z");
	engine_container_free(&c);

	_cleanup_free_ char *nohealth = fixture("inspect-reranker-nohealth.json");
	assert_int_equal(engine_parse_inspect(nohealth, &c, &e), 0);
	assert_string_equal(c.health, "none");
	assert_string_equal(c.state, "running");
	engine_container_free(&c);

	assert_int_equal(engine_parse_inspect("[]", &c, &e), -1);
	assert_int_equal(e->code, EXIT_RUNTIME);
	assert_string_contains(e->msg, "not an object with an Id");
	err_free(e);
}

static void test_parse_image(void **state)
{
	(void)state;
	_cleanup_free_ char *body = fixture("image-vllm.json");
	struct engine_image im;
	struct err *e = NULL;
	assert_int_equal(engine_parse_image(body, &im, &e), 0);
	assert_int_equal(strncmp(im.id, "sha256:", 7), 0);
	assert_string_equal(im.repo_digests[0], "vllm/vllm-openai@sha256:7c5a10e9");
	assert_null(im.repo_digests[1]);
	assert_null(im.repo_tags[0]);
	assert_string_equal(engine_env_get(im.env, "VLLM_VERSION"), "0.23.1rc1.dev672+g93d8f834d");
	engine_image_free(&im);
	assert_int_equal(engine_parse_image("{}", &im, &e), -1);
	err_free(e);
}

/* ---- a fake engine on a unix socket -------------------------------------- */

struct route {
	const char *prefix; /* request path prefix */
	int status;
	const char *body;
	size_t len;
};

static struct {
	char *dir, *sock;
	int fd, tcp_fd;     /* the engine's unix socket; a 127.0.0.1 port for /health */
	int tcp_port;
	pthread_t th, tcp_th;
	struct route routes[16];
	size_t n_routes;
	char seen[32][1024];
	size_t n_seen;
	pthread_mutex_t mu;
} fake = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void route(const char *prefix, int status, const char *body, size_t len)
{
	pthread_mutex_lock(&fake.mu);
	for (size_t i = 0; i < fake.n_routes; i++)
		if (strcmp(fake.routes[i].prefix, prefix) == 0) {
			fake.routes[i] = (struct route){ prefix, status, body, len };
			pthread_mutex_unlock(&fake.mu);
			return;
		}
	fake.routes[fake.n_routes++] = (struct route){ prefix, status, body, len };
	pthread_mutex_unlock(&fake.mu);
}

/* Answer requests on the listening socket *arg from the route table until
 * it is shut down. */
static void *fake_serve(void *arg)
{
	int fd = *(int *)arg;
	for (;;) {
		char req[4096];
		int c = test_accept_head(fd, req, sizeof(req));
		if (c < 0)
			return NULL;
		char path[1024] = "";
		if (sscanf(req, "GET %1023s HTTP/", path) != 1) {
			close(c);
			continue;
		}
		pthread_mutex_lock(&fake.mu);
		if (fake.n_seen < 32)
			snprintf(fake.seen[fake.n_seen++], sizeof(fake.seen[0]), "%s", path);
		const struct route *best = NULL;
		for (size_t i = 0; i < fake.n_routes; i++)
			if (strncmp(path, fake.routes[i].prefix, strlen(fake.routes[i].prefix)) == 0 &&
			    (!best || strlen(fake.routes[i].prefix) > strlen(best->prefix)))
				best = &fake.routes[i];
		struct route r = best ? *best
				      : (struct route){ "", 404, "{\"message\":\"page not found\"}", 28 };
		pthread_mutex_unlock(&fake.mu);
		char head[256];
		int hl = snprintf(head, sizeof(head),
				  "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nApi-Version: 1.50\r\n"
				  "Connection: close\r\n\r\n",
				  r.status, r.len);
		test_send_all(c, head, (size_t)hl);
		/* the body in small writes: the client sees it in pieces */
		for (size_t off = 0; off < r.len; off += 7)
			test_send_all(c, r.body + off, r.len - off < 7 ? r.len - off : 7);
		close(c);
	}
}

static bool seen(const char *needle)
{
	bool found = false;
	pthread_mutex_lock(&fake.mu);
	for (size_t i = 0; i < fake.n_seen; i++)
		found = found || strstr(fake.seen[i], needle);
	pthread_mutex_unlock(&fake.mu);
	return found;
}

static char *bodies[8];

static int fake_setup(void **state)
{
	(void)state;
	fake.dir = tmpdir();
	fake.sock = xasprintf("%s/docker.sock", fake.dir);
	fake.n_routes = 0;
	fake.n_seen = 0;
	fake.fd = test_listen_unix(fake.sock, 16);
	if (fake.fd < 0)
		return -1;
	const char *names[] = { "containers-list.json", "inspect-senses.json", "inspect-embedder.json",
				"inspect-reranker-exited.json", "inspect-reranker-nohealth.json",
				"image-vllm.json" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		bodies[i] = fixture(names[i]);
	route("/_ping", 200, "OK", 2);
	route("/containers/json", 200, bodies[0], strlen(bodies[0]));
	json_auto_t *list = json_loads(bodies[0], 0, NULL);
	static char prefixes[3][128];
	for (size_t i = 0; i < 3; i++) {
		snprintf(prefixes[i], sizeof(prefixes[i]), "/containers/%s/json",
			 json_string_value(json_object_get(json_array_get(list, i), "Id")));
		route(prefixes[i], 200, bodies[1 + i], strlen(bodies[1 + i]));
	}
	route("/images/vllm/vllm-openai@sha256:7c5a10e9/json", 200, bodies[5], strlen(bodies[5]));
	_cleanup_free_ char *host = xasprintf("unix://%s", fake.sock);
	setenv("DOCKER_HOST", host, 1);
	/* a role's own port, answering /health */
	fake.tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(in);
	if (bind(fake.tcp_fd, (struct sockaddr *)&in, sizeof(in)) < 0 || listen(fake.tcp_fd, 16) < 0 ||
	    getsockname(fake.tcp_fd, (struct sockaddr *)&in, &sl) < 0)
		return -1;
	fake.tcp_port = ntohs(in.sin_port);
	route("/health", 200, "", 0);
	if (pthread_create(&fake.tcp_th, NULL, fake_serve, &fake.tcp_fd) != 0)
		return -1;
	return pthread_create(&fake.th, NULL, fake_serve, &fake.fd) == 0 ? 0 : -1;
}

static int fake_teardown(void **state)
{
	(void)state;
	shutdown(fake.fd, SHUT_RDWR); /* accept() returns: the thread ends */
	pthread_join(fake.th, NULL);
	close(fake.fd);
	shutdown(fake.tcp_fd, SHUT_RDWR);
	pthread_join(fake.tcp_th, NULL);
	close(fake.tcp_fd);
	rm_rf(fake.dir);
	free(fake.dir);
	free(fake.sock);
	for (size_t i = 0; i < ARRAY_SIZE(bodies); i++) {
		free(bodies[i]);
		bodies[i] = NULL;
	}
	unsetenv("DOCKER_HOST");
	return 0;
}

static void test_engine_over_socket(void **state)
{
	(void)state;
	struct engine en;
	struct err *e = NULL;
	assert_int_equal(engine_open(&en, &e), 0);
	assert_string_equal(en.sock, fake.sock);
	assert_int_equal(engine_ping(&en, &e), 0);

	struct engine_container_list l;
	assert_int_equal(engine_list_project(&en, "lobes", &l, &e), 0);
	/* all=1 and the project label filter, URL-encoded */
	assert_true(seen("/containers/json?all=1&filters="));
	assert_true(seen("com.docker.compose.project%3Dlobes"));
	assert_int_equal(l.n, 3);
	/* each one inspected: the list alone has no StartedAt or restarts */
	assert_string_equal(l.c[0].name, "lobes_embedder_1"); /* ordered by name */
	assert_string_equal(l.c[1].name, "lobes_reranker_1");
	assert_string_equal(l.c[1].state, "exited");
	assert_int_equal(l.c[1].restart_count, 2);
	assert_string_equal(l.c[2].started_at, "2026-01-05T10:02:11.483920931Z");
	engine_container_list_free(&l);

	struct engine_image im;
	assert_int_equal(engine_image_inspect(&en, "vllm/vllm-openai@sha256:7c5a10e9", &im, &e), 0);
	assert_string_equal(engine_env_get(im.env, "VLLM_VERSION"), "0.23.1rc1.dev672+g93d8f834d");
	engine_image_free(&im);

	/* a 404 says what is missing */
	struct engine_container c;
	assert_int_equal(engine_inspect(&en, "nope", &c, &e), -1);
	assert_int_equal(e->code, EXIT_RUNTIME);
	assert_string_equal(e->msg, "no such container 'nope'");
	err_free(e);
	e = NULL;
	assert_int_equal(engine_image_inspect(&en, "missing:tag", &im, &e), -1);
	assert_string_equal(e->msg, "no such image 'missing:tag'");
	err_free(e);
	e = NULL;
	/* another HTTP error carries the engine's message */
	route("/containers/boom/json", 500, "{\"message\":\"driver failed\"}\n", 27);
	assert_int_equal(engine_inspect(&en, "boom", &c, &e), -1);
	assert_string_contains(e->msg, "GET /containers/boom/json: HTTP 500: driver failed");
	err_free(e);
	e = NULL;
	/* a reference that cannot be put in a path is refused before asking */
	assert_int_equal(engine_inspect(&en, "a?b", &c, &e), -1);
	err_free(e);
	e = NULL;
	engine_close(&en);
}

static void test_logs_over_socket(void **state)
{
	(void)state;
	_cleanup_buf_ struct buf stream;
	_cleanup_buf_ struct buf want;
	sample_stream(&stream, &want);
	/* a container to inspect (not a TTY), then its multiplexed log */
	route("/containers/logc/json", 200, bodies[2], strlen(bodies[2]));
	route("/containers/logc/logs", 200, stream.data, stream.len);
	struct engine en;
	struct err *e = NULL;
	assert_int_equal(engine_open(&en, &e), 0);
	struct engine_log_opts o = { .tail = 200, .since = 1767600000, .cap = 0 };
	_cleanup_free_ char *text = NULL;
	assert_int_equal(engine_logs(&en, "logc", &o, &text, &e), 0);
	assert_string_equal(text, want.data);
	assert_true(seen("/containers/logc/logs?stdout=1&stderr=1&tail=200&since=1767600000"));
	/* a log over the cap is an error, not a silent cut */
	o = (struct engine_log_opts){ .tail = -1, .cap = 64 };
	_cleanup_free_ char *t2 = NULL;
	assert_int_equal(engine_logs(&en, "logc", &o, &t2, &e), -1);
	assert_string_contains(e->msg, "larger than 64 bytes");
	assert_true(seen("tail=all"));
	err_free(e);
	e = NULL;
	/* a stream that ends inside a frame */
	route("/containers/logc/logs", 200, stream.data, 20);
	o.cap = 0;
	assert_int_equal(engine_logs(&en, "logc", &o, &t2, &e), -1);
	assert_string_contains(e->msg, "ends mid-frame");
	err_free(e);
	engine_close(&en);
}

static void test_engine_unreachable(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tmpdir();
	_cleanup_free_ char *host = xasprintf("unix://%s/none.sock", dir);
	setenv("DOCKER_HOST", host, 1);
	struct engine en;
	struct err *e = NULL;
	assert_int_equal(engine_open(&en, &e), 0);
	assert_int_equal(engine_ping(&en, &e), -1);
	assert_int_equal(e->code, EXIT_RUNTIME);
	_cleanup_free_ char *want =
		xasprintf("docker engine at '%s/none.sock': connect: No such file or directory", dir);
	assert_string_equal(e->msg, want);
	err_free(e);
	engine_close(&en);
	unsetenv("DOCKER_HOST");
	rm_rf(dir);
}

/* ---- lobes status over the fake engine ----------------------------------- */

/* Run cmd_status on deploy dir `dir`, stdout captured into *out. */
static int run_status(const char *dir, bool json, char **out, struct err **err)
{
	static const struct command cmd = { "status", cmd_status, "lobes status [--json]", "", "" };
	struct ctx ctx = { .json = json, .dir = (char *)dir, .cmd = &cmd };
	char *argv[] = { "status", NULL };
	_cleanup_free_ char *cap = xasprintf("%s/stdout", dir);
	fflush(stdout);
	int saved = dup(1);
	int fd = open(cap, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 1);
	close(fd);
	optind = 1;
	int rc = cmd_status(1, argv, &ctx);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	*out = fs_read(cap, 0, NULL, NULL);
	*err = ctx.err;
	return rc;
}

static char *orin_deploy(void)
{
	char *dir = tmpdir();
	_cleanup_free_ char *golden = src_path("tests/goldens/orin/.env");
	_cleanup_free_ char *env = fs_read(golden, 0, NULL, NULL);
	assert_non_null(env);
	_cleanup_free_ char *p = xasprintf("%s/.env", dir);
	assert_int_equal(fs_write_atomic(p, env, strlen(env), 0600, NULL), 0);
	return dir;
}

static json_t *role_of(json_t *res, const char *role)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(res, "roles"), i, r)
		if (strcmp(jstr(r, "role"), role) == 0)
			return r;
	fail_msg("no role %s", role);
	return NULL;
}

static void test_status_cmd(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = orin_deploy();
	_cleanup_free_ char *out = NULL;
	struct err *e = NULL;
	/* reranker exited: exit 1, named */
	assert_int_equal(run_status(dir, true, &out, &e), EXIT_CHECK);
	assert_null(e);
	json_auto_t *res = json_loads(out, 0, NULL);
	assert_non_null(res);
	assert_string_equal(jstr(res, "profile"), "orin");
	assert_true(json_is_true(json_object_get(json_object_get(res, "engine"), "reachable")));
	assert_int_equal(json_array_size(json_object_get(res, "roles")), 5);
	assert_int_equal(json_integer_value(json_object_get(res, "feasible_roles")), 3);
	json_t *cortex = role_of(res, "cortex");
	assert_false(json_is_true(json_object_get(cortex, "feasible")));
	assert_string_equal(jstr(cortex, "state"), "not deployed");
	json_t *senses = role_of(res, "senses");
	assert_string_equal(jstr(senses, "state"), "running");
	assert_string_equal(jstr(senses, "health"), "healthy");
	assert_string_equal(jstr(senses, "container"), "lobes_senses_1");
	assert_string_equal(jstr(senses, "model"), "coolthor/gemma-4-12B-it-NVFP4A16");
	assert_int_equal(json_integer_value(json_object_get(senses, "port")), 8002);
	assert_true(json_is_integer(json_object_get(senses, "uptime_s")));
	assert_true(json_is_true(json_object_get(senses, "ok")));
	json_t *rr = role_of(res, "reranker");
	assert_false(json_is_true(json_object_get(rr, "ok")));
	assert_string_equal(jstr(rr, "problem"), "exited (exit code 1)");
	assert_int_equal(json_integer_value(json_object_get(rr, "restart_count")), 2);
	json_t *probs = json_object_get(res, "problems");
	assert_int_equal(json_array_size(probs), 1);
	assert_string_equal(jstr(json_array_get(probs, 0), "role"), "reranker");

	/* the text view says the same */
	free(out);
	out = NULL;
	assert_int_equal(run_status(dir, false, &out, &e), EXIT_CHECK);
	assert_string_contains(out, "profile orin");
	assert_string_contains(out, "docker engine reachable");
	assert_string_contains(out, "cortex     not deployed (infeasible)");
	assert_string_contains(out, "senses     running       healthy    8002");
	assert_string_contains(out, "not ok: 2 of 3 feasible roles running and healthy");
	assert_string_contains(out, "  reranker: exited (exit code 1)");

	/* reranker running without a healthcheck: fine when its port answers
	 * /health itself (the last assignment in .env wins) */
	route(fake.routes[4].prefix, 200, bodies[4], strlen(bodies[4]));
	_cleanup_free_ char *p = xasprintf("%s/.env", dir);
	_cleanup_free_ char *env = fs_read(p, 0, NULL, NULL);
	_cleanup_free_ char *env1 = xasprintf("%sRERANKER_PORT=%d\n", env, fake.tcp_port);
	assert_int_equal(fs_write_atomic(p, env1, strlen(env1), 0600, NULL), 0);
	free(out);
	out = NULL;
	assert_int_equal(run_status(dir, false, &out, &e), EXIT_OK);
	assert_string_contains(out, "ok: 3 of 3 feasible roles running and healthy");
	assert_string_contains(out, "reranker   running       none");
	assert_string_contains(out, "note: no healthcheck; /health answers 200");
	assert_true(seen("/health"));
	/* the same with docker's check not run yet ("starting") */
	json_auto_t *starting = json_loads(bodies[4], 0, NULL);
	json_object_set_new(json_object_get(starting, "State"), "Health",
			    json_pack("{s:s, s:i, s:[]}", "Status", "starting", "FailingStreak", 0, "Log"));
	_cleanup_free_ char *sbody = json_dumps(starting, JSON_COMPACT);
	route(fake.routes[4].prefix, 200, sbody, strlen(sbody));
	free(out);
	out = NULL;
	assert_int_equal(run_status(dir, false, &out, &e), EXIT_OK);
	assert_string_contains(out, "reranker   running       starting");
	assert_string_contains(out, "note: docker's health check has not run yet; /health answers 200");
	/* ... and not fine when /health errs, or nothing answers on the port */
	route("/health", 503, "", 0);
	free(out);
	out = NULL;
	assert_int_equal(run_status(dir, false, &out, &e), EXIT_CHECK);
	assert_string_contains(out, "  reranker: health check not passed yet; /health answers an error");
	int closed = socket(AF_INET, SOCK_STREAM, 0); /* bound, never listening: refused */
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(in);
	assert_int_equal(bind(closed, (struct sockaddr *)&in, sizeof(in)), 0);
	assert_int_equal(getsockname(closed, (struct sockaddr *)&in, &sl), 0);
	free(env1);
	env1 = xasprintf("%sRERANKER_PORT=%d\n", env, ntohs(in.sin_port));
	assert_int_equal(fs_write_atomic(p, env1, strlen(env1), 0600, NULL), 0);
	route(fake.routes[4].prefix, 200, bodies[4], strlen(bodies[4]));
	free(out);
	out = NULL;
	assert_int_equal(run_status(dir, false, &out, &e), EXIT_CHECK);
	assert_string_contains(out, "  reranker: no healthcheck; /health does not answer");
	close(closed);

	/* a feasible role without a container is "not running" */
	_cleanup_free_ char *env2 = xasprintf("%sHAND_FEASIBLE=true\nHAND_PORT=8003\n", env);
	assert_int_equal(fs_write_atomic(p, env2, strlen(env2), 0600, NULL), 0);
	free(out);
	out = NULL;
	assert_int_equal(run_status(dir, false, &out, &e), EXIT_CHECK);
	assert_string_contains(out, "hand       not running   -          8003");
	assert_string_contains(out, "  hand: not running");
	free(out);
	out = NULL;

	/* engine gone: exit 4 with the error handed to main, roles "unknown" */
	_cleanup_free_ char *host = xasprintf("unix://%s/gone.sock", dir);
	setenv("DOCKER_HOST", host, 1);
	assert_int_equal(run_status(dir, true, &out, &e), EXIT_RUNTIME);
	assert_non_null(e);
	assert_string_contains(e->msg, "gone.sock': connect: No such file or directory");
	err_free(e);
	e = NULL;
	json_auto_t *r2 = json_loads(out, 0, NULL);
	assert_false(json_is_true(json_object_get(json_object_get(r2, "engine"), "reachable")));
	assert_string_equal(jstr(role_of(r2, "senses"), "state"), "unknown");
	assert_string_equal(jstr(role_of(r2, "cortex"), "state"), "not deployed");
	free(out);
	out = NULL;
	_cleanup_free_ char *good = xasprintf("unix://%s", fake.sock);
	setenv("DOCKER_HOST", good, 1);

	/* no .env: exit 3 and the way out */
	unlink(p);
	assert_int_equal(run_status(dir, false, &out, &e), EXIT_CONFIG);
	assert_string_contains(e->msg, "no deployment in '");
	assert_string_contains(e->msg, "run 'lobes init --apply'");
	err_free(e);
	rm_rf(dir);
}

/* ---- compose CLI and proc_run_in ----------------------------------------- */

static void write_exec(const char *path, const char *text)
{
	assert_int_equal(fs_write_atomic(path, text, strlen(text), 0755, NULL), 0);
}

static void test_proc_run_in(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tmpdir();
	char *argv[] = { "pwd", NULL };
	struct proc_result r;
	struct err *e = NULL;
	assert_int_equal(proc_run_in(dir, argv, 10000, 0, &r, &e), 0);
	_cleanup_free_ char *want = xasprintf("%s\n", dir);
	assert_string_equal(buf_str(&r.out), want);
	proc_result_free(&r);
	/* NULL: the caller's directory, as proc_run */
	char cwd[4096];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(proc_run_in(NULL, argv, 10000, 0, &r, &e), 0);
	_cleanup_free_ char *want2 = xasprintf("%s\n", cwd);
	assert_string_equal(buf_str(&r.out), want2);
	proc_result_free(&r);
	/* a missing directory is named, not mistaken for a missing program */
	_cleanup_free_ char *gone = xasprintf("%s/gone", dir);
	assert_int_equal(proc_run_in(gone, argv, 10000, 0, &r, &e), -1);
	assert_int_equal(e->code, EXIT_CONFIG);
	_cleanup_free_ char *msg = xasprintf("directory '%s': No such file or directory", gone);
	assert_string_equal(e->msg, msg);
	proc_result_free(&r);
	err_free(e);
	rm_rf(dir);
}

/* A stub compose: prints its working directory and its argv, one [word]
 * each; exits with $STUB_RC. */
static const char *stub_compose = "#!/bin/sh\n"
				  "printf 'cwd=%s\\n' \"$(pwd)\"\n"
				  "for a in \"$@\"; do printf '[%s]' \"$a\"; done\n"
				  "echo\n"
				  "[ -n \"$STUB_RC\" ] && echo 'ERROR: No such service: nope' >&2\n"
				  "exit ${STUB_RC:-0}\n";

static void test_compose_override_and_argv(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = orin_deploy();
	_cleanup_free_ char *stub = xasprintf("%s/stub-compose", dir);
	write_exec(stub, stub_compose);
	_cleanup_free_ char *lc = xasprintf("  %s  extra\t", stub);
	setenv("LOBES_COMPOSE", lc, 1);
	setenv("COMPOSE_FILE", "/elsewhere/docker-compose.yml", 1); /* must not matter */
	struct compose c;
	struct err *e = NULL;
	assert_int_equal(compose_open(&c, dir, &e), 0);
	assert_int_equal(c.cli, 0);
	assert_string_equal(c.cmd[0], stub);
	assert_string_equal(c.cmd[1], "extra");
	assert_null(c.cmd[2]);
	assert_string_equal(c.project, "lobes");
	assert_string_equal(c.files[0], "docker-compose.yml");
	assert_string_equal(c.files[1], "docker-compose.gpu.yml");
	assert_null(c.files[2]);

	struct proc_result r;
	const char *const svc[] = { "senses", "embedder", NULL };
	assert_int_equal(compose_up(&c, svc, &r, &e), 0);
	assert_int_equal(r.status, 0);
	_cleanup_free_ char *want = xasprintf(
		"cwd=%s\n[extra][--project-directory][%s][-p][lobes][-f][docker-compose.yml]"
		"[-f][docker-compose.gpu.yml][up][-d][--no-deps][senses][embedder]\n",
		dir, dir);
	assert_string_equal(buf_str(&r.out), want);
	assert_int_equal(compose_result_check("up", &r, &e), 0);
	proc_result_free(&r);

	assert_int_equal(compose_down(&c, &r, &e), 0);
	assert_string_contains(buf_str(&r.out), "[docker-compose.gpu.yml][down]\n");
	proc_result_free(&r);
	assert_int_equal(compose_ps(&c, &r, &e), 0);
	assert_string_contains(buf_str(&r.out), "[docker-compose.gpu.yml][ps]\n");
	proc_result_free(&r);
	assert_int_equal(compose_config_check(&c, &r, &e), 0);
	assert_string_contains(buf_str(&r.out), "[docker-compose.gpu.yml][config][-q]\n");
	proc_result_free(&r);

	/* a failure is reported with the compose's own last words */
	setenv("STUB_RC", "1", 1);
	const char *const bad[] = { "nope", NULL };
	assert_int_equal(compose_up(&c, bad, &r, &e), 0);
	assert_int_equal(r.status, 1);
	assert_int_equal(compose_result_check("up", &r, &e), -1);
	assert_int_equal(e->code, EXIT_RUNTIME);
	assert_string_equal(e->msg, "compose up: exit 1: ERROR: No such service: nope");
	err_free(e);
	e = NULL;
	proc_result_free(&r);
	unsetenv("STUB_RC");
	compose_free(&c);

	/* a separator from .env, and no .env at all */
	_cleanup_free_ char *envp = xasprintf("%s/.env", dir);
	const char *env = "COMPOSE_PATH_SEPARATOR=;\nCOMPOSE_FILE=a.yml;b.yml\n";
	assert_int_equal(fs_write_atomic(envp, env, strlen(env), 0600, NULL), 0);
	assert_int_equal(compose_open(&c, dir, &e), 0);
	assert_null(c.project);
	assert_string_equal(c.files[0], "a.yml");
	assert_string_equal(c.files[1], "b.yml");
	compose_free(&c);
	unlink(envp);
	assert_int_equal(compose_open(&c, dir, &e), 0);
	_cleanup_strv_ char **argv = compose_argv(&c, (const char *const[]){ "ps", NULL });
	assert_string_equal(argv[3], dir);
	assert_string_equal(argv[4], "ps");
	assert_null(argv[5]);
	compose_free(&c);
	/* a .env that does not parse */
	assert_int_equal(fs_write_atomic(envp, "not an assignment\n", 18, 0600, NULL), 0);
	assert_int_equal(compose_open(&c, dir, &e), -1);
	assert_int_equal(e->code, EXIT_CONFIG);
	err_free(e);
	unsetenv("LOBES_COMPOSE");
	unsetenv("COMPOSE_FILE");
	rm_rf(dir);
}

static void test_compose_detect(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tmpdir();
	_cleanup_free_ char *old_path = xstrdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	_cleanup_free_ char *path = xasprintf("%s:/usr/bin:/bin", dir);
	setenv("PATH", path, 1);
	unsetenv("LOBES_COMPOSE");
	_cleanup_free_ char *docker = xasprintf("%s/docker", dir);
	_cleanup_free_ char *dc = xasprintf("%s/docker-compose", dir);
	/* a docker without the compose plugin, and a v1 docker-compose */
	write_exec(docker, "#!/bin/sh\necho \"docker: unknown command: docker $1\" >&2\nexit 1\n");
	write_exec(dc, "#!/bin/sh\n[ \"$1\" = version ] && echo 'docker-compose version 1.29.2, build unknown'"
		       " && echo 'docker-py version: 5.0.3'\n");
	char **cmd = NULL;
	int cli = -1;
	char *version = NULL;
	struct err *e = NULL;
	assert_int_equal(compose_detect(&cmd, &cli, &version, &e), 0);
	assert_int_equal(cli, 1);
	assert_string_equal(cmd[0], "docker-compose");
	assert_null(cmd[1]);
	assert_string_equal(version, "docker-compose version 1.29.2, build unknown");
	strv_free(cmd);
	free(version);
	/* v2 first when the plugin answers */
	write_exec(docker, "#!/bin/sh\n[ \"$1 $2\" = 'compose version' ] && echo 'Docker Compose version v2.29.7'\n");
	assert_int_equal(compose_detect(&cmd, &cli, &version, &e), 0);
	assert_int_equal(cli, 2);
	assert_string_equal(cmd[0], "docker");
	assert_string_equal(cmd[1], "compose");
	assert_string_equal(version, "Docker Compose version v2.29.7");
	strv_free(cmd);
	free(version);
	/* without a version asked for (serve, stop, switch: compose_open), v1 is
	 * found in PATH and not started: its Python start-up under load ran past
	 * the probe's bound and an installed CLI was called missing */
	_cleanup_free_ char *runs = xasprintf("%s/v1-runs", dir);
	_cleanup_free_ char *v1 = xasprintf("#!/bin/sh\necho run >>'%s'\necho 'docker-compose version 1.29.2'\n", runs);
	write_exec(docker, "#!/bin/sh\nexit 1\n");
	write_exec(dc, v1);
	assert_int_equal(compose_detect(&cmd, &cli, NULL, &e), 0);
	assert_int_equal(cli, 1);
	assert_string_equal(cmd[0], "docker-compose");
	assert_false(fs_exists(runs));
	strv_free(cmd);
	struct compose c;
	assert_int_equal(compose_open(&c, dir, &e), 0);
	assert_int_equal(c.cli, 1);
	assert_string_equal(c.version, "");
	assert_false(fs_exists(runs));
	compose_free(&c);
	/* doctor asks for the version: v1 is run for it */
	assert_int_equal(compose_detect(&cmd, &cli, &version, &e), 0);
	assert_string_equal(version, "docker-compose version 1.29.2");
	assert_true(fs_exists(runs));
	strv_free(cmd);
	free(version);
	write_exec(docker, "#!/bin/sh\n[ \"$1 $2\" = 'compose version' ] && echo 'Docker Compose version v2.29.7'\n");
	/* a blank LOBES_COMPOSE is no override */
	setenv("LOBES_COMPOSE", "   ", 1);
	assert_int_equal(compose_detect(&cmd, &cli, NULL, &e), 0);
	assert_int_equal(cli, 2);
	strv_free(cmd);
	unsetenv("LOBES_COMPOSE");
	/* neither works */
	write_exec(docker, "#!/bin/sh\nexit 1\n");
	write_exec(dc, "#!/bin/sh\nexit 127\n");
	setenv("PATH", dir, 1);
	assert_int_equal(compose_detect(&cmd, &cli, &version, &e), -1);
	assert_int_equal(e->code, EXIT_CONFIG);
	assert_string_contains(e->msg, "LOBES_COMPOSE");
	err_free(e);
	e = NULL;
	/* a probe still running at its bound is slow, not absent: said so */
	write_exec(docker, "#!/bin/sh\nexec /bin/sleep 60\n");
	unlink(dc);
	assert_int_equal(compose_detect(&cmd, &cli, NULL, &e), -1);
	assert_int_equal(e->code, EXIT_RUNTIME);
	assert_string_contains(e->msg, "was still running after 10 s");
	err_free(e);
	setenv("PATH", old_path, 1);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sock_from_host),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_demux_whole_and_split),
		cmocka_unit_test(test_demux_raw_bad_cap),
		cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_parse_inspect),
		cmocka_unit_test(test_parse_image),
		cmocka_unit_test_setup_teardown(test_engine_over_socket, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_logs_over_socket, fake_setup, fake_teardown),
		cmocka_unit_test(test_engine_unreachable),
		cmocka_unit_test_setup_teardown(test_status_cmd, fake_setup, fake_teardown),
		cmocka_unit_test(test_proc_run_in),
		cmocka_unit_test(test_compose_override_and_argv),
		cmocka_unit_test(test_compose_detect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
