/* test_detect.c — host facts from fixture boxes (NVML stub, nvidia-smi stub,
 * Tegra files) and card_match, against cards built here (the rules) and the
 * shipped cards (the data). */
#include "testutil.h"

#include <unistd.h>

#include "../../src/lib/facts/facts.h"
#include "../../src/lib/knowledge/knowledge.h"
#include "../../src/lib/util/fs.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* ---- cards, as data/cards/ declares them ---- */

static char *names_spark[] = { "GB10", NULL };
static char *names_thor[] = { "Thor", NULL };
static char *dt_thor[] = { "Jetson AGX Thor", NULL };
static char *names_orin[] = { "Orin", NULL };
static char *dt_orin[] = { "Jetson AGX Orin", NULL };
static char *ex_orin[] = { "Orin Nano", "Orin NX", NULL };
static char *dt_nano[] = { "Orin Nano", NULL };

static struct card test_cards[] = {
	{ .name = "spark", .name_markers = names_spark, .compute_cap = "12.1", .has_mem_band = true,
	  .mem_min_gib = 100, .mem_max_gib = 140, .status = "validated", .profile = "spark" },
	{ .name = "thor", .name_markers = names_thor, .dt_markers = dt_thor, .compute_cap = "11.0",
	  .has_mem_band = true, .mem_min_gib = 100, .mem_max_gib = 140, .status = "validated",
	  .profile = "thor" },
	{ .name = "orin", .name_markers = names_orin, .dt_markers = dt_orin, .dt_exclude = ex_orin,
	  .compute_cap = "8.7", .has_mem_band = true, .mem_min_gib = 48, .mem_max_gib = 72,
	  .status = "partial", .profile = "orin" },
	{ .name = "orin-nano-super", .name_markers = names_orin, .dt_markers = dt_nano,
	  .compute_cap = "8.7", .has_mem_band = true, .mem_min_gib = 4, .mem_max_gib = 12,
	  .status = "unvalidated", .profile = "orin-nano-super" },
};
static const struct knowledge test_k = { .cards = test_cards, .n_cards = ARRAY_SIZE(test_cards) };

/* Facts built by hand: NULL = unknown. */
static void mkfacts(struct host_facts *f, const char *name, const char *cc, double gib,
		    const char *dt)
{
	memset(f, 0, sizeof(*f));
	if (name)
		fact_set(&f->gpu_name, name, "test");
	if (cc)
		fact_set(&f->compute_cap, cc, "test");
	if (gib > 0) {
		_cleanup_free_ char *b = xasprintf("%llu", (unsigned long long)(gib * GIB));
		fact_set(&f->mem_total, b, "test");
	}
	if (dt)
		fact_set(&f->dt_model, dt, "test");
}

/* card_match's id ("unknown" for NULL), with why returned through *why. */
static const char *match_id(const struct knowledge *k, const struct host_facts *f, char **why)
{
	const struct card *c = card_match(k, f, why);
	assert_non_null(*why);
	return c ? c->name : "unknown";
}

static void test_match_spark(void **state)
{
	(void)state;
	struct host_facts f;
	_cleanup_free_ char *why = NULL;
	mkfacts(&f, "NVIDIA GB10", "12.1", 121.7, NULL);
	assert_string_equal(match_id(&test_k, &f, &why), "spark");
	assert_string_equal(why, "device name \"NVIDIA GB10\" matches marker \"GB10\"; compute "
				 "capability 12.1; memory 121.7 GiB within 100-140");
	host_facts_free(&f);
}

static void test_match_case_insensitive(void **state)
{
	(void)state;
	struct host_facts f;
	_cleanup_free_ char *why = NULL;
	mkfacts(&f, "nvidia gb10", NULL, 0, NULL);
	assert_string_equal(match_id(&test_k, &f, &why), "spark");
	assert_string_contains(why, "compute capability unknown");
	assert_string_contains(why, "memory unknown");
	host_facts_free(&f);
}

