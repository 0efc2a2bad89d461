/*
 * replay.c — main() for the regression replay of the fuzz targets: each
 * argument is a file, or a directory whose files are fed, one
 * LLVMFuzzerTestOneInput() call per file. Built with the normal compiler
 * so `make test` needs no clang. Exit 0 when every input went through (a
 * crash or a sanitizer report ends the process with a failure status);
 * prints the number of inputs replayed.
 */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "../../src/lib/util/fs.h"
#include "fuzz.h"

static int replay_file(const char *path, unsigned *n)
{
	struct err *e = NULL;
	size_t len = 0;
	_cleanup_free_ char *data = fs_read(path, (size_t)64 << 20, &len, &e);
	if (!data) {
		fprintf(stderr, "replay: %s\n", e->msg);
		err_free(e);
		return -1;
	}
	LLVMFuzzerTestOneInput((const uint8_t *)data, len);
	(*n)++;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned n = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 2;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay_file(argv[i], &n) < 0)
				return 2;
			continue;
		}
		struct dirent **ents = NULL;
		int k = scandir(argv[i], &ents, NULL, alphasort);
		if (k < 0) {
			perror(argv[i]);
			return 2;
		}
		int rc = 0;
		for (int j = 0; j < k; j++) {
			if (ents[j]->d_name[0] != '.' && rc == 0) {
				_cleanup_free_ char *p = xasprintf("%s/%s", argv[i], ents[j]->d_name);
				rc = replay_file(p, &n);
			}
			free(ents[j]);
		}
		free(ents);
		if (rc < 0)
			return 2;
	}
	printf("replayed %u inputs\n", n);
	return 0;
}
