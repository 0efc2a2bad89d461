/*
 * trait.c — the trait schema: a knowledge unit keyed by cause. A predicate
 * (a conjunction of conditions over facts) selects knob settings for the
 * roles it names, with what to do when a fact is unknown, and the evidence
 * behind it.
 *
 *   kind: trait
 *   name: sm110-pooling-triton
 *   cause: ...                      roles: [embedder, reranker]
 *   when: [{fact: card.compute_cap, eq: "11.0"}, ...]
 *   on_unknown: apply|skip           assume: ...
 *   set: {attention_backend: TRITON_ATTN}
 *   bringup: one-at-a-time|together  dead_env: [..]  dead_env_replacement: ..
 *   overrides: [trait, ..]           evidence: [..]
 *
 * Condition values are checked against the fact they test (a role name for
 * role.name, a valid knob value for role.<knob>, ...) and stored in the same
 * canonical form as knob values, so "0.3" compares equal to a plan's "0.30".
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "../util/cleanup.h"
#include "../util/yaml_scalar.h"
#include "../util/fs.h"

static const char *const ops[] = { "eq", "ne", "in", "lt", "ge", NULL };
static const char fact_list[] =
	"card.id, card.compute_cap, card.memory_model, card.mem_gib, role.name, role.lane, "
	"role.model, role.attention_path, role.speculative_method, role.<knob>, checkpoint.kv_scales, "
	"checkpoint.quant_method, checkpoint.hetero_head_dim";

void trait_free(struct trait *t)
{
	free(t->name);
	pos_free(&t->pos);
	free(t->cause);
	for (size_t i = 0; i < t->n_when; i++) {
		free(t->when[i].fact);
		free(t->when[i].op);
		strv_free(t->when[i].values);
		pos_free(&t->when[i].pos);
	}
	free(t->when);
	free(t->on_unknown);
	free(t->assume);
	for (size_t i = 0; i < t->n_set; i++)
		free(t->set[i].value);
	free(t->set);
	free(t->bringup);
	strv_free(t->dead_env);
	free(t->dead_env_replacement);
	for (size_t i = 0; t->overrides_pos && t->overrides && t->overrides[i]; i++)
		pos_free(&t->overrides_pos[i]);
	free(t->overrides_pos);
	strv_free(t->overrides);
	evidence_free(t->evidence, t->n_evidence);
	memset(t, 0, sizeof(*t));
}

static bool decimal_ok(const char *s)
{
	bool digit = false, dot = false;
	if (*s == '-')
		s++;
	for (; *s; s++) {
		if (isdigit((unsigned char)*s))
			digit = true;
		else if (*s == '.' && !dot)
			dot = true;
		else
			return false;
	}
	return digit;
}

static bool env_ok(const char *s)
{
	if (!isupper((unsigned char)*s) && *s != '_')
		return false;
	for (; *s; s++)
		if (!isupper((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

static bool role_ok(const char *s)
{
	return role_from_name(s) >= 0;
}

static bool is_one_of(const char *s, const char *a, const char *b)
{
	return strcmp(s, a) == 0 || strcmp(s, b) == 0;
}

/* Is `fact` a known fact? *knob is set for role.<knob> (else -1);
 * *numeric tells whether lt/ge make sense on it. */
static bool fact_known(const char *fact, int *knob, bool *numeric)
{
	static const char *const plain[] = { "card.id",	     "card.compute_cap",      "card.memory_model",
					     "card.mem_gib", "role.name",	      "role.lane",
					     "role.model",   "role.attention_path",   "checkpoint.kv_scales",
					     "checkpoint.quant_method", "checkpoint.hetero_head_dim",
					     "role.speculative_method" };
	*knob = -1;
	*numeric = strcmp(fact, "card.compute_cap") == 0 || strcmp(fact, "card.mem_gib") == 0;
	for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
		if (strcmp(fact, plain[i]) == 0)
			return true;
	if (str_starts_with(fact, "role.") && (*knob = knob_from_name(fact + 5)) >= 0) {
		*numeric = *knob == KNOB_GPU_MEM_UTIL || *knob == KNOB_MAX_MODEL_LEN ||
			   *knob == KNOB_MAX_NUM_SEQS;
		return true;
	}
	return false;
}

/* Validate one value for fact/op; returns its canonical copy, or NULL with
 * *why ("what is wrong; expected WHAT", caller frees). */