static void test_match_vetoes(void **state)
{
	(void)state;
	struct host_facts f;
	/* a known, disagreeing compute capability vetoes the name hit */
	_cleanup_free_ char *w1 = NULL;
	mkfacts(&f, "NVIDIA GB10", "11.0", 121.7, NULL);
	assert_string_equal(match_id(&test_k, &f, &w1), "unknown");
	assert_string_contains(w1, "compute capability 11.0 is not spark's 12.1");
	host_facts_free(&f);
	/* memory outside the band vetoes */
	_cleanup_free_ char *w2 = NULL;
	mkfacts(&f, "NVIDIA GB10", "12.1", 23.5, NULL);
	assert_string_equal(match_id(&test_k, &f, &w2), "unknown");
	assert_string_contains(w2, "memory 23.5 GiB is outside spark's 100-140 GiB");
	host_facts_free(&f);
	/* no marker hit: nothing is a candidate, whatever else agrees */
	_cleanup_free_ char *w3 = NULL;
	mkfacts(&f, "NVIDIA RTX 6000", "12.1", 121.7, NULL);
	assert_string_equal(match_id(&test_k, &f, &w3), "unknown");
	host_facts_free(&f);
}

static void test_match_thor(void **state)
{
	(void)state;
	struct host_facts f;
	_cleanup_free_ char *why = NULL;
	mkfacts(&f, "NVIDIA Thor", "11.0", 122.8, "NVIDIA Jetson AGX Thor Developer Kit");
	assert_string_equal(match_id(&test_k, &f, &why), "thor");
	assert_string_contains(why, "device-tree model \"NVIDIA Jetson AGX Thor Developer Kit\" "
				    "matches marker \"Jetson AGX Thor\"");
	host_facts_free(&f);
}

static void test_match_orin_family(void **state)
{
	(void)state;
	struct host_facts f;
	/* Orin Nano, device-tree only (no nvidia-smi on JetPack 6) */
	_cleanup_free_ char *w1 = NULL;
	mkfacts(&f, NULL, NULL, 7.4,
		"NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super");
	assert_string_equal(match_id(&test_k, &f, &w1), "orin-nano-super");
	host_facts_free(&f);
	/* ... and with an NVML name "Orin" the memory band still separates it */
	_cleanup_free_ char *w2 = NULL;
	mkfacts(&f, "Orin", "8.7", 7.4,
		"NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super");
	assert_string_equal(match_id(&test_k, &f, &w2), "orin-nano-super");
	host_facts_free(&f);
	/* the dt exclusion alone keeps a Nano off orin, even with memory unknown */
	_cleanup_free_ char *w3 = NULL;
	mkfacts(&f, "Orin", "8.7", 0,
		"NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super");
	assert_string_equal(match_id(&test_k, &f, &w3), "orin-nano-super");
	host_facts_free(&f);
	/* AGX Orin 64 GB reads 61.3 GiB */
	_cleanup_free_ char *w4 = NULL;
	mkfacts(&f, NULL, NULL, 61.3, "NVIDIA Jetson AGX Orin Developer Kit");
	assert_string_equal(match_id(&test_k, &f, &w4), "orin");
	assert_string_contains(w4, "memory 61.3 GiB within 48-72");
	host_facts_free(&f);
	_cleanup_free_ char *w5 = NULL;
	mkfacts(&f, "Orin", "8.7", 61.3, "NVIDIA Jetson AGX Orin Developer Kit");
	assert_string_equal(match_id(&test_k, &f, &w5), "orin");
	host_facts_free(&f);
}

static void test_match_tie_is_unknown(void **state)
{
	(void)state;
	struct host_facts f;
	/* name "Orin" and cc 8.7 only: both Orin cards agree on 2 signals */
	_cleanup_free_ char *why = NULL;
	mkfacts(&f, "Orin", "8.7", 0, NULL);
	assert_string_equal(match_id(&test_k, &f, &why), "unknown");
	assert_string_contains(why, "\"orin\"");
	assert_string_contains(why, "\"orin-nano-super\"");
	assert_string_contains(why, "not guessing");
	host_facts_free(&f);
}

