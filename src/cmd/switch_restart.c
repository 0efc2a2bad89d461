/*
 * switch_restart.c — the restart half of `lobes switch ROLE MODEL --apply`:
 * after the new .env/compose are committed, only that role is stopped and
 * brought up again through bring-up's memory gate (runtime/, the path
 * `lobes serve` and verify's reboots take; the rest of the fleet is not
 * touched), waited for until /health answers, then asked its probes (the
 * known answer, and tool-call / reasoning-split when its parsers are on).
 *
 * When the boot fails or a probe fails, the deploy dir's files are put
 * back byte for byte as saved before the write (deploy_save; one commit
 * under the lock), the role is brought up again on its old checkpoint the
 * same way, and the result names the cause: the one triage reads in the
 * boot log (triage/), or the failed probe's reason. Progress goes to stderr
 * as one line per event; the result is the caller's to print.
 */
#include <string.h>

#include "../lib/deploy/deploy.h"
#include "../lib/probe/probe.h"
#include "../lib/triage/triage.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/secret.h"
#include "cmd.h"
#include "switch_restart.h"

#define GiB 1073741824.0

static void progress(void *cls, const struct bringup_event *ev)
{
	const struct sw_restart *sr = cls;
	if (ev->kind == EV_GATE_WAIT)
		fprintf(stderr, "lobes switch: %s [%s]: waiting for memory: %.1f GiB free, %.1f GiB "
			"needed\n", role_name(ev->role), sr->stage, ev->free_bytes / GiB,
			ev->need_bytes / GiB);
	else
		fprintf(stderr, "lobes switch: %s [%s]: %s%s%s (%.1f s)\n", role_name(ev->role), sr->stage,
			bringup_event_name(ev->kind), ev->text ? ": " : "", ev->text ? ev->text : "",
			ev->elapsed_ms / 1000.0);
	fflush(stderr);
}

/* Stop the role, bring it up alone through the gate; the boot as JSON
 * (ok, reason, the triaged failure report). -1 when an op itself failed. */
static int reboot(struct serve_rt *s, struct sw_restart *sr, json_t **boot, struct err **err)
{
	*boot = NULL;
	if (serve_rt_stop_role(s, sr->role, err) < 0)
		return -1;
	struct bringup_role role = { sr->role, sr->budget };
	struct bringup_ops ops = serve_rt_ops(s);
	struct bringup_opts bo = { .one_at_a_time = true, .margin = (uint64_t)GiB,
				   .mem_wait_ms = 300 * 1000, .window_wait_ms = sr->boot_wait_s * 1000,
				   .ready_wait_ms = sr->boot_wait_s * 1000, .poll_ms = 500 };
	struct bringup_result br;
	s->created = false;
	if (bringup_run(&role, 1, &ops, &bo, &br, err) < 0)
		return -1;
	const struct bringup_role_result *x = br.n ? &br.roles[0] : NULL;
	*boot = json_pack("{s:b, s:s?, s:I}", "ok", br.ok, "reason", x ? x->reason : NULL, "ready_ms",
			  (json_int_t)(x ? x->ready_ms : -1));
	if (!br.ok && x) {
		struct sigset sigs = { 0 };
		bool have = sigset_load(&sigs, NULL, NULL) == 0;
		json_t *rep = failure_report(x->log_tail, 12, have ? &sigs : NULL);
		if (rep)
			json_object_update_new(*boot, rep);
		sigset_free(&sigs);
	}
	bringup_result_free(&br);
	return 0;
}

/* The role's probes on its port: {ok, probes: [...], reason?}. */
static json_t *ask(const struct sw_restart *sr, int port)
{
	struct probe p[3];
	size_t n = 0;
	probe_init(&p[n++], sr->role, port, probe_known_failure(sr->profile, sr->role));
	if (sr->tool_parser)
		probe_init_kind(&p[n++], sr->role, PK_TOOL_CALL, port,
				probe_kind_known_failure(sr->profile, sr->role, PK_TOOL_CALL));
	if (sr->reasoning_parser)
		probe_init_kind(&p[n++], sr->role, PK_REASONING, port,
				probe_kind_known_failure(sr->profile, sr->role, PK_REASONING));
	struct err *e = NULL;
	json_t *res = json_pack("{s:b, s:[]}", "ok", true, "probes");
	if (probe_run(p, n, sr->probe_timeout_s, &e) < 0) {
		json_object_set_new(res, "ok", json_false());
		json_object_set_new(res, "reason", json_string(e->msg));
		err_free(e);
	}
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(json_object_get(res, "probes"), probe_json(&p[i]));
		if (p[i].status == PROBE_FAIL && json_is_true(json_object_get(res, "ok"))) {
			json_object_set_new(res, "ok", json_false());
			json_object_set_new(res, "reason", json_sprintf("probe %s failed: %s",
									 probe_kind_id(sr->role, p[i].kind),
									 p[i].reason ? p[i].reason : "?"));
		}
		probe_free(&p[i]);
	}
	return res;
}

