/* fuzz_signatures.c — an operator signature file
 * (<deploy-dir>/signatures/NAME.yaml): yaml_guard, libfyaml, the schema
 * reader and the PCRE2 compile of its regexes. See fuzz.h. */
#include "../../src/lib/triage/triage.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sigset s = { 0 };
	struct err *e = NULL;
	int rc = sigset_add_yaml(&s, "f.yaml", (const char *)data, size, true, &e);
	fuzz_check_err(rc, e);
	sigset_free(&s);
	return 0;
}
