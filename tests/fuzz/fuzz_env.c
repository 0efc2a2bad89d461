/* fuzz_env.c — a deploy dir's .env, which the operator edits by hand: the
 * parser, and a lookup of every key it read. See fuzz.h. */
#include "../../src/lib/deploy/deploy.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *text = fuzz_cstr(data, size);
	struct env_file f = { 0 };
	struct err *e = NULL;
	int rc = env_parse(text, ".env", &f, &e);
	fuzz_check_err(rc, e);
	for (size_t i = 0; rc == 0 && i < f.n; i++)
		if (!env_get(&f, f.e[i].key))
			abort();
	env_file_free(&f);
	return 0;
}