static char *fact_value(const char *fact, int knob, const char *op, const char *v, char **why)
{
	if (!strcmp(op, "lt") || !strcmp(op, "ge")) {
		if (decimal_ok(v))
			return xstrdup(v);
		*why = xasprintf("'%s' value '%s' is not a number; expected a number", op, v);
		return NULL;
	}
	if (knob >= 0)
		return knob_value((enum knob_id)knob, v, why);
	bool ok;
	const char *expect;
	if (!strcmp(fact, "card.id")) {
		ok = name_ok(v);
		expect = NAME_EXPECT;
	} else if (!strcmp(fact, "card.compute_cap")) {
		ok = decimal_ok(v) && strchr(v, '.') && *v != '-';
		expect = "MAJOR.MINOR such as \"12.1\"";
	} else if (!strcmp(fact, "card.memory_model")) {
		ok = is_one_of(v, "unified", "discrete");
		expect = "unified or discrete";
	} else if (!strcmp(fact, "card.mem_gib")) {
		ok = decimal_ok(v);
		expect = "a number of GiB";
	} else if (!strcmp(fact, "role.name")) {
		ok = role_ok(v);
		expect = "one of cortex, senses, hand, embedder, reranker";
	} else if (!strcmp(fact, "role.lane")) {
		ok = is_one_of(v, "generate", "pooling");
		expect = "generate or pooling";
	} else if (!strcmp(fact, "role.attention_path")) {
		ok = upper_name_ok(v);
		expect = "an UPPER_CASE backend name such as TRITON_ATTN";
	} else if (!strcmp(fact, "checkpoint.kv_scales")) {
		ok = is_one_of(v, "present", "absent");
		expect = "present or absent";
	} else if (!strcmp(fact, "checkpoint.hetero_head_dim")) {
		ok = is_one_of(v, "true", "false");
		expect = "true or false";
	} else { /* role.model, role.speculative_method, checkpoint.quant_method */
		ok = true;
		for (const char *p = v; *p; p++)
			if (isspace((unsigned char)*p))
				ok = false;
		expect = "a value without spaces";
	}
	if (ok)
		return xstrdup(v);
	*why = xasprintf("'%s' value '%s' is invalid for %s; expected %s", op, v, fact, expect);
	return NULL;
}

static int parse_condition(const struct pctx *c, struct fy_node *m, struct fy_node *mkey,
			   struct condition *cd, struct err **err)
{
	static const char *const keys[] = { "fact", "eq", "ne", "in", "lt", "ge", NULL };
	const char *w = "a condition";
	if (map_check(c, m, mkey, "when", w, "key", keys, err) < 0 ||
	    ystr(c, m, mkey, "fact", w, true, fact_list, &cd->fact, err) < 0)
		return -1;
	pos_set(&cd->pos, c, m, mkey);
	struct yval fv = map_find(m, "fact");
	int knob;
	bool numeric;
	if (!fact_known(cd->fact, &knob, &numeric))
		return perr(c, fv.val, fv.key, err, "unknown fact '%s'; expected one of %s", cd->fact,
			    fact_list);
	struct yval ov = { NULL, NULL };
	for (size_t i = 0; ops[i]; i++) {
		struct yval v = map_find(m, ops[i]);
		if (!v.key)
			continue;
		if (ov.key)
			return perr(c, v.key, NULL, err,
				    "condition on '%s' has more than one operator; expected exactly one "
				    "of eq, ne, in, lt, ge",
				    cd->fact);
		ov = v;
		cd->op = xstrdup(ops[i]);
	}
	if (!ov.key)
		return perr(c, m, mkey, err,
			    "condition on '%s' has no operator; expected exactly one of eq, ne, in, lt, ge",
			    cd->fact);
	if ((!strcmp(cd->op, "lt") || !strcmp(cd->op, "ge")) && !numeric)
		return perr(c, ov.key, NULL, err,
			    "operator '%s' on non-numeric fact '%s'; expected eq, ne or in", cd->op,
			    cd->fact);
	if (!strcmp(cd->op, "in")) {
		if (ystrv(c, ov, "in", false, NULL, "invalid value", "a list of values", &cd->values, NULL,
			  err) < 0)
			return -1;
		if (!cd->values)
			return perr(c, ov.val, ov.key, err, "'in' is empty; expected a list of values");
		void *it = NULL;
		for (size_t i = 0; cd->values[i]; i++) {
			struct fy_node *e = fy_node_sequence_iterate(ov.val, &it);
			_cleanup_free_ char *why = NULL;
			char *canon = fact_value(cd->fact, knob, cd->op, cd->values[i], &why);
			if (!canon)
				return perr(c, e, ov.key, err, "%s", why);
			free(cd->values[i]);
			cd->values[i] = canon;
		}
		return 0;
	}
	const char *s;
	if (ytext(c, ov, cd->op, &s, err) < 0)
		return -1;
	if (!s)
		return perr(c, ov.val, ov.key, err, "'%s' is empty; expected a value", cd->op);
	_cleanup_free_ char *why = NULL;
	char *canon = fact_value(cd->fact, knob, cd->op, s, &why);
	if (!canon)
		return perr(c, ov.val, ov.key, err, "%s", why);
	cd->values = xcalloc(2, sizeof(char *));
	cd->values[0] = canon;
	return 0;
}

