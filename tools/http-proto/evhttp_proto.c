/*
 * evhttp_proto.c — the libevent evhttp (Debian's libevent-dev 2.1.12)
 * prototype of docs/benchmarks/http-servers.md: POST /v1/chat/completions
 * relayed to an engine through evhttp's client (a pool of keep-alive
 * connections: an idle one is reused, else a new one is opened), any other
 * path answered {"status":"ok"}. One process is one event loop; run one per
 * CPU (SO_REUSEPORT), as nginx runs its workers. Not built by make: an
 * evaluation tool.
 *   cc -O2 -o evhttp_proto evhttp_proto.c -levent
 *   evhttp_proto PORT ENGINE_PORT
 */
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static struct event_base *base;
static int engine_port;
static struct evhttp_connection **idle;
static size_t n_idle, a_idle;

struct fwd {
	struct evhttp_request *client;
	struct evhttp_connection *conn;
};

static void put_idle(struct evhttp_connection *c)
{
	if (n_idle == a_idle) {
		a_idle = a_idle ? a_idle * 2 : 64;
		idle = realloc(idle, a_idle * sizeof(*idle));
	}
	idle[n_idle++] = c;
}

static void on_upstream(struct evhttp_request *u, void *arg)
{
	struct fwd *f = arg;
	if (!u || !evhttp_request_get_response_code(u)) {
		evhttp_send_error(f->client, 502, NULL);
		free(f);
		return;
	}
	const char *ct = evhttp_find_header(evhttp_request_get_input_headers(u), "Content-Type");
	struct evkeyvalq *oh = evhttp_request_get_output_headers(f->client);
	evhttp_add_header(oh, "Content-Type", ct ? ct : "application/json");
	evhttp_send_reply(f->client, evhttp_request_get_response_code(u), "OK",
			  evhttp_request_get_input_buffer(u));
	put_idle(f->conn);
	free(f);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	(void)arg;
	if (evhttp_request_get_command(req) == EVHTTP_REQ_POST &&
	    !strcmp(evhttp_request_get_uri(req), "/v1/chat/completions")) {
		struct fwd *f = calloc(1, sizeof(*f));
		f->client = req;
		f->conn = n_idle ? idle[--n_idle]
				 : evhttp_connection_base_new(base, NULL, "127.0.0.1", (unsigned short)engine_port);
		struct evhttp_request *u = evhttp_request_new(on_upstream, f);
		struct evkeyvalq *h = evhttp_request_get_output_headers(u);
		evhttp_add_header(h, "Host", "127.0.0.1");
		evhttp_add_header(h, "Content-Type", "application/json");
		evbuffer_add_buffer(evhttp_request_get_output_buffer(u), evhttp_request_get_input_buffer(req));
		evhttp_make_request(f->conn, u, EVHTTP_REQ_POST, "/v1/chat/completions");
		return;
	}
	struct evbuffer *b = evbuffer_new();
	evbuffer_add(b, "{\"status\":\"ok\"}", 15);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	engine_port = atoi(argv[2]);
	base = event_base_new();
	struct evhttp *http = evhttp_new(base);
	evhttp_set_gencb(http, on_request, NULL);
	evhttp_set_max_headers_size(http, 16 * 1024);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])),
				 .sin_addr.s_addr = htonl(0x7f000001) };
	struct evconnlistener *l = evconnlistener_new_bind(
		base, NULL, NULL, LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT | LEV_OPT_CLOSE_ON_FREE, 1024,
		(struct sockaddr *)&a, sizeof(a));
	if (!l || !evhttp_bind_listener(http, l))
		return 1;
	return event_base_dispatch(base);
}
