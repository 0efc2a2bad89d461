/*
 * detect.c — `lobes detect`: the host facts, each with its source, and the
 * card they resolve to.
 *
 * The result is one JSON object, {"facts": {NAME: {value, source, valid}},
 * "notes": [...], "gpu_detected": bool, "card": {id, status, profile, why}},
 * printed as is for --json or as text. An unknown card is not an error: it
 * names the facts, warns, and says the conservative `base` profile is used.
 * Exit 0 whenever the facts could be gathered and the knowledge loaded.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/facts/facts.h"
#include "../lib/knowledge/knowledge.h"
#include "../lib/util/cleanup.h"
#include "cmd.h"

#define BASE_PROFILE "base"

/* The facts in print order, with what is tried for each (for "unknown"). */
static const struct {
	const char *key;
	const char *tried;
} rows[] = {
	{ "gpu_name", "NVML, nvidia-smi" },
	{ "compute_cap", "NVML, nvidia-smi" },
	{ "mem_total", "NVML total (discrete), /proc/meminfo MemTotal (unified)" },
	{ "memory_model", "Tegra device-tree model, device name, NVML memory query" },
	{ "dt_model", "/proc/device-tree/model" },
	{ "l4t_release", "/etc/nv_tegra_release" },
	{ "driver", "NVML, /proc/driver/nvidia/version" },
	{ "hostname", "/etc/hostname, gethostname" },
};

/* Build the result object (new reference) from gathered facts and the
 * matched card (NULL = unknown; why is card_match's sentence). */
static json_t *build(const struct host_facts *f, const struct card *c, const char *why)
{
	json_t *notes = json_array();
	for (char **n = f->notes; n && *n; n++)
		json_array_append_new(notes, json_string(*n));
	json_t *card;
	if (c) {
		card = json_pack("{s:s, s:s, s:s, s:s}", "id", c->name, "status",
				 c->status ? c->status : "unknown", "profile",
				 c->profile ? c->profile : c->name, "why", why);
	} else {
		_cleanup_free_ char *warn = xasprintf(
			"this machine does not match a known card; lobes will use the conservative "
			"'%s' profile, not a validated one",
			BASE_PROFILE);
		card = json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", "unknown", "status", "unknown",
				 "profile", BASE_PROFILE, "why", why, "warning", warn);
	}
	return json_pack("{s:o, s:o, s:b, s:o}", "facts", host_facts_json(f), "notes", notes,
			 "gpu_detected", f->gpu_name.valid, "card", card);
}

/* "130674... bytes (121.7 GiB)" for a decimal byte count. */
static char *mem_text(const char *v)
{
	char *end;
	unsigned long long b = strtoull(v, &end, 10);
	if (*end || !b)
		return xstrdup(v);
	return xasprintf("%s bytes (%.1f GiB)", v, (double)b / (1024.0 * 1024.0 * 1024.0));
}

static void print_text(const struct ctx *ctx, const json_t *r)
{
	const json_t *facts = json_object_get(r, "facts");
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const json_t *fj = json_object_get(facts, rows[i].key);
		printf("%s%-13s%s ", c_bold(ctx), rows[i].key, c_reset(ctx));
		if (json_is_true(json_object_get(fj, "valid"))) {
			const char *v = jstr(fj, "value");
			_cleanup_free_ char *shown =
				strcmp(rows[i].key, "mem_total") == 0 ? mem_text(v) : xstrdup(v);
			printf("%s  %s(%s)%s\n", shown, c_dim(ctx), jstr(fj, "source"), c_reset(ctx));
		} else {
			printf("%sunknown%s  %s(tried %s)%s\n", c_yellow(ctx), c_reset(ctx), c_dim(ctx),
			       rows[i].tried, c_reset(ctx));
		}
	}
	const json_t *notes = json_object_get(r, "notes");
	if (json_array_size(notes)) {
		printf("\ntried and failed:\n");
		size_t i;
		const json_t *n;
		json_array_foreach(notes, i, n)
			printf("  %s\n", json_string_value(n));
	}
	printf("\n");
	if (!json_is_true(json_object_get(r, "gpu_detected")))
		printf("no NVIDIA GPU was detected (neither NVML nor nvidia-smi named a device)\n");
	const json_t *card = json_object_get(r, "card");
	const char *id = jstr(card, "id");
	if (strcmp(id, "unknown") != 0) {
		printf("card: %s%s%s (%s) — %s\n", c_green(ctx), id, c_reset(ctx), jstr(card, "status"),
		       jstr(card, "why"));
	} else {
		printf("card: %sunknown%s — %s — lobes will use the conservative %s profile\n",
		       c_yellow(ctx), c_reset(ctx), jstr(card, "why"), jstr(card, "profile"));
		fprintf(stderr, "lobes detect: warning: %s\n", jstr(card, "warning"));
	}
	printf("profile: %s\n", jstr(card, "profile"));
}

CMD(detect)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") != 0)
			return cmd_usage_error(ctx, "unexpected argument '%s'", argv[i]);

	struct err *e = NULL;
	struct facts_opts o;
	facts_opts_from_env(&o);
	struct host_facts f;
	if (host_facts_gather(&f, &o, &e) < 0) {
		host_facts_free(&f);
		return cmd_fail(ctx, e);
	}
	struct knowledge k = { 0 };
	_cleanup_free_ char *opdir = xasprintf("%s/profiles", ctx->dir);
	if (knowledge_load(&k, opdir, &e) < 0) { /* k is freed on failure */
		host_facts_free(&f);
		return cmd_fail(ctx, e);
	}
	_cleanup_free_ char *why = NULL;
	const struct card *c = card_match(&k, &f, &why);
	json_t *r = build(&f, c, why);
	if (ctx->json)
		out_json(r);
	else
		print_text(ctx, r);
	json_decref(r);
	knowledge_free(&k);
	host_facts_free(&f);
	return 0;
}
