/*
 * conns.h — the client connections of the gateway's HTTP front (conns.c):
 * the count per client address shared by all workers, and each worker's
 * list of its open connections with their deadlines. Internal to the HTTP
 * front (server.c), the layer above the relay.
 */
#ifndef LOBES_GATEWAY_CONNS_H
#define LOBES_GATEWAY_CONNS_H

#include <sys/socket.h>

#include "relay.h"

/* Open connections of all workers, in total and per client address. */
struct gw_addr_count;
struct gw_conn_table {
	pthread_mutex_t mu;
	int total;
	struct gw_addr_count **buckets; /* chained by address hash */
	size_t n_buckets;
};

void conn_table_init(struct gw_conn_table *t);
void conn_table_destroy(struct gw_conn_table *t);
/* May one more connection from sa open? Refused past max_total in all or
 * max_per_addr from sa (*why: "max_connections" or "per_address"). */
bool conn_table_admit(struct gw_conn_table *t, const struct sockaddr *sa, int max_total,
		      int max_per_addr, const char **why);
void conn_table_add(struct gw_conn_table *t, const struct sockaddr *sa);
void conn_table_remove(struct gw_conn_table *t, const struct sockaddr *sa);

/* One open client connection, on the list of the worker that accepted it
 * (touched by that worker's loop only). */
struct gw_conn {
	struct gw_conn *prev, *next;
	int fd;
	struct sockaddr_storage addr;
	double t_wait; /* when the wait for its next request head began (ms) */
	bool served;   /* a request has completed on it */
	bool cut;      /* shut down by a deadline */
	struct req *q; /* the request in progress (its head is in), or NULL */
};

struct gw_conn_list {
	struct gw_conn *head;
};

void conn_list_add(struct gw_conn_list *l, struct gw_conn *k);
void conn_list_del(struct gw_conn_list *l, struct gw_conn *k);
/* Enforce the deadlines of cfg on l's connections at now (ms): a head not
 * whole within header_timeout_s of the accept (idle_timeout_s on a kept
 * connection) and a body slower than min_upload_rate (408 request_timeout,
 * written by hand: MHD cannot answer while a body comes in) shut the
 * connection down; MHD then closes it. Returns how many were cut. */
int conn_list_scan(struct gw_conn_list *l, const struct gw_config *cfg, double now);

#endif
