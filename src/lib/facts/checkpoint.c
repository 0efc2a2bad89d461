/*
 * checkpoint.c — what a model checkpoint ships, read offline from the local
 * Hugging Face cache (never the network).
 *
 * The cache layout is <hub>/models--ORG--NAME/{refs/main,snapshots/<rev>/}.
 * KV-scale facts (FACTS.md "Checkpoint KV scales"):
 *   compressed-tensors: config.json quantization_config.kv_cache_scheme
 *     (null or absent = no scales);
 *   ModelOpt: hf_quant_config.json quantization.kv_cache_quant_algo
 *     (null = none), or config.json quantization_config with
 *     quant_method "modelopt" and its kv_cache_quant_algo;
 *   no quantization at all: a plain bf16/fp16 export ships no KV scales.
 * Anything unreadable stays TRI_UNKNOWN with the reason in kv_scales_why.
 *
 * Identity and context (FACTS.md "Model families"): `architectures` and
 * `model_type` (top level, else text_config) name the family more surely
 * than the model id; the native context is the smallest length key vLLM
 * reads (max_position_embeddings and its spellings, text_config first),
 * times the rope scaling factor for a linear/dynamic/yarn rope (yarn from
 * original_max_position_embeddings when stated), as vLLM derives it.
 */
#include <dirent.h>
#include <sys/stat.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "../util/yaml_guard.h"
#include "facts.h"

/* A Hugging Face config.json is kilobytes; a larger file is refused before
 * it is read (it would only cost time and memory). */
#define CONFIG_JSON_CAP ((size_t)4 << 20)

static char *hub_dir(void)
{
	const char *v = getenv("HF_HUB_CACHE");
	if (v && *v)
		return xstrdup(v);
	v = getenv("HF_HOME");
	if (v && *v)
		return xasprintf("%s/hub", v);
	v = getenv("HOME");
	return xasprintf("%s/.cache/huggingface/hub", v && *v ? v : ".");
}

/* The snapshot directory for model_id under hub (NULL: the default hub), or
 * NULL when not cached. */
static char *find_snapshot(const char *hub_in, const char *model_id)
{
	_cleanup_free_ char *hub = hub_in ? xstrdup(hub_in) : hub_dir();
	/* "org/name" → "models--org--name" */
	const char *slash = strchr(model_id, '/');
	_cleanup_free_ char *repo = slash ? xasprintf("%s/models--%.*s--%s", hub,
						      (int)(slash - model_id), model_id, slash + 1)
					  : xasprintf("%s/models--%s", hub, model_id);
	_cleanup_free_ char *refp = xasprintf("%s/refs/main", repo);
	_cleanup_free_ char *ref = fs_read(refp, 4096, NULL, NULL);
	if (ref) {
		char *rev = str_strip(ref);
		char *snap = xasprintf("%s/snapshots/%s", repo, rev);
		if (*rev && !strchr(rev, '/') && fs_is_dir(snap))
			return snap;
		free(snap);
	}
	/* No usable ref: take the lexicographically last snapshot. */
	_cleanup_free_ char *snaps = xasprintf("%s/snapshots", repo);
	_cleanup_closedir_ DIR *d = opendir(snaps);
	if (!d)
		return NULL;
	char *best = NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (!best || strcmp(de->d_name, best) > 0) {
			free(best);
			best = xstrdup(de->d_name);
		}
	}
	if (!best)
		return NULL;
	char *snap = xasprintf("%s/%s", snaps, best);
	free(best);
	return snap;
}

/* Read DIR/NAME as JSON: a regular file of at most CONFIG_JSON_CAP bytes,
 * UTF-8 (a UTF-16/32 file is named as such). NULL with *why set when it
 * exists but cannot be used. */
static json_t *load_json(const char *dir, const char *name, bool *exists, char **why)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	*exists = fs_exists(p);
	if (!*exists)
		return NULL;
	struct err *e = NULL;
	size_t len = 0;
	_cleanup_free_ char *text = fs_read(p, CONFIG_JSON_CAP, &len, &e);
	if (!text) {
		free(*why);
		*why = xstrdup(e->msg);
		err_free(e);
		return NULL;
	}
	const char *enc = text_foreign_encoding(text, len);
	if (enc) {
		free(*why);
		*why = xasprintf("%s:1:1: the text is %s; expected UTF-8 JSON", name, enc);
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	if (!j) {
		free(*why);
		*why = xasprintf("%s:%d:%d: %s", name, je.line, je.column, je.text);
	}
	return j;
}

