/*
 * test_doctor_edges.c — doctor_run on deploy dirs that tests/cases/doctor.t
 * does not build: a journal of an interrupted commit that lobes cannot
 * read (an error finding naming .lobes-journal, with the journal's
 * position, and no fix offered), and a readable stale one (a warning that
 * names the files it replaces, with the finish-commit fix).
 */
#include "testutil.h"

#include <unistd.h>

#include "../../src/lib/doctor/doctor.h"
#include "../../src/lib/util/fs.h"

static char *mkdir_tmp(void)
{
	char *d = xstrdup("/tmp/lobes-doctoredges.XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void put(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	assert_int_equal(fs_write_atomic(p, text, strlen(text), 0600, NULL), 0);
}

/* The finding about .lobes-journal, or NULL. */
static const struct check *journal_check(const struct doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->c[i].name && strcmp(r->c[i].name, ".lobes-journal") == 0)
			return &r->c[i];
	return NULL;
}

static void run(const char *dir, struct doctor_report *r)
{
	struct doctor_opts o = { .dir = dir, .docker = "/nonexistent/docker" };
	struct err *e = NULL;
	if (doctor_run(r, &o, &e) < 0)
		fail_msg("doctor_run: %s", e->msg);
}

static void test_journal_findings(void **state)
{
	(void)state;
	_cleanup_free_ char *d = mkdir_tmp();
	put(d, ".env", "LOBES_PROFILE=nosuch\n");
	put(d, ".lobes-journal", "{\"renames\": [[\"x\", \"../etc\"]]}");
	struct doctor_report r = { 0 };
	run(d, &r);
	const struct check *c = journal_check(&r);
	assert_non_null(c);
	assert_int_equal(c->sev, SEV_ERROR);
	assert_string_equal(c->id, "deploy-dir");
	_cleanup_free_ char *want = xasprintf("%s/.lobes-journal: renames[0]: not a rename of this "
					      "dir's files", d);
	assert_string_contains(c->message, want);
	assert_null(c->fix);
	doctor_report_free(&r);

	/* readable and stale: a warning naming what it replaces, fixable */
	put(d, ".a.yml.lobes-tmp-0123456789abcdef", "new\n");
	put(d, ".lobes-journal",
	    "{\"version\": 1, \"renames\": [[\".a.yml.lobes-tmp-0123456789abcdef\", \"a.yml\"]]}");
	memset(&r, 0, sizeof(r));
	run(d, &r);
	c = journal_check(&r);
	assert_non_null(c);
	assert_int_equal(c->sev, SEV_WARNING);
	assert_string_equal(c->message, "an interrupted commit is pending (.lobes-journal, replacing a.yml): "
				    "readers see its new files, the files on disk are still the old ones");
	assert_non_null(c->fix);
	doctor_report_free(&r);
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_findings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