/* The cause of a failed boot, as one line: triage's cause, else the reason. */
static char *boot_cause(const json_t *boot)
{
	const json_t *c = json_object_get(boot, "cause");
	if (c && *jstr(c, "cause"))
		return xasprintf("%s (triage: %s, log line %lld)", jstr(c, "cause"), jstr(c, "signature"),
				 (long long)json_integer_value(json_object_get(c, "line_no")));
	return xasprintf("%s", *jstr(boot, "reason") ? jstr(boot, "reason") : "it did not come up");
}

/* The restart could not begin (docker unreachable, no device memory):
 * the files go back, so .env says what still runs. */
static int undo_write(const struct sw_restart *sr, json_t *res, struct err **err)
{
	struct err *e2 = NULL;
	if (deploy_saved_put(sr->dir, sr->before, &e2) < 0) {
		err_wrap(err, "%s; and putting the files back failed too: %s", "could not restart",
			 e2->msg);
		err_free(e2);
		return -1;
	}
	json_object_set_new(res, "rolled_back", json_true());
	return err_wrap(err, "could not restart %s; .env and the compose files are put back as they "
		       "were (if the role is down, `lobes serve --apply` brings it up)",
		       role_name(sr->role));
}

int switch_restart(struct sw_restart *sr, json_t *res, struct err **err)
{
	struct fleet fleet;
	if (fleet_load(&fleet, sr->dir, err) < 0)
		return undo_write(sr, res, err);
	uint64_t device = 0;
	_cleanup_free_ char *device_src = NULL;
	struct serve_rt s = { .services = { role_name(sr->role), NULL }, .event = progress,
			      .event_cls = sr };
	int rc = -1;
	json_t *boot = NULL, *probes = NULL, *again = NULL;
	_cleanup_free_ char *cause = NULL, *again_cause = NULL;
	if (device_memory(&device, &device_src, err) < 0 || serve_rt_open(&s, &fleet, err) < 0) {
		undo_write(sr, res, err);
		goto out;
	}
	sr->budget = (uint64_t)(fleet.roles[sr->role].util * (double)device);
	sr->stage = "new checkpoint";
	if (reboot(&s, sr, &boot, err) < 0) {
		undo_write(sr, res, err);
		goto close;
	}
	json_object_set_new(res, "boot", boot);
	if (json_is_true(json_object_get(boot, "ok"))) {
		fprintf(stderr, "lobes switch: %s: ready; asking its probes\n", role_name(sr->role));
		probes = ask(sr, fleet.roles[sr->role].port);
		json_object_set_new(res, "probes", probes);
		if (json_is_true(json_object_get(probes, "ok"))) {
			json_object_set_new(res, "restarted", json_true());
			rc = 0;
			goto close;
		}
	}
	/* roll back: the files byte for byte, the old checkpoint booted again */
	cause = probes ? xstrdup(jstr(probes, "reason")) : boot_cause(boot);
	json_object_set_new(res, "cause", json_string(cause));
	fprintf(stderr, "lobes switch: %s: %s; rolling back to %s\n", role_name(sr->role), cause,
		sr->old_model);
	if (deploy_saved_put(sr->dir, sr->before, err) < 0)
		goto close;
	json_object_set_new(res, "rolled_back", json_true());
	sr->stage = "rollback";
	if (reboot(&s, sr, &again, err) < 0)
		goto close;
	json_object_set_new(res, "rollback_boot", again);
	bool back = json_is_true(json_object_get(again, "ok"));
	again_cause = back ? NULL : boot_cause(again);
	rc = err_set(err, EXIT_CHECK, "switching %s to '%s' failed: %s; rolled back: .env and the "
		     "compose files are as they were%s%s%s", role_name(sr->role), sr->new_model, cause,
		     back ? ", and " : ", but the old checkpoint did not come up again: ",
		     back ? sr->old_model : again_cause, back ? " serves again" : "");
close:
	serve_rt_close(&s);
out:
	fleet_free(&fleet);
	secret_mask_json(res);
	return rc;
}
