/*
 * fleet.c — `lobes status --fleet`: the table of roles x boxes built by
 * src/lib/gateway/fleet.c from every box's /capabilities (this box's
 * gateway and each peer in peers.yaml), printed as text or --json from
 * the one object.
 *
 * A cell reads "ready" / "not ready" for a role the box serves,
 * "proxied>BOX ready|not ready" for one it proxies, "refer>BOX" for one it
 * refers clients for, "infeasible" otherwise, "?" when the box does not
 * answer. Exit: 0 every box answered; 1 some did not; 3 bad deploy dir.
 *
 * `lobes probe --fleet`: every role probed once, where it is served — the
 * first box (this one, then the peers in peers.yaml order) whose
 * /capabilities says it is feasible there — through that box's gateway,
 * with the key that gateway accepts (this box's own key, or the peer's
 * key file). Known failures come from that box's profile. A role served
 * nowhere is listed, not probed. Exit 1 when a probe failed; 4 ("could
 * not verify") when nothing was probed: no box answered, or none that did
 * serves a role.
 */
#include <string.h>

#include "../lib/gateway/gateway.h"
#include "../lib/knowledge/knowledge.h"
#include "../lib/probe/probe.h"
#include "../lib/util/buf.h"
#include "../lib/util/cleanup.h"
#include "cmd.h"

#define FLEET_TIMEOUT_MS 3000

static char *cell_text(const json_t *cell)
{
	if (!cell || json_is_null(cell))
		return xstrdup("?");
	bool feasible = json_is_true(json_object_get(cell, "feasible"));
	bool ready = json_is_true(json_object_get(cell, "ready"));
	const char *hb = json_string_value(json_object_get(cell, "hosted_by"));
	if (feasible)
		return xstrdup(ready ? "ready" : "not ready");
	if (json_is_true(json_object_get(cell, "proxied")))
		return xasprintf("proxied>%s %s", hb ? hb : "?", ready ? "ready" : "not ready");
	if (hb)
		return xasprintf("refer>%s", hb);
	return xstrdup("infeasible");
}

static void print_row(char **cells, size_t n, const int *w)
{
	for (size_t i = 0; i + 1 < n; i++)
		printf("%-*s  ", w[i], cells[i]);
	printf("%s\n", cells[n - 1]);
}

int status_fleet(struct ctx *ctx);
int status_fleet(struct ctx *ctx)
{
	struct err *e = NULL;
	struct gw_config *c = gw_config_load(ctx->dir, NULL, &e);
	if (!c)
		return cmd_fail(ctx, e);
	json_t *f = gw_fleet(c, FLEET_TIMEOUT_MS);
	gw_config_unref(c);
	json_t *boxes = json_object_get(f, "boxes"), *roles = json_object_get(f, "roles"), *b, *r;
	size_t nb = json_array_size(boxes), i, k;
	int rc = 0;
	json_array_foreach(boxes, i, b)
		if (!json_is_true(json_object_get(b, "reachable")))
			rc = 1;
	if (ctx->json) {
		out_json(f);
		json_decref(f);
		return rc;
	}
	size_t nrows = ROLE__COUNT + 3, ncols = nb + 1;
	char **t = xcalloc(nrows * ncols, sizeof(char *));
	int *w = xcalloc(ncols, sizeof(int));
	t[0] = xstrdup("role");
	json_array_foreach(boxes, i, b) {
		t[i + 1] = xstrdup(jstr(b, "name"));
		bool up = json_is_true(json_object_get(b, "reachable"));
		t[(ROLE__COUNT + 1) * ncols + i + 1] =
			up ? xasprintf("%s (card %s)", jstr(b, "profile"), jstr(b, "card")) : xstrdup("?");
		t[(ROLE__COUNT + 2) * ncols + i + 1] = xstrdup(jstr(b, "origin"));
	}
	t[(ROLE__COUNT + 1) * ncols] = xstrdup("profile");
	t[(ROLE__COUNT + 2) * ncols] = xstrdup("origin");
	json_array_foreach(roles, k, r) {
		t[(k + 1) * ncols] = xstrdup(jstr(r, "role"));
		json_array_foreach(boxes, i, b)
			t[(k + 1) * ncols + i + 1] =
				cell_text(json_object_get(json_object_get(r, "boxes"), jstr(b, "name")));
	}
	for (size_t y = 0; y < nrows; y++)
		for (size_t x = 0; x < ncols; x++) {
			if (!t[y * ncols + x])
				t[y * ncols + x] = xstrdup("");
			int l = (int)strlen(t[y * ncols + x]);
			if (l > w[x])
				w[x] = l;
		}
	for (size_t y = 0; y < nrows; y++)
		print_row(&t[y * ncols], ncols, w);
	json_array_foreach(boxes, i, b)
		if (!json_is_true(json_object_get(b, "reachable")))
			printf("%s: unreachable (%s)\n", jstr(b, "name"), jstr(b, "error"));
	for (size_t y = 0; y < nrows * ncols; y++)
		free(t[y]);
	free(t);
	free(w);
	json_decref(f);
	return rc;
}

