/* test_knowledge.c — the knowledge loader: the embedded data, operator
 * replacement and duplicates, operator directories, strict validation with
 * exact file:line:col messages, cross-checks, and an operator-only card,
 * profile and trait (tests/fixtures/knowledge/h100-lab). */
#include "testutil.h"

#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/knowledge/knowledge.h"
#include "../../src/lib/util/fs.h"

static void kfree(struct knowledge *k)
{
	knowledge_free(k);
}
#define _cleanup_k_ __attribute__((cleanup(kfree)))

/* Add one inline document; returns the error message (caller frees) or NULL. */
static char *add(struct knowledge *k, const char *name, const char *yaml, bool op)
{
	struct err *e = NULL;
	if (knowledge_add_yaml(k, name, yaml, strlen(yaml), op, &e) == 0)
		return NULL;
	return test_err_msg(e, EXIT_CONFIG);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, rel);
	_cleanup_free_ char *d = xstrdup(p);
	*strrchr(d, '/') = '\0';
	assert_int_equal(fs_mkdirs(d, 0755, NULL), 0);
	assert_int_equal(fs_write_atomic(p, text, strlen(text), 0644, NULL), 0);
}

static char *tmpdir(void)
{
	char t[] = "/tmp/lobes-kt.XXXXXX";
	assert_non_null(mkdtemp(t));
	return xstrdup(t);
}

