/*
 * h2o_proto.c — the libh2o (evloop, Debian's libh2o-evloop-dev 2.2.5)
 * prototype of docs/benchmarks/http-servers.md: POST /v1/chat/completions
 * relayed to an engine by h2o's own reverse proxy (keep-alive upstream),
 * any other path answered {"status":"ok"} by a handler of ours. One process
 * is one event loop; run one per CPU (SO_REUSEPORT), as nginx runs its
 * workers. Not built by make: an evaluation tool.
 *   cc -O2 -DH2O_USE_LIBUV=0 -o h2o_proto h2o_proto.c -lh2o-evloop -lssl -lcrypto -lz
 *   h2o_proto PORT ENGINE_PORT
 */
#include <h2o.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static h2o_globalconf_t config;
static h2o_context_t ctx;
static h2o_accept_ctx_t accept_ctx;

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
	(void)self;
	static h2o_generator_t gen = { NULL, NULL };
	req->res.status = 200;
	req->res.reason = "OK";
	h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
		       H2O_STRLIT("application/json"));
	h2o_start_response(req, &gen);
	static h2o_iovec_t body = { .base = "{\"status\":\"ok\"}", .len = 15 };
	h2o_send(req, &body, 1, H2O_SEND_STATE_FINAL);
	return 0;
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
	h2o_socket_t *sock;
	if (err || !(sock = h2o_evloop_socket_accept(listener)))
		return;
	h2o_accept(&accept_ctx, sock);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	h2o_config_init(&config);
	h2o_hostconf_t *host = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
	h2o_pathconf_t *chat = h2o_config_register_path(host, "/v1/chat/completions", 0);
	char up[64];
	snprintf(up, sizeof(up), "http://127.0.0.1:%s/v1/chat/completions", argv[2]); /* the path is mapped onto the upstream URL */
	h2o_url_t upstream;
	if (h2o_url_parse(up, SIZE_MAX, &upstream) != 0)
		return 2;
	h2o_proxy_config_vars_t pc = { 0 };
	pc.io_timeout = 600000;
	pc.keepalive_timeout = 60000;
	h2o_proxy_register_reverse_proxy(chat, &upstream, &pc);
	h2o_pathconf_t *rest = h2o_config_register_path(host, "/", 0);
	h2o_handler_t *h = h2o_create_handler(rest, sizeof(*h));
	h->on_req = on_req;
	h2o_context_init(&ctx, h2o_evloop_create(), &config);
	accept_ctx.ctx = &ctx;
	accept_ctx.hosts = config.hosts;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])),
				 .sin_addr.s_addr = htonl(0x7f000001) };
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 1024) != 0) {
		perror("listen");
		return 1;
	}
	h2o_socket_t *sock = h2o_evloop_socket_create(ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
	h2o_socket_read_start(sock, on_accept);
	while (h2o_evloop_run(ctx.loop, INT32_MAX) == 0)
		;
	return 0;
}
