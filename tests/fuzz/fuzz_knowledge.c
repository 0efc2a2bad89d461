/* fuzz_knowledge.c — a knowledge file (card, trait, profile, defaults) as an
 * operator drops it in <deploy-dir>/profiles/: yaml_guard, libfyaml, the
 * strict schema readers. See fuzz.h. */
#include "../../src/lib/knowledge/knowledge.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct knowledge k = { 0 };
	struct err *e = NULL;
	int rc = knowledge_add_yaml(&k, "f.yaml", (const char *)data, size, true, &e);
	fuzz_check_err(rc, e);
	if (rc == 0) {
		e = NULL;
		rc = knowledge_check(&k, &e);
		fuzz_check_err(rc, e);
	}
	knowledge_free(&k);
	return 0;
}
