/*
 * sys.c — the stand-in's dealings with its host: clocks, STANDIN_* numbers
 * and byte counts, the stop signals (taken only while it naps, so a
 * SIGTERM ends it cleanly at any phase), /proc/meminfo, resident memory it
 * holds like vLLM's weights and KV cache, and the early bind of its port.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "standin.h"

static sigset_t stop_signals;

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

long env_long(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	return (end == v || *end || n < 0) ? def : n;
}

double env_double(const char *name, double def)
{
	const char *v = getenv(name);
	char *end;
	double x;

	if (!v || !*v)
		return def;
	x = strtod(v, &end);
	return (end == v || *end || !(x >= 0) || x > 1e6) ? def : x;
}

/* Parse a byte count with an optional K/M/G/T (binary) suffix; -1 if bad. */
double parse_bytes(const char *v)
{
	char *end;
	double n = strtod(v, &end);

	if (end == v || n < 0)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K': n *= 1024.0; end++; break;
	case 'M': n *= 1048576.0; end++; break;
	case 'G': n *= GiB; end++; break;
	case 'T': n *= GiB * 1024.0; end++; break;
	default: break;
	}
	if (!strcasecmp(end, "iB") || !strcasecmp(end, "B"))
		end += strlen(end);
	return *end ? -1 : n;
}

/* SIGTERM/SIGINT stay blocked and are taken by sigtimedwait() in nap();
 * a handler (never run) keeps them from being ignored when the stand-in is
 * PID 1 in a container, where a default disposition drops them. */
static void on_stop_signal(int sig)
{
	(void)sig;
}

void signals_init(void)
{
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);
	signal(SIGTERM, on_stop_signal);
	signal(SIGINT, on_stop_signal);
	signal(SIGPIPE, SIG_IGN);
}

void shutdown_and_exit(int code, bool serving)
{
	vlog(LV_INFO, "launcher.py:101", "Shutting down FastAPI HTTP server.");
	if (serving) {
		uvlog("Shutting down");
		uvlog("Waiting for application shutdown.");
		uvlog("Application shutdown complete.");
		uvlog("Finished server process [%d]", (int)getpid());
	}
	http_stop();
	exit(code);
}

/* Sleep ms milliseconds; SIGTERM/SIGINT meanwhile end the process (0). */
void nap(long ms, bool serving)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms <= 0)
		return;
	while (true) {
		int sig = sigtimedwait(&stop_signals, NULL, &ts);
		if (sig > 0)
			shutdown_and_exit(0, serving);
		if (errno != EINTR)
			return;
	}
}

/* MemTotal or MemFree from /proc/meminfo in bytes; 0 if unreadable. */
double meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	size_t klen = strlen(key);
	double v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtod(line + klen + 1, NULL) * 1024.0;
			break;
		}
	fclose(f);
	return v;
}

/* Allocate n bytes and write one byte in every page, so they are resident.
 * Returns NULL (nothing held) when n is 0 or the allocation fails. */
char *hold(double n)
{
	size_t len = (size_t)n;
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	if (len == 0)
		return NULL;
	p = malloc(len);
	if (!p)
		return NULL;
	for (size_t i = 0; i < len; i += (size_t)page)
		p[i] = 1;
	p[len - 1] = 1;
	return p;
}

/* Bind host:port now (vLLM binds before starting the engine), listen later. */
int bind_early(const char *host, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof ss);
	if (!strcmp(host, "localhost"))
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		len = sizeof *in4;
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		len = sizeof *in6;
	} else {
		raw(true, "socket.gaierror: [Errno -2] Name or service not known: '%s'", host);
		exit(1);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0) {
		raw(true, "OSError: [Errno %d] %s", errno,
		    errno == EADDRINUSE ? "Address already in use" : strerror(errno));
		exit(1);
	}
	return fd;
}
