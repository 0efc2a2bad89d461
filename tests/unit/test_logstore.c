/*
 * test_logstore.c — per-boot log files (runtime/logstore.c): numbering from
 * 000001, 0600 files in a 0700 directory with a header line, a full part
 * moved aside to .log.1 (so a boot holds at most two parts, the latest
 * lines kept), the oldest boots removed beyond the count, a boot read back
 * whole, and the list in order.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/runtime/runtime.h"
#include "../../src/lib/util/fs.h"
#include "testutil.h"

static long long fsize(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

static void test_store(void **state)
{
	(void)state;
	char d[] = "/tmp/lobes-logstore-XXXXXX";
	assert_non_null(mkdtemp(d));
	struct logstore_boot b;
	struct err *e = NULL;
	assert_int_equal(logstore_begin(&b, d, "hand", "c0ffee", "2026-12-03T14:00:00Z", 100, 3, &e), 0);
	assert_int_equal(b.no, 1);
	_cleanup_free_ char *f1 = xasprintf("%s/logs/hand/000001.log", d);
	_cleanup_free_ char *rd = xasprintf("%s/logs/hand", d);
	struct stat st;
	assert_int_equal(stat(f1, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(rd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(logstore_write(&b, "first line\n", 11, &e), 0);
	size_t len;
	_cleanup_free_ char *t = logstore_read(d, "hand", 1, &len, &e);
	assert_string_equal(t, "# lobes boot 000001 container c0ffee started 2026-12-03T14:00:00Z\n"
			       "first line\n");
	/* 1000 bytes into 100-byte parts: two parts kept, the latest bytes last */
	char chunk[1000];
	for (int i = 0; i < 1000; i++)
		chunk[i] = i == 999 ? '\n' : (char)('a' + i % 26);
	assert_int_equal(logstore_write(&b, chunk, sizeof(chunk), &e), 0);
	assert_int_equal(logstore_write(&b, "LAST\n", 5, &e), 0);
	_cleanup_free_ char *f1p = xasprintf("%s.1", f1);
	assert_true(fsize(f1) <= 100 && fsize(f1) > 0);
	assert_true(fsize(f1p) <= 100 && fsize(f1p) > 0);
	assert_int_equal(stat(f1p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	_cleanup_free_ char *t2 = logstore_read(d, "hand", 1, &len, &e);
	assert_true(len <= 200);
	assert_string_contains(t2, "continues (older lines in 000001.log.1");
	assert_int_equal(strcmp(t2 + len - 5, "LAST\n"), 0);
	logstore_end(&b);
	/* five more boots, three kept */
	for (unsigned i = 2; i <= 6; i++) {
		assert_int_equal(logstore_begin(&b, d, "hand", "c0ffee", "x", 100, 3, &e), 0);
		assert_int_equal(b.no, i);
		logstore_end(&b);
	}
	unsigned *nos;
	size_t n;
	assert_int_equal(logstore_list(d, "hand", &nos, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_int_equal(nos[0], 4);
	assert_int_equal(nos[2], 6);
	free(nos);
	assert_int_equal(fsize(f1p), -1); /* a removed boot's moved-aside part goes too */
	assert_int_equal(logstore_list(d, "cortex", &nos, &n, &e), 0);
	assert_int_equal(n, 0);
	free(nos);
	assert_null(logstore_read(d, "cortex", 1, &len, &e));
	assert_non_null(e);
	err_free(e);
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_store) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