static void knowledge_freep(struct knowledge *k) { knowledge_free(k); }

int probe_fleet(struct ctx *ctx, double timeout_s);
int probe_fleet(struct ctx *ctx, double timeout_s)
{
	struct err *e = NULL;
	struct gw_config *c = gw_config_load(ctx->dir, NULL, &e);
	if (!c)
		return cmd_fail(ctx, e);
	__attribute__((cleanup(knowledge_freep))) struct knowledge k = { 0 };
	_cleanup_free_ char *opdir = xasprintf("%s/profiles", ctx->dir);
	if (knowledge_load(&k, opdir, &e) < 0) {
		gw_config_unref(c);
		return cmd_fail(ctx, e);
	}
	size_t i;
	json_t *f = gw_fleet(c, FLEET_TIMEOUT_MS);
	json_t *boxes = json_object_get(f, "boxes"), *b;
	size_t reachable = 0;
	json_array_foreach(boxes, i, b)
		reachable += json_is_true(json_object_get(b, "reachable"));
	struct probe probes[ROLE__COUNT];
	int box_of[ROLE__COUNT];
	size_t n = 0;
	json_t *unserved = json_array();
	for (int r = 0; r < ROLE__COUNT; r++) {
		const char *rn = role_name((enum role_id)r);
		json_t *row = json_object_get(json_array_get(json_object_get(f, "roles"), (size_t)r), "boxes");
		int at = -1;
		json_array_foreach(boxes, i, b) {
			json_t *cell = json_object_get(row, jstr(b, "name"));
			if (at < 0 && json_is_true(json_object_get(cell, "feasible")))
				at = (int)i;
		}
		if (at < 0) {
			json_array_append_new(unserved, json_string(rn));
			continue;
		}
		b = json_array_get(boxes, (size_t)at);
		const struct profile *prof = knowledge_profile(&k, jstr(b, "profile"));
		probe_init(&probes[n], (enum role_id)r, 0, probe_known_failure(prof, (enum role_id)r));
		probes[n].origin = jstr(b, "origin");
		probes[n].bearer = at == 0 ? c->key : c->peers->v[at - 1].key;
		box_of[n++] = at;
	}
	int rc = 0;
	if (n && probe_run(probes, n, timeout_s, &e) < 0)
		rc = cmd_fail(ctx, e);
	json_t *arr = json_array();
	int failed = 0;
	for (i = 0; i < n; i++) {
		if (!rc) {
			json_t *pj = probe_json(&probes[i]);
			json_object_set_new(pj, "box", json_string(jstr(json_array_get(boxes, (size_t)box_of[i]), "name")));
			json_array_append_new(arr, pj);
			failed += probes[i].status == PROBE_FAIL;
		}
		probe_free(&probes[i]);
	}
	gw_config_unref(c);
	if (rc) {
		json_decref(arr);
		json_decref(unserved);
		json_decref(f);
		return rc;
	}
	json_t *res = json_pack("{s:b, s:o, s:o, s:O}", "ok", !failed, "probes", arr, "unserved", unserved,
				"boxes", boxes);
	if (ctx->json) {
		out_json(res);
	} else {
		json_t *p;
		json_array_foreach(arr, i, p) {
			const char *st = jstr(p, "status");
			const char *detail = *jstr(p, "reason") ? jstr(p, "reason") : jstr(p, "summary");
			printf("%-9s %-8s %-20s %6lld ms  %s: %s\n", jstr(p, "role"), jstr(p, "box"),
			       !strcmp(st, "fail") ? "FAIL" : st,
			       (long long)json_integer_value(json_object_get(p, "latency_ms")), jstr(p, "probe"),
			       detail);
		}
		json_array_foreach(unserved, i, p)
			printf("%-9s %-8s not served by any box that answered\n", json_string_value(p), "-");
		json_array_foreach(boxes, i, p)
			if (!json_is_true(json_object_get(p, "reachable")))
				printf("%s: unreachable (%s)\n", jstr(p, "name"), jstr(p, "error"));
		printf("%zu probed, %d failed\n", n, failed);
	}
	json_decref(res);
	json_decref(f);
	if (!n) { /* nothing verified: not a pass */
		err_set(&e, EXIT_RUNTIME, "could not verify: %s", reachable
			? "no box that answered serves any role" : "no box of the fleet answered /capabilities");
		return cmd_fail(ctx, e);
	}
	return failed ? EXIT_CHECK : 0;
}
