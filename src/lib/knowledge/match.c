/*
 * match.c — card detection: host facts against every card's signature.
 *
 * A card is a candidate only when one of its name markers is in the device
 * name (case-insensitive) or one of its device-tree markers is in the
 * device-tree model. A candidate is vetoed by any declared signal that is
 * known and disagrees: compute capability, the memory band, a device-tree
 * exclusion. An unknown fact vetoes nothing and agrees with nothing. Among
 * the survivors the one with the most agreeing signals (marker hits,
 * compute capability, memory band) wins; a tie is unknown, never a guess.
 * The decision comes with a sentence naming the facts behind it.
 */
#include <stdio.h>
#include <string.h>

#include "../facts/facts.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "knowledge.h"

struct verdict {
	const struct card *card;
	int score;  /* agreeing signals */
	char *why;  /* owned: the agreeing facts, or the veto */
	bool vetoed;
};

static const char *first_marker(char **markers, const struct fact *f)
{
	if (!markers || !f->valid)
		return NULL;
	for (char **m = markers; *m; m++)
		if (**m && str_icontains(f->value, *m))
			return *m;
	return NULL;
}

/* Judge one card; returns false when it is not even a candidate. */
static bool judge(const struct card *c, const struct host_facts *f, struct verdict *v)
{
	const char *nm = first_marker(c->name_markers, &f->gpu_name);
	const char *dm = first_marker(c->dt_markers, &f->dt_model);
	if (!nm && !dm)
		return false;
	memset(v, 0, sizeof(*v));
	v->card = c;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	if (nm) {
		buf_printf(&b, "device name \"%s\" matches marker \"%s\"", f->gpu_name.value, nm);
		v->score++;
	}
	if (dm) {
		buf_printf(&b, "%sdevice-tree model \"%s\" matches marker \"%s\"", nm ? "; " : "",
			   f->dt_model.value, dm);
		v->score++;
	}
	const char *ex = first_marker(c->dt_exclude, &f->dt_model);
	if (ex) {
		v->vetoed = true;
		v->why = xasprintf("device-tree model \"%s\" contains \"%s\", which %s excludes",
				   f->dt_model.value, ex, c->name);
		return true;
	}
	if (c->compute_cap) {
		int ma, mi, cma, cmi, n = 0;
		bool card_cc = sscanf(c->compute_cap, "%d.%d%n", &cma, &cmi, &n) == 2 &&
			       c->compute_cap[n] == '\0';
		if (!host_facts_cc(f, &ma, &mi)) {
			buf_printf(&b, "; compute capability unknown (not checked)");
		} else if (card_cc && ma == cma && mi == cmi) {
			buf_printf(&b, "; compute capability %s", f->compute_cap.value);
			v->score++;
		} else {
			v->vetoed = true;
			v->why = xasprintf("compute capability %s is not %s's %s", f->compute_cap.value,
					   c->name, c->compute_cap);
			return true;
		}
	}
	if (c->has_mem_band) {
		double gib;
		if (!host_facts_mem_gib(f, &gib)) {
			buf_printf(&b, "; memory unknown (not checked)");
		} else if (gib >= c->mem_min_gib && gib <= c->mem_max_gib) {
			buf_printf(&b, "; memory %.1f GiB within %g-%g", gib, c->mem_min_gib,
				   c->mem_max_gib);
			v->score++;
		} else {
			v->vetoed = true;
			v->why = xasprintf("memory %.1f GiB is outside %s's %g-%g GiB", gib, c->name,
					   c->mem_min_gib, c->mem_max_gib);
			return true;
		}
	}
	v->why = buf_take(&b);
	return true;
}

/* "device name "X" (compute capability 9.0, memory 79.6 GiB)" — the facts a
 * card would have been matched on, for the unknown sentence. */
static void describe_facts(struct buf *b, const struct host_facts *f)
{
	double gib;
	if (f->gpu_name.valid)
		buf_printf(b, "device name \"%s\"", f->gpu_name.value);
	else
		buf_adds(b, "device name unknown");
	if (f->dt_model.valid)
		buf_printf(b, ", device-tree model \"%s\"", f->dt_model.value);
	else
		buf_adds(b, ", device-tree model unknown");
	if (f->compute_cap.valid)
		buf_printf(b, ", compute capability %s", f->compute_cap.value);
	if (host_facts_mem_gib(f, &gib))
		buf_printf(b, ", memory %.1f GiB", gib);
}

const struct card *card_match(const struct knowledge *k, const struct host_facts *f, char **why)
{
	size_t n = k ? k->n_cards : 0;
	struct verdict *vs = xcalloc(n ? n : 1, sizeof(*vs));
	size_t nv = 0;
	for (size_t i = 0; i < n; i++)
		if (judge(&k->cards[i], f, &vs[nv]))
			nv++;

	const struct verdict *best = NULL, *tie = NULL;
	for (size_t i = 0; i < nv; i++) {
		if (vs[i].vetoed)
			continue;
		if (!best || vs[i].score > best->score) {
			best = &vs[i];
			tie = NULL;
		} else if (vs[i].score == best->score) {
			tie = &vs[i];
		}
	}

	const struct card *result = NULL;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	if (best && !tie) {
		result = best->card;
		buf_adds(&b, best->why);
	} else if (best) {
		buf_printf(&b, "cards \"%s\" and \"%s\" both match with %d agreeing signals (%s / %s); "
			       "not guessing",
			   best->card->name, tie->card->name, best->score, best->why, tie->why);
	} else {
		buf_adds(&b, "no card matches: ");
		describe_facts(&b, f);
		for (size_t i = 0; i < nv; i++)
			buf_printf(&b, "; not %s: %s", vs[i].card->name, vs[i].why);
	}
	for (size_t i = 0; i < nv; i++)
		free(vs[i].why);
	free(vs);
	if (why)
		*why = buf_take(&b);
	return result;
}