static int parse_when(const struct pctx *c, struct yval v, struct trait *t, struct err **err)
{
	if (!v.val || v.val == v.key || ynull(v.val))
		return 0;
	if (!fy_node_is_sequence(v.val))
		return perr(c, v.val, v.key, err, "'when' is %s; expected a list of conditions",
			    node_kind(v.val));
	int n = fy_node_sequence_item_count(v.val);
	t->when = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*t->when));
	void *it = NULL;
	struct fy_node *e;
	while ((e = fy_node_sequence_iterate(v.val, &it)) && t->n_when < (size_t)n) {
		/* counted before parsing so trait_free releases a half-filled one */
		struct condition *cd = &t->when[t->n_when++];
		if (parse_condition(c, e, v.key, cd, err) < 0)
			return -1;
	}
	return 0;
}

int trait_parse(const struct pctx *c, struct fy_node *root, struct trait *out, struct err **err)
{
	static const char *const keys[] = { "kind",	"name",	      "cause",	    "roles",
					    "when",	"on_unknown", "assume",	    "set",
					    "bringup", "dead_env",   "dead_env_replacement",
					    "overrides", "evidence", NULL };
	static const char *const unknown[] = { "apply", "skip", NULL };
	static const char *const bringup[] = { "one-at-a-time", "together", NULL };
	const char *w = "a trait";
	if (yhead(c, root, "trait", w, keys, &out->name, &out->pos, err) < 0)
		return -1;
	if (ystr(c, root, NULL, "cause", w, true, "a sentence naming the cause", &out->cause, err) < 0)
		return -1;
	_cleanup_strv_ char **roles = NULL;
	if (ystrv(c, map_find(root, "roles"), "roles", false, role_ok, "unknown role",
		  "one of cortex, senses, hand, embedder, reranker", &roles, NULL, err) < 0)
		return -1;
	for (size_t i = 0; roles && roles[i]; i++)
		out->roles_mask |= 1u << role_from_name(roles[i]);
	if (parse_when(c, map_find(root, "when"), out, err) < 0 ||
	    yenum(c, root, NULL, "on_unknown", w, false, unknown, &out->on_unknown, err) < 0 ||
	    ystr(c, root, NULL, "assume", w, false, "a sentence", &out->assume, err) < 0 ||
	    yknob_set(c, map_find(root, "set"), NULL, NULL, NULL, &out->set, &out->n_set, err) < 0 ||
	    yenum(c, root, NULL, "bringup", w, false, bringup, &out->bringup, err) < 0 ||
	    ystrv(c, map_find(root, "dead_env"), "dead_env", false, env_ok,
		  "invalid environment variable name", "UPPER_CASE environment variable names",
		  &out->dead_env, NULL, err) < 0 ||
	    ystr(c, root, NULL, "dead_env_replacement", w, false, "", &out->dead_env_replacement,
		 err) < 0 ||
	    ystrv(c, map_find(root, "overrides"), "overrides", false, name_ok, "invalid name",
		  NAME_EXPECT, &out->overrides, &out->overrides_pos, err) < 0 ||
	    yevidence(c, root, NULL, w, true, &out->evidence, &out->n_evidence, err) < 0)
		return -1;
	/* set: is read per role, bringup:/dead_env: once for the fleet
	 * (plan/resolve.c); one trait doing both would have half of it ignored */
	struct yval fleet = map_find(root, "bringup");
	if (!fleet.key)
		fleet = map_find(root, "dead_env");
	if (out->n_set && fleet.key)
		return perr(c, fleet.key, root, err,
			    "trait '%s' sets role knobs (set:) and fleet knobs (bringup:/dead_env:); "
			    "expected one or the other: split it into two traits",
			    out->name);
	if (!out->on_unknown)
		out->on_unknown = xstrdup("skip");
	return 0;
}