static void test_match_unknown_boxes(void **state)
{
	(void)state;
	struct host_facts f;
	_cleanup_free_ char *w1 = NULL;
	mkfacts(&f, "NVIDIA H100 80GB HBM3", "9.0", 79.6, NULL);
	assert_string_equal(match_id(&test_k, &f, &w1), "unknown");
	assert_string_contains(w1, "no card matches: device name \"NVIDIA H100 80GB HBM3\"");
	assert_string_contains(w1, "compute capability 9.0");
	host_facts_free(&f);
	_cleanup_free_ char *w2 = NULL;
	mkfacts(&f, NULL, NULL, 0, NULL);
	assert_string_equal(match_id(&test_k, &f, &w2), "unknown");
	assert_string_contains(w2, "device name unknown");
	host_facts_free(&f);
	/* no knowledge at all */
	_cleanup_free_ char *w3 = NULL;
	mkfacts(&f, "NVIDIA GB10", "12.1", 121.7, NULL);
	struct knowledge empty = { 0 };
	assert_null(card_match(&empty, &f, &w3));
	host_facts_free(&f);
}

/* ---- host facts from fixture boxes ---- */

struct box {
	char *root;     /* tests/fixtures/hosts/<name> */
	char *smi;      /* its bin/nvidia-smi (may not exist: then "not found") */
	char *stub;     /* the stub NVML library */
	char *smi_log;  /* where the stub nvidia-smi logs its argv */
	struct facts_opts o;
};

static void box_open(struct box *b, const char *name, bool nvml)
{
	_cleanup_free_ char *rel = xasprintf("tests/fixtures/hosts/%s", name);
	b->root = src_path(rel);
	b->smi = xasprintf("%s/bin/nvidia-smi", b->root);
	b->stub = build_path("tests/stubs/libnvidia-ml.so.1");
	b->smi_log = xasprintf("/tmp/lobes-smi-argv.%ld", (long)getpid());
	unlink(b->smi_log);
	setenv("STUB_SMI_LOG", b->smi_log, 1);
	setenv("LOBES_SYSROOT", b->root, 1);
	memset(&b->o, 0, sizeof(b->o));
	b->o.nvml_lib = nvml ? b->stub : "/nonexistent/libnvidia-ml.so.1";
	b->o.smi_path = b->smi;
	b->o.smi_timeout_ms = 5000;
}

static void box_close(struct box *b)
{
	unlink(b->smi_log);
	free(b->root);
	free(b->smi);
	free(b->stub);
	free(b->smi_log);
	unsetenv("LOBES_SYSROOT");
	unsetenv("STUB_SMI_LOG");
	unsetenv("STUB_NVML_NAME");
	unsetenv("STUB_NVML_CC");
	unsetenv("STUB_NVML_MEM");
	unsetenv("STUB_NVML_DRIVER");
	unsetenv("STUB_NVML_FAIL_INIT");
}

static void gather(struct box *b, struct host_facts *f)
{
	struct err *e = NULL;
	assert_int_equal(host_facts_gather(f, &b->o, &e), 0);
	assert_null(e);
}

static bool has_note(const struct host_facts *f, const char *needle)
{
	for (char **n = f->notes; n && *n; n++)
		if (strstr(*n, needle))
			return true;
	return false;
}

#define assert_fact(fact, val, src)                          \
	do {                                                 \
		assert_true((fact).valid);                   \
		assert_string_equal((fact).value, (val));    \
		assert_string_equal((fact).source, (src));   \
	} while (0)
#define assert_unknown(fact)               \
	do {                               \
		assert_false((fact).valid);  \
		assert_null((fact).value);   \
	} while (0)

static void assert_memgib(const struct host_facts *f, double want)
{
	double gib = 0;
	assert_true(host_facts_mem_gib(f, &gib));
	assert_true(gib > want - 0.05 && gib < want + 0.05);
}

/* The argv the stub nvidia-smi logged: exactly the two query options. */
static void assert_smi_argv(const struct box *b)
{
	struct err *e = NULL;
	_cleanup_free_ char *log = fs_read(b->smi_log, 0, NULL, &e);
	assert_non_null(log);
	assert_string_equal(log, "--query-gpu=name,compute_cap\n--format=csv,noheader\n");
	assert_null(strstr(log, "memory"));
}

