/* fuzz_triage.c — a boot log fed to triage (the shipped signatures, loaded
 * once) in reads of a size taken from the first byte, as `triage --follow`
 * and the Engine API log stream feed it. See fuzz.h. */
#include "../../src/lib/triage/triage.h"
#include "fuzz.h"

static struct sigset set;
static bool loaded;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!loaded) {
		struct err *e = NULL;
		if (sigset_load(&set, NULL, &e) < 0)
			abort();
		loaded = true;
	}
	if (size < 1)
		return 0;
	struct triage *t = triage_new(&set, data[0] & 1 ? TRIAGE_KEEP_ALL : 0);
	if (data[0] & 2)
		triage_set_version(t, "0.11.1");
	size_t step = (size_t)(data[0] >> 2) * 8 + 1;
	for (size_t i = 1; i < size; i += step) {
		triage_feed(t, (const char *)data + i, size - i < step ? size - i : step);
		if ((i / step) % 3 == 2)
			triage_flush(t); /* what --follow does when no input comes */
	}
	triage_finish(t);
	size_t n = 0;
	triage_matches(t, &n);
	triage_cause(t);
	const struct triage_match *c[8];
	triage_causes(t, c, 8);
	struct triage_root r[4];
	triage_roots(t, r, 4);
	struct triage_notes notes;
	triage_get_notes(t, &notes);
	triage_free(t);
	return 0;
}
