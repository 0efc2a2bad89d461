/* fuzz_hf_config.c — a Hugging Face checkpoint's config.json as found in
 * the local cache: the input is written as the snapshot's config.json in a
 * private temporary hub (made once, removed at exit) and read the way
 * detection reads it. See fuzz.h. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/facts/facts.h"
#include "fuzz.h"

static char hub[4096];
static char cfg[4300];

static void cleanup(void)
{
	char p[4300];
	unlink(cfg);
	static const char *const dirs[] = { "models--o--m/snapshots/r", "models--o--m/snapshots",
					    "models--o--m", "" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(p, sizeof(p), "%s/%s", hub, dirs[i]);
		rmdir(p);
	}
}

static void setup(void)
{
	fuzz_mkdtemp(hub, sizeof(hub), "hub");
	atexit(cleanup);
	char p[4300];
	snprintf(p, sizeof(p), "%s/models--o--m", hub);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/models--o--m/snapshots", hub);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/models--o--m/snapshots/r", hub);
	if (mkdir(p, 0700) < 0)
		abort();
	snprintf(cfg, sizeof(cfg), "%s/models--o--m/snapshots/r/config.json", hub);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!hub[0])
		setup();
	int fd = open(cfg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0)
		abort();
	struct checkpoint_facts c;
	struct err *e = NULL;
	int rc = checkpoint_facts_read_in(hub, "o/m", &c, &e);
	fuzz_check_err(rc, e);
	if (rc == 0) {
		json_t *j = checkpoint_facts_json(&c);
		json_decref(j);
		checkpoint_facts_free(&c);
	}
	return 0;
}