/* The checkpoint's identity: architectures and model_type. */
static void read_identity(struct checkpoint_facts *c, json_t *cfg)
{
	c->has_config = true;
	json_t *tc = json_object_get(cfg, "text_config");
	json_t *arch = json_object_get(cfg, "architectures");
	if (!json_is_array(arch) && json_is_object(tc))
		arch = json_object_get(tc, "architectures");
	size_t i;
	json_t *a;
	json_array_foreach(arch, i, a)
		if (json_is_string(a) && *json_string_value(a))
			strv_push(&c->architectures, json_string_value(a));
	const char *mt = json_string_value(json_object_get(cfg, "model_type"));
	if (!mt && json_is_object(tc))
		mt = json_string_value(json_object_get(tc, "model_type"));
	c->model_type = mt && *mt ? xstrdup(mt) : NULL;
}

/* The native context, as vLLM derives its max_model_len ceiling. */
static void read_native_context(struct checkpoint_facts *c, json_t *cfg)
{
	static const char *const keys[] = { "max_position_embeddings", "n_positions", "max_seq_len",
					    "seq_length", "max_sequence_length", "max_seq_length",
					    "seq_len" };
	json_t *tc = json_object_get(cfg, "text_config");
	json_t *src = json_is_object(tc) ? tc : cfg;
	const char *key = NULL;
	long long n = 0;
	for (int pass = 0; pass < 2 && !key; pass++) {
		if (pass == 1)
			src = cfg;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			json_t *v = json_object_get(src, keys[i]);
			if (json_is_integer(v) && json_integer_value(v) > 0 &&
			    (!key || json_integer_value(v) < n)) {
				n = json_integer_value(v);
				key = keys[i];
			}
		}
	}
	if (!key)
		return;
	const char *pre = src == tc && tc ? "text_config." : "";
	json_t *rs = json_object_get(src, "rope_scaling");
	if (!json_is_object(rs))
		rs = json_object_get(src, "rope_parameters");
	const char *rt = json_string_value(json_object_get(rs, "rope_type"));
	if (!rt)
		rt = json_string_value(json_object_get(rs, "type"));
	json_t *f = json_object_get(rs, "factor");
	if (rt && json_is_number(f) && json_number_value(f) > 1 &&
	    (!strcmp(rt, "yarn") || !strcmp(rt, "linear") || !strcmp(rt, "dynamic"))) {
		json_t *orig = json_object_get(rs, "original_max_position_embeddings");
		long long base = !strcmp(rt, "yarn") && json_is_integer(orig) && json_integer_value(orig) > 0
					 ? json_integer_value(orig) : n;
		c->native_context = (long long)((double)base * json_number_value(f));
		c->native_context_why = xasprintf("config.json %s%s %lld, %s rope factor %g", pre, key,
						  base, rt, json_number_value(f));
		return;
	}
	c->native_context = n;
	c->native_context_why = xasprintf("config.json %s%s", pre, key);
}

/* ModelOpt's kv_cache_quant_algo in the object q (a string: the checkpoint
 * ships KV scales; null or absent: none), named WHERE in the reason. */
static void modelopt_kv(struct checkpoint_facts *c, json_t *q, const char *where)
{
	json_t *algo = json_object_get(q, "kv_cache_quant_algo");
	c->kv_scales = json_is_string(algo) ? TRI_TRUE : TRI_FALSE;
	c->kv_scales_why = xasprintf("%s.kv_cache_quant_algo: %s", where,
				     json_is_string(algo) ? json_string_value(algo) : "null");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **checkpoint_cache_list(const char *hub_in)
{
	_cleanup_free_ char *hub = hub_in ? xstrdup(hub_in) : hub_dir();
	_cleanup_closedir_ DIR *d = opendir(hub);
	char **out = NULL;
	size_t n = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		const char *s = de->d_name;
		if (strncmp(s, "models--", 8) != 0 || !s[8])
			continue;
		_cleanup_free_ char *id = xstrdup(s + 8);
		char *sep = strstr(id, "--");
		if (sep) {
			*sep = '/';
			memmove(sep + 1, sep + 2, strlen(sep + 2) + 1);
		}
		_cleanup_free_ char *snap = find_snapshot(hub, id);
		if (!snap)
			continue;
		strv_push(&out, id);
		n++;
	}
	if (n > 1)
		qsort(out, n, sizeof(*out), cmp_str);
	return out;
}

long long checkpoint_weights_bytes(const char *snapshot, size_t *files)
{
	_cleanup_closedir_ DIR *d = snapshot ? opendir(snapshot) : NULL;
	long long sum = 0;
	size_t n = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 12 || strcmp(de->d_name + l - 12, ".safetensors") != 0)
			continue;
		_cleanup_free_ char *p = xasprintf("%s/%s", snapshot, de->d_name);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			sum += (long long)st.st_size;
			n++;
		}
	}
	if (files)
		*files = n;
	return n ? sum : -1;
}

