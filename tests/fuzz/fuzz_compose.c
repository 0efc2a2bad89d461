/* fuzz_compose.c — doctor's read of a deploy dir's compose file: the input
 * is written as docker-compose.yml next to a fixed .env in a private
 * temporary directory (made once, removed at exit), then read the way
 * `lobes doctor` reads it (yaml_guard, libfyaml, entrypoint/command
 * interpolation, flag read-back). See fuzz.h. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "../../src/lib/doctor/doctor_int.h"
#include "fuzz.h"

static char dir[4096];
static char compose[4200];

static void cleanup(void)
{
	char p[4200];
	unlink(compose);
	snprintf(p, sizeof(p), "%s/.env", dir);
	unlink(p);
	rmdir(dir);
}

static void setup(void)
{
	fuzz_mkdtemp(dir, sizeof(dir), "compose");
	atexit(cleanup);
	char p[4200];
	snprintf(p, sizeof(p), "%s/.env", dir);
	static const char env[] = "COMPOSE_FILE=docker-compose.yml\nCORTEX_PORT=8000\n"
				  "CORTEX_MODEL=org/model\nX=${CORTEX_PORT:-1}\n";
	FILE *f = fopen(p, "w");
	if (!f || fwrite(env, 1, sizeof(env) - 1, f) != sizeof(env) - 1 || fclose(f) != 0)
		abort();
	snprintf(compose, sizeof(compose), "%s/docker-compose.yml", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0])
		setup();
	int fd = open(compose, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0)
		abort();
	struct deployed d = { 0 };
	struct doctor_report r = { 0 };
	deployed_read(&d, dir, &r);
	deployed_free(&d);
	doctor_report_free(&r);
	return 0;
}
