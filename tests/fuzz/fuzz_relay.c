/* fuzz_relay.c — the gateway's relay and engine client (relay.c,
 * upstream.c, and proxy.c's answers for a proxied role) against an engine
 * whose every byte and pause comes from the input.
 *
 * Once per run: a fake engine listens on 127.0.0.1 (a thread), a deploy dir
 * in /dev/shm serves cortex and embedder from it and proxies hand to it as
 * a peer (peers.yaml, a 0600 key file), and the gateway starts in-process
 * on a free loopback port with one worker, 1 s first-byte and read
 * timeouts and a 1 MiB buffer budget. upstream_second_ms is set to 40, so
 * a "second" of those timeouts lasts 40 ms and a stall is judged within an
 * input. The engine answers GETs (/health, /metrics, the peer's /v1/models)
 * at once and plays the input's script on the POST.
 *
 * Input: byte 0 the request (bits 0-1: cortex streamed, cortex whole,
 * embeddings, hand through the peer) and the client (bits 2-3: reads at
 * once, reads slowly, closes after its first read, half-closes after the
 * request; bit 4: an HTTP/1.0 client). The rest is the engine's script,
 * one op per byte (low 4 bits the op, high 4 bits its argument, more bytes
 * where said): raw bytes from the input, a status line (200, 201, 204, 1xx
 * then more, 301, 401, 429, 500, 503, 999, 0), headers (event-stream or JSON
 * type, a Content-Length that may lie, chunked, garbage, a huge line), the
 * head's end, a chunk (its size may lie), an SSE frame, a huge body (up to
 * 2 MiB: back-pressure and the budget), a pause (up to 60 ms), a stall past
 * the read timeout, a half-close (the engine stops writing), a close, a
 * reset. Every input ends within ~0.5 s: the script's pauses are capped,
 * writes give up at the input's deadline and the client stops reading at it.
 *
 * Invariants: what the client reads is one HTTP/1.x response with a 3-digit
 * status; when the engine sent no head at all, that status is the
 * gateway's own 503 or 502 with an OpenAI-shaped JSON error; ASan, UBSan and
 * the leak check hold over the gateway's state machines. See fuzz.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../src/lib/gateway/gateway.h"
#include "../../src/lib/gateway/upstream.h"
#include "../../src/lib/util/buf.h"
#include "fuzz.h"

#define INPUT_MS 450     /* the client stops reading then */
#define PAUSES_MS 150    /* the script's pauses, all together */
#define HUGE_MAX (2u << 20)

static int engine_port, gw_port;
static struct gateway *gw; /* lives for the run */
static char dir[256];

/* The script handed to the engine for the next POST. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint8_t ops[4096]; /* a copy: the engine never reads the fuzzer's buffer */
	size_t n;
	bool pending;   /* a script waits for the POST */
	bool playing;   /* the engine plays it */
	double deadline;
	bool sent_head; /* the engine wrote a blank line (a head's end, to libcurl) */
} S = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* The engine's writes so far: the last two bytes, and whether a blank
 * line ("\n\n" or "\n\r\n") was among them. */
static struct {
	char last[2];
	bool blank;
} W;

static void seen(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n' && (W.last[1] == '\n' || (W.last[1] == '\r' && W.last[0] == '\n')))
			W.blank = true;
		W.last[0] = W.last[1];
		W.last[1] = p[i];
	}
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(double ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6) };
	nanosleep(&ts, NULL);
}

/* Write all of p (non-blocking socket) by the deadline; false when the
 * peer is gone or the deadline passed. */
static bool put(int fd, const void *p, size_t n, double deadline)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w > 0) {
			seen(c, (size_t)w);
			c += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return false;
		double left = deadline - now_ms();
		if (left <= 0)
			return false;
		struct pollfd pf = { fd, POLLOUT, 0 };
		poll(&pf, 1, (int)left + 1);
	}
	return true;
}

static bool puts_(int fd, const char *s, double deadline)
{
	return put(fd, s, strlen(s), deadline);
}

/* Read a request head and its body (Content-Length) into b; false on EOF. */
static bool read_request(int fd, struct buf *b)
{
	double deadline = now_ms() + 2000;
	char tmp[4096];
	for (;;) {
		char *end = b->data ? strstr(b->data, "\r\n\r\n") : NULL;
		if (end) {
			const char *cl = strcasestr(b->data, "\r\nContent-Length:");
			size_t want = (size_t)(end + 4 - b->data) + (cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0);
			if (b->len >= want)
				return true;
		}
		double left = deadline - now_ms();
		struct pollfd pf = { fd, POLLIN, 0 };
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			return false;
		ssize_t r = recv(fd, tmp, sizeof(tmp), 0);
		if (r <= 0)
			return false;
		buf_add(b, tmp, (size_t)r);
	}
}

