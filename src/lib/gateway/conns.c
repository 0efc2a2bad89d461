/*
 * conns.c — slow-client defences of the HTTP front (conns.h).
 *
 * libmicrohttpd 0.9.75 bounds a connection only by its idle timeout, which
 * every received byte resets: a client sending one header byte a second
 * holds its slot for ever, and at its connection limit the daemon stops
 * accepting, so new connections wait in the kernel's backlog. Here:
 *
 *   - the connection limit and a per-address limit are held by the
 *     gateway itself across all workers (the accept policy callback asks
 *     conn_table_admit); a connection past either is refused at once — MHD
 *     closes it — never left in the backlog (each daemon's own limit is
 *     set above any value of the setting, so it never stops accepting);
 *   - a new connection's first request head must be whole within
 *     LOBES_GATEWAY_HEADER_TIMEOUT, a later one's within the idle timeout
 *     of the previous answer, however the bytes trickle in;
 *   - a request body must keep up LOBES_GATEWAY_MIN_UPLOAD_RATE bytes/s
 *     over each UPLOAD_WINDOW_MS window: a stalled or dripping upload is
 *     answered 408 request_timeout and closed. MHD 0.9.75 cannot queue an
 *     answer while a body comes in (MHD_queue_response wants the head just
 *     processed or the whole request read), so this one fixed answer is
 *     written to the socket here, before the connection is shut down: no
 *     other bytes of this request have been written to it.
 * A connection cut by a deadline is shut down (both ways); MHD sees the
 * end of its socket on the next turn and closes it as usual (the request's
 * access line, the counts).
 */
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "../util/cleanup.h"
#include "internal.h"

#define UPLOAD_WINDOW_MS 5000.0

struct gw_addr_count {
	struct gw_addr_count *next;
	unsigned char key[17]; /* family, then 4 or 16 address bytes */
	int count;
};

