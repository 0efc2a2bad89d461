/*
 * test_deploy_edges.c — the deploy store's edges that the CLI cases do not
 * reach: deploy_env_set / deploy_env_put (a knob set for a while and put
 * back byte for byte: the last assignment replaced, a line appended to a
 * file without a final newline, the mode 0600, a missing or bad .env, the
 * lock held by another writer), deploy_put_files refusing a file changed
 * since the plan, and the journal of an interrupted commit: read back as
 * stale, replayed by the next writer, refused with its position when it is
 * not the journal lobes writes or names a file outside the dir.
 */
#include "testutil.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/deploy/deploy.h"
#include "../../src/lib/util/fs.h"

static char *mkdir_tmp(void)
{
	char *d = xstrdup("/tmp/lobes-deployedges.XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void put(const char *dir, const char *name, const char *text, mode_t mode)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	struct err *e = NULL;
	if (fs_write_atomic(p, text, strlen(text), mode, &e) < 0)
		fail_msg("write %s: %s", p, e->msg);
}

/* The file's bytes (NULL when absent); caller frees. */
static char *get(const char *dir, const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	return fs_read(p, 0, NULL, NULL);
}

static mode_t mode_of(const char *dir, const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	return st.st_mode & 07777;
}

static void rm_rf(const char *dir)
{
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_env_set_and_put_back(void **state)
{
	(void)state;
	_cleanup_free_ char *d = mkdir_tmp();
	const char *orig = "# knobs\nA=1\nB=2\nA=3 # later wins\nC='x'";
	put(d, ".env", orig, 0644);
	struct err *e = NULL;
	char *before = NULL;
	size_t before_len = 0;
	/* the LAST assignment of A is the one replaced */
	assert_int_equal(deploy_env_set(d, "A", "9", &before, &before_len, &e), 0);
	assert_null(e);
	assert_int_equal(before_len, strlen(orig));
	assert_memory_equal(before, orig, before_len);
	_cleanup_free_ char *now = get(d, ".env");
	assert_string_equal(now, "# knobs\nA=1\nB=2\nA=9\nC='x'");
	assert_int_equal(mode_of(d, ".env"), 0600);
	/* a key not there is appended, after a newline the file lacked */
	char *before2 = NULL;
	size_t before2_len = 0;
	assert_int_equal(deploy_env_set(d, "D_E", "v w", &before2, &before2_len, &e), 0);
	_cleanup_free_ char *now2 = get(d, ".env");
	assert_string_equal(now2, "# knobs\nA=1\nB=2\nA=9\nC='x'\nD_E=v w\n");
	free(before2);
	/* and put back exactly */
	assert_int_equal(deploy_env_put(d, before, before_len, &e), 0);
	_cleanup_free_ char *back = get(d, ".env");
	assert_string_equal(back, orig);
	free(before);
	/* nothing of the commit is left behind */
	_cleanup_free_ char *j = get(d, ".lobes-journal");
	assert_null(j);
	rm_rf(d);
}

static void test_env_set_refusals(void **state)
{
	(void)state;
	_cleanup_free_ char *d = mkdir_tmp();
	struct err *e = NULL;
	char *before = (char *)"sentinel";
	size_t before_len = 7;
	/* no .env */
	assert_int_equal(deploy_env_set(d, "A", "1", &before, &before_len, &e), -1);
	assert_null(before);
	_cleanup_free_ char *want = xasprintf("no deploy dir at '%s' ('%s/.env' is missing)", d, d);
	assert_string_equal(e->msg, want);
	assert_int_equal(e->code, EXIT_CONFIG);
	err_free(e);
	e = NULL;
	/* a .env that does not parse: its position, and nothing written */
	put(d, ".env", "A=1\nB 2\n", 0600);
	assert_int_equal(deploy_env_set(d, "A", "5", &before, &before_len, &e), -1);
	_cleanup_free_ char *pos = xasprintf("%s/.env:2:1: ", d);
	assert_string_contains(e->msg, pos);
	err_free(e);
	e = NULL;
	_cleanup_free_ char *same = get(d, ".env");
	assert_string_equal(same, "A=1\nB 2\n");
	/* another writer holds the lock: refused, nothing written */
	put(d, ".env", "A=1\n", 0600);
	_cleanup_free_ char *lp = xasprintf("%s/.lobes.lock", d);
	int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	assert_int_equal(deploy_env_set(d, "A", "5", &before, &before_len, &e), -1);
	_cleanup_free_ char *busy = xasprintf("deploy dir '%s' is being written by another lobes "
					      "process (lock '%s'); try again when it is done", d, lp);
	assert_string_equal(e->msg, busy);
	err_free(e);
	e = NULL;
	assert_int_equal(deploy_env_put(d, "A=2\n", 4, &e), -1);
	assert_string_contains(e->msg, "is being written by another lobes process");
	err_free(e);
	e = NULL;
	_cleanup_free_ char *kept = get(d, ".env");
	assert_string_equal(kept, "A=1\n");
	close(fd);
	/* the lock released: it goes through */
	assert_int_equal(deploy_env_put(d, "A=2\n", 4, &e), 0);
	_cleanup_free_ char *put_back = get(d, ".env");
	assert_string_equal(put_back, "A=2\n");
	rm_rf(d);
}

static void test_put_files_expect(void **state)
{
	(void)state;
	_cleanup_free_ char *d = mkdir_tmp();
	put(d, "a.yml", "old\n", 0644);
	struct err *e = NULL;
	/* the file changed since the plan: nothing written */
	struct deploy_put p[2] = {
		{ .name = "b.yml", .expect = NULL, .data = "new b\n", .mode = 0644 },
		{ .name = "a.yml", .expect = "older\n", .data = "new a\n", .mode = 0644 },
	};
	assert_int_equal(deploy_put_files(d, p, 2, 3, &e), -1);
	_cleanup_free_ char *want = xasprintf("'%s/a.yml' changed since the plan was made; nothing "
					      "written; run it again", d);
	assert_string_equal(e->msg, want);
	err_free(e);
	e = NULL;
	_cleanup_free_ char *b = get(d, "b.yml");
	assert_null(b);
	/* a file expected absent that exists is a change too */
	p[1].expect = "old\n";
	put(d, "b.yml", "surprise\n", 0644);
	assert_int_equal(deploy_put_files(d, p, 2, 3, &e), -1);
	assert_string_contains(e->msg, "/b.yml' changed since the plan was made");
	err_free(e);
	e = NULL;
	/* as planned: both written, the replaced one kept as a backup */
	_cleanup_free_ char *bp = xasprintf("%s/b.yml", d);
	unlink(bp);
	assert_int_equal(deploy_put_files(d, p, 2, 3, &e), 0);
	_cleanup_free_ char *a = get(d, "a.yml"), *b2 = get(d, "b.yml"), *bak = get(d, "a.yml.bak.1");
	assert_string_equal(a, "new a\n");
	assert_string_equal(b2, "new b\n");
	assert_string_equal(bak, "old\n");
	/* keep 0: no backup made */
	struct deploy_put q = { .name = "a.yml", .expect = "new a\n", .data = "newer a\n", .mode = 0600 };
	assert_int_equal(deploy_put_files(d, &q, 1, 0, &e), 0);
	_cleanup_free_ char *bak2 = get(d, "a.yml.bak.2");
	assert_null(bak2);
	assert_int_equal(mode_of(d, "a.yml"), 0600);
	rm_rf(d);
}

#define TEMP ".a.yml.lobes-tmp-0123456789abcdef"

static void test_journal(void **state)
{
	(void)state;
	_cleanup_free_ char *d = mkdir_tmp();
	struct err *e = NULL;
	char **names = NULL;
	/* none */
	assert_int_equal(deploy_journal_stale(d, &names, &e), 0);
	assert_null(names);
	assert_null(e);
	/* an interrupted commit: stale, names listed; the next writer replays it */
	put(d, "a.yml", "old\n", 0644);
	put(d, TEMP, "new\n", 0644);
	put(d, ".lobes-journal", "{\"version\": 1, \"renames\": [[\"" TEMP "\", \"a.yml\"]]}", 0600);
	assert_int_equal(deploy_journal_stale(d, &names, &e), 1);
	assert_non_null(names);
	assert_string_equal(names[0], "a.yml");
	assert_null(names[1]);
	free(names[0]);
	free(names);
	names = NULL;
	/* a writer holding the lock is mid-commit: not stale */
	_cleanup_free_ char *lp = xasprintf("%s/.lobes.lock", d);
	int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	assert_int_equal(deploy_journal_stale(d, &names, &e), 0);
	assert_null(names);
	close(fd);
	/* the next writer (put_files with n == 0) finishes it */
	assert_int_equal(deploy_put_files(d, NULL, 0, 0, &e), 0);
	_cleanup_free_ char *a = get(d, "a.yml"), *t = get(d, TEMP), *j = get(d, ".lobes-journal");
	assert_string_equal(a, "new\n");
	assert_null(t);
	assert_null(j);
	rm_rf(d);
}

static void test_journal_refused(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} bad[] = {
		/* not JSON: jansson's position */
		{ "{\"renames\": [",
		  "/.lobes-journal:1:13: ']' expected near end of file; expected the journal" },
		/* JSON without the list: positioned at the document (jansson has
		 * no position for JSON that parsed) */
		{ "{\"version\": 1}", "/.lobes-journal:1:1: no 'renames' list; expected the journal" },
		{ "[1]", "/.lobes-journal:1:1: no 'renames' list; expected the journal" },
		{ "{\"renames\": {}}", "/.lobes-journal:1:1: no 'renames' list; expected the journal" },
		/* entries that do not rename this dir's files */
		{ "{\"renames\": [[\"" TEMP "\", \"../x\"]]}", "/.lobes-journal: renames[0]: not a rename" },
		{ "{\"renames\": [[\"" TEMP "\", \"..\"]]}", "/.lobes-journal: renames[0]: not a rename" },
		{ "{\"renames\": [[\"" TEMP "\", \"a\"], [\".a.tmp\", \"a\"]]}",
		  "/.lobes-journal: renames[1]: not a rename" },
		{ "{\"renames\": [[\"" TEMP "\", \"" TEMP "\"]]}", "/.lobes-journal: renames[0]: not a rename" },
		{ "{\"renames\": [[\"" TEMP "\"]]}", "/.lobes-journal: renames[0]: not a rename" },
		{ "{\"renames\": [[\"" TEMP "\", \"a\", \"b\"]]}", "/.lobes-journal: renames[0]: not a rename" },
		{ "{\"renames\": [[\"" TEMP "\", 7]]}", "/.lobes-journal: renames[0]: not a rename" },
		{ "{\"renames\": [[\"" TEMP "\", \"\"]]}", "/.lobes-journal: renames[0]: not a rename" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		_cleanup_free_ char *d = mkdir_tmp();
		put(d, "a", "kept\n", 0644);
		put(d, ".lobes-journal", bad[i].text, 0600);
		struct err *e = NULL;
		char **names = NULL;
		assert_int_equal(deploy_journal_stale(d, &names, &e), -1);
		assert_null(names);
		assert_non_null(e);
		_cleanup_free_ char *want = xasprintf("%s%s", d, bad[i].want);
		if (strncmp(e->msg, want, strlen(want)) != 0)
			fail_msg("journal %s\n got: %s\nwant: %s...", bad[i].text, e->msg, want);
		assert_int_equal(e->code, EXIT_CONFIG);
		err_free(e);
		e = NULL;
		/* a writer refuses to go on, and writes nothing */
		assert_int_equal(deploy_env_put(d, "A=1\n", 4, &e), -1);
		assert_non_null(e);
		err_free(e);
		_cleanup_free_ char *env = get(d, ".env"), *a = get(d, "a");
		assert_null(env);
		assert_string_equal(a, "kept\n");
		rm_rf(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_set_and_put_back),
		cmocka_unit_test(test_env_set_refusals),
		cmocka_unit_test(test_put_files_expect),
		cmocka_unit_test(test_journal),
		cmocka_unit_test(test_journal_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
