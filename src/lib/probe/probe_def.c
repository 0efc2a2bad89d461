/*
 * probe_def.c — what each probe asks and how it is named: the fixed
 * questions (FACTS.md "Correctness probes") and the probe ids. Data and
 * names only, below both probe.c (requests) and probe_judge.c (verdicts),
 * which each read them, so the two do not call each other for them.
 */
#include "probe_int.h"

const char *const probe_embed_inputs[3] = {
	"The cat sat on the warm windowsill.",
	"A cat was resting on the sunny windowsill.",
	"Quarterly revenue exceeded analyst expectations.",
};
const char *const probe_rerank_query = "What is the capital of France?";
const char *const probe_rerank_docs[N_DOCS] = {
	"Bananas are rich in potassium and easy to digest.",
	"Paris is the capital and largest city of France.",
	"The Great Wall of China stretches across northern China.",
	"Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
};
const struct chat_probe probe_chat[ROLE__COUNT] = {
	[ROLE_CORTEX] = { "What is the capital city of France? Reply with only the city name.",
			  "paris", false },
	[ROLE_SENSES] = { "What color is a cloudless daytime sky? Answer with one word.", "blue",
			  false },
	/* The hand is small: a fact it knows for sure, judged strictly, since a
	 * corrupted generation may still contain the word ("Paris Paris<garbage>"). */
	[ROLE_HAND] = { "What is the capital of France? Reply with only the city name.", "paris",
			true },
};

const char *probe_id(enum role_id r)
{
	switch (r) {
	case ROLE_CORTEX: return "chat-capital";
	case ROLE_SENSES: return "chat-sky";
	case ROLE_HAND: return "chat-known-answer";
	case ROLE_EMBEDDER: return "embed-paraphrase";
	case ROLE_RERANKER: return "rerank-order";
	default: return "?";
	}
}

const char *probe_kind_id(enum role_id r, enum probe_kind k)
{
	switch (k) {
	case PK_TOOL_CALL: return "tool-call";
	case PK_REASONING: return "reasoning-split";
	default: return probe_id(r);
	}
}
