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
 */
#include <string.h>

#include "../lib/gateway/peers.h"
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