static void rm_rf(const char *dir)
{
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static const char EV[] = "evidence:\n  - kind: declared\n    observation: o\n";

/* ---- names ------------------------------------------------------------ */

static void test_names(void **state)
{
	(void)state;
	const char *roles[] = { "cortex", "senses", "hand", "embedder", "reranker" };
	for (int r = 0; r < ROLE__COUNT; r++) {
		assert_string_equal(role_name(r), roles[r]);
		assert_int_equal(role_from_name(roles[r]), r);
	}
	assert_int_equal(role_from_name("brain"), -1);
	assert_int_equal(role_from_name(NULL), -1);
	assert_int_equal(role_lane(ROLE_CORTEX), LANE_GENERATE);
	assert_int_equal(role_lane(ROLE_SENSES), LANE_GENERATE);
	assert_int_equal(role_lane(ROLE_HAND), LANE_GENERATE);
	assert_int_equal(role_lane(ROLE_EMBEDDER), LANE_POOLING);
	assert_int_equal(role_lane(ROLE_RERANKER), LANE_POOLING);
	assert_string_equal(lane_name(LANE_GENERATE), "generate");
	assert_string_equal(lane_name(LANE_POOLING), "pooling");
	const char *knobs[] = { "model",	  "feasible",	     "gpu_mem_util",
				"max_model_len", "quantization",     "kv_cache_dtype",
				"attention_backend", "enforce_eager", "max_num_seqs",
				"image", "served_names", "runner", "convert", "reasoning_parser",
				"tool_call_parser", "enable_prefix_caching", "speculative_config",
				"hf_overrides", "trust_remote_code", "enable_lora", "max_loras",
				"max_lora_rank", "lora_dir" };
	assert_int_equal(ARRAY_SIZE(knobs), KNOB__COUNT);
	for (int k = 0; k < KNOB__COUNT; k++) {
		assert_string_equal(knob_name(k), knobs[k]);
		assert_int_equal(knob_from_name(knobs[k]), k);
	}
	assert_int_equal(knob_from_name("temperature"), -1);

	struct src_pos p = { (char *)"data/cards/thor.yaml", 3, 7 };
	_cleanup_free_ char *s = src_pos_str(&p);
	assert_string_equal(s, "data/cards/thor.yaml:3:7");

	struct evidence ev = { .kind = (char *)"measured", .date = (char *)"2026-07-13",
			       .observation = (char *)"it hung" };
	json_t *j = evidence_json(&ev);
	char *dump = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(dump, "{\"date\":\"2026-07-13\",\"kind\":\"measured\",\"observation\":\"it hung\"}");
	free(dump);
	json_decref(j);
}

/* ---- the shipped data -------------------------------------------------- */

static void test_embedded_loads(void **state)
{
	(void)state;
	_cleanup_k_ struct knowledge k = { 0 };
	struct err *e = NULL;
	int rc = knowledge_load(&k, NULL, &e);
	if (rc < 0)
		fail_msg("%s", e->msg);
	assert_int_equal(k.n_cards, 4);
	assert_int_equal(k.n_traits, 11);
	assert_int_equal(k.n_profiles, 5);
	assert_string_equal(k.defaults_pos.file, "data/template/defaults.yaml");
	assert_false(k.defaults_from_operator);
	assert_int_equal(knowledge_check(&k, NULL), 0);

	const struct card *thor = knowledge_card(&k, "thor");
	assert_non_null(thor);
	assert_false(thor->from_operator);
	assert_string_equal(thor->pos.file, "data/cards/thor.yaml");
	assert_int_equal(thor->pos.line, 3);
	assert_int_equal(thor->pos.col, 7);
	assert_string_equal(thor->compute_cap, "11.0");
	assert_string_equal(thor->name_markers[0], "Thor");
	assert_null(thor->name_markers[1]);
	assert_string_equal(thor->dt_markers[0], "Jetson AGX Thor");
	assert_true(thor->has_mem_band);
	assert_true(thor->mem_min_gib == 100 && thor->mem_max_gib == 140);
	assert_string_equal(thor->memory_model, "unified");
	assert_string_equal(thor->gpu_attach, "reservation");
	assert_string_equal(thor->status, "validated");
	assert_string_equal(thor->profile, "thor");
	assert_string_equal(thor->attention_path[LANE_GENERATE], "TRITON_ATTN");
	assert_string_equal(thor->attention_path[LANE_POOLING], "FLASH_ATTN");
	assert_string_equal(thor->gfd_product, "NVIDIA-Thor");
	assert_string_equal(thor->gfd_compute_major, "11");
	assert_string_equal(thor->gfd_compute_minor, "0");
	assert_non_null(strstr(thor->gfd_note, "not observed on a live cluster"));
	assert_int_equal(thor->n_evidence, 1);
	assert_string_equal(thor->evidence[0].kind, "measured");
	assert_string_equal(thor->evidence[0].date, "2026-07-13");
	const struct card *orin = knowledge_card(&k, "orin");
	assert_string_equal(orin->dt_exclude[0], "Orin Nano");
	assert_string_equal(orin->gpu_attach, "runtime");
	assert_null(orin->attention_path[LANE_GENERATE]);

	const struct trait *t = knowledge_trait(&k, "sm110-pooling-triton");
	assert_non_null(t);
	assert_int_equal(t->roles_mask, (1u << ROLE_EMBEDDER) | (1u << ROLE_RERANKER));
	assert_int_equal(t->n_when, 2);
	assert_string_equal(t->when[0].fact, "card.compute_cap");
	assert_string_equal(t->when[0].op, "eq");
	assert_string_equal(t->when[0].values[0], "11.0");
	assert_null(t->when[0].values[1]);
	assert_int_equal(t->when[0].pos.line, 9);
	assert_int_equal(t->when[0].pos.col, 5);
	assert_string_equal(t->on_unknown, "skip");
	assert_int_equal(t->n_set, 1);
	assert_int_equal(t->set[0].knob, KNOB_ATTENTION_BACKEND);
	assert_string_equal(t->set[0].value, "TRITON_ATTN");
	const struct trait *fp8 = knowledge_trait(&k, "fp8-kv-needs-scales-on-triton");
	assert_int_equal(fp8->roles_mask, 0);
	assert_string_equal(fp8->when[0].op, "in");
	assert_string_equal(fp8->when[0].values[2], "fp8_e5m2");
	assert_int_equal(fp8->n_evidence, 5);
	assert_string_equal(fp8->evidence[4].kind, "declared");
	/* the fp8 observations name the checkpoint they were made on (FACTS.md) */
	assert_non_null(strstr(fp8->evidence[0].observation, "sakamakismile/Qwen3.6-27B-Text-NVFP4-MTP"));
	assert_null(strstr(fp8->evidence[0].observation, "Qwen3.8"));
	assert_non_null(fp8->assume);
	const struct trait *dead = knowledge_trait(&k, "attention-backend-env-dead");
	assert_int_equal(dead->n_when, 0);
	assert_string_equal(dead->dead_env[0], "VLLM_ATTENTION_BACKEND");
	assert_string_equal(dead->dead_env_replacement, "--attention-config={\"backend\": \"<NAME>\"}");
	assert_string_equal(knowledge_trait(&k, "unified-memory-one-window")->bringup, "one-at-a-time");
	assert_string_equal(knowledge_trait(&k, "sm110-reranker-eager")->set[0].value, "true");

	const struct profile *spark = knowledge_profile(&k, "spark");
	assert_non_null(spark);
	assert_string_equal(spark->card, "spark");
	assert_true(spark->roles[ROLE_CORTEX].present);
	assert_string_equal(spark->roles[ROLE_CORTEX].knobs[KNOB_GPU_MEM_UTIL], "0.30");
	assert_string_equal(spark->roles[ROLE_CORTEX].knobs[KNOB_MAX_MODEL_LEN], "131072");
	assert_string_equal(spark->roles[ROLE_CORTEX].knobs[KNOB_MAX_NUM_SEQS], "2");
	assert_null(spark->roles[ROLE_CORTEX].knobs[KNOB_KV_CACHE_DTYPE]);
	assert_int_equal(spark->roles[ROLE_CORTEX].knob_pos[KNOB_GPU_MEM_UTIL].line, 15);
	assert_int_equal(spark->roles[ROLE_CORTEX].knob_pos[KNOB_GPU_MEM_UTIL].col, 19);
	assert_string_equal(spark->traits[1], "unified-memory-one-window");
	assert_string_equal(spark->order[4], "reranker");
	const struct profile *base = knowledge_profile(&k, "base");
	assert_string_equal(base->card, "any");
	assert_string_equal(base->roles[ROLE_SENSES].knobs[KNOB_FEASIBLE], "false");
	assert_null(base->roles[ROLE_SENSES].knobs[KNOB_MODEL]);
	const struct profile *thorp = knowledge_profile(&k, "thor");
	/* the reranker ordering passes with its overrides: no known failure left */
	assert_int_equal(thorp->n_known_failures, 0);

	assert_string_equal(k.defaults[ROLE_CORTEX].knobs[KNOB_KV_CACHE_DTYPE], "fp8");
	assert_string_equal(k.defaults[ROLE_HAND].knobs[KNOB_KV_CACHE_DTYPE], "auto");
	assert_string_equal(k.defaults[ROLE_RERANKER].knobs[KNOB_MAX_NUM_SEQS], "auto");
	assert_string_equal(k.defaults[ROLE_EMBEDDER].knobs[KNOB_ENFORCE_EAGER], "false");

	assert_null(knowledge_card(&k, "h100"));
	assert_null(knowledge_trait(&k, "nope"));
	assert_null(knowledge_profile(&k, "nope"));
}

/* Knob values are stored canonical. */
static void test_canonical_values(void **state)
{
	(void)state;
	_cleanup_k_ struct knowledge k = { 0 };
	assert_null(add(&k, "p.yaml",
			"kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n"
			"  cortex: {gpu_mem_util: 0.3, max_model_len: 08192, enforce_eager: false}\n"
			"  hand: {gpu_mem_util: 1, max_num_seqs: auto}\n",
			false));
	const struct profile *p = knowledge_profile(&k, "p");
	assert_string_equal(p->roles[ROLE_CORTEX].knobs[KNOB_GPU_MEM_UTIL], "0.30");
	assert_string_equal(p->roles[ROLE_CORTEX].knobs[KNOB_MAX_MODEL_LEN], "8192");
	assert_string_equal(p->roles[ROLE_CORTEX].knobs[KNOB_ENFORCE_EAGER], "false");
	assert_string_equal(p->roles[ROLE_HAND].knobs[KNOB_GPU_MEM_UTIL], "1.00");
	assert_string_equal(p->roles[ROLE_HAND].knobs[KNOB_MAX_NUM_SEQS], "auto");
	assert_false(p->roles[ROLE_SENSES].present);
	assert_null(p->order);
	/* condition values on knobs are canonical too */
	_cleanup_free_ char *yaml = xasprintf("kind: trait\nname: t\ncause: c\nwhen:\n"
					      "  - fact: role.gpu_mem_util\n    eq: 0.3\n%s",
					      EV);
	assert_null(add(&k, "t.yaml", yaml, false));
	assert_string_equal(knowledge_trait(&k, "t")->when[0].values[0], "0.30");
}

/* ---- origins: replacement and duplicates ------------------------------ */

static void test_operator_replaces_whole(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tmpdir();
	/* a thinner sm110-reranker-eager: no roles, no when, a different knob */
	write_file(dir, "traits/reranker.yaml",
		   "kind: trait\nname: sm110-reranker-eager\ncause: operator says so\n"
		   "set:\n  max_num_seqs: 1\n"
		   "evidence:\n  - kind: declared\n    observation: lab note\n");
	/* shipped with on_unknown apply, an assume sentence and 4 evidence entries */
	write_file(dir, "traits/fp8.yaml",
		   "kind: trait\nname: fp8-kv-needs-scales-on-triton\ncause: replaced\n"
		   "evidence:\n  - kind: declared\n    observation: lab note\n");
	/* a card replaced by a flat file */
	write_file(dir, "spark.yaml",
		   "kind: card\nname: spark\nmemory_model: unified\ngpu_attach: runtime\n"
		   "status: partial\nprofile: spark\n");
	_cleanup_k_ struct knowledge k = { 0 };
	struct err *e = NULL;
	int rc = knowledge_load(&k, dir, &e);
	if (rc < 0)
		fail_msg("%s", e->msg);
	assert_int_equal(k.n_traits, 11);
	assert_int_equal(k.n_cards, 4);
	const struct trait *t = knowledge_trait(&k, "sm110-reranker-eager");
	assert_true(t->from_operator);
	_cleanup_free_ char *where = xasprintf("%s/traits/reranker.yaml", dir);
	assert_string_equal(t->pos.file, where);
	assert_int_equal(t->pos.line, 2);
	assert_string_equal(t->cause, "operator says so");
	/* nothing of the shipped trait survives */
	assert_int_equal(t->roles_mask, 0);
	assert_int_equal(t->n_when, 0);
	assert_null(t->when);
	assert_string_equal(t->on_unknown, "skip");
	assert_int_equal(t->n_set, 1);
	assert_int_equal(t->set[0].knob, KNOB_MAX_NUM_SEQS);
	assert_string_equal(t->set[0].value, "1");
	assert_int_equal(t->n_evidence, 1);
	assert_string_equal(t->evidence[0].observation, "lab note");
	const struct trait *fp8 = knowledge_trait(&k, "fp8-kv-needs-scales-on-triton");
	assert_true(fp8->from_operator);
	assert_string_equal(fp8->on_unknown, "skip"); /* the default, not the shipped apply */
	assert_null(fp8->assume);
	assert_int_equal(fp8->n_evidence, 1);
	assert_int_equal(fp8->n_when, 0);
	assert_int_equal(fp8->n_set, 0);
	const struct card *c = knowledge_card(&k, "spark");
	assert_true(c->from_operator);
	assert_null(c->name_markers);
	assert_null(c->compute_cap);
	assert_false(c->has_mem_band);
	assert_null(c->attention_path[LANE_GENERATE]);
	assert_null(c->evidence);
	assert_string_equal(c->gpu_attach, "runtime");
	/* the others are untouched */
	assert_false(knowledge_trait(&k, "sm110-pooling-triton")->from_operator);
	assert_false(knowledge_card(&k, "thor")->from_operator);
	rm_rf(dir);
}

/* An operator entry added first is not displaced by a shipped one. */
static void test_operator_wins_in_any_order(void **state)
{
	(void)state;
	_cleanup_k_ struct knowledge k = { 0 };
	_cleanup_free_ char *op = xasprintf("kind: trait\nname: t\ncause: operator\n%s", EV);
	_cleanup_free_ char *sh = xasprintf("kind: trait\nname: t\ncause: shipped\n%s", EV);
	assert_null(add(&k, "/etc/op.yaml", op, true));
	assert_null(add(&k, "data/traits/t.yaml", sh, false));
	assert_int_equal(k.n_traits, 1);
	assert_string_equal(k.traits[0].cause, "operator");
	/* operator defaults replace shipped defaults whole */
	assert_null(add(&k, "data/template/defaults.yaml",
			 "kind: defaults\nroles:\n  cortex: {kv_cache_dtype: fp8, enforce_eager: false}\n",
			 false));
	assert_null(add(&k, "/etc/defaults.yaml", "kind: defaults\nroles:\n  hand: {feasible: false}\n",
			true));
	assert_true(k.defaults_from_operator);
	assert_string_equal(k.defaults_pos.file, "/etc/defaults.yaml");
	assert_null(k.defaults[ROLE_CORTEX].knobs[KNOB_KV_CACHE_DTYPE]);
	assert_false(k.defaults[ROLE_CORTEX].present);
	assert_string_equal(k.defaults[ROLE_HAND].knobs[KNOB_FEASIBLE], "false");
}

static void test_duplicates_rejected(void **state)
{
	(void)state;
	_cleanup_k_ struct knowledge k = { 0 };
	_cleanup_free_ char *a = xasprintf("kind: trait\nname: same\ncause: a\n%s", EV);
	_cleanup_free_ char *b = xasprintf("# another\nkind: trait\nname:   same\ncause: b\n%s", EV);
	assert_null(add(&k, "data/traits/a.yaml", a, false));
	_cleanup_free_ char *m = add(&k, "data/traits/b.yaml", b, false);
	assert_string_equal(m, "data/traits/b.yaml:3:9: duplicate trait 'same', first defined at "
			       "data/traits/a.yaml:2:7; expected one file per name");
	assert_int_equal(k.n_traits, 1);
	assert_string_equal(k.traits[0].cause, "a");
	/* the same among operator files */
	assert_null(add(&k, "/op/x.yaml", a, true));
	_cleanup_free_ char *m2 = add(&k, "/op/y.yaml", b, true);
	assert_string_equal(m2, "/op/y.yaml:3:9: duplicate trait 'same', first defined at "
				"/op/x.yaml:2:7; expected one file per name");
	/* cards, profiles and defaults too */
	const char *card = "kind: card\nname: c\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n";
	assert_null(add(&k, "c1.yaml", card, false));
	_cleanup_free_ char *m3 = add(&k, "c2.yaml", card, false);
	assert_string_equal(m3, "c2.yaml:2:7: duplicate card 'c', first defined at c1.yaml:2:7; "
				"expected one file per name");
	const char *prof = "kind: profile\nname: p\ncard: any\nstatus: partial\nroles: {}\n";
	assert_null(add(&k, "p1.yaml", prof, false));
	_cleanup_free_ char *m4 = add(&k, "p2.yaml", prof, false);
	assert_string_equal(m4, "p2.yaml:2:7: duplicate profile 'p', first defined at p1.yaml:2:7; "
				"expected one file per name");
	const char *defs = "kind: defaults\nroles:\n  cortex: {feasible: true}\n";
	assert_null(add(&k, "d1.yaml", defs, false));
	_cleanup_free_ char *m5 = add(&k, "d2.yaml", defs, false);
	assert_string_equal(m5, "d2.yaml:1:1: duplicate defaults, first defined at d1.yaml:1:1; "
				"expected one defaults file");
}

/* Two operator files with one name, found by knowledge_load in a directory. */
static void test_duplicate_operator_files(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tmpdir();
	_cleanup_free_ char *t = xasprintf("kind: trait\nname: lab\ncause: c\n%s", EV);
	write_file(dir, "a.yaml", t);
	write_file(dir, "traits/b.yml", t);
	_cleanup_k_ struct knowledge k = { 0 };
	struct err *e = NULL;
	assert_int_equal(knowledge_load(&k, dir, &e), -1);
	_cleanup_free_ char *want = xasprintf("%s/traits/b.yml:2:7: duplicate trait 'lab', first defined "
					      "at %s/a.yaml:2:7; expected one file per name",
					      dir, dir);
	assert_string_equal(e->msg, want);
	assert_int_equal(e->code, EXIT_CONFIG);
	/* a failed load leaves nothing behind */
	assert_int_equal(k.n_cards + k.n_traits + k.n_profiles, 0);
	err_free(e);
	rm_rf(dir);
}

/* ---- operator directories --------------------------------------------- */

static void test_operator_dir_missing_ok(void **state)
{
	(void)state;
	_cleanup_k_ struct knowledge k = { 0 };
	assert_int_equal(knowledge_load(&k, "/nonexistent/lobes/profiles", NULL), 0);
	assert_int_equal(k.n_profiles, 5);
	knowledge_free(&k);
	assert_int_equal(knowledge_load(&k, NULL, NULL), 0);
	assert_int_equal(k.n_cards, 4);
}

static void test_operator_dir_is_file(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tmpdir();
	write_file(dir, "profiles", "not a directory\n");
	_cleanup_free_ char *p = xasprintf("%s/profiles", dir);
	_cleanup_k_ struct knowledge k = { 0 };
	struct err *e = NULL;
	assert_int_equal(knowledge_load(&k, p, &e), -1);
	_cleanup_free_ char *want = xasprintf("operator directory '%s' is not a directory; expected a "
					      "directory of YAML files",
					      p);
	assert_string_equal(e->msg, want);
	assert_int_equal(e->code, EXIT_CONFIG);
	err_free(e);
	e = NULL;
	/* a file where a kind subdirectory should be */
	_cleanup_free_ char *dir2 = tmpdir();
	write_file(dir2, "traits", "x\n");
	assert_int_equal(knowledge_load_dir(&k, dir2, true, &e), -1);
	_cleanup_free_ char *want2 = xasprintf("'%s/traits' is not a directory; expected a directory "
					       "of YAML files",
					       dir2);
	assert_string_equal(e->msg, want2);
	err_free(e);
	rm_rf(dir);
	rm_rf(dir2);
}

/* An operator file's errors name its full path. */
static void test_operator_file_error_names_path(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tmpdir();
	write_file(dir, "profiles/lab.yaml",
		   "kind: profile\nname: lab\ncard: any\nstatus: partial\nroles:\n"
		   "  cortex:\n    gpu_mem_util: 1.2\n");
	write_file(dir, "README.md", "not yaml, not read\n");
	_cleanup_k_ struct knowledge k = { 0 };
	struct err *e = NULL;
	assert_int_equal(knowledge_load(&k, dir, &e), -1);
	_cleanup_free_ char *want = xasprintf("%s/profiles/lab.yaml:7:19: gpu_mem_util '1.2' is invalid; "
					      "expected a number in (0,1]",
					      dir);
	assert_string_equal(e->msg, want);
	err_free(e);
	rm_rf(dir);
}

/* A data/-like tree loads through knowledge_load_dir, shipped origin. */
static void test_load_dir_layout(void **state)
{
	(void)state;
	_cleanup_free_ char *data = src_path("data");
	_cleanup_k_ struct knowledge k = { 0 };
	struct err *e = NULL;
	if (knowledge_load_dir(&k, data, false, &e) < 0)
		fail_msg("%s", e->msg);
	assert_int_equal(k.n_cards, 4);
	assert_int_equal(k.n_traits, 11);
	assert_int_equal(k.n_profiles, 5);
	assert_non_null(k.defaults_pos.file);
	assert_int_equal(knowledge_check(&k, NULL), 0);
	_cleanup_free_ char *want = xasprintf("%s/cards/orin.yaml", data);
	assert_string_equal(knowledge_card(&k, "orin")->pos.file, want);
	assert_int_equal(knowledge_load_dir(&k, "/nonexistent/lobes", false, &e), -1);
	assert_string_equal(e->msg, "knowledge directory '/nonexistent/lobes' does not exist");
	err_free(e);
}

/* ---- malformed files --------------------------------------------------- */

struct bad {
	const char *yaml;
	const char *msg; /* after "bad.yaml:" */
};

static const struct bad bad_inline[] = {
	{ "kind: card\nname: x\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\ncolour: red\n",
	  "6:1: unknown key 'colour' in a card; expected one of kind, name, description, detect, "
	  "memory_model, gpu_attach, status, profile, attention_path, kubernetes, evidence" },
	{ "kind: card\nname: x\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n"
	  "kubernetes:\n  gpu_product: NVIDIA Thor\n  compute_major: '11'\n  compute_minor: '0'\n",
	  "7:16: 'NVIDIA Thor' is not a label value; expected 1-63 letters, digits, '-', '_' or '.', "
	  "starting and ending with a letter or digit" },
	{ "kind: card\nname: x\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n"
	  "kubernetes:\n  gpu_product: NVIDIA-Thor\n  compute_minor: '0'\n",
	  "7:3: missing 'compute_major' in 'kubernetes'; expected a node label value" },
	{ "kind: card\nname: x\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n"
	  "kubernetes:\n  gpu_product: a\n  compute_major: '1'\n  compute_minor: '0'\n  family: x\n",
	  "10:3: unknown key 'family' in 'kubernetes'; expected one of gpu_product, compute_major, "
	  "compute_minor, note" },
	{ "kind: trait\nname: t\ncause: c\nevidence:\n  - kind: declared\n    observation: o\n    url: x\n",
	  "7:5: unknown key 'url' in an evidence entry; expected one of kind, date, box, image, "
	  "observation, ref" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n  brain:\n    model: a/b\n",
	  "6:3: unknown role 'brain' in 'roles'; expected one of cortex, senses, hand, embedder, reranker" },
	{ "kind: trait\nname: t\ncause: c\nroles: [hand, brain]\nevidence: [{kind: declared, observation: o}]\n",
	  "4:15: unknown role 'brain' in 'roles'; expected one of cortex, senses, hand, embedder, reranker" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n  cortex:\n    temperature: 0.7\n",
	  "7:5: unknown knob 'temperature' in role 'cortex'; expected one of model, feasible, "
	  "gpu_mem_util, max_model_len, quantization, kv_cache_dtype, attention_backend, "
	  "enforce_eager, max_num_seqs, image, served_names, runner, convert, reasoning_parser, tool_call_parser, enable_prefix_caching, speculative_config, hf_overrides, trust_remote_code, enable_lora, max_loras, max_lora_rank, lora_dir" },
	{ "kind: trait\nname: t\ncause: c\nset:\n  temperature: 0\nevidence: [{kind: declared, observation: o}]\n",
	  "5:3: unknown knob 'temperature' in 'set'; expected one of model, feasible, gpu_mem_util, "
	  "max_model_len, quantization, kv_cache_dtype, attention_backend, enforce_eager, max_num_seqs"
	  ", image, served_names, runner, convert, reasoning_parser, tool_call_parser, enable_prefix_caching, speculative_config, hf_overrides, trust_remote_code, enable_lora, max_loras, max_lora_rank, lora_dir" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n  cortex:\n    gpu_mem_util: {a: 1}\n",
	  "7:19: 'gpu_mem_util' is a mapping; expected a scalar" },
	{ "kind: card\nname: x\ndetect: [GB10]\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n",
	  "3:9: 'detect' is a sequence; expected a mapping" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n  cortex:\n    gpu_mem_util: 1.5\n",
	  "7:19: gpu_mem_util '1.5' is invalid; expected a number in (0,1]" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n  cortex:\n    gpu_mem_util: lots\n",
	  "7:19: gpu_mem_util 'lots' is invalid; expected a number in (0,1]" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n  cortex:\n    gpu_mem_util: 0\n",
	  "7:19: gpu_mem_util '0' is invalid; expected a number in (0,1]" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n  cortex:\n    max_model_len: -4096\n",
	  "7:20: max_model_len '-4096' is invalid; expected a positive integer" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n  hand:\n    max_model_len: 4k\n",
	  "7:20: max_model_len '4k' is invalid; expected a positive integer" },
	{ "kind: trait\nname: t\ncause: c\nset:\n  max_num_seqs: 0\nevidence: [{kind: declared, observation: o}]\n",
	  "5:17: max_num_seqs '0' is invalid; expected a positive integer or auto" },
	{ "kind: trait\nname: t\ncause: c\nset:\n  enforce_eager: yes\nevidence: [{kind: declared, observation: o}]\n",
	  "5:18: enforce_eager 'yes' is invalid; expected true or false" },
	{ "kind: trait\nname: t\ncause: c\nset:\n  kv_cache_dtype: fp4\nevidence: [{kind: declared, observation: o}]\n",
	  "5:19: kv_cache_dtype 'fp4' is invalid; expected one of auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16" },
	{ "kind: trait\nname: t\ncause: c\nset:\n  attention_backend: triton\nevidence: [{kind: declared, observation: o}]\n",
	  "5:22: attention_backend 'triton' is invalid; expected auto or a backend name such as TRITON_ATTN" },
	{ "kind: trait\nname: ../t\ncause: c\n",
	  "2:7: name '../t' is invalid; expected a non-empty name without '/', '..' or spaces" },
	{ "kind: trait\nname: \"lab trait\"\ncause: c\n",
	  "2:7: name 'lab trait' is invalid; expected a non-empty name without '/', '..' or spaces" },
	{ "kind: card\nname: vendor/x\nmemory_model: unified\n",
	  "2:7: name 'vendor/x' is invalid; expected a non-empty name without '/', '..' or spaces" },
	{ "kind: trait\nname: \"\"\ncause: c\n",
	  "2:7: 'name' is empty; expected a non-empty name without '/', '..' or spaces" },
	{ "kind: card\nname: x\ngpu_attach: runtime\nstatus: partial\n",
	  "1:1: missing 'memory_model' in a card; expected unified or discrete" },
	{ "# a trait with no evidence\nkind: trait\nname: t\ncause: c\n",
	  "2:1: missing 'evidence' in a trait; expected a list of evidence entries" },
	{ "kind: trait\nname: t\nevidence: [{kind: declared, observation: o}]\n",
	  "1:1: missing 'cause' in a trait; expected a sentence naming the cause" },
	{ "kind: profile\nname: p\nstatus: partial\nroles: {}\n",
	  "1:1: missing 'card' in a profile; expected the name of a card, or any" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\n",
	  "1:1: missing 'roles' in a profile; expected a mapping of roles to knobs" },
	{ "kind: card\nmemory_model: unified\n",
	  "1:1: missing 'name' in a card; expected a non-empty name without '/', '..' or spaces" },
	{ "kind: trait\nname: t\ncause: c\nwhen:\n  - fact: card.vendor\n    eq: nvidia\n"
	  "evidence: [{kind: declared, observation: o}]\n",
	  "5:11: unknown fact 'card.vendor'; expected one of card.id, card.compute_cap, "
	  "card.memory_model, card.mem_gib, role.name, role.lane, role.model, role.attention_path, role.speculative_method, "
	  "role.<knob>, checkpoint.kv_scales, checkpoint.quant_method, checkpoint.hetero_head_dim" },
	{ "kind: trait\nname: t\ncause: c\nwhen:\n  - fact: role.temperature\n    eq: 1\n"
	  "evidence: [{kind: declared, observation: o}]\n",
	  "5:11: unknown fact 'role.temperature'; expected one of card.id, card.compute_cap, "
	  "card.memory_model, card.mem_gib, role.name, role.lane, role.model, role.attention_path, role.speculative_method, "
	  "role.<knob>, checkpoint.kv_scales, checkpoint.quant_method, checkpoint.hetero_head_dim" },
	{ "kind: trait\nname: t\ncause: c\nwhen:\n  - fact: card.mem_gib\n    gt: 4\n"
	  "evidence: [{kind: declared, observation: o}]\n",
	  "6:5: unknown key 'gt' in a condition; expected one of fact, eq, ne, in, lt, ge" },
	{ "kind: trait\nname: t\ncause: c\nwhen:\n  - {fact: card.id, eq: thor, ne: spark}\n"
	  "evidence: [{kind: declared, observation: o}]\n",
	  "5:31: condition on 'card.id' has more than one operator; expected exactly one of eq, ne, in, lt, ge" },
	{ "kind: trait\nname: t\ncause: c\nwhen:\n  - fact: card.id\n"
	  "evidence: [{kind: declared, observation: o}]\n",
	  "5:5: condition on 'card.id' has no operator; expected exactly one of eq, ne, in, lt, ge" },
	{ "kind: trait\nname: t\ncause: c\nwhen:\n  - fact: role.name\n    lt: 3\n"
	  "evidence: [{kind: declared, observation: o}]\n",
	  "6:5: operator 'lt' on non-numeric fact 'role.name'; expected eq, ne or in" },
	{ "kind: trait\nname: t\ncause: c\nwhen:\n  - fact: role.lane\n    in: [generate, embed]\n"
	  "evidence: [{kind: declared, observation: o}]\n",
	  "6:20: 'in' value 'embed' is invalid for role.lane; expected generate or pooling" },
	{ "kind: trait\nname: t\ncause: c\nwhen:\n  fact: card.id\n  eq: thor\n"
	  "evidence: [{kind: declared, observation: o}]\n",
	  "5:3: 'when' is a mapping; expected a list of conditions" },
	{ "kind: trait\nname: t\ncause: c\non_unknown: maybe\nevidence: [{kind: declared, observation: o}]\n",
	  "4:13: on_unknown 'maybe' is unknown; expected apply or skip" },
	{ "kind: trait\nname: t\ncause: c\nevidence:\n  - kind: guessed\n    observation: o\n",
	  "5:11: kind 'guessed' is unknown; expected measured or declared" },
	{ "kind: trait\nname: t\ncause: c\nevidence:\n  - kind: measured\n    date: yesterday\n    observation: o\n",
	  "6:11: date 'yesterday' is not a date; expected YYYY-MM-DD" },
	{ "kind: trait\nname: t\ncause: c\nevidence: []\n",
	  "4:11: 'evidence' is an empty list; expected at least one evidence entry" },
	{ "kind: card\nname: x\ndetect:\n  memory_gib: [12, 4]\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n",
	  "4:15: memory_gib minimum is not below its maximum; expected a [min, max] pair of GiB with 0 <= min < max" },
	{ "kind: card\nname: x\ndetect:\n  memory_gib: [1, 2, 3]\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n",
	  "4:15: 'memory_gib' has 3 entries; expected a [min, max] pair of GiB with 0 <= min < max" },
	{ "kind: card\nname: x\ndetect:\n  memory_gib: 64\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n",
	  "4:15: 'memory_gib' is a scalar; expected a [min, max] pair of GiB with 0 <= min < max" },
	{ "kind: card\nname: x\ndetect:\n  memory_gib: [-4, 12]\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n",
	  "4:16: memory_gib entry '-4' is negative; expected a [min, max] pair of GiB with 0 <= min < max" },
	{ "kind: card\nname: x\nmemory_model: shared\ngpu_attach: runtime\nstatus: partial\n",
	  "3:15: memory_model 'shared' is unknown; expected unified or discrete" },
	{ "kind: card\nname: x\nmemory_model: unified\ngpu_attach: pcie\nstatus: partial\n",
	  "4:13: gpu_attach 'pcie' is unknown; expected reservation or runtime" },
	{ "kind: card\nname: x\nmemory_model: unified\ngpu_attach: runtime\nstatus: tested\n",
	  "5:9: status 'tested' is unknown; expected validated, partial or unvalidated" },
	{ "kind: card\nname: x\ndetect:\n  compute_cap: 9\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n",
	  "4:16: compute_cap '9' is not a compute capability; expected MAJOR.MINOR such as \"12.1\"" },
	{ "kind: card\nname: x\nmemory_model: unified\ngpu_attach: runtime\nstatus: partial\n"
	  "attention_path:\n  generate: flash\n",
	  "7:13: attention path 'flash' is not a backend name; expected an UPPER_CASE name such as FLASH_ATTN" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\norder: [cortex, cortex]\nroles:\n  cortex: {}\n",
	  "5:17: 'order' lists 'cortex' twice; expected each entry once" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles:\n  cortex:\n",
	  "6:3: 'cortex' is empty; expected a mapping of knobs" },
	{ "kind: profile\nname: p\ncard: any\nstatus: partial\nroles: {}\nknown_failures:\n  - role: brain\n    reason: r\n",
	  "7:11: role 'brain' is unknown; expected cortex, senses, hand, embedder or reranker" },
	{ "name: x\n", "1:1: missing 'kind' in the document; expected card, trait, profile, image, family or defaults" },
	{ "kind: chip\nname: x\n", "1:7: kind 'chip' is unknown; expected card, trait, profile, image, family or defaults" },
	{ "- kind: card\n", "1:1: the document is a sequence; expected a mapping with a 'kind' key" },
	{ "", "1:1: empty document; expected a mapping with a 'kind' key" },
	{ "kind: defaults\nroles:\n  cortex: {feasible: maybe}\n",
	  "3:22: feasible 'maybe' is invalid; expected true or false" },
	{ "kind: defaults\nname: d\nroles: {}\n",
	  "2:1: unknown key 'name' in the defaults; expected one of kind, roles" },
	{ "kind: trait\nname: t\ncause: c\ndead_env: [vllm_x]\nevidence: [{kind: declared, observation: o}]\n",
	  "4:12: invalid environment variable name 'vllm_x' in 'dead_env'; expected UPPER_CASE "
	  "environment variable names" },
	{ "kind: trait\nname: t\ncause: c\nbringup: all\nevidence: [{kind: declared, observation: o}]\n",
	  "4:10: bringup 'all' is unknown; expected one-at-a-time or together" },
};

static void test_malformed_inline(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_inline) / sizeof(bad_inline[0]); i++) {
		_cleanup_k_ struct knowledge k = { 0 };
		_cleanup_free_ char *m = add(&k, "bad.yaml", bad_inline[i].yaml, false);
		_cleanup_free_ char *want = xasprintf("bad.yaml:%s", bad_inline[i].msg);
		if (!m)
			fail_msg("case %zu loaded; expected %s", i, want);
		if (strcmp(m, want) != 0)
			fail_msg("case %zu:\n got: %s\nwant: %s", i, m, want);
		/* nothing was added */
		assert_int_equal(k.n_cards + k.n_traits + k.n_profiles, 0);
		assert_null(k.defaults_pos.file);
	}
}

