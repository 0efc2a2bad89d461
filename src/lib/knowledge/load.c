/*
 * load.c — reading knowledge files: the embedded data/ tree, then an
 * operator's directory, one YAML document per file, each dispatched on its
 * `kind` to the per-kind parser and added to the container.
 *
 * Parsing is in two layers. yaml_doc_parse builds a document tree (guarded,
 * quiet; duplicate keys are let through so that our own check can name the
 * key, a second document is refused); then the per-kind parsers (card.c,
 * trait.c, profile.c, images.c) walk the tree strictly with the helpers of
 * ynode.c.
 *
 * Origins: a shipped entry (embedded, or a non-operator directory) and an
 * operator entry may share a name — the operator one replaces the shipped
 * one whole. Two entries of one origin with one name are an error naming
 * both positions.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "parse.h"
#include "embedded.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/yaml_doc.h"

/* ---- the container ---------------------------------------------------- */

/* Add or replace an entry by name, following the origin rules. On success
 * *item is moved into the array (zeroed); on error it is left to the
 * caller. */
#define ADD_ITEM(k, arr, n, item, freefn, what, err)                                              \
	({                                                                                        \
		int _rc = 0;                                                                      \
		size_t _i;                                                                        \
		for (_i = 0; _i < (k)->n; _i++)                                                   \
			if (strcmp((k)->arr[_i].name, (item)->name) == 0)                          \
				break;                                                            \
		if (_i == (k)->n) {                                                               \
			(k)->arr = xrealloc((k)->arr, ((k)->n + 1) * sizeof(*(k)->arr));          \
			(k)->arr[(k)->n++] = *(item);                                             \
			memset((item), 0, sizeof(*(item)));                                       \
		} else if ((k)->arr[_i].from_operator == (item)->from_operator) {                 \
			_cleanup_free_ char *_first = src_pos_str(&(k)->arr[_i].pos);              \
			_rc = err_set(err, EXIT_CONFIG,                                           \
				      "%s:%d:%d: duplicate %s '%s', first defined at %s; expected "   \
				      "one file per name",                                        \
				      (item)->pos.file, (item)->pos.line, (item)->pos.col, what,  \
				      (item)->name, _first);                                      \
		} else if ((item)->from_operator) {                                               \
			freefn(&(k)->arr[_i]);                                                    \
			(k)->arr[_i] = *(item);                                                   \
			memset((item), 0, sizeof(*(item)));                                       \
		}                                                                                 \
		_rc;                                                                              \
	})

static int add_defaults(struct knowledge *k, const struct pctx *c, struct fy_node *root,
			struct err **err)
{
	struct role_spec tmp[ROLE__COUNT] = { 0 };
	struct src_pos pos = { 0 };
	int rc = defaults_parse(c, root, tmp, err);
	if (rc == 0)
		pos_set(&pos, c, root, NULL);
	if (rc == 0 && k->defaults_pos.file) {
		if (k->defaults_from_operator == c->operator) {
			_cleanup_free_ char *first = src_pos_str(&k->defaults_pos);
			rc = err_set(err, EXIT_CONFIG,
				     "%s:%d:%d: duplicate defaults, first defined at %s; expected one "
				     "defaults file",
				     pos.file, pos.line, pos.col, first);
		} else if (!c->operator) {
			rc = 1; /* the operator's defaults stay */
		}
	}
	if (rc == 0) {
		for (int r = 0; r < ROLE__COUNT; r++) {
			role_spec_free(&k->defaults[r]);
			k->defaults[r] = tmp[r];
		}
		pos_free(&k->defaults_pos);
		k->defaults_pos = pos;
		k->defaults_from_operator = c->operator;
		return 0;
	}
	for (int r = 0; r < ROLE__COUNT; r++)
		role_spec_free(&tmp[r]);
	pos_free(&pos);
	return rc < 0 ? -1 : 0;
}

/* Dispatch a root mapping on its `kind` and add the entry to k. */
static int add_root(struct knowledge *k, const struct pctx *c, struct fy_node *root,
		    struct err **err)
{
	bool operator = c->operator;
	int rc;
	static const char *const kinds[] = { "card",   "trait",    "profile", "image",
					     "family", "defaults", NULL };
	_cleanup_free_ char *kind = NULL;
	if (yenum(c, root, NULL, "kind", "the document", true, kinds, &kind, err) < 0)
		return -1;
	if (strcmp(kind, "card") == 0) {
		struct card it = { 0 };
		it.from_operator = operator;
		rc = card_parse(c, root, &it, err);
		if (rc == 0)
			rc = ADD_ITEM(k, cards, n_cards, &it, card_free, "card", err);
		card_free(&it);
	} else if (strcmp(kind, "trait") == 0) {
		struct trait it = { 0 };
		it.from_operator = operator;
		rc = trait_parse(c, root, &it, err);
		if (rc == 0)
			rc = ADD_ITEM(k, traits, n_traits, &it, trait_free, "trait", err);
		trait_free(&it);
	} else if (strcmp(kind, "profile") == 0) {
		struct profile it = { 0 };
		it.from_operator = operator;
		rc = profile_parse(c, root, &it, err);
		if (rc == 0)
			rc = ADD_ITEM(k, profiles, n_profiles, &it, profile_free, "profile", err);
		profile_free(&it);
	} else if (strcmp(kind, "image") == 0) {
		struct vimage it = { 0 };
		it.from_operator = operator;
		rc = image_parse(c, root, &it, err);
		if (rc == 0)
			rc = ADD_ITEM(k, images, n_images, &it, vimage_free, "image", err);
		vimage_free(&it);
	} else if (strcmp(kind, "family") == 0) {
		struct family it = { 0 };
		it.from_operator = operator;
		rc = family_parse(c, root, &it, err);
		if (rc == 0)
			rc = ADD_ITEM(k, families, n_families, &it, family_free, "family", err);
		family_free(&it);
	} else {
		rc = add_defaults(k, c, root, err);
	}
	return rc;
}

