/*
 * words.c — bench's prompts without a tokenizer: N words drawn from
 * data/bench/words.txt (common words, each about one token in the usual
 * vocabularies) by a seeded generator, so the same seed, request index and
 * length give the same prompt on any box. The real token counts are the
 * engine's `usage`; the word count only makes the lengths reproducible.
 */
#include <stdint.h>
#include <string.h>

#include "../util/buf.h"
#include "measure.h"
#include "measure_int.h"

#define WORDS_PATH "data/bench/words.txt"
#define MAX_WORDS 4096

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

const char *const *measure_words(size_t *n, struct err **err)
{
	/* parsed once; the embedded data never changes */
	static char *copy;
	static const char *words[MAX_WORDS];
	static size_t count;

	if (!count) {
		const char *data = measure_data(WORDS_PATH, NULL);
		if (!data) {
			err_set(err, EXIT_INTERNAL, "'%s' is not in the binary", WORDS_PATH);
			return NULL;
		}
		free(copy);
		copy = xstrdup(data);
		char *save = NULL;
		for (char *line = strtok_r(copy, "\n", &save); line && count < MAX_WORDS;
		     line = strtok_r(NULL, "\n", &save))
			if (*line && *line != '#')
				words[count++] = line;
		if (!count) {
			err_set(err, EXIT_INTERNAL, "'%s' holds no word", WORDS_PATH);
			return NULL;
		}
	}
	*n = count;
	return words;
}

char *bench_prompt(unsigned long seed, long i, int n, struct err **err)
{
	size_t nw;
	const char *const *words = measure_words(&nw, err);
	if (!words)
		return NULL;
	uint64_t s = (uint64_t)seed * 0x100000001b3ULL ^ (uint64_t)i;
	struct buf b;
	buf_init(&b, 0);
	for (int k = 0; k < n; k++)
		buf_printf(&b, "%s%s", k ? " " : "", words[splitmix(&s) % nw]);
	return buf_take(&b);
}
