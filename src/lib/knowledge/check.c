/*
 * check.c — what holds across knowledge files once all are read: every name
 * a card, trait or profile refers to exists (each error at the position of
 * the reference), the roles a profile orders are known and listed once,
 * and the serving check of images.c; plus the lookups by name and freeing.
 */
#include <string.h>

#include "parse.h"
#include "../util/cleanup.h"

int knowledge_check(const struct knowledge *k, struct err **err)
{
	for (size_t i = 0; i < k->n_cards; i++) {
		const struct card *c = &k->cards[i];
		if (c->profile && !knowledge_profile(k, c->profile))
			return pos_err(c->profile_pos.file ? &c->profile_pos : &c->pos, err,
				       "card '%s' names unknown profile '%s'; expected the name of a profile",
				       c->name, c->profile);
	}
	for (size_t i = 0; i < k->n_traits; i++) {
		const struct trait *t = &k->traits[i];
		for (size_t j = 0; t->overrides && t->overrides[j]; j++)
			if (!knowledge_trait(k, t->overrides[j]))
				return pos_err(t->overrides_pos ? &t->overrides_pos[j] : &t->pos, err,
					       "trait '%s' overrides unknown trait '%s'; expected the name "
					       "of a trait",
					       t->name, t->overrides[j]);
	}
	for (size_t i = 0; i < k->n_profiles; i++) {
		const struct profile *p = &k->profiles[i];
		if (p->card && strcmp(p->card, "any") != 0 && !knowledge_card(k, p->card))
			return pos_err(p->card_pos.file ? &p->card_pos : &p->pos, err,
				       "profile '%s' names unknown card '%s'; expected the name of a card "
				       "or any",
				       p->name, p->card);
		for (size_t j = 0; p->traits && p->traits[j]; j++)
			if (!knowledge_trait(k, p->traits[j]))
				return pos_err(p->traits_pos ? &p->traits_pos[j] : &p->pos, err,
					       "profile '%s' lists unknown trait '%s'; expected the name "
					       "of a trait",
					       p->name, p->traits[j]);
		unsigned seen = 0;
		for (size_t j = 0; p->order && p->order[j]; j++) {
			const struct src_pos *at = p->order_pos ? &p->order_pos[j] : &p->pos;
			int r = role_from_name(p->order[j]);
			if (r < 0)
				return pos_err(at, err,
					       "profile '%s' orders unknown role '%s'; expected one of "
					       "cortex, senses, hand, embedder, reranker",
					       p->name, p->order[j]);
			if (seen & (1u << r))
				return pos_err(at, err,
					       "profile '%s' orders role '%s' twice; expected each role "
					       "once",
					       p->name, p->order[j]);
			seen |= 1u << r;
		}
	}
	if (knowledge_check_serving(k, err) < 0)
		return -1;
	return knowledge_check_families(k, err);
}

const struct card *knowledge_card(const struct knowledge *k, const char *name)
{
	for (size_t i = 0; k && name && i < k->n_cards; i++)
		if (strcmp(k->cards[i].name, name) == 0)
			return &k->cards[i];
	return NULL;
}

const struct trait *knowledge_trait(const struct knowledge *k, const char *name)
{
	for (size_t i = 0; k && name && i < k->n_traits; i++)
		if (strcmp(k->traits[i].name, name) == 0)
			return &k->traits[i];
	return NULL;
}

const struct profile *knowledge_profile(const struct knowledge *k, const char *name)
{
	for (size_t i = 0; k && name && i < k->n_profiles; i++)
		if (strcmp(k->profiles[i].name, name) == 0)
			return &k->profiles[i];
	return NULL;
}

void knowledge_free(struct knowledge *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n_cards; i++)
		card_free(&k->cards[i]);
	free(k->cards);
	for (size_t i = 0; i < k->n_traits; i++)
		trait_free(&k->traits[i]);
	free(k->traits);
	for (size_t i = 0; i < k->n_profiles; i++)
		profile_free(&k->profiles[i]);
	free(k->profiles);
	for (size_t i = 0; i < k->n_images; i++)
		vimage_free(&k->images[i]);
	free(k->images);
	for (size_t i = 0; i < k->n_families; i++)
		family_free(&k->families[i]);
	free(k->families);
	for (int r = 0; r < ROLE__COUNT; r++)
		role_spec_free(&k->defaults[r]);
	pos_free(&k->defaults_pos);
	memset(k, 0, sizeof(*k));
}