static void test_box_gb10_smi(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "gb10", false);
	struct host_facts f;
	gather(&b, &f);
	assert_fact(f.gpu_name, "NVIDIA GB10", "nvidia-smi");
	assert_fact(f.compute_cap, "12.1", "nvidia-smi");
	assert_fact(f.memory_model, "unified", "device name (integrated part GB10)");
	assert_string_equal(f.mem_total.source, "/proc/meminfo");
	assert_memgib(&f, 121.7);
	assert_fact(f.driver, "580.95.05", "/proc/driver/nvidia/version");
	assert_fact(f.hostname, "spark", "/etc/hostname");
	assert_unknown(f.dt_model);
	assert_unknown(f.l4t_release);
	assert_true(has_note(&f, "nvml: /nonexistent/libnvidia-ml.so.1 not found"));
	assert_smi_argv(&b);
	int ma = 0, mi = 0;
	assert_true(host_facts_cc(&f, &ma, &mi));
	assert_int_equal(ma, 12);
	assert_int_equal(mi, 1);
	_cleanup_free_ char *why = NULL;
	assert_string_equal(match_id(&test_k, &f, &why), "spark");
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_gb10_nvml(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "gb10", true);
	setenv("STUB_NVML_NAME", "NVIDIA GB10", 1);
	setenv("STUB_NVML_CC", "12.1", 1);
	setenv("STUB_NVML_MEM", "NOT_SUPPORTED", 1);
	setenv("STUB_NVML_DRIVER", "580.95.05", 1);
	struct host_facts f;
	gather(&b, &f);
	assert_fact(f.gpu_name, "NVIDIA GB10", "nvml");
	assert_fact(f.compute_cap, "12.1", "nvml");
	assert_fact(f.driver, "580.95.05", "nvml");
	assert_fact(f.memory_model, "unified", "device name (integrated part GB10)");
	assert_string_equal(f.mem_total.source, "/proc/meminfo");
	assert_memgib(&f, 121.7);
	assert_true(has_note(&f, "nvml: memory query not supported"));
	/* NVML answered: nvidia-smi was not run */
	assert_false(fs_exists(b.smi_log));
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_nvml_mem_zero_is_unified(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "cpu-only", true);
	setenv("STUB_NVML_NAME", "NVIDIA Future iGPU", 1);
	setenv("STUB_NVML_CC", "13.0", 1);
	setenv("STUB_NVML_MEM", "0", 1);
	struct host_facts f;
	gather(&b, &f);
	assert_fact(f.memory_model, "unified", "nvml (memory total 0)");
	assert_string_equal(f.mem_total.source, "/proc/meminfo");
	assert_memgib(&f, 31.2);
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_h100_nvml(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "h100", true);
	setenv("STUB_NVML_NAME", "NVIDIA H100 80GB HBM3", 1);
	setenv("STUB_NVML_CC", "9.0", 1);
	setenv("STUB_NVML_MEM", "85520809984", 1);
	struct host_facts f;
	gather(&b, &f);
	assert_fact(f.gpu_name, "NVIDIA H100 80GB HBM3", "nvml");
	assert_fact(f.compute_cap, "9.0", "nvml");
	assert_fact(f.memory_model, "discrete", "nvml (memory total reported)");
	assert_fact(f.mem_total, "85520809984", "nvml");
	/* driver from NVML unset in the stub: the kernel file answers */
	assert_fact(f.driver, "570.133.20", "/proc/driver/nvidia/version");
	assert_fact(f.hostname, "workstation", "/etc/hostname");
	_cleanup_free_ char *why = NULL;
	assert_string_equal(match_id(&test_k, &f, &why), "unknown");
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_h100_smi_only(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "h100", false);
	struct host_facts f;
	gather(&b, &f);
	assert_fact(f.gpu_name, "NVIDIA H100 80GB HBM3", "nvidia-smi");
	assert_fact(f.compute_cap, "9.0", "nvidia-smi");
	/* nvidia-smi memory is never read: without NVML memory is unknown, not 0 */
	assert_unknown(f.memory_model);
	assert_unknown(f.mem_total);
	assert_smi_argv(&b);
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_nvml_init_fails_falls_back(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "thor", true);
	setenv("STUB_NVML_FAIL_INIT", "1", 1);
	setenv("STUB_NVML_NAME", "NVIDIA Wrong", 1);
	struct host_facts f;
	gather(&b, &f);
	assert_true(has_note(&f, "nvml: nvmlInit_v2 failed (error 9)"));
	assert_fact(f.gpu_name, "NVIDIA Thor", "nvidia-smi");
	assert_fact(f.compute_cap, "11.0", "nvidia-smi");
	assert_fact(f.dt_model, "NVIDIA Jetson AGX Thor Developer Kit", "/proc/device-tree/model");
	assert_fact(f.l4t_release, "R38.2.0", "/etc/nv_tegra_release");
	assert_fact(f.memory_model, "unified", "Tegra device-tree model");
	assert_string_equal(f.mem_total.source, "/proc/meminfo");
	assert_memgib(&f, 122.8);
	assert_fact(f.driver, "580.00", "/proc/driver/nvidia/version");
	assert_smi_argv(&b);
	_cleanup_free_ char *why = NULL;
	assert_string_equal(match_id(&test_k, &f, &why), "thor");
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_nvml_not_a_library(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "cpu-only", false);
	/* a library that loads but is not NVML: every missing symbol is noted */
	b.o.nvml_lib = "libm.so.6";
	struct host_facts f;
	gather(&b, &f);
	assert_true(has_note(&f, "nvml: symbol nvmlInit_v2 missing"));
	assert_unknown(f.gpu_name);
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_orin(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "agx-orin", false);
	struct host_facts f;
	gather(&b, &f);
	assert_unknown(f.gpu_name);
	assert_unknown(f.compute_cap);
	assert_fact(f.dt_model, "NVIDIA Jetson AGX Orin Developer Kit", "/proc/device-tree/model");
	assert_fact(f.l4t_release, "R36.4.3", "/etc/nv_tegra_release");
	assert_fact(f.memory_model, "unified", "Tegra device-tree model");
	assert_memgib(&f, 61.3);
	assert_true(has_note(&f, "nvidia-smi: '"));
	assert_true(has_note(&f, "not found"));
	_cleanup_free_ char *why = NULL;
	assert_string_equal(match_id(&test_k, &f, &why), "orin");
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_orin_nano(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "orin-nano-super", false);
	struct host_facts f;
	gather(&b, &f);
	assert_fact(f.dt_model, "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
		    "/proc/device-tree/model");
	assert_memgib(&f, 7.4);
	_cleanup_free_ char *why = NULL;
	assert_string_equal(match_id(&test_k, &f, &why), "orin-nano-super");
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_cpu_only(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "cpu-only", false);
	struct host_facts f;
	gather(&b, &f);
	assert_unknown(f.gpu_name);
	assert_unknown(f.compute_cap);
	assert_unknown(f.memory_model);
	assert_unknown(f.mem_total); /* MemTotal is there, but it is not GPU memory */
	assert_unknown(f.dt_model);
	assert_unknown(f.l4t_release);
	assert_unknown(f.driver);
	assert_fact(f.hostname, "ci-runner", "/etc/hostname");
	double gib;
	int ma, mi;
	assert_false(host_facts_mem_gib(&f, &gib));
	assert_false(host_facts_cc(&f, &ma, &mi));
	json_t *j = host_facts_json(&f);
	json_t *m = json_object_get(j, "mem_total");
	assert_true(json_is_null(json_object_get(m, "value")));
	assert_true(json_is_false(json_object_get(m, "valid")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "hostname"), "value")),
			    "ci-runner");
	json_decref(j);
	host_facts_free(&f);
	box_close(&b);
}