static const struct bad bad_files[] = {
	{ "syntax-unclosed-flow.yaml",
	  "4:1: invalid YAML: flow sequence without a closing bracket; expected a well-formed YAML document" },
	{ "syntax-tab-indent.yaml",
	  "1:7: invalid YAML: invalid multiline plain key; expected a well-formed YAML document" },
	{ "two-documents.yaml", "5:1: a second YAML document; expected one document per file" },
	{ "empty.yaml", "1:1: empty document; expected a mapping with a 'kind' key" },
	{ "duplicate-key.yaml", "4:1: duplicate key 'cause' in a trait; expected each key once" },
	{ "nested-unknown-key.yaml",
	  "5:3: unknown key 'pci_id' in 'detect'; expected one of name_markers, dt_markers, dt_exclude, "
	  "compute_cap, memory_gib" },
	{ "knob-is-sequence.yaml", "5:25: 'model' is a sequence; expected a scalar" },
	{ "alias.yaml", "2:7: a YAML anchor ('&'); expected plain data (lobes files use no anchors or "
			"aliases; quote a value that starts with '&')" },
};

/* Fixture files, read from disk: the message names the path given. */
static void test_malformed_files(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		_cleanup_free_ char *rel = xasprintf("tests/fixtures/knowledge/bad/%s", bad_files[i].yaml);
		_cleanup_free_ char *path = src_path(rel);
		size_t len = 0;
		_cleanup_free_ char *text = fs_read(path, 0, &len, NULL);
		assert_non_null(text);
		_cleanup_k_ struct knowledge k = { 0 };
		struct err *e = NULL;
		if (knowledge_add_yaml(&k, path, text, len, true, &e) == 0)
			fail_msg("%s loaded", rel);
		_cleanup_free_ char *want = xasprintf("%s:%s", path, bad_files[i].msg);
		if (strcmp(e->msg, want) != 0)
			fail_msg("%s:\n got: %s\nwant: %s", rel, e->msg, want);
		assert_int_equal(e->code, EXIT_CONFIG);
		err_free(e);
	}
}

