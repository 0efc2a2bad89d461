/* test_trial.c — a knob rendered into the compose file, set for a while and
 * put back (deploy/envset.c): the trial changes .env's one line and the
 * compose file's one argument, keeps every other byte (the operator's own
 * lines too), writes no backup and leaves the state file alone; putting
 * back gives the operator's bytes and modes exactly. A dir that is not a
 * deploy dir is refused with nothing written. */
#include <dirent.h>
#include <sys/stat.h>

#include "testutil.h"

#include "../../src/lib/deploy/deploy.h"
#include "../../src/lib/util/fs.h"

static char *slurp(const char *dir, const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	size_t len;
	return fs_read(p, 1 << 20, &len, NULL);
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *de; d && (de = readdir(d));)
		n += de->d_name[0] != '.' || strlen(de->d_name) > 2;
	if (d)
		closedir(d);
	return n;
}

static void test_trial(void **state)
{
	(void)state;
	_cleanup_free_ char *root = src_path("tests/fixtures/hosts/gb10");
	_cleanup_free_ char *smi = src_path("tests/fixtures/hosts/gb10/bin/nvidia-smi");
	_cleanup_free_ char *hub = src_path("tests/fixtures/hf/hub");
	setenv("LOBES_SYSROOT", root, 1);
	setenv("LOBES_NVIDIA_SMI", smi, 1);
	setenv("LOBES_NVML_LIB", "/absent/libnvidia-ml.so.1", 1);
	setenv("HF_HUB_CACHE", hub, 1);
	char tmpl[] = "/tmp/lobes-trial-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	_cleanup_free_ char *dir = xasprintf("%s/d", tmpl);
	struct err *e = NULL;
	struct init_result r;
	struct init_opts io = { .dir = dir, .profile = "spark", .apply = true, .keep_backups = -1 };
	assert_int_equal(init_prepare(&r, &io, &e), 0);
	assert_int_equal(init_apply(&r, &e), 0);
	init_result_free(&r);
	/* the operator's own bytes: a comment and a last line without a newline */
	_cleanup_free_ char *envp = xasprintf("%s/.env", dir);
	FILE *f = fopen(envp, "a");
	fputs("# mine\nMY_NOTE=\"keep me\"", f);
	fclose(f);
	_cleanup_free_ char *env0 = slurp(dir, ".env"), *comp0 = slurp(dir, "docker-compose.yml");
	_cleanup_free_ char *state0 = slurp(dir, ".lobes-state.json");
	assert_string_contains(comp0, "--speculative-config={\"method\": \"mtp\", \"num_speculative_tokens\": 2}");
	int files0 = count_files(dir);

	struct deploy_saved s;
	assert_int_equal(deploy_knob_trial(dir, "CORTEX_SPECULATIVE_CONFIG", "none", &s, &e), 0);
	assert_null(e);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.f[0].name, ".env");
	assert_int_equal(s.f[0].mode, 0600);
	assert_string_equal(s.f[1].name, "docker-compose.yml");
	_cleanup_free_ char *env1 = slurp(dir, ".env"), *comp1 = slurp(dir, "docker-compose.yml");
	_cleanup_free_ char *state1 = slurp(dir, ".lobes-state.json");
	assert_null(strstr(comp1, "--speculative-config"));
	assert_string_contains(env1, "\nCORTEX_SPECULATIVE_CONFIG=none\n");
	assert_string_contains(env1, "# mine\nMY_NOTE=\"keep me\"");
	assert_int_equal(strlen(env1), strlen(env0) - strlen("{\"method\": \"mtp\", \"num_speculative_tokens\": 2}") +
					       strlen("none"));
	assert_string_equal(state1, state0);
	assert_int_equal(count_files(dir), files0); /* no backup, no new file */
	assert_false(deploy_saved_same(dir, &s));
	/* the other compose lines are the operator's */
	assert_int_equal(strlen(comp1), strlen(comp0) - strlen("      - '--speculative-config={\"method\": \"mtp\", "
							       "\"num_speculative_tokens\": 2}'\n"));

	assert_int_equal(deploy_saved_put(dir, &s, &e), 0);
	assert_true(deploy_saved_same(dir, &s));
	_cleanup_free_ char *env2 = slurp(dir, ".env"), *comp2 = slurp(dir, "docker-compose.yml");
	assert_string_equal(env2, env0);
	assert_string_equal(comp2, comp0);
	struct stat st;
	assert_int_equal(stat(envp, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(count_files(dir), files0);
	deploy_saved_free(&s);

	/* not a deploy dir: refused, nothing written */
	_cleanup_free_ char *empty = xasprintf("%s/empty", tmpl);
	assert_int_equal(mkdir(empty, 0700), 0);
	assert_int_equal(deploy_knob_trial(empty, "CORTEX_SPECULATIVE_CONFIG", "none", &s, &e), -1);
	assert_non_null(e);
	assert_int_equal(s.n, 0);
	err_free(e);
	e = NULL;
	assert_int_equal(count_files(empty), 0);
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", tmpl);
	assert_int_equal(system(rm), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
