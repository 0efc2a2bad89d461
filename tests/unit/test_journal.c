/*
 * test_journal.c — deploy/commit.c, the deploy dir's lock and redo journal,
 * driven directly: the lock held twice, through a link, in a missing dir; a
 * journal that is not JSON, has no renames, or names something other than a
 * temp of ours and a plain file of the dir (each refused, by readers and by
 * recovery alike, and nothing renamed); deploy_read showing a pending
 * journal's content; recovery replaying, removing temps and the
 * "NAME.tmp.PID" temps of earlier versions (only those); a replay that
 * cannot rename; a transaction committed, and one abandoned; a journal
 * that is stale, or is not because its writer holds the lock. The crash
 * points themselves are tests/cases/crash.t's.
 */
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "testutil.h"
#include "../../src/lib/deploy/deploy_int.h"
#include "../../src/lib/util/fs.h"
#include "../../src/lib/util/strv.h"

static char dir[64];
#define HEX "0123456789abcdef"
#define TMP_ENV ".env" FS_TEMP_MARK HEX

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lobes-journal.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A fresh deploy dir under dir, named NAME; caller frees. */
static char *fresh(const char *name)
{
	char *d = xasprintf("%s/%s", dir, name);
	assert_int_equal(fs_mkdirs(d, 0700, NULL), 0);
	return d;
}

static void put(const char *d, const char *name, const char *text)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", d, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static char *get(const char *d, const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", d, name);
	return fs_read(p, 0, NULL, NULL);
}

static bool there(const char *d, const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", d, name);
	struct stat st;
	return lstat(p, &st) == 0;
}

