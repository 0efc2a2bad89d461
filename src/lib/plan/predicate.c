/*
 * predicate.c — trait predicates over facts, three-valued, and the attention
 * path a role will take. One definition used by the plan (over the values a
 * profile gives) and by doctor (over the values a deploy dir holds).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "plan.h"

/* The value of a predicate fact, or NULL when unknown. A number is written
 * into numbuf; a value read out of JSON is copied whole into *owned (the
 * caller frees it): a fixed buffer would cut a long one short, and its
 * prefix would then compare equal to a condition value. */
static const char *view_get(const struct fact_view *v, const char *name, char numbuf[32],
			    char **owned)
{
	const struct host_facts *f = v->facts;
	if (strcmp(name, "card.id") == 0)
		return v->card ? v->card->name : NULL;
	if (strcmp(name, "card.compute_cap") == 0)
		return f->compute_cap.valid ? f->compute_cap.value : NULL;
	if (strcmp(name, "card.memory_model") == 0)
		return f->memory_model.valid ? f->memory_model.value
		       : v->card	     ? v->card->memory_model
					     : NULL;
	if (strcmp(name, "card.mem_gib") == 0) {
		double g;
		if (!host_facts_mem_gib(f, &g))
			return NULL;
		snprintf(numbuf, 32, "%.1f", g);
		return numbuf;
	}
	if (v->role < 0)
		return NULL;
	enum role_id r = (enum role_id)v->role;
	const struct checkpoint_facts *ck = v->ckpt;
	if (strcmp(name, "role.name") == 0)
		return role_name(r);
	if (strcmp(name, "role.lane") == 0)
		return lane_name(role_lane(r));
	if (strcmp(name, "role.attention_path") == 0)
		return v->attention_path;
	if (strcmp(name, "role.speculative_method") == 0) {
		/* the "method" of speculative_config; "none" without one */
		const char *sc = v->knobs[KNOB_SPECULATIVE_CONFIG];
		if (!sc)
			return NULL;
		if (strcmp(sc, "none") == 0)
			return "none";
		json_auto_t *j = json_loads(sc, 0, NULL);
		const char *m = json_string_value(json_object_get(j, "method"));
		if (!m)
			return NULL;
		*owned = xstrdup(m);
		return *owned;
	}
	if (strcmp(name, "checkpoint.kv_scales") == 0)
		return !ck ? NULL : ck->kv_scales == TRI_TRUE ? "present"
				: ck->kv_scales == TRI_FALSE ? "absent"
							     : NULL;
	if (strcmp(name, "checkpoint.quant_method") == 0)
		return ck && ck->found ? (ck->quant_method ? ck->quant_method : "none") : NULL;
	if (strcmp(name, "checkpoint.hetero_head_dim") == 0)
		return !ck || ck->hetero_head_dim == TRI_UNKNOWN ? NULL : tri_name(ck->hetero_head_dim);
	if (str_starts_with(name, "role.")) {
		int k = knob_from_name(name + 5);
		if (k >= 0)
			return v->knobs[k];
	}
	return NULL;
}

static enum tri eval_condition(const struct fact_view *fv, const struct condition *cond,
			       struct buf *detail)
{
	char numbuf[32];
	_cleanup_free_ char *owned = NULL;
	const char *v = view_get(fv, cond->fact, numbuf, &owned);
	enum tri t;
	if (!v) {
		t = TRI_UNKNOWN;
	} else if (strcmp(cond->op, "eq") == 0 || strcmp(cond->op, "in") == 0 ||
		   strcmp(cond->op, "ne") == 0) {
		bool hit = false;
		for (char **x = cond->values; x && *x; x++)
			if (strcmp(*x, v) == 0)
				hit = true;
		t = (strcmp(cond->op, "ne") == 0 ? !hit : hit) ? TRI_TRUE : TRI_FALSE;
	} else {
		double a, b;
		if (!cond->values || !cond->values[0] || !str_to_double(v, &a) ||
		    !str_to_double(cond->values[0], &b))
			t = TRI_UNKNOWN;
		else if (strcmp(cond->op, "lt") == 0)
			t = a < b ? TRI_TRUE : TRI_FALSE;
		else
			t = a >= b ? TRI_TRUE : TRI_FALSE;
	}
	if (detail->len)
		buf_adds(detail, "; ");
	buf_printf(detail, "%s = %s (%s", cond->fact, v ? v : "unknown", cond->op);
	for (char **x = cond->values; x && *x; x++)
		buf_printf(detail, " %s", *x);
	buf_printf(detail, ": %s)", tri_name(t));
	return t;
}

enum tri trait_predicate(const struct trait *t, const struct fact_view *v, char **detail)
{
	_cleanup_buf_ struct buf d;
	buf_init(&d, 0);
	enum tri all = TRI_TRUE;
	for (size_t i = 0; i < t->n_when; i++) {
		enum tri x = eval_condition(v, &t->when[i], &d);
		if (x == TRI_FALSE)
			all = TRI_FALSE;
		else if (x == TRI_UNKNOWN && all == TRI_TRUE)
			all = TRI_UNKNOWN;
	}
	if (!t->n_when)
		buf_adds(&d, "no conditions (always holds)");
	*detail = buf_take(&d);
	return all;
}

bool trait_applies(const struct trait *t, enum tri truth)
{
	return truth == TRI_TRUE ||
	       (truth == TRI_UNKNOWN && t->on_unknown && strcmp(t->on_unknown, "apply") == 0);
}

char *attention_path_derive(const struct card *card, enum role_id r, const char *backend,
			    enum tri hetero, char **why)
{
	enum lane l = role_lane(r);
	if (backend && strcmp(backend, "auto") != 0) {
		*why = xstrdup("set explicitly with --attention-config");
		return xstrdup(backend);
	}
	if (hetero == TRI_TRUE) {
		*why = xstrdup("heterogeneous head dimensions force TRITON_ATTN (FA4 not available)");
		return xstrdup("TRITON_ATTN");
	}
	if (card && card->attention_path[l]) {
		*why = xasprintf("card %s auto-selects it for the %s lane", card->name, lane_name(l));
		return xstrdup(card->attention_path[l]);
	}
	*why = xstrdup(card ? "the card declares no attention path for this lane"
			    : "the card is unknown, so the auto-selected backend is unknown");
	return NULL;
}
