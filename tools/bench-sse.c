/*
 * bench-sse.c — the SSE half of `make bench-gateway` (a benchmark tool, not
 * part of lobes).
 *
 *   bench-sse serve PORT FRAMES INTERVAL_MS
 *       an SSE source on 127.0.0.1:PORT (libmicrohttpd, a thread per
 *       connection): any request gets FRAMES events `data: <ns>` spaced by
 *       INTERVAL_MS, <ns> being CLOCK_MONOTONIC when the frame was handed to
 *       the socket, then `data: [DONE]`.
 *   bench-sse client URL STREAMS
 *       opens STREAMS concurrent POST streams (libcurl multi) and, for every
 *       frame received, records now - <ns>: the time the frame spent between
 *       the source and this client (through whatever proxy URL names).
 *       Prints one JSON line: streams, frames, errors, p50_us, p99_us, max_us.
 *
 * Both ends run on one host, so CLOCK_MONOTONIC is one clock.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int frames_per_stream, interval_ms;

struct src {
	int sent;
};

static ssize_t src_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct src *s = cls;
	if (s->sent > frames_per_stream)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (s->sent > 0) {
		struct timespec ts = { interval_ms / 1000, (long)(interval_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	int n = s->sent == frames_per_stream ? snprintf(buf, max, "data: [DONE]\n\n")
					     : snprintf(buf, max, "data: %lld\n\n", now_ns());
	s->sent++;
	return n;
}

static void src_free(void *cls)
{
	free(cls);
}

static enum MHD_Result src_request(void *cls, struct MHD_Connection *c, const char *url,
				   const char *method, const char *version, const char *upload,
				   size_t *upload_size, void **con_cls)
{
	(void)cls, (void)method, (void)version, (void)upload;
	if (!*con_cls) {
		*con_cls = c;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/health")) { /* the gateway's readiness poll: ready */
		struct MHD_Response *h = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		enum MHD_Result hr = MHD_queue_response(c, 200, h);
		MHD_destroy_response(h);
		return hr;
	}
	struct src *s = calloc(1, sizeof(*s));
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256, src_read, s,
								   src_free);
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	enum MHD_Result rc = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return rc;
}

struct stream {
	char buf[512];
	size_t len;
};

static long long *delays;
static size_t n_delays, a_delays;

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	struct stream *s = ud;
	size_t len = size * n;
	long long t = now_ns();
	for (size_t i = 0; i < len; i++) {
		if (s->len < sizeof(s->buf) - 1)
			s->buf[s->len++] = p[i];
		if (s->len >= 2 && s->buf[s->len - 1] == '\n' && s->buf[s->len - 2] == '\n') {
			s->buf[s->len] = 0;
			long long sent;
			if (sscanf(s->buf, "data: %lld", &sent) == 1) {
				if (n_delays == a_delays) {
					a_delays = a_delays ? a_delays * 2 : 65536;
					delays = realloc(delays, a_delays * sizeof(*delays));
				}
				delays[n_delays++] = t - sent;
			}
			s->len = 0;
		}
	}
	return len;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

static int client(const char *url, int streams)
{
	CURLM *m = curl_multi_init();
	curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
	struct stream *st = calloc((size_t)streams, sizeof(*st));
	const char *body = "{\"model\":\"cortex\",\"stream\":true,\"messages\":[]}";
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	for (int i = 0; i < streams; i++) {
		CURL *e = curl_easy_init();
		curl_easy_setopt(e, CURLOPT_URL, url);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, &st[i]);
		curl_easy_setopt(e, CURLOPT_TIMEOUT, 300L);
		curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
		curl_multi_add_handle(m, e);
	}
	int running = 1, errors = 0;
	while (running) {
		curl_multi_perform(m, &running);
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			long code = 0;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
			if (msg->data.result != CURLE_OK || code != 200)
				errors++;
			curl_multi_remove_handle(m, msg->easy_handle);
			curl_easy_cleanup(msg->easy_handle);
		}
		if (running)
			curl_multi_poll(m, NULL, 0, 100, NULL);
	}
	qsort(delays, n_delays, sizeof(*delays), cmp_ll);
	double p50 = n_delays ? delays[n_delays / 2] / 1e3 : -1;
	double p99 = n_delays ? delays[(size_t)((double)n_delays * 0.99)] / 1e3 : -1;
	double mx = n_delays ? delays[n_delays - 1] / 1e3 : -1;
	printf("{\"streams\":%d,\"frames\":%zu,\"errors\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n",
	       streams, n_delays, errors, p50, p99, mx);
	curl_slist_free_all(h);
	curl_multi_cleanup(m);
	free(st);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	if (argc == 5 && !strcmp(argv[1], "serve")) {
		frames_per_stream = (int)strtol(argv[3], NULL, 10);
		interval_ms = (int)strtol(argv[4], NULL, 10);
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)(int)strtol(argv[2], NULL, 10)) };
		inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
		struct MHD_Daemon *d = MHD_start_daemon(
			MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, (uint16_t)(int)strtol(argv[2], NULL, 10),
			NULL, NULL, src_request, NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_LIMIT, 8192u,
			MHD_OPTION_THREAD_STACK_SIZE, (size_t)(128 * 1024), MHD_OPTION_LISTEN_BACKLOG_SIZE,
			4096u, MHD_OPTION_END);
		if (!d) {
			fprintf(stderr, "bench-sse: cannot listen on %s\n", argv[2]);
			return 1;
		}
		printf("serving\n");
		fflush(stdout);
		pause();
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "client")) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		return client(argv[2], (int)strtol(argv[3], NULL, 10));
	}
	fprintf(stderr, "usage: bench-sse serve PORT FRAMES INTERVAL_MS | client URL STREAMS\n");
	return 2;
}