int checkpoint_facts_read(const char *model_id, struct checkpoint_facts *c, struct err **err)
{
	return checkpoint_facts_read_in(NULL, model_id, c, err);
}

int checkpoint_facts_read_in(const char *hub, const char *model_id, struct checkpoint_facts *c,
			     struct err **err)
{
	(void)err;
	memset(c, 0, sizeof(*c));
	c->kv_scales = TRI_UNKNOWN;
	c->hetero_head_dim = TRI_UNKNOWN;
	if (!model_id || !*model_id) {
		c->kv_scales_why = xstrdup("no model");
		return 0;
	}
	c->snapshot = find_snapshot(hub, model_id);
	if (!c->snapshot) {
		c->kv_scales_why = xasprintf("'%s' is not in the Hugging Face cache", model_id);
		return 0;
	}
	c->found = true;
	char *why = NULL;
	bool have_cfg, have_hfq;
	json_auto_t *cfg = load_json(c->snapshot, "config.json", &have_cfg, &why);
	json_auto_t *hfq = load_json(c->snapshot, "hf_quant_config.json", &have_hfq, &why);
	if ((have_cfg && !cfg) || (have_hfq && !hfq)) {
		c->kv_scales_why = xasprintf("unreadable: %s", why);
		free(why);
		return 0;
	}
	free(why);
	if (!cfg) {
		c->kv_scales_why = xstrdup("config.json missing from the snapshot");
		return 0;
	}
	read_identity(c, cfg);
	read_native_context(c, cfg);
	/* Head dimensions: Gemma-style text_config.head_dim vs global_head_dim. */
	json_t *tc = json_object_get(cfg, "text_config");
	json_t *src = json_is_object(tc) ? tc : cfg;
	json_t *hd = json_object_get(src, "head_dim"), *ghd = json_object_get(src, "global_head_dim");
	if (json_is_integer(hd) && json_is_integer(ghd))
		c->hetero_head_dim = json_integer_value(hd) != json_integer_value(ghd) ? TRI_TRUE
										   : TRI_FALSE;
	else
		c->hetero_head_dim = TRI_FALSE;

	json_t *hq = json_object_get(hfq, "quantization");
	if (json_is_object(hq)) {
		c->quant_method = xstrdup("modelopt");
		modelopt_kv(c, hq, "hf_quant_config.json quantization");
		return 0;
	}
	json_t *qc = json_object_get(cfg, "quantization_config");
	if (!json_is_object(qc)) {
		c->kv_scales = TRI_FALSE;
		c->kv_scales_why = xstrdup("config.json has no quantization_config (unquantized "
					   "checkpoint, no KV scales)");
		return 0;
	}
	const char *qm = json_string_value(json_object_get(qc, "quant_method"));
	c->quant_method = qm ? xstrdup(qm) : NULL;
	if (qm && strcmp(qm, "modelopt") == 0) {
		modelopt_kv(c, qc, "config.json quantization_config");
		return 0;
	}
	json_t *scheme = json_object_get(qc, "kv_cache_scheme");
	c->kv_scales = json_is_object(scheme) ? TRI_TRUE : TRI_FALSE;
	c->kv_scales_why = xasprintf("config.json quantization_config.kv_cache_scheme: %s",
				     json_is_object(scheme) ? "set" : scheme ? "null" : "absent");
	return 0;
}

void checkpoint_facts_free(struct checkpoint_facts *c)
{
	free(c->snapshot);
	free(c->quant_method);
	free(c->kv_scales_why);
	strv_free(c->architectures);
	free(c->model_type);
	free(c->native_context_why);
	memset(c, 0, sizeof(*c));
}

json_t *checkpoint_facts_json(const struct checkpoint_facts *c)
{
	const char *ks = c->kv_scales == TRI_TRUE ? "present" : c->kv_scales == TRI_FALSE ? "absent"
											     : "unknown";
	json_t *arch = json_array();
	for (size_t i = 0; c->architectures && c->architectures[i]; i++)
		json_array_append_new(arch, json_string(c->architectures[i]));
	json_t *nc = c->native_context > 0 ? json_integer(c->native_context) : json_null();
	return json_pack("{s:b, s:s?, s:s?, s:s, s:s?, s:s, s:b, s:o, s:s?, s:o, s:s?}", "in_cache",
			 c->found, "snapshot", c->snapshot, "quant_method", c->quant_method,
			 "kv_scales", ks, "kv_scales_why", c->kv_scales_why, "hetero_head_dim",
			 tri_name(c->hetero_head_dim), "has_config", c->has_config, "architectures",
			 arch, "model_type", c->model_type, "native_context", nc,
			 "native_context_why", c->native_context_why);
}