static const int STATUS[16] = { 200, 200, 200, 201, 204, 100, 301, 400, 401, 404, 429, 500, 502, 503, 999, 0 };

/* Play the script on fd. Returns with fd closed or to be closed. */
static void play(int fd, const uint8_t *op, size_t n, double deadline)
{
	double paused = 0;
	char line[256];
	static char huge[64 * 1024];
	if (!huge[0])
		for (size_t i = 0; i < sizeof(huge); i++)
			huge[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
	for (size_t i = 0; i < n; i++) {
		unsigned o = op[i] & 15, a = op[i] >> 4;
		bool ok = true;
		switch (o) {
		case 0: { /* raw bytes: the next a+1 (x4) bytes of the input */
			size_t k = ((size_t)a + 1) * 4;
			if (k > n - i - 1)
				k = n - i - 1;
			ok = put(fd, op + i + 1, k, deadline);
			i += k;
			break;
		}
		case 1:
			snprintf(line, sizeof(line), "HTTP/1.%u %03d X\r\n", a & 1, STATUS[a]);
			ok = puts_(fd, line, deadline);
			break;
		case 2: {
			static const char *const H[16] = {
				"Content-Type: text/event-stream\r\n", "Content-Type: application/json\r\n",
				"Transfer-Encoding: chunked\r\n", "Connection: close\r\n",
				"Content-Length: 0\r\n", "Content-Length: 5\r\n", "Content-Length: 70000\r\n",
				"Content-Length: -1\r\n", "Content-Length: 99999999999999999999\r\n",
				"Content-Length: 3\r\nContent-Length: 4\r\n", "X: \x01\x7f\xff\r\n",
				"no colon here\r\n", " folded: continuation\r\n", "Content-Type:\r\n",
				"Transfer-Encoding: gzip, chunked\r\n", "Content-Type: text/event-stream; charset=x\r\n",
			};
			ok = puts_(fd, H[a], deadline);
			break;
		}
		case 3:
			ok = puts_(fd, "\r\n", deadline);
			break;
		case 4: { /* a chunk: size line a*17 (true or, when odd, one more) */
			size_t k = (size_t)a * 17;
			snprintf(line, sizeof(line), "%zx\r\n", k + (a & 1));
			ok = puts_(fd, line, deadline) && put(fd, huge, k, deadline) && puts_(fd, "\r\n", deadline);
			break;
		}
		case 5:
			ok = puts_(fd, a < 8 ? "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n"
					     : a < 12 ? "data: [DONE]\n\n"
						      : "data: {\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5}}\n\n",
				   deadline);
			break;
		case 6: { /* huge: (a+1) * 128 KiB */
			size_t k = ((size_t)a + 1) * 128 * 1024;
			for (size_t d = 0; ok && d < k && d < HUGE_MAX; d += sizeof(huge))
				ok = put(fd, huge, sizeof(huge), deadline);
			break;
		}
		case 7: { /* a pause of a*4 ms */
			double ms = a * 4.0;
			if (paused + ms > PAUSES_MS)
				ms = PAUSES_MS - paused;
			paused += ms;
			sleep_ms(ms);
			break;
		}
		case 8: /* a stall past the read (and first-byte) timeout: 1.5 of its "seconds" */
			if (paused + upstream_second_ms * 1.5 <= PAUSES_MS) {
				paused += upstream_second_ms * 1.5;
				sleep_ms(upstream_second_ms * 1.5);
			}
			break;
		case 9:
			shutdown(fd, SHUT_WR);
			break;
		case 10:
			return;
		case 11: {
			struct linger l = { 1, 0 };
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
			return;
		}
		case 12: /* a huge header line */
			ok = puts_(fd, "X-Big: ", deadline);
			for (unsigned k = 0; ok && k <= a; k++)
				ok = put(fd, huge, sizeof(huge) - 1, deadline);
			ok = ok && puts_(fd, "\r\n", deadline);
			break;
		case 13: /* a whole small JSON answer */
			ok = puts_(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n"
				       "{\"data\":[]}",
				   deadline);
			break;
		default: /* a whole SSE head */
			ok = puts_(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n", deadline);
			break;
		}
		if (!ok)
			return;
	}
}

/* Answer one engine connection: GETs at once, the POST by the script. */
static void serve_one(int fd)
{
	struct buf b;
	buf_init(&b, 0);
	if (!read_request(fd, &b)) {
		buf_free(&b);
		close(fd);
		return;
	}
	if (!strncmp(b.data, "GET ", 4)) {
		const char *body = strstr(b.data, "/v1/models")
					   ? "{\"object\":\"list\",\"data\":[{\"id\":\"hand\",\"root\":\"org/Small-1B\"}]}"
					   : "ok";
		char h[256];
		snprintf(h, sizeof(h), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", strlen(body));
		double dl = now_ms() + 1000;
		if (puts_(fd, h, dl))
			puts_(fd, body, dl);
		buf_free(&b);
		close(fd);
		return;
	}
	buf_free(&b);
	pthread_mutex_lock(&S.mu);
	if (!S.pending) { /* a retry of a connection libcurl reused: no script for it */
		pthread_mutex_unlock(&S.mu);
		puts_(fd, "HTTP/1.1 503 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", now_ms() + 200);
		close(fd);
		return;
	}
	S.pending = false;
	S.playing = true;
	static uint8_t ops[sizeof(S.ops)];
	size_t n = S.n;
	memcpy(ops, S.ops, n);
	double deadline = S.deadline;
	pthread_mutex_unlock(&S.mu);
	W.blank = false;
	W.last[0] = W.last[1] = 0;
	play(fd, ops, n, deadline);
	close(fd);
	pthread_mutex_lock(&S.mu);
	S.sent_head = W.blank;
	S.playing = false;
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
}

static void *engine_main(void *arg)
{
	int ls = (int)(intptr_t)arg;
	for (;;) {
		int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		int fl = fcntl(fd, F_GETFL);
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
		serve_one(fd); /* closes fd */
	}
	return NULL;
}

static void put_file(const char *name, const char *text, mode_t mode)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0 || chmod(p, mode) != 0)
		abort();
}

static int tcp_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		abort();
	return fd;
}

