/*
 * test_yaml_doc.c — the one guarded, quiet YAML document parse every loader
 * uses (src/lib/util/yaml_doc.c): documents, empty text, positioned syntax
 * errors, the second-document and duplicate-key options, the guard running
 * first, and node positions (as written, and as libfyaml marks a scalar).
 */
#include "testutil.h"

#include "../../src/lib/util/yaml_doc.h"
#include "../../src/lib/util/yaml_scalar.h"

/* parse(text) → the error message (caller frees), or NULL with *doc set. */
static char *parse(const char *name, const char *text, unsigned flags, const char *expect,
		   struct fy_document **doc)
{
	struct err *e = NULL;
	if (yaml_doc_parse(name, text, text ? strlen(text) : 0, flags, expect, doc, &e) == 0) {
		assert_null(e);
		return NULL;
	}
	assert_null(*doc);
	return test_err_msg(e, EXIT_CONFIG);
}

static void test_one_document(void **state)
{
	(void)state;
	struct fy_document *d = NULL;
	assert_null(parse("f.yaml", "a: 1\nb: [x, y]\n", 0, "a mapping", &d));
	assert_non_null(d);
	struct fy_node *b = fy_node_by_path(fy_document_root(d), "/b/1", FY_NT, FYNWF_DONT_FOLLOW);
	assert_string_equal(yaml_scalar0(b, NULL), "y");
	fy_document_destroy(d);
}

static void test_empty_text_is_no_document(void **state)
{
	(void)state;
	static const char *const empty[] = { "", "# only a comment\n", NULL };
	for (size_t i = 0; empty[i]; i++) {
		struct fy_document *d = (struct fy_document *)1;
		assert_null(parse("f.yaml", empty[i], YAML_DOC_ONLY_ONE, "x", &d));
		assert_null(d);
	}
}

static void test_syntax_error_positioned(void **state)
{
	(void)state;
	struct fy_document *d = NULL;
	_cleanup_free_ char *m = parse("f.yaml", "a: 1\nb: [x, y\n", 0, "a mapping", &d);
	assert_string_equal(m, "f.yaml:3:1: invalid YAML: flow sequence without a closing bracket; "
			       "expected a mapping");
	/* no name, no expectation */
	_cleanup_free_ char *m2 = parse(NULL, "a: b: c\n", 0, NULL, &d);
	assert_string_equal(m2, "1:5: invalid YAML: invalid nested block mapping on the same line");
}

static void test_second_document(void **state)
{
	(void)state;
	const char *two = "a: 1\n---\nb: 2\n";
	struct fy_document *d = NULL;
	_cleanup_free_ char *m = parse("f.yaml", two, YAML_DOC_ONLY_ONE, "x", &d);
	assert_string_equal(m, "f.yaml:3:1: a second YAML document; expected one document per file");
	/* without the option the first document is read, the rest left alone */
	assert_null(parse("f.yaml", two, 0, "x", &d));
	assert_non_null(fy_node_mapping_lookup_by_string(fy_document_root(d), "a", FY_NT));
	fy_document_destroy(d);
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	const char *dup = "a: 1\nb: 2\na: 3\n";
	struct fy_document *d = NULL;
	_cleanup_free_ char *m = parse("f.yaml", dup, 0, "x", &d);
	assert_string_equal(m, "f.yaml:3:1: invalid YAML: duplicate key; expected x");
	assert_null(parse("f.yaml", dup, YAML_DOC_DUPLICATE_KEYS, "x", &d));
	assert_int_equal(fy_node_mapping_item_count(fy_document_root(d)), 3);
	fy_document_destroy(d);
}

static void test_guard_runs_first(void **state)
{
	(void)state;
	struct fy_document *d = NULL;
	_cleanup_free_ char *m = parse("f.yaml", "a: &x 1\nb: *x\n", 0, "x", &d);
	assert_string_contains(m, "f.yaml:1:4: ");
	assert_string_contains(m, "anchor");
}

static void test_node_pos(void **state)
{
	(void)state;
	struct fy_document *d = NULL;
	assert_null(parse("f.yaml", "a:\n  - 'q'\n  - {k: v}\nb: \"w\"\n", 0, "x", &d));
	struct fy_node *root = fy_document_root(d);
	int line = 0, col = 0;
	/* a quoted scalar at its opening quote */
	yaml_node_pos(fy_node_by_path(root, "/a/0", FY_NT, FYNWF_DONT_FOLLOW), NULL, &line, &col);
	assert_int_equal(line, 2);
	assert_int_equal(col, 5);
	yaml_node_pos(fy_node_by_path(root, "/b", FY_NT, FYNWF_DONT_FOLLOW), NULL, &line, &col);
	assert_int_equal(line, 4);
	assert_int_equal(col, 4);
	/* a collection at its start */
	yaml_node_pos(fy_node_by_path(root, "/a/1", FY_NT, FYNWF_DONT_FOLLOW), NULL, &line, &col);
	assert_int_equal(line, 3);
	assert_int_equal(col, 5);
	/* no node: the fallback's position, else 1:1 */
	yaml_node_pos(NULL, fy_node_by_path(root, "/b", FY_NT, FYNWF_DONT_FOLLOW), &line, &col);
	assert_int_equal(line, 4);
	yaml_node_pos(NULL, NULL, &line, &col);
	assert_int_equal(line, 1);
	assert_int_equal(col, 1);
	fy_document_destroy(d);
}

static void test_scalar_mark_and_first_scalar(void **state)
{
	(void)state;
	struct fy_document *d = NULL;
	assert_null(parse("f.yaml", "a:\n  - [x, 'y']\nb: {}\n", 0, "x", &d));
	struct fy_node *root = fy_document_root(d);
	/* a mapping's first key, a sequence's first item, recursively */
	struct fy_node *first = yaml_first_scalar(root);
	assert_string_equal(yaml_scalar0(first, NULL), "a");
	struct fy_node *a = fy_node_by_path(root, "/a", FY_NT, FYNWF_DONT_FOLLOW);
	assert_string_equal(yaml_scalar0(yaml_first_scalar(a), NULL), "x");
	assert_null(yaml_first_scalar(fy_node_by_path(root, "/b", FY_NT, FYNWF_DONT_FOLLOW)));
	assert_null(yaml_first_scalar(NULL));
	int line = 0, col = 0;
	assert_true(yaml_scalar_mark(yaml_first_scalar(a), &line, &col));
	assert_int_equal(line, 2);
	assert_int_equal(col, 6);
	/* a quoted scalar's token starts after its quote */
	assert_true(yaml_scalar_mark(fy_node_by_path(root, "/a/0/1", FY_NT, FYNWF_DONT_FOLLOW), &line,
				     &col));
	assert_int_equal(line, 2);
	assert_int_equal(col, 10);
	/* not a scalar: false, line and column left alone */
	line = col = 7;
	assert_false(yaml_scalar_mark(a, &line, &col));
	assert_false(yaml_scalar_mark(NULL, &line, &col));
	assert_int_equal(line, 7);
	assert_int_equal(col, 7);
	fy_document_destroy(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_document),
		cmocka_unit_test(test_empty_text_is_no_document),
		cmocka_unit_test(test_syntax_error_positioned),
		cmocka_unit_test(test_second_document),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_guard_runs_first),
		cmocka_unit_test(test_node_pos),
		cmocka_unit_test(test_scalar_mark_and_first_scalar),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
