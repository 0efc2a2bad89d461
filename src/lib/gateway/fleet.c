/*
 * fleet.c — the whole fleet at a glance: this box's gateway and every peer
 * in peers.yaml are asked for /capabilities (keyless, bounded), and the
 * answers become one table, role x box, each cell feasible / ready /
 * proxied (and the box it is proxied or referred to), with what each box
 * detected (card) and which profile it runs. A box that does not answer is
 * listed as unreachable with the reason; its cells are null.
 *
 * Also the checks `lobes doctor` runs on the links (gw_fleet_links): each
 * peer reachable, the key this box holds for it accepted (GET /v1/models
 * with it: 401 means that box's inbound key changed — rotating one box's
 * key breaks only the links into it), no role proxied both ways, and a
 * proxied role ready at its host.
 */
#include <curl/curl.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "peers.h"

#define BODY_CAP (1u << 20)

static size_t collect(char *p, size_t s, size_t n, void *ud)
{
	return buf_add(ud, p, s * n) < 0 ? 0 : s * n;
}

long gw_http_get_json(const char *url, const char *bearer, const char *ca_file, int timeout_ms,
		      json_t **out, char *why, size_t whyn)
{
	*out = NULL;
	struct buf b;
	buf_init(&b, BODY_CAP);
	struct curl_slist *h = NULL;
	if (bearer) {
		_cleanup_free_ char *a = xasprintf("Authorization: Bearer %s", bearer);
		h = curl_slist_append(h, a);
		explicit_bzero(a, strlen(a));
	}
	char eb[CURL_ERROR_SIZE] = "";
	CURL *e = curl_easy_init();
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, eb);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	if (ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, ca_file);
	long code = 0;
	CURLcode rc = curl_easy_perform(e);
	if (rc == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	else if (why)
		snprintf(why, whyn, "%s", *eb ? eb : curl_easy_strerror(rc));
	curl_easy_cleanup(e);
	curl_slist_free_all(h);
	if (code)
		*out = json_loadb(buf_str(&b), b.len, 0, NULL);
	if (code && why)
		snprintf(why, whyn, "HTTP %ld", code);
	buf_free(&b);
	return code;
}

char *gw_local_origin(const struct gw_config *c)
{
	const char *h = c->bind;
	if (!strcmp(h, "0.0.0.0") || !strcmp(h, "::") || !*h)
		h = "127.0.0.1";
	return strchr(h, ':') ? xasprintf("http://[%s]:%d", h, c->port)
			      : xasprintf("http://%s:%d", h, c->port);
}

/* One box's column from its /capabilities. */
static json_t *box_cells(json_t *caps)
{
	json_t *cells = json_object(), *o;
	size_t i;
	json_array_foreach(json_object_get(caps, "roles"), i, o) {
		const char *r = json_string_value(json_object_get(o, "role"));
		if (!r)
			continue;
		json_t *cell = json_pack("{s:b, s:b, s:b}", "feasible",
					 json_is_true(json_object_get(o, "feasible")), "ready",
					 json_is_true(json_object_get(o, "ready")), "proxied",
					 json_is_true(json_object_get(o, "proxied")));
		const char *hb = json_string_value(json_object_get(o, "hosted_by_box"));
		if (!hb)
			hb = json_string_value(json_object_get(o, "hosted_by"));
		if (hb)
			json_object_set_new(cell, "hosted_by", json_string(hb));
		const char *m = json_string_value(json_object_get(o, "model"));
		if (m && *m)
			json_object_set_new(cell, "model", json_string(m));
		json_object_set_new(cells, r, cell);
	}
	return cells;
}

static json_t *ask_box(const char *name, const char *origin, bool self, const char *ca_file,
		       int timeout_ms, json_t **cells)
{
	_cleanup_free_ char *url = xasprintf("%s/capabilities", origin);
	json_t *caps = NULL;
	char why[CURL_ERROR_SIZE + 32] = "";
	long code = gw_http_get_json(url, NULL, ca_file, timeout_ms, &caps, why, sizeof(why));
	bool ok = code == 200 && json_is_object(caps);
	json_t *b = json_pack("{s:s, s:s, s:b, s:b}", "name", name, "origin", origin, "self", self,
			      "reachable", ok);
	if (ok) {
		const char *p = json_string_value(json_object_get(caps, "profile"));
		const char *cd = json_string_value(json_object_get(caps, "card"));
		json_object_set_new(b, "profile", p ? json_string(p) : json_null());
		json_object_set_new(b, "card", cd ? json_string(cd) : json_null());
		*cells = box_cells(caps);
	} else {
		json_object_set_new(b, "error", json_string(code ? "its /capabilities is not JSON" : why));
		*cells = NULL;
	}
	json_decref(caps);
	return b;
}

