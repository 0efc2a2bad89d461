/*
 * keys.c — `lobes keys add|list|revoke|rotate`: the gateway's named API keys
 * in DIR/keys.yaml (src/lib/gateway/keys.h, keys_file.c).
 *
 * add and rotate make a new key and print it once: alone on stdout, or into
 * the new file --out names (0600); the deploy dir keeps only its SHA-256.
 * Nothing else this command prints (text, --json, errors) holds a key. A
 * gateway of the deploy dir that runs with its pid file (`lobes serve
 * --apply`) is sent SIGHUP after a change, so it applies at once; another
 * one (systemd) needs `systemctl reload`.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/gateway/gateway.h"
#include "../lib/runtime/runtime.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/fs.h"
#include "cmd.h"

static int parse_count(struct ctx *ctx, const char *opt, const char *v, long *out)
{
	char *end;
	long n = strtol(v, &end, 10);
	if (end == v || *end || n < 1 || n > 1000000000L)
		return cmd_usage_error(ctx, "%s '%s': expected a whole number 1-1000000000", opt, v);
	*out = n;
	return 0;
}

static json_t *key_json(const struct gw_key *k)
{
	json_t *roles = json_array();
	for (int r = 0; r < ROLE__COUNT; r++)
		if (k->roles & (1u << r))
			json_array_append_new(roles, json_string(role_name((enum role_id)r)));
	return json_pack("{s:s, s:o, s:I, s:I, s:I, s:b}", "name", k->name, "roles", roles,
			 "requests_per_minute", (json_int_t)k->rpm, "tokens_per_minute",
			 (json_int_t)k->tpm, "concurrent", (json_int_t)k->concurrent, "peer", k->peer);
}

static int list(struct ctx *ctx)
{
	struct err *e = NULL;
	struct gw_keys *ks = gw_keys_read_dir(ctx->dir, &e);
	if (!ks)
		return cmd_fail(ctx, e);
	_cleanup_free_ char *dk = xasprintf("%s/gateway.key", ctx->dir);
	bool dflt = fs_exists(dk);
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < ks->n_named; i++)
			json_array_append_new(arr, key_json(&ks->v[i]));
		json_t *o = json_pack("{s:o, s:b}", "keys", arr, "default_key", dflt);
		out_json(o);
		json_decref(o);
	} else {
		printf("%-24s %-28s %8s %10s %10s %s\n", "NAME", "ROLES", "RPM", "TPM", "CONCURRENT", "PEER");
		for (size_t i = 0; i < ks->n_named; i++) {
			const struct gw_key *k = &ks->v[i];
			char roles[64] = "all", n[3][24];
			if (k->roles) {
				roles[0] = 0;
				for (int r = 0; r < ROLE__COUNT; r++)
					if (k->roles & (1u << r))
						snprintf(roles + strlen(roles), sizeof(roles) - strlen(roles), "%s%s",
							 *roles ? "," : "", role_name((enum role_id)r));
			}
			long v[3] = { k->rpm, k->tpm, k->concurrent };
			for (int j = 0; j < 3; j++)
				snprintf(n[j], sizeof(n[j]), v[j] ? "%ld" : "-", v[j]);
			printf("%-24s %-28s %8s %10s %10s %s\n", k->name, roles, n[0], n[1], n[2],
			       k->peer ? "yes" : "no");
		}
		if (dflt)
			printf("%-24s %-28s %8s %10s %10s %s\n", "default (gateway.key)", "all", "-", "-", "-",
			       "(see docs/gateway.md)");
		if (!ks->n_named && !dflt)
			printf("no keys: the gateway takes requests without one (loopback only)\n");
	}
	gw_keys_free(ks);
	return 0;
}

/* After a change: SIGHUP to the deploy dir's own gateway, if one runs. */
static const char *reload(const char *dir)
{
	struct bgproc p = { 0 };
	struct err *e = NULL;
	const char *what = "none";
	if (bgproc_read(&p, dir, BGPROC_GATEWAY, &e) == 0 && p.pid > 0)
		what = bgproc_reload(&p, &e) == 0 ? "sent" : "failed";
	err_free(e);
	bgproc_free(&p);
	return what;
}

