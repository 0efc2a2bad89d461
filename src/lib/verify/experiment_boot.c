/*
 * experiment_boot.c — what both experiments do to the role (verify_int.h):
 * stop it and bring it up alone through bring-up's memory gate (the rest of
 * the fleet untouched), and read its container's args to check the setting
 * it booted with.
 */
#include <string.h>

#include "../runtime/runtime.h"
#include "../util/cleanup.h"
#include "../util/strv.h"
#include "verify_int.h"

int xp_boot(struct xp *x, const char *what, long long *ready_ms, struct err **err)
{
	const struct verify_opts *o = x->o;
	if (serve_rt_stop_role(&x->s, x->r, err) < 0)
		return -1;
	struct bringup_role role = { x->r, x->budget };
	struct bringup_ops ops = serve_rt_ops(&x->s);
	struct bringup_opts bo = { .one_at_a_time = true, .margin = o->margin_bytes,
				   .mem_wait_ms = o->mem_wait_s * 1000,
				   .window_wait_ms = o->boot_wait_s * 1000,
				   .ready_wait_ms = o->boot_wait_s * 1000, .poll_ms = 500 };
	struct bringup_result br;
	x->s.created = false;
	if (bringup_run(&role, 1, &ops, &bo, &br, err) < 0)
		return -1;
	bool ok = br.ok;
	*ready_ms = br.n ? br.roles[0].ready_ms : -1;
	_cleanup_free_ char *why = br.n && br.roles[0].reason ? xstrdup(br.roles[0].reason) : NULL;
	bringup_result_free(&br);
	if (!ok)
		return err_set(err, EXIT_RUNTIME, "%s did not come up with %s: %s", role_name(x->r), what,
			       why ? why : "not ready");
	return 0;
}

char **xp_args(struct xp *x, struct err **err)
{
	struct engine_container_list l;
	if (engine_list_project(&x->s.engine, x->s.fleet->project, &l, err) < 0)
		return NULL;
	char **v = NULL;
	bool found = false;
	for (size_t i = 0; i < l.n && !found; i++) {
		if (strcmp(l.c[i].service, role_name(x->r)) != 0)
			continue;
		found = true;
		for (char **a = l.c[i].args; a && *a; a++)
			strv_push(&v, *a);
		if (!v)
			v = xcalloc(1, sizeof(char *));
	}
	engine_container_list_free(&l);
	if (!found)
		err_set(err, EXIT_RUNTIME, "role '%s' has no container after its boot", role_name(x->r));
	return v;
}

const char *xp_flag(char *const *args, const char *flag)
{
	const char *v = NULL;
	size_t n = strlen(flag);
	for (char *const *a = args; a && *a; a++)
		if (!strncmp(*a, flag, n) && (*a)[n] == '=')
			v = *a + n + 1;
		else if (!strcmp(*a, flag) && a[1])
			v = a[1];
	return v;
}
