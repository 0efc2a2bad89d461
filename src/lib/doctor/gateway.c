/*
 * gateway.c — check "gateway": the front door's settings and exposure.
 *
 *   - the gateway settings load (LOBES_GATEWAY_* of .env, gateway.yaml, the
 *     key file): a bad value, a key file readable by others, or a bind
 *     beyond loopback without a key are errors (the gateway refuses them);
 *   - its port: the gateway answering, free, or taken by something else;
 *   - the log collector `lobes serve --apply` starts (runtime/bgproc.h):
 *     running, or not (info: the engines' logs are then not kept per boot);
 *   - no engine listens beyond loopback: every feasible role's port is
 *     looked up among the listening sockets (/proc/net/tcp and tcp6, under
 *     LOBES_SYSROOT); one bound to a non-loopback address is an error.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "../gateway/gateway.h"
#include "../runtime/runtime.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "doctor_int.h"

static size_t keep(char *p, size_t s, size_t n, void *ud)
{
	size_t len = s * n;
	char *b = ud;
	size_t have = strlen(b);
	if (have + len < 512) {
		memcpy(b + have, p, len);
		b[have + len] = 0;
	}
	return len;
}

/* GET /health where a gateway bound to BIND:PORT is reached: the status
 * (0: nothing answered). */
static long health(const char *bind, int port, char *body)
{
	CURL *e = curl_easy_init();
	if (!e)
		return 0;
	_cleanup_free_ char *url = http_url_for_bind(bind, port, "/health");
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 2000L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, keep);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
	long code = 0;
	if (curl_easy_perform(e) == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(e);
	return code;
}

/* Listening sockets on port that are bound beyond loopback: the address
 * ("0.0.0.0", "::", ...) of the first, or NULL. */
static char *exposed(int port)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		_cleanup_free_ char *t = fs_read_sys(files[f], 4 << 20, NULL);
		if (!t)
			continue;
		char *save = NULL;
		for (char *l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char addr[64];
			unsigned p, st;
			if (sscanf(l, " %*d: %63[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", addr, &p, &st) != 3 ||
			    st != 0x0A || (int)p != port)
				continue;
			bool v6 = strlen(addr) == 32;
			bool loop = v6 ? !strcmp(addr, "00000000000000000000000001000000")
				       : strlen(addr) == 8 && !strncasecmp(addr + 6, "7F", 2);
			if (!loop)
				return xstrdup(v6 ? (strspn(addr, "0") == 32 ? "::" : "an IPv6 address")
						  : !strcmp(addr, "00000000") ? "0.0.0.0" : "a non-loopback address");
		}
	}
	return NULL;
}

void check_gateway(struct doctor_ctx *x)
{
	struct err *e = NULL;
	struct gw_config *c = gw_config_load(x->o->dir, NULL, &e);
	if (!c) {
		struct check *k = doc_add(x->r, "gateway", SEV_ERROR, "gateway settings: %s", e->msg);
		k->remedy = xstrdup("fix the value named; `lobes gateway --check` validates the settings");
		err_free(e);
		return;
	}
	if (c->key)
		doc_add(x->r, "gateway", SEV_OK, "gateway API key from %s (mode ok)", c->key_source);
	else
		doc_add(x->r, "gateway", gw_bind_is_loopback(c->bind) ? SEV_INFO : SEV_ERROR,
			"gateway has no API key; it binds %s", c->bind);
	char body[512] = "";
	long code = health(c->bind, c->port, body);
	if (code == 200 && strstr(body, "\"roles_ready\""))
		doc_add(x->r, "gateway", SEV_OK, "gateway answers on %s:%d", c->bind, c->port);
	else if (code)
		doc_add(x->r, "gateway", SEV_WARNING,
			"port %d answers HTTP %ld but not as lobes gateway: the gateway cannot bind it",
			c->port, code)->remedy = xstrdup("free the port or set LOBES_GATEWAY_PORT in .env");
	else
		doc_add(x->r, "gateway", SEV_INFO, "gateway not running (nothing answers on %s:%d)",
			c->bind, c->port);
	struct bgproc col;
	if (bgproc_read(&col, x->o->dir, BGPROC_COLLECTOR, NULL) == 0) {
		if (col.pid)
			doc_add(x->r, "gateway", SEV_OK, "log collector runs (pid %d): engine logs kept under "
				"logs/", (int)col.pid);
		else
			doc_add(x->r, "gateway", SEV_INFO, "log collector not running%s: engine logs are not "
				"kept per boot", col.stale ? " (a stale collector.pid)" : "")
				->remedy = xstrdup("`lobes serve --apply` starts it (or `lobes logs --collect`)");
		bgproc_free(&col);
	}
	for (int r = 0; r < ROLE__COUNT; r++) {
		if (!c->roles[r].feasible)
			continue;
		_cleanup_free_ char *a = exposed(c->roles[r].port);
		if (a) {
			struct check *k = doc_add(x->r, "gateway", SEV_ERROR,
						  "%s: the engine's port %d listens on %s, beyond loopback",
						  role_name((enum role_id)r), c->roles[r].port, a);
			k->remedy = xstrdup("engines listen on 127.0.0.1 only (--host 127.0.0.1); clients "
					    "reach them through `lobes gateway`");
		}
	}
	gw_config_unref(c);
}
