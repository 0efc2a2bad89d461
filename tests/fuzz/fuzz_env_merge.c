/* fuzz_env_merge.c — the .env that `init --apply` writes over the operator's
 * (env_merge.c): the render with the operator's edited lines and comment
 * lines kept. Input: byte 0 picks which of the old file's keys count as
 * edited (bit i: the i-th key, cycling), then the render and the operator's
 * old .env separated by the first NUL (a render that does not end its last
 * line gets a newline, as lobes' own always does). Only a pair that both
 * parse is merged, and a render that writes each key once (as lobes' own
 * does). Invariants:
 *   - the merge parses as a .env;
 *   - no key is lost: every key of the render is there, with the
 *     operator's value when edited (or equal), else the render's; every
 *     edited key of the old file is there with the operator's value;
 *   - every comment line of the old file survives as a whole line;
 *   - merging again over its own output writes the same bytes (idempotent).
 * See fuzz.h. */
#include "../../src/lib/deploy/deploy.h"
#include "../../src/lib/deploy/deploy_int.h"
#include "../../src/lib/util/strv.h"
#include "fuzz.h"

#define OPERATOR_HEADER "# operator keys (kept by lobes init)"

/* Does text hold line l (n bytes) as a whole line? */
static bool has_line(const char *text, const char *l, size_t n)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len == n && memcmp(p, l, n) == 0)
			return true;
		if (!nl)
			break;
		p = nl + 1;
	}
	return false;
}

static void check_comments(const char *old_text, const char *merged)
{
	for (const char *p = old_text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		size_t i = 0;
		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		bool header = len == strlen(OPERATOR_HEADER) && !memcmp(p, OPERATOR_HEADER, len);
		if (i < len && p[i] == '#' && !header && !has_line(merged, p, len))
			abort();
		if (!nl)
			break;
		p = nl + 1;
	}
}

static void check_keys(const struct env_file *renv, const struct env_file *old,
		       char *const *edited, const struct env_file *m)
{
	for (size_t i = 0; i < renv->n; i++) {
		const char *k = renv->e[i].key, *got = env_get(m, k), *mine = env_get(old, k);
		const char *want = mine && (strv_has(edited, k) || !strcmp(mine, env_get(renv, k)))
					   ? mine
					   : env_get(renv, k);
		if (!got || strcmp(got, want) != 0)
			abort();
	}
	for (char *const *k = edited; k && *k; k++) {
		const char *got = env_get(m, *k);
		if (!got || strcmp(got, env_get(old, *k)) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned mask = data[0];
	const uint8_t *sep = memchr(data + 1, 0, size - 1);
	if (!sep)
		return 0;
	size_t rn = (size_t)(sep - (data + 1));
	_cleanup_free_ char *rendered = xasprintf("%.*s%s", (int)rn, (const char *)data + 1,
						  rn && data[rn] != '\n' ? "\n" : "");
	_cleanup_free_ char *old_text = fuzz_cstr(sep + 1, size - (size_t)(sep + 1 - data));
	if (strlen(old_text) != size - (size_t)(sep + 1 - data))
		return 0; /* a second NUL: the parser refuses it, as the program would */
	struct env_file renv = { 0 }, old = { 0 }, m1 = { 0 };
	if (env_parse(rendered, ".env", &renv, NULL) < 0)
		return 0;
	for (size_t i = 0; i < renv.n; i++)
		if (env_entry_get(&renv, renv.e[i].key) != &renv.e[i]) {
			env_file_free(&renv);
			return 0; /* the render writes each key once */
		}
	if (env_parse(old_text, ".env", &old, NULL) < 0) {
		env_file_free(&renv);
		return 0;
	}
	_cleanup_strv_ char **edited = NULL;
	for (size_t i = 0; i < old.n; i++)
		if ((mask >> (i % 8)) & 1 && !strv_has(edited, old.e[i].key))
			strv_push(&edited, old.e[i].key);
	_cleanup_free_ char *merged = env_merge(rendered, old_text, &old, edited, &renv);
	struct err *e = NULL;
	if (env_parse(merged, ".env", &m1, &e) < 0)
		abort(); /* the merge of two good files is a good file */
	check_keys(&renv, &old, edited, &m1);
	check_comments(old_text, merged);
	_cleanup_free_ char *again = env_merge(rendered, merged, &m1, edited, &renv);
	if (strcmp(again, merged) != 0)
		abort();
	env_file_free(&m1);
	env_file_free(&old);
	env_file_free(&renv);
	return 0;
}