static size_t addr_key(const struct sockaddr *sa, unsigned char key[17])
{
	memset(key, 0, 17);
	key[0] = (unsigned char)sa->sa_family;
	if (sa->sa_family == AF_INET) {
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 5;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(key + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return 17;
	}
	return 1;
}

static size_t bucket_of(const struct gw_conn_table *t, const unsigned char *key, size_t n)
{
	unsigned long h = 5381;
	for (size_t i = 0; i < n; i++)
		h = h * 33 + key[i];
	return h % t->n_buckets;
}

void conn_table_init(struct gw_conn_table *t)
{
	pthread_mutex_init(&t->mu, NULL);
	t->total = 0;
	t->n_buckets = 1024;
	t->buckets = xcalloc(t->n_buckets, sizeof(*t->buckets));
}

void conn_table_destroy(struct gw_conn_table *t)
{
	for (size_t i = 0; i < t->n_buckets; i++)
		while (t->buckets[i]) {
			struct gw_addr_count *a = t->buckets[i];
			t->buckets[i] = a->next;
			free(a);
		}
	free(t->buckets);
	t->buckets = NULL;
	pthread_mutex_destroy(&t->mu);
}

/* The count of sa (t->mu held); created when add. */
static struct gw_addr_count **find(struct gw_conn_table *t, const struct sockaddr *sa, bool add)
{
	unsigned char key[17];
	size_t n = addr_key(sa, key);
	struct gw_addr_count **p = &t->buckets[bucket_of(t, key, n)];
	for (; *p; p = &(*p)->next)
		if (!memcmp((*p)->key, key, sizeof(key)))
			return p;
	if (!add)
		return NULL;
	*p = xcalloc(1, sizeof(**p));
	memcpy((*p)->key, key, sizeof(key));
	return p;
}

bool conn_table_admit(struct gw_conn_table *t, const struct sockaddr *sa, int max_total,
		      int max_per_addr, const char **why)
{
	pthread_mutex_lock(&t->mu);
	struct gw_addr_count **a = find(t, sa, false);
	*why = t->total >= max_total		   ? "max_connections"
	       : a && (*a)->count >= max_per_addr ? "per_address"
						  : NULL;
	pthread_mutex_unlock(&t->mu);
	return !*why;
}

void conn_table_add(struct gw_conn_table *t, const struct sockaddr *sa)
{
	pthread_mutex_lock(&t->mu);
	(*find(t, sa, true))->count++;
	t->total++;
	pthread_mutex_unlock(&t->mu);
}

void conn_table_remove(struct gw_conn_table *t, const struct sockaddr *sa)
{
	pthread_mutex_lock(&t->mu);
	struct gw_addr_count **a = find(t, sa, false);
	if (a) {
		t->total--;
		if (--(*a)->count <= 0) {
			struct gw_addr_count *dead = *a;
			*a = dead->next;
			free(dead);
		}
	}
	pthread_mutex_unlock(&t->mu);
}

void conn_list_add(struct gw_conn_list *l, struct gw_conn *k)
{
	k->prev = NULL;
	k->next = l->head;
	if (l->head)
		l->head->prev = k;
	l->head = k;
}

void conn_list_del(struct gw_conn_list *l, struct gw_conn *k)
{
	if (k->prev)
		k->prev->next = k->next;
	else if (l->head == k)
		l->head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	k->prev = k->next = NULL;
}

static void cut(struct gw_conn *k)
{
	shutdown(k->fd, SHUT_RDWR);
	k->cut = true;
}

/* 408 for a body slower than the minimum rate, written on the socket. */
static void upload_timeout(struct gw_conn *k, const struct gw_config *cfg)
{
	struct req *q = k->q;
	_cleanup_free_ char *m = xasprintf(
		"the request body came in slower than %d bytes/s (LOBES_GATEWAY_MIN_UPLOAD_RATE)",
		cfg->min_upload_rate);
	_cleanup_free_ char *body = gw_error_body(m, "invalid_request_error", "request_timeout", NULL);
	size_t n = strlen(body);
	_cleanup_free_ char *msg = xasprintf(
		"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\n"
		"X-Request-Id: %s\r\nContent-Length: %zu\r\n\r\n%s", q->id, n, body);
	ssize_t w = send(k->fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
	q->status = 408;
	q->bytes = w > 0 ? n : 0;
	q->outcome = "request_timeout";
	cut(k);
}

int conn_list_scan(struct gw_conn_list *l, const struct gw_config *cfg, double now)
{
	int n = 0;
	for (struct gw_conn *k = l->head; k; k = k->next) {
		if (k->cut)
			continue;
		struct req *q = k->q;
		if (!q) {
			double limit = (k->served ? cfg->idle_timeout_s : cfg->header_timeout_s) * 1000.0;
			if (now - k->t_wait > limit) {
				cut(k);
				n++;
			}
			continue;
		}
		if (q->state != R_READ || !cfg->min_upload_rate || now - q->win_t < UPLOAD_WINDOW_MS)
			continue;
		double want = cfg->min_upload_rate * (now - q->win_t) / 1000.0;
		if ((double)(q->received - q->win_bytes) < want) {
			upload_timeout(k, cfg);
			n++;
			continue;
		}
		q->win_t = now;
		q->win_bytes = q->received;
	}
	return n;
}

/* ---- the MHD and loop callbacks of a lane (internal.h) ---- */

enum MHD_Result gw_conn_accept(void *cls, const struct sockaddr *sa, socklen_t len)
{
	(void)len;
	struct gw_lane *l = cls;
	struct gateway *g = l->g;
	struct gw_config *cfg = gw_live_get(&g->live);
	const char *why;
	bool ok = conn_table_admit(&g->conns, sa, cfg->max_connections, cfg->max_conn_per_addr, &why);
	gw_config_unref(cfg);
	if (!ok) { /* counted, logged at most once a second (gw_conn_timers) */
		l->refused++;
		l->refused_why = why;
	}
	return ok ? MHD_YES : MHD_NO;
}

void gw_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		    enum MHD_ConnectionNotificationCode toe)
{
	struct gw_lane *l = cls;
	struct gw_conn *k = *socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (k) {
			conn_list_del(&l->conns, k);
			conn_table_remove(&l->g->conns, (const struct sockaddr *)&k->addr);
			free(k);
		}
		*socket_context = NULL;
		return;
	}
	k = xcalloc(1, sizeof(*k));
	const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ad = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	k->fd = fd ? fd->connect_fd : -1;
	if (ad && ad->client_addr)
		memcpy(&k->addr, ad->client_addr,
		       ad->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							   : sizeof(struct sockaddr_in));
	k->t_wait = gw_now_ms();
	conn_list_add(&l->conns, k);
	conn_table_add(&l->g->conns, (const struct sockaddr *)&k->addr);
	*socket_context = k;
	/* the idle timeout of the settings in use now (a reload applies to
	 * the connections opened after it) */
	struct gw_config *cfg = gw_live_get(&l->g->live);
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)cfg->idle_timeout_s);
	gw_config_unref(cfg);
}

struct gw_conn *gw_conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

#define SCAN_MS 250.0

double gw_conn_timers(void *ud, double now)
{
	struct gw_lane *l = ud;
	if (now < l->next_scan)
		return l->next_scan;
	struct gw_config *cfg = gw_live_get(&l->g->live);
	conn_list_scan(&l->conns, cfg, now);
	gw_config_unref(cfg);
	if (l->refused && now - l->refused_logged >= 1000) {
		gw_log_json(&l->g->log, json_pack("{s:s, s:s, s:i}", "event", "connections-refused",
						  "limit", l->refused_why, "count", l->refused));
		l->refused = 0;
		l->refused_logged = now;
	}
	l->next_scan = now + SCAN_MS;
	return l->next_scan;
}