/* libfyaml's diagnostics are collected, never printed. */
static void test_library_does_not_print(void **state)
{
	(void)state;
	fflush(stderr);
	int saved = dup(2);
	char tmpl[] = "/tmp/lobes-kt-stderr.XXXXXX";
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	dup2(fd, 2);
	_cleanup_k_ struct knowledge k = { 0 };
	_cleanup_free_ char *m1 = add(&k, "x.yaml", "kind: card\nname: [x\n", false);
	_cleanup_free_ char *m2 = add(&k, "y.yaml", "a: 1\na: 2\n", false);
	_cleanup_free_ char *m3 = add(&k, "z.yaml", "kind: card\n\tname: x\n", false);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	unlink(tmpl);
	assert_non_null(m1);
	assert_non_null(m2);
	assert_non_null(m3);
	assert_int_equal(st.st_size, 0);
}

/* ---- cross-checks ------------------------------------------------------ */

static void test_check(void **state)
{
	(void)state;
	_cleanup_free_ char *trait = xasprintf("kind: trait\nname: t\ncause: c\n%s", EV);
	struct {
		const char *yaml, *msg;
	} cases[] = {
		{ "kind: profile\nname: p\ncard: h100\nstatus: partial\nroles: {}\n",
		  "p.yaml:3:7: profile 'p' names unknown card 'h100'; expected the name of a card or any" },
		{ "kind: profile\nname: p\ncard: any\nstatus: partial\ntraits:\n  - t\n  - missing-trait\nroles: {}\n",
		  "p.yaml:7:5: profile 'p' lists unknown trait 'missing-trait'; expected the name of a trait" },
		{ "kind: trait\nname: u\ncause: c\noverrides: [t, gone]\nevidence: [{kind: declared, observation: o}]\n",
		  "p.yaml:4:16: trait 'u' overrides unknown trait 'gone'; expected the name of a trait" },
		{ "kind: card\nname: c\nmemory_model: discrete\ngpu_attach: runtime\nstatus: partial\nprofile: nothere\n",
		  "p.yaml:6:10: card 'c' names unknown profile 'nothere'; expected the name of a profile" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_k_ struct knowledge k = { 0 };
		assert_null(add(&k, "t.yaml", trait, false));
		assert_int_equal(knowledge_check(&k, NULL), 0);
		assert_null(add(&k, "p.yaml", cases[i].yaml, false));
		struct err *e = NULL;
		assert_int_equal(knowledge_check(&k, &e), -1);
		assert_string_equal(e->msg, cases[i].msg);
		assert_int_equal(e->code, EXIT_CONFIG);
		err_free(e);
	}
	/* the order check also guards structures built by hand */
	_cleanup_k_ struct knowledge k = { 0 };
	assert_null(add(&k, "p.yaml", "kind: profile\nname: p\ncard: any\nstatus: partial\n"
				      "order: [hand, cortex]\nroles: {}\n",
			false));
	free(k.profiles[0].order[1]);
	k.profiles[0].order[1] = xstrdup("hand");
	struct err *e = NULL;
	assert_int_equal(knowledge_check(&k, &e), -1);
	assert_string_equal(e->msg, "p.yaml:5:15: profile 'p' orders role 'hand' twice; expected each "
				    "role once");
	err_free(e);
	free(k.profiles[0].order[1]);
	k.profiles[0].order[1] = xstrdup("brain");
	e = NULL;
	assert_int_equal(knowledge_check(&k, &e), -1);
	assert_string_equal(e->msg, "p.yaml:5:15: profile 'p' orders unknown role 'brain'; expected one "
				    "of cortex, senses, hand, embedder, reranker");
	err_free(e);
}

/* ---- an operator-only card, profile and trait ------------------------- */

static void test_operator_h100_lab(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = src_path("tests/fixtures/knowledge/h100-lab");
	_cleanup_k_ struct knowledge k = { 0 };
	struct err *e = NULL;
	if (knowledge_load(&k, dir, &e) < 0)
		fail_msg("%s", e->msg);
	assert_int_equal(k.n_cards, 5);
	assert_int_equal(k.n_profiles, 6);
	assert_int_equal(k.n_traits, 12);

	const struct card *c = knowledge_card(&k, "h100-lab");
	assert_non_null(c);
	assert_true(c->from_operator);
	_cleanup_free_ char *cpath = xasprintf("%s/cards/h100-lab.yaml", dir);
	assert_string_equal(c->pos.file, cpath);
	assert_int_equal(c->pos.line, 3);
	assert_string_equal(c->name_markers[0], "H100");
	assert_string_equal(c->compute_cap, "9.0");
	assert_string_equal(c->memory_model, "discrete");
	assert_string_equal(c->gpu_attach, "reservation");
	assert_string_equal(c->status, "unvalidated");
	assert_string_equal(c->profile, "h100-lab");
	assert_false(c->has_mem_band);

	const struct profile *p = knowledge_profile(&k, "h100-lab");
	assert_non_null(p);
	assert_true(p->from_operator);
	assert_string_equal(p->card, "h100-lab");
	assert_string_equal(p->roles[ROLE_CORTEX].knobs[KNOB_GPU_MEM_UTIL], "0.50");
	assert_string_equal(p->roles[ROLE_EMBEDDER].knobs[KNOB_GPU_MEM_UTIL], "0.10");
	assert_string_equal(p->roles[ROLE_SENSES].knobs[KNOB_FEASIBLE], "false");
	assert_string_equal(p->order[0], "cortex");
	assert_string_equal(p->traits[0], "sm90-lab-cortex-eager");

	const struct trait *t = knowledge_trait(&k, "sm90-lab-cortex-eager");
	assert_non_null(t);
	assert_true(t->from_operator);
	_cleanup_free_ char *tpath = xasprintf("%s/sm90-lab-cortex-eager.yaml", dir);
	assert_string_equal(t->pos.file, tpath);
	assert_int_equal(t->roles_mask, 1u << ROLE_CORTEX);
	assert_string_equal(t->when[0].fact, "card.compute_cap");
	assert_string_equal(t->when[0].values[0], "9.0");
	assert_string_equal(t->set[0].value, "true");

	/* the shipped knowledge is all still there and shipped */
	assert_false(knowledge_card(&k, "spark")->from_operator);
	assert_false(knowledge_profile(&k, "base")->from_operator);

	/* without the operator directory the lab card does not exist */
	_cleanup_k_ struct knowledge plain = { 0 };
	assert_int_equal(knowledge_load(&plain, NULL, NULL), 0);
	assert_null(knowledge_card(&plain, "h100-lab"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_embedded_loads),
		cmocka_unit_test(test_canonical_values),
		cmocka_unit_test(test_operator_replaces_whole),
		cmocka_unit_test(test_operator_wins_in_any_order),
		cmocka_unit_test(test_duplicates_rejected),
		cmocka_unit_test(test_duplicate_operator_files),
		cmocka_unit_test(test_operator_dir_missing_ok),
		cmocka_unit_test(test_operator_dir_is_file),
		cmocka_unit_test(test_operator_file_error_names_path),
		cmocka_unit_test(test_load_dir_layout),
		cmocka_unit_test(test_malformed_inline),
		cmocka_unit_test(test_malformed_files),
		cmocka_unit_test(test_library_does_not_print),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_operator_h100_lab),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
