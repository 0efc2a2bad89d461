/* test_sigset_init.c — sigset_load starts from nothing, whatever the
 * caller's struct held. `lobes top` declared its set on the stack without
 * an initialiser; at -O2 the slot happened to be zero, at -O0 (make
 * coverage) the load called the garbage cache_free pointer and top died
 * with SIGSEGV. The set here is filled with non-zero bytes first, so the
 * test fails on that bug at any optimisation level. */
#include "testutil.h"

#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/triage/triage.h"

static void test_load_into_garbage(void **state)
{
	(void)state;
	struct err *e = NULL;
	struct sigset clean = { 0 };
	assert_int_equal(sigset_load(&clean, NULL, &e), 0);
	assert_true(clean.n > 0);

	struct sigset set;
	memset(&set, 0xa5, sizeof(set));
	assert_int_equal(sigset_load(&set, NULL, &e), 0);
	assert_null(e);
	/* the shipped signatures and nothing else, in the same order */
	assert_int_equal(set.n, clean.n);
	for (size_t i = 0; i < set.n; i++)
		assert_string_equal(set.sigs[i].id, clean.sigs[i].id);
	/* nothing derived yet: the garbage pointers did not survive the load */
	assert_null(set.cache);
	assert_null(set.cache_free);
	assert_non_null(sigset_find(&set, clean.sigs[0].id));
	sigset_free(&set);
	sigset_free(&clean);
}

/* A load that fails (an operator signature that is not YAML) also starts
 * from nothing: what is left is freeable, and holds no garbage. */
static void test_failed_load_into_garbage(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/lobes-sigset-XXXXXX";
	char *dir = mkdtemp(tmpl);
	assert_non_null(dir);
	_cleanup_free_ char *sd = xasprintf("%s/signatures", dir);
	_cleanup_free_ char *f = xasprintf("%s/bad.yaml", sd);
	assert_int_equal(mkdir(sd, 0700), 0);
	FILE *fp = fopen(f, "w");
	assert_non_null(fp);
	fputs("signatures: [unclosed\n", fp);
	fclose(fp);

	struct sigset set;
	memset(&set, 0xa5, sizeof(set));
	struct err *e = NULL;
	assert_int_equal(sigset_load(&set, dir, &e), -1);
	assert_non_null(e);
	assert_string_contains(e->msg, "bad.yaml");
	assert_null(set.cache_free);
	sigset_free(&set);
	err_free(e);
	unlink(f);
	rmdir(sd);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_into_garbage),
		cmocka_unit_test(test_failed_load_into_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