json_t *gw_fleet(const struct gw_config *c, int timeout_ms)
{
	json_t *boxes = json_array(), *cols = json_array();
	_cleanup_free_ char *self = gw_local_origin(c);
	json_t *cells;
	json_array_append_new(boxes, ask_box(gw_box_name(c), self, true, c->peer_ca_file, timeout_ms, &cells));
	json_array_append_new(cols, cells ? cells : json_null());
	for (size_t i = 0; c->peers && i < c->peers->n; i++) {
		const struct gw_peer *p = &c->peers->v[i];
		json_array_append_new(boxes, ask_box(p->name, p->origin, false, c->peer_ca_file, timeout_ms, &cells));
		json_array_append_new(cols, cells ? cells : json_null());
	}
	json_t *roles = json_array();
	for (int r = 0; r < ROLE__COUNT; r++) {
		const char *rn = role_name((enum role_id)r);
		json_t *row = json_object();
		for (size_t b = 0; b < json_array_size(boxes); b++) {
			json_t *col = json_array_get(cols, b);
			json_t *cell = col ? json_object_get(col, rn) : NULL;
			json_object_set(row, json_string_value(json_object_get(json_array_get(boxes, b), "name")),
					cell ? cell : json_null());
		}
		json_array_append_new(roles, json_pack("{s:s, s:o}", "role", rn, "boxes", row));
	}
	json_decref(cols);
	return json_pack("{s:o, s:o}", "boxes", boxes, "roles", roles);
}

/* ---- the links, for doctor ---- */

static json_t *finding(json_t *out, const char *check, const char *level, const char *peer,
		       char *msg)
{
	json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s}", "check", check, "level", level,
					     "peer", peer, "message", msg));
	free(msg);
	return out;
}

json_t *gw_fleet_links(const struct gw_config *c, int timeout_ms)
{
	json_t *out = json_array();
	for (size_t i = 0; c->peers && i < c->peers->n; i++) {
		const struct gw_peer *p = &c->peers->v[i];
		_cleanup_free_ char *cu = xasprintf("%s/capabilities", p->origin);
		json_t *caps = NULL;
		char why[CURL_ERROR_SIZE + 32] = "";
		long code = gw_http_get_json(cu, NULL, c->peer_ca_file, timeout_ms, &caps, why, sizeof(why));
		if (code != 200 || !json_is_object(caps)) {
			finding(out, "peer-reachable", "error", p->name,
				xasprintf("peer '%s' (%s) is not reachable: %s", p->name, p->origin, why));
			json_decref(caps);
			continue;
		}
		finding(out, "peer-reachable", "ok", p->name, xasprintf("peer '%s' (%s) answers", p->name, p->origin));
		if (p->key) {
			_cleanup_free_ char *mu = xasprintf("%s/v1/models", p->origin);
			json_t *m = NULL;
			long kc = gw_http_get_json(mu, p->key, c->peer_ca_file, timeout_ms, &m, why, sizeof(why));
			json_decref(m);
			if (kc == 401 || kc == 403)
				finding(out, "peer-key", "error", p->name,
					xasprintf("peer '%s' rejects the key in '%s' (HTTP %ld): its inbound key "
						  "changed; put the key that box accepts in that file",
						  p->name, p->key_file, kc));
			else if (kc == 200)
				finding(out, "peer-key", "ok", p->name,
					xasprintf("peer '%s' accepts the key in '%s'", p->name, p->key_file));
			else
				finding(out, "peer-key", "warning", p->name,
					xasprintf("peer '%s': /v1/models with the key answered %s", p->name, why));
		}
		for (int r = 0; r < ROLE__COUNT; r++) {
			if (gw_role_proxy_peer(c, r) != p)
				continue;
			const char *rn = role_name((enum role_id)r);
			json_t *o, *hit = NULL;
			size_t k;
			json_array_foreach(json_object_get(caps, "roles"), k, o)
				if (!strcmp(json_string_value(json_object_get(o, "role")) ?: "", rn))
					hit = o;
			if (hit && json_is_true(json_object_get(hit, "proxied")))
				finding(out, "peer-proxy", "error", p->name,
					xasprintf("role '%s' is proxied to peer '%s', which proxies it on to %s: "
						  "the two boxes proxy it to each other (a request gets 508 proxy_loop)",
						  rn, p->name,
						  json_string_value(json_object_get(hit, "hosted_by")) ?: "another box"));
			else if (!hit || !json_is_true(json_object_get(hit, "feasible")))
				finding(out, "peer-proxy", "error", p->name,
					xasprintf("role '%s' is proxied to peer '%s', which does not serve it", rn,
						  p->name));
			else if (!json_is_true(json_object_get(hit, "ready")))
				finding(out, "peer-proxy", "warning", p->name,
					xasprintf("role '%s' is proxied to peer '%s', where it is not ready", rn,
						  p->name));
			else
				finding(out, "peer-proxy", "ok", p->name,
					xasprintf("role '%s' is proxied to peer '%s' and ready there", rn, p->name));
		}
		json_decref(caps);
	}
	return out;
}
