/* fuzz_probe.c — a role's answer to its probe (chat, embeddings, rerank
 * JSON). The first byte picks the role, the second the HTTP status class,
 * the rest is the body; the judged result is rendered as JSON. See fuzz.h. */
#include "../../src/lib/probe/probe.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	static const long status[] = { 200, 200, 200, 400, 404, 500, 503, 0 };
	struct probe p;
	probe_init(&p, (enum role_id)(data[0] % ROLE__COUNT), 8000, NULL);
	probe_judge(&p, status[data[1] % ARRAY_SIZE(status)], (const char *)data + 2, size - 2);
	json_t *j = probe_json(&p);
	json_decref(j);
	probe_free(&p);
	return 0;
}