static int change(struct ctx *ctx, struct gw_keys_edit *ed, const char *out)
{
	static const char *const verb[] = { "added", "revoked", "rotated" };
	struct err *e = NULL;
	_cleanup_free_ char *outp = out ? xstrdup(out) : NULL;
	if (outp && fs_exists(outp)) {
		err_set(&e, EXIT_USAGE, "--out '%s' exists; expected a new file", outp);
		return cmd_fail(ctx, e);
	}
	if (ed->op == GW_KEYS_REVOKE && outp)
		return cmd_usage_error(ctx, "--out is for add and rotate");
	if (ctx->json && ed->op != GW_KEYS_REVOKE && !outp)
		return cmd_usage_error(ctx, "--json needs --out FILE: the new key is never part of --json");
	char *secret = NULL;
	if (gw_keys_apply(ctx->dir, ed, &secret, &e) < 0)
		return cmd_fail(ctx, e);
	int rc = 0;
	if (secret && outp) {
		_cleanup_free_ char *line = xasprintf("%s\n", secret);
		if (fs_write_atomic(outp, line, strlen(line), 0600, &e) < 0)
			rc = cmd_fail(ctx, e); /* the hash is stored: rotate again to get a key */
		explicit_bzero(line, strlen(line));
	} else if (secret) {
		printf("%s\n", secret);
	}
	if (secret) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
	if (rc)
		return rc;
	const char *hup = reload(ctx->dir);
	if (ctx->json) {
		json_t *o = json_pack("{s:s, s:s, s:s?, s:s}", "name", ed->name, "action",
				      verb[ed->op], "key_file", outp, "gateway_reload", hup);
		out_json(o);
		json_decref(o);
	} else {
		fprintf(outp ? stdout : stderr, "key '%s' %s: %s/keys.yaml%s%s; %s\n", ed->name,
			verb[ed->op], ctx->dir, outp ? "; the key is in " : "", outp ? outp : "",
			!strcmp(hup, "sent") ? "the gateway was told to reload (SIGHUP)"
					     : "reload the gateway to apply it (SIGHUP, `lobes serve --apply`, "
					       "or systemctl reload)");
	}
	return 0;
}

CMD(keys)
{
	struct gw_keys_edit ed = { 0 };
	const char *out = NULL;
	static const struct option opts[] = { { "roles", required_argument, NULL, 'r' },
					      { "rpm", required_argument, NULL, 'R' },
					      { "tpm", required_argument, NULL, 'T' },
					      { "concurrent", required_argument, NULL, 'C' },
					      { "peer", no_argument, NULL, 'P' },
					      { "out", required_argument, NULL, 'o' },
					      { NULL, 0, NULL, 0 } };
	int o;
	bool limits = false;
	while ((o = getopt_long(argc, argv, "r:o:", opts, NULL)) != -1) {
		switch (o) {
		case 'r': ed.roles = optarg; limits = true; break;
		case 'R': if (parse_count(ctx, "--rpm", optarg, &ed.rpm)) return EXIT_USAGE; limits = true; break;
		case 'T': if (parse_count(ctx, "--tpm", optarg, &ed.tpm)) return EXIT_USAGE; limits = true; break;
		case 'C': if (parse_count(ctx, "--concurrent", optarg, &ed.concurrent)) return EXIT_USAGE; limits = true; break;
		case 'P': ed.peer = true; limits = true; break;
		case 'o': out = optarg; break;
		default: return cmd_usage_error(ctx, "unknown option");
		}
	}
	if (optind >= argc)
		return cmd_usage_error(ctx, "expected add, list, revoke or rotate");
	const char *sub = argv[optind++];
	if (!strcmp(sub, "list")) {
		if (optind < argc || limits || out)
			return cmd_usage_error(ctx, "list takes no argument or option but --json");
		return list(ctx);
	}
	if (!strcmp(sub, "add"))
		ed.op = GW_KEYS_ADD;
	else if (!strcmp(sub, "revoke"))
		ed.op = GW_KEYS_REVOKE;
	else if (!strcmp(sub, "rotate"))
		ed.op = GW_KEYS_ROTATE;
	else
		return cmd_usage_error(ctx, "'%s': expected add, list, revoke or rotate", sub);
	if (optind + 1 != argc)
		return cmd_usage_error(ctx, "%s takes one key NAME", sub);
	if (limits && ed.op != GW_KEYS_ADD)
		return cmd_usage_error(ctx, "--roles, --rpm, --tpm, --concurrent and --peer are for add");
	ed.name = argv[optind];
	return change(ctx, &ed, out);
}