static void test_box_smi_hang(void **state)
{
	(void)state;
	struct box b;
	box_open(&b, "smi-hang", false);
	b.o.smi_timeout_ms = 300;
	struct host_facts f;
	gather(&b, &f);
	assert_unknown(f.gpu_name);
	assert_unknown(f.compute_cap);
	assert_true(has_note(&f, "nvidia-smi timed out after 300 ms"));
	assert_smi_argv(&b);
	host_facts_free(&f);
	box_close(&b);
}

/* A stub nvidia-smi written to dir/name that prints out and exits with rc;
 * returns its path (caller frees). */
static char *write_smi(const char *dir, const char *name, const char *out, int rc)
{
	char *p = xasprintf("%s/%s", dir, name);
	_cleanup_free_ char *body = xasprintf("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\nexit %d\n", out, rc);
	struct err *e = NULL;
	assert_int_equal(fs_write_atomic(p, body, strlen(body), 0755, &e), 0);
	return p;
}

/* [N/A] and failure exits from nvidia-smi leave facts unknown, with a note. */
static void test_smi_placeholders(void **state)
{
	(void)state;
	char dir[] = "/tmp/lobes-smi.XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("LOBES_SYSROOT", dir, 1);
	struct facts_opts o = { .nvml_lib = "/nonexistent/libnvidia-ml.so.1", .smi_timeout_ms = 5000 };
	struct host_facts f;
	struct err *e = NULL;

	_cleanup_free_ char *na = write_smi(dir, "na", "[N/A], [N/A]", 0);
	o.smi_path = na;
	assert_int_equal(host_facts_gather(&f, &o, &e), 0);
	assert_unknown(f.gpu_name);
	assert_unknown(f.compute_cap);
	assert_true(has_note(&f, "nvidia-smi: name is \"[N/A]\""));
	assert_true(has_note(&f, "nvidia-smi: compute_cap is \"[N/A]\""));
	host_facts_free(&f);

	_cleanup_free_ char *half = write_smi(dir, "half", "NVIDIA GB10, [N/A]", 0);
	o.smi_path = half;
	assert_int_equal(host_facts_gather(&f, &o, &e), 0);
	assert_fact(f.gpu_name, "NVIDIA GB10", "nvidia-smi");
	assert_unknown(f.compute_cap);
	host_facts_free(&f);

	_cleanup_free_ char *bad = write_smi(
		dir, "bad",
		"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", 9);
	o.smi_path = bad;
	assert_int_equal(host_facts_gather(&f, &o, &e), 0);
	assert_unknown(f.gpu_name);
	assert_true(has_note(&f, "nvidia-smi: exited with status 9: NVIDIA-SMI has failed"));
	host_facts_free(&f);

	_cleanup_free_ char *junk = write_smi(dir, "junk", "NVIDIA GB10, twelve", 0);
	o.smi_path = junk;
	assert_int_equal(host_facts_gather(&f, &o, &e), 0);
	assert_unknown(f.compute_cap);
	host_facts_free(&f);

	unsetenv("LOBES_SYSROOT");
	_cleanup_free_ char *cmd = xasprintf("rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* An empty sysroot: every fact unknown, the hostname too (the machine running
 * the test is not the box described), and nothing fails. */
static void test_empty_sysroot(void **state)
{
	(void)state;
	char dir[] = "/tmp/lobes-root.XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("LOBES_SYSROOT", dir, 1);
	struct facts_opts o = { .nvml_lib = "/nonexistent/libnvidia-ml.so.1",
				.smi_path = "/nonexistent/nvidia-smi",
				.smi_timeout_ms = 5000 };
	struct host_facts f;
	struct err *e = NULL;
	assert_int_equal(host_facts_gather(&f, &o, &e), 0);
	assert_unknown(f.gpu_name);
	assert_unknown(f.mem_total);
	assert_unknown(f.hostname);
	assert_true(has_note(&f, "nvidia-smi: '/nonexistent/nvidia-smi' not found"));
	assert_true(has_note(&f, "hostname: /etc/hostname absent"));
	host_facts_free(&f);
	/* LOBES_NO_NVML skips the library altogether */
	o.no_nvml = true;
	assert_int_equal(host_facts_gather(&f, &o, &e), 0);
	assert_true(has_note(&f, "nvml: skipped"));
	host_facts_free(&f);
	unsetenv("LOBES_SYSROOT");
	assert_int_equal(rmdir(dir), 0);
}

/* The shipped cards (embedded data/cards/) resolve every fixture box. */
static void test_real_cards(void **state)
{
	(void)state;
	struct knowledge k = { 0 };
	struct err *e = NULL;
	if (knowledge_load(&k, NULL, &e) < 0)
		fail_msg("knowledge_load: %s", e->msg);
	static const struct {
		const char *box, *nvml_name, *nvml_cc, *nvml_mem, *card;
	} cases[] = {
		{ "gb10", NULL, NULL, NULL, "spark" },
		{ "gb10", "NVIDIA GB10", "12.1", "NOT_SUPPORTED", "spark" },
		{ "thor", NULL, NULL, NULL, "thor" },
		{ "thor", "NVIDIA Thor", "11.0", "0", "thor" },
		{ "agx-orin", NULL, NULL, NULL, "orin" },
		{ "agx-orin", "Orin", "8.7", "NOT_SUPPORTED", "orin" },
		{ "orin-nano-super", NULL, NULL, NULL, "orin-nano-super" },
		{ "orin-nano-super", "Orin", "8.7", "NOT_SUPPORTED", "orin-nano-super" },
		{ "h100", NULL, NULL, NULL, "unknown" },
		{ "h100", "NVIDIA H100 80GB HBM3", "9.0", "85520809984", "unknown" },
		{ "cpu-only", NULL, NULL, NULL, "unknown" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct box b;
		box_open(&b, cases[i].box, cases[i].nvml_name != NULL);
		if (cases[i].nvml_name) {
			setenv("STUB_NVML_NAME", cases[i].nvml_name, 1);
			setenv("STUB_NVML_CC", cases[i].nvml_cc, 1);
			setenv("STUB_NVML_MEM", cases[i].nvml_mem, 1);
		}
		struct host_facts f;
		gather(&b, &f);
		_cleanup_free_ char *why = NULL;
		const char *got = match_id(&k, &f, &why);
		if (strcmp(got, cases[i].card) != 0)
			fail_msg("box %s (nvml %s): card %s, want %s: %s", cases[i].box,
				 cases[i].nvml_name ? "stub" : "absent", got, cases[i].card, why);
		host_facts_free(&f);
		box_close(&b);
	}
	knowledge_free(&k);
}

static void test_opts_from_env(void **state)
{
	(void)state;
	struct facts_opts o;
	unsetenv("LOBES_NVML_LIB");
	unsetenv("LOBES_NVIDIA_SMI");
	unsetenv("LOBES_SMI_TIMEOUT_MS");
	unsetenv("LOBES_NO_NVML");
	facts_opts_from_env(&o);
	assert_string_equal(o.nvml_lib, "libnvidia-ml.so.1");
	assert_string_equal(o.smi_path, "nvidia-smi");
	assert_int_equal(o.smi_timeout_ms, 5000);
	assert_false(o.no_nvml);
	setenv("LOBES_NVML_LIB", "/x/libnvidia-ml.so.1", 1);
	setenv("LOBES_NVIDIA_SMI", "/x/nvidia-smi", 1);
	setenv("LOBES_SMI_TIMEOUT_MS", "300", 1);
	setenv("LOBES_NO_NVML", "1", 1);
	facts_opts_from_env(&o);
	assert_string_equal(o.nvml_lib, "/x/libnvidia-ml.so.1");
	assert_string_equal(o.smi_path, "/x/nvidia-smi");
	assert_int_equal(o.smi_timeout_ms, 300);
	assert_true(o.no_nvml);
	setenv("LOBES_SMI_TIMEOUT_MS", "soon", 1);
	facts_opts_from_env(&o);
	assert_int_equal(o.smi_timeout_ms, 5000);
	unsetenv("LOBES_NVML_LIB");
	unsetenv("LOBES_NVIDIA_SMI");
	unsetenv("LOBES_SMI_TIMEOUT_MS");
	unsetenv("LOBES_NO_NVML");
	assert_string_equal(tri_name(TRI_TRUE), "true");
	assert_string_equal(tri_name(TRI_FALSE), "false");
	assert_string_equal(tri_name(TRI_UNKNOWN), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_spark),
		cmocka_unit_test(test_match_case_insensitive),
		cmocka_unit_test(test_match_vetoes),
		cmocka_unit_test(test_match_thor),
		cmocka_unit_test(test_match_orin_family),
		cmocka_unit_test(test_match_tie_is_unknown),
		cmocka_unit_test(test_match_unknown_boxes),
		cmocka_unit_test(test_box_gb10_smi),
		cmocka_unit_test(test_box_gb10_nvml),
		cmocka_unit_test(test_box_nvml_mem_zero_is_unified),
		cmocka_unit_test(test_box_h100_nvml),
		cmocka_unit_test(test_box_h100_smi_only),
		cmocka_unit_test(test_box_nvml_init_fails_falls_back),
		cmocka_unit_test(test_box_nvml_not_a_library),
		cmocka_unit_test(test_box_orin),
		cmocka_unit_test(test_box_orin_nano),
		cmocka_unit_test(test_box_cpu_only),
		cmocka_unit_test(test_box_smi_hang),
		cmocka_unit_test(test_smi_placeholders),
		cmocka_unit_test(test_empty_sysroot),
		cmocka_unit_test(test_real_cards),
		cmocka_unit_test(test_opts_from_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
