/*
 * ckpt.c — the checkpoint, as the stand-in (a test double of vLLM) finds it
 * in the local Hugging Face cache, offline: config.json (architecture,
 * quantization, KV scales, shapes) and the weight files, which the boot
 * reads in full so the page cache grows the way vLLM's load makes it grow.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "standin.h"

static char *xasprintf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf_(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *hub_dir(void)
{
	const char *v;

	if ((v = getenv("HF_HUB_CACHE")) && *v)
		return xasprintf_("%s", v);
	if ((v = getenv("HF_HOME")) && *v)
		return xasprintf_("%s/hub", v);
	if ((v = getenv("XDG_CACHE_HOME")) && *v)
		return xasprintf_("%s/huggingface/hub", v);
	return xasprintf_("%s/.cache/huggingface/hub", getenv("HOME") ? getenv("HOME") : "/root");
}

/* The snapshot directory for model (a local directory or a cached repo id):
 * refs/main's revision, else the first snapshot by name; NULL if none. */
static char *snapshot_dir(const char *model)
{
	char *hub, *repo, *path, *ref;
	char rev[128] = "";
	FILE *f;
	DIR *d;
	struct dirent *e;

	if (is_dir(model)) {
		path = xasprintf_("%s/config.json", model);
		if (access(path, R_OK) == 0) {
			free(path);
			return xasprintf_("%s", model);
		}
		free(path);
	}
	{
		/* "org/name" → "models--org--name" */
		char flat[512];
		size_t n = 0;

		for (const char *m = model; *m && n + 3 < sizeof flat; m++) {
			if (*m == '/') {
				flat[n++] = '-';
				flat[n++] = '-';
			} else {
				flat[n++] = *m;
			}
		}
		flat[n] = '\0';
		hub = hub_dir();
		repo = xasprintf_("%s/models--%s", hub, flat);
		free(hub);
	}
	ref = xasprintf_("%s/refs/main", repo);
	if ((f = fopen(ref, "r"))) {
		if (fgets(rev, sizeof rev, f))
			rev[strcspn(rev, "\r\n ")] = '\0';
		fclose(f);
	}
	free(ref);
	path = NULL;
	if (*rev) {
		path = xasprintf_("%s/snapshots/%s", repo, rev);
		if (!is_dir(path)) {
			free(path);
			path = NULL;
		}
	}
	if (!path) {
		char *snaps = xasprintf_("%s/snapshots", repo);
		char best[256] = "";
		if ((d = opendir(snaps))) {
			while ((e = readdir(d)))
				if (e->d_name[0] != '.' && (!*best || strcmp(e->d_name, best) < 0))
					snprintf(best, sizeof best, "%s", e->d_name);
			closedir(d);
		}
		if (*best)
			path = xasprintf_("%s/%s", snaps, best);
		free(snaps);
	}
	free(repo);
	return path;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* A config field from the top level, else from text_config; -1 if absent. */
static long cfg_int(json_t *cfg, const char *key)
{
	json_t *v = json_object_get(cfg, key);

	if (!json_is_integer(v))
		v = json_object_get(json_object_get(cfg, "text_config"), key);
	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

static const char *cfg_str(json_t *cfg, const char *key)
{
	const char *s = json_string_value(json_object_get(cfg, key));

	return s ? s : json_string_value(json_object_get(json_object_get(cfg, "text_config"), key));
}

/* Read the checkpoint for model; exits 1 with vLLM's error if absent. */
void read_checkpoint(const char *model, struct ckpt *c)
{
	json_t *qc, *hq;
	char *path;
	DIR *d;
	struct dirent *e;
	size_t n = 0;
	const char *mt;

	memset(c, 0, sizeof *c);
	c->dir = snapshot_dir(model);
	path = c->dir ? xasprintf_("%s/config.json", c->dir) : NULL;
	c->config = path ? json_load_file(path, 0, NULL) : NULL;
	free(path);
	if (!json_is_object(c->config)) {
		raw(true, "ValueError: Invalid repository ID or local directory specified: '%s'.", model);
		raw(true, "Please verify the following requirements:");
		raw(true, "1. Provide a valid Hugging Face repository ID.");
		raw(true, "2. Specify a local directory that contains a recognized configuration file.");
		raw(true, "   - For Hugging Face models: ensure the presence of a 'config.json'.");
		raw(true, "   - For Mistral models: ensure the presence of a 'params.json'.");
		exit(1);
	}
	c->arch = json_string_value(json_array_get(json_object_get(c->config, "architectures"), 0));
	if (!c->arch)
		c->arch = "Qwen3ForCausalLM";
	qc = json_object_get(c->config, "quantization_config");
	if (json_is_object(qc)) {
		const char *m = json_string_value(json_object_get(qc, "quant_method"));
		snprintf(c->quant, sizeof c->quant, "%s", m ? m : "");
		if (json_is_object(json_object_get(qc, "kv_cache_scheme")))
			c->kv_scales = true;
		if (json_is_string(json_object_get(qc, "kv_cache_quant_algo")))
			c->kv_scales = true;
	}
	path = xasprintf_("%s/hf_quant_config.json", c->dir);
	hq = json_load_file(path, 0, NULL);
	free(path);
	if (json_is_object(hq)) {
		json_t *q = json_object_get(hq, "quantization");
		if (json_is_string(json_object_get(q, "kv_cache_quant_algo")))
			c->kv_scales = true;
		if (!*c->quant)
			snprintf(c->quant, sizeof c->quant, "modelopt");
	}
	json_decref(hq);
	c->head_dim = cfg_int(c->config, "head_dim");
	c->global_head_dim = cfg_int(c->config, "global_head_dim");
	c->layers = cfg_int(c->config, "num_hidden_layers");
	c->kv_heads = cfg_int(c->config, "num_key_value_heads");
	c->hidden = cfg_int(c->config, "hidden_size");
	c->max_pos = cfg_int(c->config, "max_position_embeddings");
	mt = cfg_str(c->config, "model_type");
	c->gemma4 = mt && !strncmp(mt, "gemma4", 6);
	if (c->layers <= 0)
		c->layers = 28;
	if (c->kv_heads <= 0)
		c->kv_heads = 8;
	if (c->head_dim <= 0) {
		long heads = cfg_int(c->config, "num_attention_heads");
		c->head_dim = (c->hidden > 0 && heads > 0) ? c->hidden / heads : 128;
	}

	c->weights = calloc(1, sizeof *c->weights);
	if ((d = opendir(c->dir))) {
		while ((e = readdir(d))) {
			struct stat st;
			char *p;
			if (!ends_with(e->d_name, ".safetensors") && !ends_with(e->d_name, ".bin"))
				continue;
			p = xasprintf_("%s/%s", c->dir, e->d_name);
			if (stat(p, &st) || !S_ISREG(st.st_mode)) {
				free(p);
				continue;
			}
			c->weights = realloc(c->weights, (n + 2) * sizeof *c->weights);
			c->weights[n++] = p;
			c->weights[n] = NULL;
			c->weight_bytes += (double)st.st_size;
		}
		closedir(d);
	}
	qsort(c->weights, n, sizeof *c->weights, cmp_str);
	if (!n) {
		raw(true, "RuntimeError: Cannot find any model weights with `%s`", model);
		exit(1);
	}
}

/* Read every weight file to the end (the page cache grows like vLLM's). */
void read_weights(const struct ckpt *c)
{
	static char buf[1 << 20];

	for (size_t i = 0; c->weights[i]; i++) {
		int fd = open(c->weights[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while (read(fd, buf, sizeof buf) > 0)
			;
		close(fd);
	}
}

