/*
 * deployed.c — the deployed fleet as the containers will get it.
 *
 * Every compose file in .env COMPOSE_FILE is parsed (libfyaml), each role
 * service's entrypoint + command is interpolated with the .env values
 * (${VAR:-default}, ${VAR-default}, ${VAR}, $VAR, $$), and the vLLM flags
 * are read back into knob values. What cannot be read is kept as a list of
 * problems (message, remedy), in the order met, for the caller to report:
 * doctor turns them into deploy-dir findings and derives the rest
 * (checkpoint facts, attention path) in its own deployed.c.
 */
#include <ctype.h>
#include <libfyaml.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/interp.h"
#include "../util/strv.h"
#include "../util/yaml_doc.h"
#include "../util/yaml_scalar.h"
#include "deploy_int.h"

void deployed_free(struct deployed *d)
{
	env_file_free(&d->env);
	strv_free(d->files);
	for (int r = 0; r < ROLE__COUNT; r++) {
		struct deployed_role *dr = &d->roles[r];
		free(dr->service);
		free(dr->image);
		strv_free(dr->args);
		for (int k = 0; k < KNOB__COUNT; k++)
			free(dr->knobs[k]);
		checkpoint_facts_free(&dr->ck);
		free(dr->attn);
		free(dr->attn_why);
	}
	for (size_t i = 0; i < d->n_uses; i++) {
		free(d->uses[i].name);
		free(d->uses[i].value);
		free(d->uses[i].where);
	}
	free(d->uses);
	free(d->interp_err);
	for (size_t i = 0; i < d->n_problems; i++) {
		free(d->problems[i].msg);
		free(d->problems[i].remedy);
	}
	free(d->problems);
	memset(d, 0, sizeof(*d));
}

static const char *env_lookup(const char *name, void *ctx)
{
	return env_get(ctx, name);
}

/* Compose-style interpolation of s with the .env values (never the process
 * environment: doctor checks the deploy dir). A value nested past the
 * bound is kept as written and the first such problem is kept in
 * d->interp_err for deployed_load to report. */
static char *interp(const char *s, struct deployed *d)
{
	char *why = NULL;
	char *v = interp_compose(s, env_lookup, &d->env, &why);
	if (v)
		return v;
	if (!d->interp_err)
		d->interp_err = why;
	else
		free(why);
	return xstrdup(s);
}

/* Parse YAML text; NULL with *why ("L:C: message") when it is not YAML. */
static struct fy_document *yaml_parse(const char *text, char **why)
{
	struct err *e = NULL;
	struct fy_document *doc = NULL;
	if (yaml_doc_parse(NULL, text, strlen(text), 0, NULL, &doc, &e) < 0) {
		*why = xstrdup(e->msg);
		err_free(e);
		return NULL;
	}
	if (!doc)
		*why = xstrdup("1:1: not a YAML document");
	return doc;
}

static char *scalar(struct fy_node *n)
{
	if (!n || !fy_node_is_scalar(n))
		return NULL;
	size_t len;
	const char *s = yaml_scalar0(n, &len);
	return xasprintf("%.*s", (int)len, s ? s : "");
}

