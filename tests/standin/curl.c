/*
 * curl.c — the stand-in's `curl` personality, for container healthchecks.
 *
 * The stand-in image is FROM scratch, yet rendered compose files check
 * health with ["CMD", "curl", "-fsS", "http://127.0.0.1:PORT/health"] as
 * they would in the real vLLM image. So the image installs the stand-in
 * binary as /usr/bin/curl too, and when called by that name it does only
 * this: a plain HTTP/1.0 GET of an http:// URL on a literal IPv4 address (or
 * localhost), body to stdout (or -o FILE), with curl's exit codes for what a
 * healthcheck sees: 0 ok, 22 HTTP error with -f, 7 cannot connect, 28
 * timeout, 3 bad URL, 2 unsupported option. Static libcurl cannot be linked
 * (its TLS and auth dependencies ship no static archives), and a test
 * double's healthcheck needs nothing more.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "standin.h"

struct url {
	char host[64];
	int port;
	char path[1024];
};

/* Split "http://host[:port][/path]"; false when it is not of that form. */
static bool parse_url(const char *u, struct url *out)
{
	const char *p, *slash, *colon;
	size_t hlen;

	if (strncmp(u, "http://", 7))
		return false;
	p = u + 7;
	slash = strchr(p, '/');
	if (!slash)
		slash = p + strlen(p);
	colon = memchr(p, ':', (size_t)(slash - p));
	hlen = (size_t)((colon ? colon : slash) - p);
	if (!hlen || hlen >= sizeof out->host)
		return false;
	memcpy(out->host, p, hlen);
	out->host[hlen] = '\0';
	out->port = 80;
	if (colon) {
		char *end;
		long n = strtol(colon + 1, &end, 10);
		if (end != slash || n < 1 || n > 65535)
			return false;
		out->port = (int)n;
	}
	snprintf(out->path, sizeof out->path, "%s", *slash ? slash : "/");
	return true;
}

/* Print curl's "curl: (CODE) message" when show; return code. */
static int __attribute__((format(printf, 3, 4))) fail(bool show, int code, const char *fmt, ...)
{
	va_list ap;

	if (show) {
		fprintf(stderr, "curl: (%d) ", code);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	return code;
}

int curl_main(int argc, char **argv)
{
	bool fail_on_error = false, silent = false, show_error = false;
	const char *url_s = NULL, *outfile = NULL;
	long max_time = 10;
	struct url u;
	struct sockaddr_in sa;
	struct timeval tv;
	char req[1200], buf[65536];
	size_t got = 0;
	int fd, status;
	char *body;
	FILE *out;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--fail")) {
			fail_on_error = true;
		} else if (!strcmp(a, "--silent")) {
			silent = true;
		} else if (!strcmp(a, "--show-error")) {
			show_error = true;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc)
				return 2;
			outfile = argv[i];
		} else if (!strcmp(a, "-m") || !strcmp(a, "--max-time")) {
			if (++i >= argc)
				return 2;
			max_time = strtol(argv[i], NULL, 10);
		} else if (a[0] == '-' && a[1] && a[1] != '-') {
			for (const char *f = a + 1; *f; f++) {
				if (*f == 'f')
					fail_on_error = true;
				else if (*f == 's')
					silent = true;
				else if (*f == 'S')
					show_error = true;
				else if (*f != 'L')
					return fail(true, 2, "option -%c: not supported by the stand-in's curl", *f);
			}
		} else if (a[0] == '-') {
			return fail(true, 2, "option %s: not supported by the stand-in's curl", a);
		} else {
			url_s = a;
		}
	}
	(void)silent;
	if (!url_s || !parse_url(url_s, &u))
		return fail(true, 3, "URL using bad/illegal format or missing URL");
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)u.port);
	if (inet_pton(AF_INET, strcmp(u.host, "localhost") ? u.host : "127.0.0.1", &sa.sin_addr) != 1)
		return fail(show_error, 6, "Could not resolve host: %s", u.host);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(show_error, 7, "socket: %s", strerror(errno));
	tv.tv_sec = max_time > 0 ? max_time : 10;
	tv.tv_usec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return fail(show_error, 7, "Failed to connect to %s port %d: Connection refused",
			    u.host, u.port);
	}
	snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s:%d\r\nUser-Agent: curl/standin\r\n\r\n",
		 u.path, u.host, u.port);
	if (write(fd, req, strlen(req)) < 0) {
		close(fd);
		return fail(show_error, 55, "Failed sending data: %s", strerror(errno));
	}
	while (got < sizeof buf - 1) {
		ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			close(fd);
			return fail(show_error, 28, "Operation timed out after %d seconds",
				    (int)tv.tv_sec);
		}
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	if (sscanf(buf, "HTTP/%*s %d", &status) != 1)
		return fail(show_error, 8, "Weird server reply");
	if (fail_on_error && status >= 400)
		return fail(show_error, 22, "The requested URL returned error: %d", status);
	body = strstr(buf, "\r\n\r\n");
	body = body ? body + 4 : buf + got;
	out = outfile ? fopen(outfile, "w") : stdout;
	if (!out)
		return fail(show_error, 23, "Failed writing body to %s", outfile);
	fwrite(body, 1, (size_t)(buf + got - body), out);
	if (outfile)
		fclose(out);
	return 0;
}
