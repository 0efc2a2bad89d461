/*
 * test_box.c — the box's memory, swap and I/O pressure (runtime/box.c)
 * from fixture /proc files under LOBES_SYSROOT: the fields as the memory
 * gate reads them, the iowait share between two samples (and since boot,
 * and unknown when no time passed or the counters went back), no PSI file,
 * and a /proc/meminfo that is missing or lacks a field.
 */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/runtime/runtime.h"
#include "../../src/lib/util/fs.h"
#include "testutil.h"

static char root[] = "/tmp/lobes-box-XXXXXX";

static void put(const char *rel, const char *text)
{
	_cleanup_free_ char *p = xasprintf("%s%s", root, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_box(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(root));
	_cleanup_free_ char *proc = xasprintf("%s/proc", root);
	_cleanup_free_ char *pr = xasprintf("%s/proc/pressure", root);
	assert_int_equal(mkdir(proc, 0700), 0);
	assert_int_equal(mkdir(pr, 0700), 0);
	setenv("LOBES_SYSROOT", root, 1);
	put("/proc/meminfo", "MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 600 kB\n"
			     "SwapTotal: 50 kB\nSwapFree: 20 kB\n");
	put("/proc/stat", "cpu  10 0 10 70 10 0 0 0 0 0\ncpu0 1 2 3 4 5\n");
	put("/proc/pressure/io", "some avg10=2.50 avg60=1.00 avg300=0.00 total=1\n");
	struct box_sample a, b;
	struct err *e = NULL;
	assert_int_equal(box_sample(&a, &e), 0);
	assert_int_equal(a.mem_total, 1000 * 1024);
	assert_int_equal(a.mem_free, 100 * 1024);
	assert_int_equal(a.mem_available, 600 * 1024);
	assert_int_equal(a.swap_total - a.swap_free, 30 * 1024);
	assert_true(a.io_some_avg10 == 2.5);
	assert_true(box_iowait_pct(NULL, &a) == 10.0); /* since boot: 10 of 100 */
	put("/proc/stat", "cpu  20 0 10 130 40 0 0 0 0 0\n");
	_cleanup_free_ char *psi = xasprintf("%s/proc/pressure/io", root);
	unlink(psi);
	assert_int_equal(box_sample(&b, NULL), 0);
	assert_true(box_iowait_pct(&a, &b) == 30.0); /* 30 of the 100 that passed */
	assert_true(b.io_some_avg10 == -1);           /* no PSI on this kernel */
	assert_true(box_iowait_pct(&b, &b) == -1);    /* no time passed */
	assert_true(box_iowait_pct(&b, &a) == -1);    /* counters went back */
	put("/proc/meminfo", "MemTotal: 1000 kB\nMemFree: 100 kB\n");
	assert_int_equal(box_sample(&a, &e), -1);
	assert_string_contains(e->msg, "lacks MemTotal, MemFree or MemAvailable");
	err_free(e);
	e = NULL;
	_cleanup_free_ char *mi = xasprintf("%s/proc/meminfo", root);
	unlink(mi);
	assert_int_equal(box_sample(&a, &e), -1);
	assert_string_contains(e->msg, "does not exist");
	assert_int_equal(e->code, EXIT_RUNTIME);
	err_free(e);
	_cleanup_free_ char *st = xasprintf("%s/proc/stat", root);
	unlink(st);
	rmdir(pr);
	rmdir(proc);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_box) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
