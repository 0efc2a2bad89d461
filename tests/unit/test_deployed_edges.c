/*
 * test_deployed_edges.c — deployed_load on compose files an operator may
 * have edited by hand: a command written as one string, an environment
 * written as a list, a role found by its lobes.role label, flags with
 * their value as the next word or after '=', the attention backend from
 * --attention-backend and from --attention-config JSON, bare negated flags;
 * and what cannot be read (no .env, a bad .env line, a listed compose file
 * missing or a directory, YAML that is not a compose file, a nested
 * default past the bound), each a problem with its remedy while the rest
 * is still read.
 */
#include "testutil.h"

#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/deploy/deploy.h"
#include "../../src/lib/deploy/deploy_int.h"
#include "../../src/lib/util/fs.h"
#include "../../src/lib/util/strv.h"

static char *mkdir_tmp(void)
{
	char *d = xstrdup("/tmp/lobes-deployed.XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void put(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	assert_int_equal(fs_write_atomic(p, text, strlen(text), 0600, NULL), 0);
}

static void rm_rf(const char *dir)
{
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The problem whose message contains needle, or NULL. */
static const struct deployed_problem *problem_with(const struct deployed *d, const char *needle)
{
	for (size_t i = 0; i < d->n_problems; i++)
		if (strstr(d->problems[i].msg, needle))
			return &d->problems[i];
	return NULL;
}

static const struct env_use *use_of(const struct deployed *d, const char *name)
{
	for (size_t i = 0; i < d->n_uses; i++)
		if (strcmp(d->uses[i].name, name) == 0)
			return &d->uses[i];
	return NULL;
}

static void test_hand_edited_compose(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = mkdir_tmp();
	put(dir, ".env", "HAND_MODEL=org/hand\nUTIL=0.4\nVLLM_LOGGING_LEVEL=DEBUG\nSENSES_FEASIBLE=false\n");
	put(dir, "docker-compose.yml",
	    "services:\n"
	    "  brain:\n"
	    "    labels: {lobes.role: hand}\n"
	    "    image: img@sha256:${UTIL}\n"
	    "    entrypoint: vllm\n"
	    "    command: serve ${HAND_MODEL} --gpu-memory-utilization ${UTIL} --no-enforce-eager "
	    "--attention-backend FLASHINFER --max-num-seqs --trust-remote-code\n"
	    "    environment:\n"
	    "      - VLLM_USE_V1=1\n"
	    "      - VLLM_FLAG\n"
	    "      - OTHER=2\n"
	    "  cortex:\n"
	    "    command: [\"--model=org/c\", \"--attention-config={\\\"backend\\\": \\\"TRITON_ATTN\\\"}\","
	    " \"--enforce-eager\", \"--kv-cache-dtype\", \"fp8\"]\n"
	    "    environment: {VLLM_X: \"${UTIL}\", PATH: /bin}\n"
	    "  senses:\n"
	    "    command: [--model=org/s]\n"
	    "  gpu-overlay: {}\n"
	    "  notes: just text\n");
	struct deployed d = { 0 };
	deployed_load(&d, dir);
	if (d.n_problems)
		fail_msg("problem: %s", d.problems[0].msg);
	assert_true(d.env_ok);
	assert_true(d.compose_ok);
	const struct deployed_role *h = &d.roles[ROLE_HAND];
	assert_true(h->present);
	assert_string_equal(h->service, "brain");
	assert_string_equal(h->image, "img@sha256:0.4");
	/* the string command split on blanks, after the entrypoint */
	assert_string_equal(h->args[0], "vllm");
	assert_string_equal(h->args[1], "serve");
	assert_string_equal(h->args[2], "org/hand");
	assert_string_equal(h->knobs[KNOB_MODEL], "org/hand");
	assert_string_equal(h->knobs[KNOB_GPU_MEM_UTIL], "0.40"); /* canonical */
	assert_string_equal(h->knobs[KNOB_ENFORCE_EAGER], "false");
	assert_string_equal(h->knobs[KNOB_ATTENTION_BACKEND], "FLASHINFER");
	/* a value flag followed by another flag takes no value */
	assert_string_equal(h->knobs[KNOB_MAX_NUM_SEQS], "auto");
	assert_string_equal(h->knobs[KNOB_TRUST_REMOTE_CODE], "true");
	const struct deployed_role *c = &d.roles[ROLE_CORTEX];
	assert_true(c->present);
	assert_string_equal(c->knobs[KNOB_MODEL], "org/c");
	assert_string_equal(c->knobs[KNOB_ATTENTION_BACKEND], "TRITON_ATTN");
	assert_string_equal(c->knobs[KNOB_ENFORCE_EAGER], "true");
	assert_string_equal(c->knobs[KNOB_KV_CACHE_DTYPE], "fp8");
	assert_null(c->image);
	/* infeasible in .env: not present though it has a command */
	assert_false(d.roles[ROLE_SENSES].present);
	/* VLLM_* uses: .env, a list (with and without a value), a mapping */
	const struct env_use *u = use_of(&d, "VLLM_LOGGING_LEVEL");
	assert_non_null(u);
	assert_string_equal(u->where, ".env:3");
	assert_int_equal(u->role, -1);
	u = use_of(&d, "VLLM_USE_V1");
	assert_non_null(u);
	assert_string_equal(u->value, "1");
	assert_string_equal(u->where, "docker-compose.yml: services.brain.environment");
	assert_int_equal(u->role, ROLE_HAND);
	u = use_of(&d, "VLLM_FLAG");
	assert_non_null(u);
	assert_null(u->value);
	u = use_of(&d, "VLLM_X");
	assert_non_null(u);
	assert_string_equal(u->value, "0.4");
	assert_int_equal(u->role, ROLE_CORTEX);
	assert_null(use_of(&d, "OTHER"));
	assert_null(use_of(&d, "PATH"));
	deployed_free(&d);
	rm_rf(dir);
}

static void test_what_cannot_be_read(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = mkdir_tmp();
	/* no .env at all: the default compose file is looked for */
	struct deployed d = { 0 };
	deployed_load(&d, dir);
	assert_false(d.env_ok);
	assert_false(d.compose_ok);
	_cleanup_free_ char *noenv = xasprintf("'%s' has no .env", dir);
	const struct deployed_problem *p = problem_with(&d, noenv);
	assert_non_null(p);
	assert_string_equal(p->remedy, "run `lobes init --apply` to render it");
	assert_non_null(problem_with(&d, "compose file 'docker-compose.yml' (listed in .env "
					 "COMPOSE_FILE) is missing"));
	deployed_free(&d);

	/* a bad .env line; COMPOSE_FILE with a directory, YAML that is a list,
	 * services that are a list, text that is not YAML, and one good file */
	put(dir, ".env", "COMPOSE_FILE=a.yml:sub:b.yml:c.yml:d.yml:good.yml\nHAND_MODEL=m\nBAD LINE\n");
	_cleanup_free_ char *sub = xasprintf("%s/sub", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	put(dir, "a.yml", "- services\n");
	put(dir, "b.yml", "services: [hand]\n");
	put(dir, "c.yml", "services: {hand: [x\n");
	/* 33 nested defaults, one past INTERP_MAX_DEPTH */
	_cleanup_free_ char *deep = xstrdup("x");
	for (int i = 0; i < 33; i++) {
		char *n = xasprintf("${V%d:-%s}", i, deep);
		free(deep);
		deep = n;
	}
	_cleanup_free_ char *dtext = xasprintf("services:\n  hand:\n    command: ['%s']\n", deep);
	put(dir, "d.yml", dtext);
	put(dir, "good.yml", "services:\n  hand:\n    command: [--model=m2]\n");
	memset(&d, 0, sizeof(d));
	deployed_load(&d, dir);
	assert_false(d.env_ok);
	assert_false(d.compose_ok);
	p = problem_with(&d, "/.env:3:1: ");
	assert_non_null(p);
	assert_string_equal(p->remedy, "fix the line, or move .env aside and run `lobes init --apply`");
	/* the bad line keeps nothing from .env: the default list is read */
	assert_int_equal(d.env.n, 0);
	deployed_free(&d);

	put(dir, ".env", "COMPOSE_FILE=a.yml:sub:b.yml:c.yml:d.yml:good.yml\nHAND_MODEL=m\n");
	memset(&d, 0, sizeof(d));
	deployed_load(&d, dir);
	assert_true(d.env_ok);
	assert_false(d.compose_ok);
	_cleanup_free_ char *wa = xasprintf("%s/a.yml:1:1: not a mapping with 'services'; expected a "
					    "compose file", dir);
	p = problem_with(&d, wa);
	assert_non_null(p);
	assert_string_equal(p->remedy, "fix the file, or run `lobes init --apply` to render it again "
				       "(the old one is kept as NAME.bak.N)");
	_cleanup_free_ char *wsub = xasprintf("'%s/sub' is a directory; expected a regular file", dir);
	p = problem_with(&d, wsub);
	assert_non_null(p);
	assert_null(p->remedy);
	_cleanup_free_ char *wb = xasprintf("%s/b.yml:1:1: not a mapping with 'services'", dir);
	assert_non_null(problem_with(&d, wb));
	_cleanup_free_ char *wc = xasprintf("%s/c.yml:", dir);
	p = problem_with(&d, wc);
	assert_non_null(p);
	assert_string_contains(p->msg, "; expected a compose file");
	_cleanup_free_ char *wd = xasprintf("%s/d.yml: '${' nested more than 32 levels deep at column "
					    "1; expected at most 32", dir);
	p = problem_with(&d, wd);
	assert_non_null(p);
	assert_string_equal(p->remedy, "flatten the nested defaults, or run `lobes init --apply` to "
				       "render the file again");
	assert_int_equal(d.n_problems, 5);
	/* the good file is still read, after the others */
	assert_true(d.roles[ROLE_HAND].present);
	assert_string_equal(d.roles[ROLE_HAND].knobs[KNOB_MODEL], "m2");
	deployed_free(&d);
	rm_rf(dir);
}

static void test_knobs_from_args(void **state)
{
	(void)state;
	struct deployed_role dr = { 0 };
	char *args[] = { "vllm", "serve", "org/pos", "org/second", "--model", "--quantization=fp8",
			 "--attention-config", "{\"backend\": 7}", "--no-trust-remote-code",
			 "--enable-lora", "--max-loras", "4", "--no-enable-prefix-caching", NULL };
	deployed_knobs_from_args(&dr, args);
	/* the first positional word is the model; "--model" without a value
	 * (the next word is a flag) changes nothing */
	assert_string_equal(dr.knobs[KNOB_MODEL], "org/pos");
	assert_string_equal(dr.knobs[KNOB_QUANTIZATION], "fp8");
	/* a backend that is not a string is not read */
	assert_string_equal(dr.knobs[KNOB_ATTENTION_BACKEND], "auto");
	assert_string_equal(dr.knobs[KNOB_TRUST_REMOTE_CODE], "false");
	assert_string_equal(dr.knobs[KNOB_ENABLE_LORA], "true");
	assert_string_equal(dr.knobs[KNOB_MAX_LORAS], "4");
	assert_string_equal(dr.knobs[KNOB_ENABLE_PREFIX_CACHING], "false");
	assert_string_equal(dr.knobs[KNOB_FEASIBLE], "true");
	for (int k = 0; k < KNOB__COUNT; k++)
		free(dr.knobs[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_edited_compose),
		cmocka_unit_test(test_what_cannot_be_read),
		cmocka_unit_test(test_knobs_from_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