static void nolog(void *ud, const char *line)
{
	(void)ud, (void)line;
}

static void rm_dir(void)
{
	static const char *const names[] = { ".env", "peers.yaml", "spark.key" };
	for (size_t i = 0; i < 3; i++) {
		char p[512];
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* The engine, the deploy dir and the gateway, once per run. */
static void setup(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	signal(SIGPIPE, SIG_IGN);
	upstream_second_ms = 40;
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof(sa);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 64) < 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl) < 0)
		abort();
	engine_port = ntohs(sa.sin_port);
	pthread_t th;
	if (pthread_create(&th, NULL, engine_main, (void *)(intptr_t)ls) != 0)
		abort();
	pthread_detach(th);
	fuzz_mkdtemp(dir, sizeof(dir), "relay");
	atexit(rm_dir);
	_cleanup_free_ char *env = xasprintf(
		"LOBES_PROFILE=thor\nLOBES_CARD=thor\n"
		"CORTEX_FEASIBLE=true\nCORTEX_PORT=%d\nCORTEX_MODEL=org/Big-27B\n"
		"EMBEDDER_FEASIBLE=true\nEMBEDDER_PORT=%d\nEMBEDDER_MODEL=org/Embed-0.6B\n"
		"HAND_FEASIBLE=false\n"
		"LOBES_GATEWAY_PORT=0\nLOBES_GATEWAY_WORKERS=1\nLOBES_GATEWAY_READ_TIMEOUT=1\n"
		"LOBES_GATEWAY_FIRST_BYTE_TIMEOUT=1\nLOBES_GATEWAY_CONNECT_TIMEOUT=1\n"
		"LOBES_GATEWAY_MAX_BUFFERED_BYTES=1048576\nLOBES_GATEWAY_HEALTH_INTERVAL_MS=3600000\n"
		"LOBES_GATEWAY_HEALTH_TIMEOUT_MS=2000\nLOBES_GATEWAY_SWAP_MAX=100\nLOBES_GATEWAY_IOWAIT_MAX=100\n",
		engine_port, engine_port);
	put_file(".env", env, 0600);
	put_file("spark.key", "spark-secret\n", 0600);
	_cleanup_free_ char *peers = xasprintf("box: thor\npeers:\n  spark:\n    origin: http://127.0.0.1:%d\n"
					       "    key_file: %s/spark.key\nroles:\n  hand: {proxy: spark}\n",
					       engine_port, dir);
	put_file("peers.yaml", peers, 0600);
	struct err *e = NULL;
	struct gw_config *c = gw_config_load(dir, NULL, &e);
	if (!c) {
		fprintf(stderr, "fuzz_relay: %s\n", e ? e->msg : "?");
		abort();
	}
	gw = gateway_start(c, nolog, NULL, &e);
	gw_config_unref(c);
	if (!gw) {
		fprintf(stderr, "fuzz_relay: %s\n", e ? e->msg : "?");
		abort();
	}
	gw_port = gateway_port(gw);
	/* the first /health poll and the peer's /v1/models come at once; let
	 * them be answered before the first input (bounded) */
	sleep_ms(300);
}

