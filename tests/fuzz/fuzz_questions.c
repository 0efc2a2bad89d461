/* fuzz_questions.c — an operator question file
 * (<deploy-dir>/questions/NAME.yaml). See fuzz.h. */
#include "../../src/lib/verify/verify.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct question_set q = { 0 };
	struct err *e = NULL;
	int rc = question_add_yaml(&q, "f.yaml", (const char *)data, size, &e);
	fuzz_check_err(rc, e);
	questions_free(&q);
	return 0;
}