int knowledge_add_yaml(struct knowledge *k, const char *name, const char *text, size_t len,
		       bool operator, struct err **err)
{
	struct pctx c = { name, operator };
	struct fy_document *doc = NULL;
	if (yaml_doc_parse(name, text, len, YAML_DOC_DUPLICATE_KEYS | YAML_DOC_ONLY_ONE,
			   "a well-formed YAML document", &doc, err) < 0)
		return -1;
	if (!doc)
		return err_set(err, EXIT_CONFIG,
			       "%s:1:1: empty document; expected a mapping with a 'kind' key", name);
	int rc = -1;
	struct fy_node *root = fy_document_root(doc);
	if (ynull(root))
		err_set(err, EXIT_CONFIG, "%s:1:1: empty document; expected a mapping with a 'kind' key",
			name);
	else if (!fy_node_is_mapping(root))
		perr(&c, root, NULL, err, "the document is %s; expected a mapping with a 'kind' key",
		     node_kind(root));
	else
		rc = add_root(k, &c, root, err);
	fy_document_destroy(doc);
	return rc;
}

/* ---- files and directories ------------------------------------------- */

static bool yaml_name(const char *n)
{
	size_t l = strlen(n);
	return n[0] != '.' && ((l > 5 && strcmp(n + l - 5, ".yaml") == 0) ||
			       (l > 4 && strcmp(n + l - 4, ".yml") == 0));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_file(struct knowledge *k, const char *path, bool operator, struct err **err)
{
	size_t len = 0;
	_cleanup_free_ char *text = fs_read(path, 1 << 20, &len, err);
	if (!text)
		return -1;
	return knowledge_add_yaml(k, path, text, len, operator, err);
}

/* Load every *.yaml / *.yml directly in dir, in name order. A missing dir
 * is fine when missing_ok; something other than a directory is an error. */
static int load_files_in(struct knowledge *k, const char *dir, bool operator, bool missing_ok,
			 struct err **err)
{
	struct stat st;
	if (stat(dir, &st) < 0) {
		if (errno == ENOENT && missing_ok)
			return 0;
		return err_errno(err, EXIT_CONFIG, errno, "open directory '%s'", dir);
	}
	if (!S_ISDIR(st.st_mode))
		return err_set(err, EXIT_CONFIG, "'%s' is not a directory; expected a directory of YAML files",
			       dir);
	_cleanup_closedir_ DIR *d = opendir(dir);
	if (!d)
		return err_errno(err, EXIT_CONFIG, errno, "open directory '%s'", dir);
	_cleanup_strv_ char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!yaml_name(de->d_name))
			continue;
		names = xrealloc(names, (n + 2) * sizeof(*names));
		names[n++] = xstrdup(de->d_name);
		names[n] = NULL;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, names[i]);
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			return err_set(err, EXIT_CONFIG, "'%s' is a directory; expected a YAML file", p);
		if (load_file(k, p, operator, err) < 0)
			return -1;
	}
	return 0;
}

int knowledge_load_dir(struct knowledge *k, const char *dir, bool operator, struct err **err)
{
	static const char *const subs[] = { "cards", "traits", "profiles", "images", "families" };
	if (!fs_is_dir(dir)) {
		if (fs_exists(dir))
			return err_set(err, EXIT_CONFIG,
				       "'%s' is not a directory; expected a directory of YAML files", dir);
		return err_set(err, EXIT_CONFIG, "knowledge directory '%s' does not exist", dir);
	}
	if (operator && load_files_in(k, dir, operator, false, err) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, subs[i]);
		if (load_files_in(k, p, operator, true, err) < 0)
			return -1;
	}
	_cleanup_free_ char *t = xasprintf("%s/template/defaults.yaml", dir);
	if (fs_exists(t) && load_file(k, t, operator, err) < 0)
		return -1;
	return 0;
}

static bool embedded_knowledge(const char *p)
{
	if (strcmp(p, "data/template/defaults.yaml") == 0)
		return true;
	const char *const dirs[] = { "data/cards/", "data/traits/", "data/profiles/", "data/images/",
				     "data/families/" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (str_starts_with(p, dirs[i]) && !strchr(p + strlen(dirs[i]), '/'))
			return yaml_name(p + strlen(dirs[i]));
	return false;
}

int knowledge_load(struct knowledge *k, const char *operator_dir, struct err **err)
{
	for (size_t i = 0; i < embedded_files_count; i++) {
		const struct embedded_file *f = &embedded_files[i];
		if (!embedded_knowledge(f->path))
			continue;
		if (knowledge_add_yaml(k, f->path, f->data, f->len, false, err) < 0)
			goto fail;
	}
	if (operator_dir && *operator_dir) {
		struct stat st;
		if (stat(operator_dir, &st) == 0) {
			if (!S_ISDIR(st.st_mode)) {
				err_set(err, EXIT_CONFIG,
					"operator directory '%s' is not a directory; expected a directory of "
					"YAML files",
					operator_dir);
				goto fail;
			}
			if (knowledge_load_dir(k, operator_dir, true, err) < 0)
				goto fail;
		} else if (errno != ENOENT) {
			err_errno(err, EXIT_CONFIG, errno, "operator directory '%s'", operator_dir);
			goto fail;
		}
	}
	if (knowledge_check(k, err) < 0)
		goto fail;
	return 0;
fail:
	knowledge_free(k);
	return -1;
}