/* Append the strings of a sequence (or a plain scalar split on blanks). */
static void args_add(char ***v, struct fy_node *n)
{
	if (!n)
		return;
	if (fy_node_is_sequence(n)) {
		void *it = NULL;
		struct fy_node *x;
		while ((x = fy_node_sequence_iterate(n, &it))) {
			_cleanup_free_ char *s = scalar(x);
			if (s)
				strv_push(v, s);
		}
	} else if (fy_node_is_scalar(n)) {
		_cleanup_free_ char *s = scalar(n);
		char *save = NULL;
		for (char *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
			strv_push(v, t);
	}
}

static const char *const value_flags[] = {
	"model", "gpu-memory-utilization", "max-model-len", "kv-cache-dtype", "quantization",
	"max-num-seqs", "attention-config", "attention-backend", "served-model-name", "host", "port",
	"runner", "convert", "dtype", "tensor-parallel-size", "speculative-config", "hf-overrides",
	"reasoning-parser", "tool-call-parser", "max-loras", "max-lora-rank", NULL
};

/* Flags read back into a knob as they are; bare flags set a knob's word. */
static const struct {
	const char *flag;
	enum knob_id knob;
	const char *bare; /* NULL: the flag takes a value */
} readback[] = {
	{ "speculative-config", KNOB_SPECULATIVE_CONFIG, NULL },
	{ "hf-overrides", KNOB_HF_OVERRIDES, NULL },
	{ "reasoning-parser", KNOB_REASONING_PARSER, NULL },
	{ "tool-call-parser", KNOB_TOOL_CALL_PARSER, NULL },
	{ "runner", KNOB_RUNNER, NULL },
	{ "convert", KNOB_CONVERT, NULL },
	{ "max-loras", KNOB_MAX_LORAS, NULL },
	{ "max-lora-rank", KNOB_MAX_LORA_RANK, NULL },
	{ "trust-remote-code", KNOB_TRUST_REMOTE_CODE, "true" },
	{ "no-trust-remote-code", KNOB_TRUST_REMOTE_CODE, "false" },
	{ "enable-lora", KNOB_ENABLE_LORA, "true" },
	{ "no-enable-lora", KNOB_ENABLE_LORA, "false" },
	{ "enable-prefix-caching", KNOB_ENABLE_PREFIX_CACHING, "true" },
	{ "no-enable-prefix-caching", KNOB_ENABLE_PREFIX_CACHING, "false" },
};

static void set_knob(struct deployed_role *dr, enum knob_id k, const char *v)
{
	free(dr->knobs[k]);
	char *canon = NULL;
	const char *expect = NULL;
	dr->knobs[k] = knob_canon(k, v, &canon, &expect) == 0 ? canon : xstrdup(v);
}

/* Read the vLLM flags of an interpolated argv back into knob values. */
void deployed_knobs_from_args(struct deployed_role *dr, char **args)
{
	set_knob(dr, KNOB_FEASIBLE, "true");
	set_knob(dr, KNOB_KV_CACHE_DTYPE, "auto");
	set_knob(dr, KNOB_QUANTIZATION, "none");
	set_knob(dr, KNOB_ATTENTION_BACKEND, "auto");
	set_knob(dr, KNOB_ENFORCE_EAGER, "false");
	set_knob(dr, KNOB_MAX_NUM_SEQS, "auto");
	set_knob(dr, KNOB_SPECULATIVE_CONFIG, "none");
	set_knob(dr, KNOB_HF_OVERRIDES, "none");
	set_knob(dr, KNOB_REASONING_PARSER, "none");
	set_knob(dr, KNOB_TOOL_CALL_PARSER, "none");
	set_knob(dr, KNOB_RUNNER, "auto");
	set_knob(dr, KNOB_CONVERT, "auto");
	set_knob(dr, KNOB_TRUST_REMOTE_CODE, "false");
	set_knob(dr, KNOB_ENABLE_LORA, "false");
	set_knob(dr, KNOB_ENABLE_PREFIX_CACHING, "auto");
	for (size_t i = 0; args && args[i]; i++) {
		const char *a = args[i];
		if (!str_starts_with(a, "--")) {
			if (strcmp(a, "vllm") != 0 && strcmp(a, "serve") != 0 && !dr->knobs[KNOB_MODEL])
				set_knob(dr, KNOB_MODEL, a);
			continue;
		}
		const char *eq = strchr(a, '=');
		_cleanup_free_ char *name = eq ? xasprintf("%.*s", (int)(eq - a - 2), a + 2) : xstrdup(a + 2);
		const char *val = eq ? eq + 1 : NULL;
		if (!val && strv_has((char *const *)value_flags, name) && args[i + 1] &&
		    !str_starts_with(args[i + 1], "--"))
			val = args[++i];
		if (strcmp(name, "enforce-eager") == 0)
			set_knob(dr, KNOB_ENFORCE_EAGER, "true");
		else if (strcmp(name, "no-enforce-eager") == 0)
			set_knob(dr, KNOB_ENFORCE_EAGER, "false");
		for (size_t r = 0; r < ARRAY_SIZE(readback); r++)
			if (strcmp(name, readback[r].flag) == 0 && (readback[r].bare ? !val : !!val))
				set_knob(dr, readback[r].knob, readback[r].bare ? readback[r].bare : val);
		if (!val)
			continue;
		if (strcmp(name, "model") == 0)
			set_knob(dr, KNOB_MODEL, val);
		else if (strcmp(name, "gpu-memory-utilization") == 0)
			set_knob(dr, KNOB_GPU_MEM_UTIL, val);
		else if (strcmp(name, "max-model-len") == 0)
			set_knob(dr, KNOB_MAX_MODEL_LEN, val);
		else if (strcmp(name, "kv-cache-dtype") == 0)
			set_knob(dr, KNOB_KV_CACHE_DTYPE, val);
		else if (strcmp(name, "quantization") == 0)
			set_knob(dr, KNOB_QUANTIZATION, val);
		else if (strcmp(name, "max-num-seqs") == 0)
			set_knob(dr, KNOB_MAX_NUM_SEQS, val);
		else if (strcmp(name, "attention-backend") == 0 ||
			 strcmp(name, "attention-config.backend") == 0)
			set_knob(dr, KNOB_ATTENTION_BACKEND, val);
		else if (strcmp(name, "attention-config") == 0) {
			json_auto_t *j = json_loads(val, 0, NULL);
			const char *b = json_string_value(json_object_get(j, "backend"));
			if (b)
				set_knob(dr, KNOB_ATTENTION_BACKEND, b);
		}
	}
}

/* The role a compose service serves: its lobes.role label, else its name. */
static int service_role(const char *svc, struct fy_node *sn)
{
	_cleanup_free_ char *label = scalar(fy_node_by_path(sn, "/labels/lobes.role", FY_NT,
							     FYNWF_DONT_FOLLOW));
	int r = label ? role_from_name(label) : -1;
	return r >= 0 ? r : role_from_name(svc);
}

static void use_add(struct deployed *d, const char *name, const char *value, const char *where,
		    int role)
{
	d->uses = xrealloc(d->uses, (d->n_uses + 1) * sizeof(*d->uses));
	d->uses[d->n_uses++] = (struct env_use){ xstrdup(name), value ? xstrdup(value) : NULL,
						 xstrdup(where), role };
}

/* The VLLM_* names of one service's `environment:` (a mapping or a list). */
static void env_uses_of(struct deployed *d, const char *file, const char *svc, struct fy_node *sn,
			int role)
{
	struct fy_node *en = fy_node_by_path(sn, "/environment", FY_NT, FYNWF_DONT_FOLLOW);
	if (!en)
		return;
	_cleanup_free_ char *where = xasprintf("%s: services.%s.environment", file, svc);
	if (fy_node_is_mapping(en)) {
		void *it = NULL;
		struct fy_node_pair *p;
		while ((p = fy_node_mapping_iterate(en, &it))) {
			_cleanup_free_ char *k = scalar(fy_node_pair_key(p));
			_cleanup_free_ char *v = scalar(fy_node_pair_value(p));
			_cleanup_free_ char *iv = v ? interp(v, d) : NULL;
			if (k && str_starts_with(k, "VLLM_"))
				use_add(d, k, iv, where, role);
		}
	} else if (fy_node_is_sequence(en)) {
		void *it = NULL;
		struct fy_node *x;
		while ((x = fy_node_sequence_iterate(en, &it))) {
			_cleanup_free_ char *s = scalar(x);
			if (!s || !str_starts_with(s, "VLLM_"))
				continue;
			char *eq = strchr(s, '=');
			if (eq)
				*eq = '\0';
			_cleanup_free_ char *iv = eq ? interp(eq + 1, d) : NULL;
			use_add(d, s, iv, where, role);
		}
	}
}

/* A problem of the dir as read: msg (taken), its remedy (may be NULL). */
static void problem(struct deployed *d, const char *remedy, char *msg)
{
	d->problems = xrealloc(d->problems, (d->n_problems + 1) * sizeof(*d->problems));
	d->problems[d->n_problems++] = (struct deployed_problem){ msg, remedy ? xstrdup(remedy) : NULL };
}

void deployed_load(struct deployed *d, const char *dir)
{
	struct err *e = NULL;
	int have_env = deploy_env_read(dir, &d->env, &e);
	if (have_env == 0) {
		problem(d, "run `lobes init --apply` to render it", xasprintf("'%s' has no .env", dir));
	} else if (have_env < 0) {
		problem(d, "fix the line, or move .env aside and run `lobes init --apply`",
			xstrdup(e ? e->msg : "cannot read .env"));
		err_free(e);
		e = NULL;
	} else {
		d->env_ok = true;
	}
	for (size_t i = 0; i < d->env.n; i++)
		if (str_starts_with(d->env.e[i].key, "VLLM_")) {
			_cleanup_free_ char *w = xasprintf(".env:%d", d->env.e[i].line);
			use_add(d, d->env.e[i].key, d->env.e[i].value, w, -1);
		}
	const char *cf = env_get(&d->env, "COMPOSE_FILE");
	_cleanup_free_ char *list = xstrdup(cf && *cf ? cf : "docker-compose.yml");
	char *save = NULL;
	for (char *t = strtok_r(list, ":", &save); t; t = strtok_r(NULL, ":", &save))
		strv_push(&d->files, t);
	d->compose_ok = true;
	bool interp_reported = false;
	for (char **f = d->files; f && *f; f++) {
		_cleanup_free_ char *p = **f == '/' ? xstrdup(*f) : xasprintf("%s/%s", dir, *f);
		if (!fs_exists(p)) {
			problem(d, "run `lobes init --apply` to render it",
				xasprintf("compose file '%s' (listed in .env COMPOSE_FILE) is missing", *f));
			d->compose_ok = false;
			continue;
		}
		_cleanup_free_ char *text = fs_read(p, 16 << 20, NULL, &e);
		if (!text) {
			problem(d, NULL, xstrdup(e->msg));
			err_free(e);
			e = NULL;
			d->compose_ok = false;
			continue;
		}
		_cleanup_free_ char *why = NULL;
		struct fy_document *doc = yaml_parse(text, &why);
		struct fy_node *root = doc ? fy_document_root(doc) : NULL;
		struct fy_node *svcs = root ? fy_node_by_path(root, "/services", FY_NT, FYNWF_DONT_FOLLOW)
					    : NULL;
		if (!doc || (root && !fy_node_is_mapping(root)) || (svcs && !fy_node_is_mapping(svcs))) {
			problem(d, "fix the file, or run `lobes init --apply` to render it again "
				   "(the old one is kept as NAME.bak.N)",
				xasprintf("%s/%s:%s; expected a compose file", dir, *f,
					  why ? why : "1:1: not a mapping with 'services'"));
			d->compose_ok = false;
			if (doc)
				fy_document_destroy(doc);
			continue;
		}
		void *it = NULL;
		struct fy_node_pair *pr;
		while (svcs && (pr = fy_node_mapping_iterate(svcs, &it))) {
			_cleanup_free_ char *svc = scalar(fy_node_pair_key(pr));
			struct fy_node *sn = fy_node_pair_value(pr);
			if (!svc || !sn || !fy_node_is_mapping(sn))
				continue;
			int role = service_role(svc, sn);
			env_uses_of(d, *f, svc, sn, role);
			struct fy_node *cmd = fy_node_by_path(sn, "/command", FY_NT, FYNWF_DONT_FOLLOW);
			_cleanup_free_ char *img = scalar(fy_node_by_path(sn, "/image", FY_NT,
									  FYNWF_DONT_FOLLOW));
			if (role >= 0 && img) {
				free(d->roles[role].image);
				d->roles[role].image = interp(img, d);
			}
			if (role < 0 || !cmd)
				continue; /* an overlay entry (GPU attachment) or another service */
			_cleanup_strv_ char **raw = NULL;
			args_add(&raw, fy_node_by_path(sn, "/entrypoint", FY_NT, FYNWF_DONT_FOLLOW));
			args_add(&raw, cmd);
			_cleanup_strv_ char **args = NULL;
			for (char **a = raw; a && *a; a++) {
				_cleanup_free_ char *x = interp(*a, d);
				strv_push(&args, x);
			}
			struct deployed_role *dr = &d->roles[role];
			dr->present = true;
			free(dr->service);
			dr->service = xstrdup(svc);
			for (int k = 0; k < KNOB__COUNT; k++) {
				free(dr->knobs[k]);
				dr->knobs[k] = NULL;
			}
			deployed_knobs_from_args(dr, args);
			strv_free(dr->args);
			dr->args = TAKE_PTR(args);
		}
		fy_document_destroy(doc);
		if (d->interp_err && !interp_reported) {
			problem(d, "flatten the nested defaults, or run `lobes init --apply` to render "
				   "the file again", xasprintf("%s/%s: %s", dir, *f, d->interp_err));
			interp_reported = true;
		}
	}
	/* A role the .env marks infeasible is not started by lobes serve. */
	for (int i = 0; i < ROLE__COUNT; i++) {
		_cleanup_free_ char *k = env_key((enum role_id)i, "FEASIBLE");
		const char *v = env_get(&d->env, k);
		if (v && strcmp(v, "false") == 0)
			d->roles[i].present = false;
	}
}