static void test_lock(void **state)
{
	(void)state;
	_cleanup_free_ char *d = fresh("lock");
	struct err *e = NULL;
	int fd = deploy_lock(d, &e);
	assert_true(fd >= 0);
	struct stat st;
	_cleanup_free_ char *lp = xasprintf("%s/" DEPLOY_LOCK, d);
	assert_int_equal(stat(lp, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* held: a second writer is told to wait, with the lock's path */
	assert_int_equal(deploy_lock(d, &e), -1);
	_cleanup_free_ char *want = xasprintf("deploy dir '%s' is being written by another lobes process "
					      "(lock '%s'); try again when it is done", d, lp);
	assert_string_equal(e->msg, want);
	err_free(e);
	e = NULL;
	close(fd);
	fd = deploy_lock(d, &e); /* released: taken again */
	assert_true(fd >= 0);
	close(fd);

	/* with stdin closed the lock is fd 0, and it is a lock all the same */
	int saved = dup(0);
	assert_true(saved > 0);
	close(0);
	fd = deploy_lock(d, &e);
	int again = fd == 0 ? deploy_lock(d, &e) : 0;
	assert_int_equal(dup2(saved, 0), 0); /* releases the lock at fd 0 */
	close(saved);
	assert_int_equal(fd, 0);
	assert_int_equal(again, -1); /* it was held */
	err_free(e);
	e = NULL;

	/* a lock planted as a link is never followed */
	_cleanup_free_ char *d2 = fresh("lock-link");
	_cleanup_free_ char *lp2 = xasprintf("%s/" DEPLOY_LOCK, d2);
	assert_int_equal(symlink("/tmp/elsewhere", lp2), 0);
	assert_int_equal(deploy_lock(d2, &e), -1);
	assert_string_contains(e->msg, "lock deploy dir '");
	assert_string_contains(e->msg, "Too many levels of symbolic links");
	err_free(e);
	e = NULL;
	_cleanup_free_ char *d3 = xasprintf("%s/missing", dir);
	assert_int_equal(deploy_lock(d3, &e), -1);
	assert_string_contains(e->msg, "No such file or directory");
	err_free(e);
}

/* A journal with TEXT refuses reads and recovery with a message holding
 * WANT, and renames nothing. */
static void bad_journal(const char *name, const char *text, const char *want)
{
	_cleanup_free_ char *d = fresh(name);
	put(d, ".env", "old");
	put(d, TMP_ENV, "new");
	put(d, DEPLOY_JOURNAL, text);
	struct err *e = NULL;
	assert_null(deploy_read(d, ".env", NULL, &e));
	assert_non_null(e);
	assert_int_equal(e->code, EXIT_CONFIG);
	_cleanup_free_ char *jp = xasprintf("%s/" DEPLOY_JOURNAL, d);
	assert_string_contains(e->msg, jp);
	assert_string_contains(e->msg, want);
	err_free(e);
	e = NULL;
	const char *managed[] = { ".env", NULL };
	assert_int_equal(deploy_recover(d, managed, 5, &e), -1);
	assert_string_contains(e->msg, want);
	err_free(e);
	e = NULL;
	_cleanup_free_ char *now = get(d, ".env");
	assert_string_equal(now, "old");
	assert_true(there(d, TMP_ENV));
	assert_true(there(d, DEPLOY_JOURNAL));
	char **names = NULL;
	assert_int_equal(deploy_journal_stale(d, &names, &e), -1);
	assert_null(names);
	err_free(e);
}

static void test_bad_journals(void **state)
{
	(void)state;
	bad_journal("j-notjson", "{\"renames\": [", ":1:13: ']' expected near end of file; expected");
	bad_journal("j-notjson2", "{\"renames\": [", "expected the journal lobes writes");
	bad_journal("j-norenames", "{\"version\": 1}", ": no 'renames' list; expected the journal lobes writes");
	bad_journal("j-notlist", "{\"renames\": {}}", "no 'renames' list");
	const char *tail = "not a rename of this dir's files; expected [TEMP, NAME]";
	bad_journal("j-arity", "{\"renames\": [[\"" TMP_ENV "\"]]}", "renames[0]: ");
	bad_journal("j-arity3", "{\"renames\": [[\"" TMP_ENV "\", \".env\", \"x\"]]}", tail);
	bad_journal("j-nottemp", "{\"renames\": [[\".env.new\", \".env\"]]}", tail);
	bad_journal("j-slash", "{\"renames\": [[\"" TMP_ENV "\", \"../.env\"]]}", tail);
	bad_journal("j-dotdot", "{\"renames\": [[\"" TMP_ENV "\", \"..\"]]}", tail);
	bad_journal("j-dot", "{\"renames\": [[\"" TMP_ENV "\", \".\"]]}", tail);
	bad_journal("j-empty", "{\"renames\": [[\"" TMP_ENV "\", \"\"]]}", tail);
	bad_journal("j-num", "{\"renames\": [[\"" TMP_ENV "\", 3]]}", tail);
	bad_journal("j-ontemp", "{\"renames\": [[\"" TMP_ENV "\", \".x" FS_TEMP_MARK HEX "\"]]}", tail);
	/* the second entry is the bad one: its index is named */
	bad_journal("j-second", "{\"renames\": [[\"" TMP_ENV "\", \".env\"], [\"x\", \"y\"]]}",
		    "renames[1]: not a rename");
}

static void test_read_pending(void **state)
{
	(void)state;
	_cleanup_free_ char *d = fresh("pending");
	struct err *e = NULL;
	size_t len = 0;
	/* absent: NULL and no error */
	assert_null(deploy_read(d, ".env", &len, &e));
	assert_null(e);
	put(d, ".env", "old");
	_cleanup_free_ char *a = deploy_read(d, ".env", &len, &e);
	assert_string_equal(a, "old");
	assert_int_equal(len, 3);
	/* a pending journal: the temp's content, the file unchanged on disk */
	put(d, TMP_ENV, "new!");
	put(d, DEPLOY_JOURNAL, "{\"version\": 1, \"renames\": [[\"" TMP_ENV "\", \".env\"]]}");
	_cleanup_free_ char *b = deploy_read(d, ".env", &len, &e);
	assert_string_equal(b, "new!");
	assert_int_equal(len, 4);
	_cleanup_free_ char *disk = get(d, ".env");
	assert_string_equal(disk, "old");
	/* another name of the dir is read as it is */
	put(d, "compose.yml", "c");
	_cleanup_free_ char *c = deploy_read(d, "compose.yml", NULL, &e);
	assert_string_equal(c, "c");
	/* a journaled temp already renamed (gone): the file itself */
	_cleanup_free_ char *tp = xasprintf("%s/" TMP_ENV, d);
	assert_int_equal(unlink(tp), 0);
	_cleanup_free_ char *f = deploy_read(d, ".env", NULL, &e);
	assert_string_equal(f, "old");
	/* the last of two journaled temps for one name wins */
	put(d, TMP_ENV, "first");
	put(d, ".env" FS_TEMP_MARK "fedcba9876543210", "second");
	put(d, DEPLOY_JOURNAL, "{\"renames\": [[\"" TMP_ENV "\", \".env\"], [\".env" FS_TEMP_MARK
			       "fedcba9876543210\", \".env\"]]}");
	_cleanup_free_ char *g = deploy_read(d, ".env", NULL, &e);
	assert_string_equal(g, "second");
	/* a journaled temp that is a directory is not a file to show */
	put(d, DEPLOY_JOURNAL, "{\"renames\": [[\".compose.yml" FS_TEMP_MARK HEX "\", \"compose.yml\"]]}");
	_cleanup_free_ char *tdir = xasprintf("%s/.compose.yml" FS_TEMP_MARK HEX, d);
	assert_int_equal(mkdir(tdir, 0700), 0);
	_cleanup_free_ char *h = deploy_read(d, "compose.yml", NULL, &e);
	assert_string_equal(h, "c");
	assert_null(e);
}

static void test_recover(void **state)
{
	(void)state;
	_cleanup_free_ char *d = fresh("recover");
	const char *managed[] = { ".env", "docker-compose.yml", NULL };
	struct err *e = NULL;
	assert_int_equal(deploy_recover(d, managed, 5, &e), 0); /* clean */
	put(d, ".env", "old");
	put(d, TMP_ENV, "new");
	put(d, DEPLOY_JOURNAL, "{\"version\": 1, \"renames\": [[\"" TMP_ENV "\", \".env\"],"
			       " [\".gone" FS_TEMP_MARK HEX "\", \"gone\"]]}");
	/* a stray temp of ours, legacy temps of a managed name, and look-alikes */
	put(d, ".docker-compose.yml" FS_TEMP_MARK "00000000000000aa", "stray");
	put(d, ".env.tmp.1234", "legacy");
	put(d, "docker-compose.yml.tmp.77", "legacy");
	put(d, ".env.tmp.12a", "keep");
	put(d, ".env.tmp.", "keep");
	put(d, "other.tmp.55", "keep");
	_cleanup_free_ char *ldir = xasprintf("%s/.env.tmp.99", d);
	assert_int_equal(mkdir(ldir, 0700), 0);
	/* 1 (replayed) + 1 (stray) + 2 (legacy) */
	assert_int_equal(deploy_recover(d, managed, 5, &e), 4);
	assert_null(e);
	_cleanup_free_ char *env = get(d, ".env");
	assert_string_equal(env, "new");
	assert_false(there(d, DEPLOY_JOURNAL));
	assert_false(there(d, TMP_ENV));
	assert_false(there(d, ".docker-compose.yml" FS_TEMP_MARK "00000000000000aa"));
	assert_false(there(d, ".env.tmp.1234"));
	assert_false(there(d, "docker-compose.yml.tmp.77"));
	assert_true(there(d, ".env.tmp.12a"));
	assert_true(there(d, ".env.tmp."));
	assert_true(there(d, "other.tmp.55"));
	assert_true(there(d, ".env.tmp.99"));
	assert_int_equal(deploy_recover(d, managed, 5, &e), 0); /* nothing left to do */

	/* a replay that cannot rename: the error, the journal kept for later */
	_cleanup_free_ char *d2 = fresh("recover-blocked");
	put(d2, TMP_ENV, "new");
	_cleanup_free_ char *blocker = xasprintf("%s/.env/inner", d2);
	assert_int_equal(fs_mkdirs(blocker, 0700, NULL), 0);
	put(d2, DEPLOY_JOURNAL, "{\"renames\": [[\"" TMP_ENV "\", \".env\"]]}");
	assert_int_equal(deploy_recover(d2, managed, 5, &e), -1);
	_cleanup_free_ char *want = xasprintf("finish the interrupted commit of '%s': rename '" TMP_ENV
					      "' to '.env'", d2);
	assert_string_contains(e->msg, want);
	err_free(e);
	assert_true(there(d2, DEPLOY_JOURNAL));
	assert_true(there(d2, TMP_ENV));
}

static void test_txn(void **state)
{
	(void)state;
	_cleanup_free_ char *d = fresh("txn");
	struct deploy_txn t;
	struct err *e = NULL;
	_cleanup_free_ char *missing = xasprintf("%s/nope", dir);
	assert_int_equal(deploy_txn_begin(&t, missing, &e), -1);
	_cleanup_free_ char *want = xasprintf("open deploy dir '%s': No such file or directory", missing);
	assert_string_equal(e->msg, want);
	err_free(e);
	e = NULL;

	put(d, ".env", "old");
	assert_int_equal(deploy_txn_begin(&t, d, &e), 0);
	assert_int_equal(deploy_txn_add(&t, ".env", "A=1\n", 4, 0600, &e), 0);
	assert_int_equal(deploy_txn_add(&t, "docker-compose.yml", "s: 1\n", 5, 0644, &e), 0);
	/* staged, not visible */
	_cleanup_free_ char *before = get(d, ".env");
	assert_string_equal(before, "old");
	assert_int_equal(deploy_txn_commit(&t, &e), 0);
	deploy_txn_end(&t);
	_cleanup_free_ char *env = get(d, ".env");
	_cleanup_free_ char *comp = get(d, "docker-compose.yml");
	assert_string_equal(env, "A=1\n");
	assert_string_equal(comp, "s: 1\n");
	assert_false(there(d, DEPLOY_JOURNAL));
	struct stat st;
	_cleanup_free_ char *cp = xasprintf("%s/docker-compose.yml", d);
	assert_int_equal(stat(cp, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(fs_clean_temps(d, &e), 0); /* no temp left */

	/* abandoned before its commit: the temps go, the files stay */
	assert_int_equal(deploy_txn_begin(&t, d, &e), 0);
	assert_int_equal(deploy_txn_add(&t, ".env", "B=2\n", 4, 0600, &e), 0);
	deploy_txn_end(&t);
	assert_int_equal(t.dfd, -1);
	assert_int_equal(fs_clean_temps(d, &e), 0);
	_cleanup_free_ char *env2 = get(d, ".env");
	assert_string_equal(env2, "A=1\n");

	/* a name that cannot be staged: the error names the file */
	assert_int_equal(deploy_txn_begin(&t, d, &e), 0);
	_cleanup_free_ char *sub = xasprintf("%s/sub", d);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(deploy_txn_add(&t, "sub/../x/y", "z", 1, 0600, &e), -1);
	_cleanup_free_ char *w = xasprintf("write '%s/sub/../x/y'", d);
	assert_string_contains(e->msg, w);
	err_free(e);
	deploy_txn_end(&t);
}

static void test_stale(void **state)
{
	(void)state;
	_cleanup_free_ char *d = fresh("stale");
	char **names = NULL;
	struct err *e = NULL;
	assert_int_equal(deploy_journal_stale(d, &names, &e), 0);
	assert_null(names);
	put(d, DEPLOY_JOURNAL, "{\"renames\": [[\"" TMP_ENV "\", \".env\"], [\".c" FS_TEMP_MARK HEX
			       "\", \"c\"]]}");
	assert_int_equal(deploy_journal_stale(d, &names, &e), 1);
	assert_non_null(names);
	assert_string_equal(names[0], ".env");
	assert_string_equal(names[1], "c");
	assert_null(names[2]);
	strv_free(names);
	names = NULL;
	/* its writer still holds the lock: in the middle of a commit */
	int fd = deploy_lock(d, &e);
	assert_true(fd >= 0);
	assert_int_equal(deploy_journal_stale(d, &names, &e), 0);
	assert_null(names);
	close(fd);
	assert_int_equal(deploy_journal_stale(d, &names, &e), 1);
	strv_free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_bad_journals),
		cmocka_unit_test(test_read_pending),
		cmocka_unit_test(test_recover),
		cmocka_unit_test(test_txn),
		cmocka_unit_test(test_stale),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