static const char *const REQ[4][2] = {
	{ "/v1/chat/completions", "{\"model\":\"cortex\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true}" },
	{ "/v1/chat/completions", "{\"model\":\"cortex\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}" },
	{ "/v1/embeddings", "{\"model\":\"embedder\",\"input\":\"hi\"}" },
	{ "/v1/chat/completions", "{\"model\":\"hand\",\"messages\":[],\"stream\":true}" },
};

/* The response read by the client: its status line and, when the gateway
 * answered itself, its JSON error. */
static void check_response(const struct buf *b, bool engine_head)
{
	if (!b->len)
		return; /* nothing read: a client that closed, or the deadline */
	if (b->len < 12) {
		if (strncmp(b->data, "HTTP/1.", b->len < 7 ? b->len : 7) != 0)
			abort();
		return;
	}
	if (strncmp(b->data, "HTTP/1.", 7) != 0 || b->data[8] != ' ' || b->data[9] < '0' || b->data[9] > '9' ||
	    b->data[10] < '0' || b->data[10] > '9' || b->data[11] < '0' || b->data[11] > '9')
		abort();
	int status = (int)strtol(b->data + 9, NULL, 10);
	const char *end = strstr(b->data, "\r\n\r\n");
	if (engine_head || !end)
		return;
	if (status != 503 && status != 502)
		abort();
	const char *body = end + 4;
	if (strstr(b->data, "Transfer-Encoding: chunked"))
		return; /* a 503 is answered whole; a chunked one came from elsewhere */
	json_error_t je;
	json_t *j = json_loadb(body, b->len - (size_t)(body - b->data), 0, &je);
	if (j && !json_is_object(json_object_get(j, "error")))
		abort();
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	setup();
	unsigned kind = data[0] & 3, client = (data[0] >> 2) & 3;
	bool http10 = data[0] & 16;
	double t0 = now_ms(), deadline = t0 + INPUT_MS;
	pthread_mutex_lock(&S.mu);
	memcpy(S.ops, data + 1, size - 1);
	S.n = size - 1;
	S.pending = true;
	S.sent_head = false;
	S.deadline = deadline;
	pthread_mutex_unlock(&S.mu);
	int fd = tcp_connect(gw_port);
	_cleanup_free_ char *req = xasprintf("POST %s HTTP/1.%d\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
					     REQ[kind][0], http10 ? 0 : 1, strlen(REQ[kind][1]), REQ[kind][1]);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		abort();
	if (client == 3)
		shutdown(fd, SHUT_WR);
	struct buf b;
	buf_init(&b, 0);
	char tmp[16384];
	for (;;) {
		double left = deadline - now_ms();
		struct pollfd pf = { fd, POLLIN, 0 };
		if (left <= 0 || poll(&pf, 1, (int)left + 1) <= 0)
			break;
		ssize_t r = recv(fd, tmp, client == 1 ? 1024 : sizeof(tmp), 0);
		if (r <= 0)
			break;
		if (b.len < 64 * 1024)
			buf_add(&b, tmp, (size_t)r);
		if (client == 2)
			break;
		if (client == 1)
			sleep_ms(2);
	}
	close(fd);
	/* withdraw a script the engine never took; wait for one it plays (it
	 * stops writing at the deadline) */
	pthread_mutex_lock(&S.mu);
	bool taken = !S.pending;
	S.pending = false;
	while (S.playing) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&S.cv, &S.mu, &ts);
		if (now_ms() > deadline + 300)
			break;
	}
	bool head = S.sent_head, done = !S.playing;
	pthread_mutex_unlock(&S.mu);
	/* when the engine never got the POST (a known-down role, the budget),
	 * the gateway answered itself; the check of its own answers is for
	 * the engine's failures, so only the shape is checked then, and when
	 * the engine was still playing (a starved thread) what it sent is not
	 * known yet */
	if (getenv("FUZZ_RELAY_TRACE")) /* what each input did, to stderr */
		fprintf(stderr, "relay: kind %u client %u engine %s, head %d, %.0f ms: %.*s\n", kind, client,
			taken ? "played" : "not reached", head, now_ms() - t0,
			(int)(b.len < 60 ? b.len : 60), b.data ? b.data : "");
	if (client != 2 && client != 3)
		check_response(&b, !taken || !done || head);
	buf_free(&b);
	return 0;
}
