/*
 * peers.c — checks "peers", "peer-reachable", "peer-key", "peer-proxy": the
 * links of this box to the other boxes of its fleet (<deploy-dir>/peers.yaml,
 * src/lib/gateway/peers.h). The file must load (positions on errors); then,
 * for each peer: its gateway answers /capabilities; the key this box holds
 * for it is accepted (a 401 means that box's inbound key was rotated: only
 * the links INTO it break, and the finding names the key file to update);
 * each role proxied to it is served and ready there and not proxied onward
 * (two boxes proxying a role to each other). Silent when there is no
 * peers.yaml: a box without peers has nothing to check here.
 */
#include <string.h>

#include "../gateway/gateway.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "doctor_int.h"

#define PEER_TIMEOUT_MS 3000

void check_peers(struct doctor_ctx *x)
{
	struct doctor_report *r = x->r;
	_cleanup_free_ char *path = xasprintf("%s/peers.yaml", x->o->dir);
	if (!fs_exists(path))
		return;
	struct err *e = NULL;
	struct gw_config *c = gw_config_load(x->o->dir, NULL, &e);
	if (!c) {
		struct check *k = doc_add(r, "peers", SEV_ERROR, "%s", e->msg);
		k->remedy = xstrdup("fix the file at the position given (see `lobes gateway --check`)");
		err_free(e);
		return;
	}
	doc_add(r, "peers", SEV_OK, "%s: %zu peer(s), this box is '%s'", path,
		c->peers ? c->peers->n : 0, gw_box_name(c));
	json_t *links = gw_fleet_links(c, PEER_TIMEOUT_MS), *l;
	size_t i;
	json_array_foreach(links, i, l) {
		const char *lv = json_string_value(json_object_get(l, "level"));
		const char *id = json_string_value(json_object_get(l, "check"));
		enum check_sev sev = !strcmp(lv, "error")     ? SEV_ERROR
				     : !strcmp(lv, "warning") ? SEV_WARNING
							      : SEV_OK;
		struct check *k = doc_add(r, id, sev, "%s", json_string_value(json_object_get(l, "message")));
		k->name = xstrdup(json_string_value(json_object_get(l, "peer")));
		if (sev == SEV_ERROR && !strcmp(id, "peer-key"))
			k->remedy = xstrdup("ask that box's operator for its current inbound key and write it "
					    "to the key file (mode 0600), then SIGHUP the gateway");
		else if (sev == SEV_ERROR && !strcmp(id, "peer-reachable"))
			k->remedy = xstrdup("start that box's gateway (`lobes gateway`) or fix its origin in "
					    "peers.yaml");
		else if (sev == SEV_ERROR && !strcmp(id, "peer-proxy"))
			k->remedy = xstrdup("proxy a role only to a box that serves it; use refer: or remove "
					    "one side's proxy entry");
	}
	json_decref(links);
	gw_config_unref(c);
}
