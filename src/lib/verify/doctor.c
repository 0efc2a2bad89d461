/*
 * doctor.c — read-only checks of a deploy dir before a boot; see doctor.h.
 *
 * The deployed values are read the way the containers will get them: every
 * compose file in .env COMPOSE_FILE is parsed (libfyaml), each role
 * service's entrypoint + command is interpolated with the .env values
 * (${VAR:-default}, ${VAR-default}, ${VAR}, $VAR, $$), and the vLLM flags
 * are read back into knob values. Traits are then evaluated against those
 * values and the DETECTED facts, not against the plan: a profile that does
 * not list a trait (spark on a Thor) must still be caught. The predicate
 * evaluation is a private copy of the plan's (resolve.c keeps its own
 * static), over the deployed values instead of the plan's.
 *
 * Docker reachability and the GPU runtime are checked through the docker
 * CLI (proc_run, bounded: `docker version`, `docker info`): the Engine API
 * client (runtime/engine_api.h) has no /info call. Compose is found with
 * compose_detect(), the same detection `lobes serve` uses.
 */
#include <ctype.h>
#include <errno.h>
#include <libfyaml.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "../facts/facts.h"
#include "../knowledge/embedded.h"
#include "../knowledge/knowledge.h"
#include "../render/deploy.h"
#include "../runtime/compose_cli.h"
#include "../util/strv.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/proc.h"
#include "doctor.h"

#define FP8_TRAIT "fp8-kv-needs-scales-on-triton"
#define DOCKER_TIMEOUT_MS 10000
#define PROBE_TIMEOUT_MS 120000

const char *check_sev_name(enum check_sev s)
{
	static const char *const n[] = { "ok", "info", "warning", "error" };
	return (unsigned)s < ARRAY_SIZE(n) ? n[s] : "?";
}

/* --- findings ------------------------------------------------------------ */

/* Append a finding; the returned pointer is valid until the next add. */
__attribute__((format(printf, 4, 5))) static struct check *add(struct doctor_report *r,
							       const char *id, enum check_sev sev,
							       const char *fmt, ...)
{
	r->c = xrealloc(r->c, (r->n + 1) * sizeof(*r->c));
	struct check *c = &r->c[r->n++];
	memset(c, 0, sizeof(*c));
	c->id = xstrdup(id);
	c->sev = sev;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&c->message, fmt, ap) < 0)
		abort();
	va_end(ap);
	return c;
}

/* --- the deployed fleet -------------------------------------------------- */

struct env_use {
	char *name, *value, *where;
};

struct deployed_role {
	bool present;
	char *service;               /* compose service name */
	char *knobs[KNOB__COUNT];    /* effective values; NULL = unknown */
	struct checkpoint_facts ck;
	bool ck_read;
	char *attn, *attn_why;       /* derived attention path */
};

struct deployed {
	bool env_ok;
	struct env_file env;
	char **files;                /* compose files, as listed */
	struct deployed_role roles[ROLE__COUNT];
	struct env_use *uses;
	size_t n_uses;
	bool compose_ok;             /* every compose file parsed */
};

static void deployed_free(struct deployed *d)
{
	env_file_free(&d->env);
	strv_free(d->files);
	for (int r = 0; r < ROLE__COUNT; r++) {
		struct deployed_role *dr = &d->roles[r];
		free(dr->service);
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
	memset(d, 0, sizeof(*d));
}

/* Compose-style interpolation of s with the .env values (never the process
 * environment: doctor checks the deploy dir). Unknown forms are kept. */
static char *interp(const char *s, const struct env_file *env)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	for (const char *p = s; *p;) {
		if (p[0] != '$') {
			buf_add(&b, p++, 1);
			continue;
		}
		if (p[1] == '$') {
			buf_adds(&b, "$");
			p += 2;
			continue;
		}
		if (p[1] == '{') {
			/* find the matching '}' */
			int depth = 0;
			const char *q = p + 1;
			for (; *q; q++) {
				if (*q == '{')
					depth++;
				else if (*q == '}' && --depth == 0)
					break;
			}
			if (!*q) {
				buf_adds(&b, p);
				break;
			}
			_cleanup_free_ char *in = xasprintf("%.*s", (int)(q - p - 2), p + 2);
			size_t nl = strspn(in, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
			_cleanup_free_ char *name = xasprintf("%.*s", (int)nl, in);
			const char *op = in + nl;
			const char *v = env_get(env, name);
			if (str_starts_with(op, ":-") || str_starts_with(op, "-")) {
				bool colon = op[0] == ':';
				const char *def = op + (colon ? 2 : 1);
				if (!v || (colon && !*v)) {
					_cleanup_free_ char *dv = interp(def, env);
					buf_adds(&b, dv);
				} else {
					buf_adds(&b, v);
				}
			} else {
				buf_adds(&b, v ? v : ""); /* ${X}, ${X:?msg}, ${X?msg} */
			}
			p = q + 1;
			continue;
		}
		size_t nl = 0;
		while (isalnum((unsigned char)p[1 + nl]) || p[1 + nl] == '_')
			nl++;
		if (!nl) {
			buf_add(&b, p++, 1);
			continue;
		}
		_cleanup_free_ char *name = xasprintf("%.*s", (int)nl, p + 1);
		const char *v = env_get(env, name);
		buf_adds(&b, v ? v : "");
		p += 1 + nl;
	}
	return buf_take(&b);
}

static void diag_discard(struct fy_diag *d, void *user, const char *buf, size_t len)
{
	(void)d;
	(void)user;
	(void)buf;
	(void)len;
}

/* Parse YAML text; NULL with *why ("L:C: message") when it is not YAML. */
static struct fy_document *yaml_parse(const char *text, char **why)
{
	struct fy_diag_cfg dc;
	fy_diag_cfg_default(&dc);
	dc.fp = NULL;
	dc.output_fn = diag_discard;
	dc.colorize = false;
	struct fy_diag *d = fy_diag_create(&dc);
	if (!d) {
		*why = xstrdup("cannot create a YAML diagnostic object");
		return NULL;
	}
	fy_diag_set_collect_errors(d, true);
	struct fy_parse_cfg cfg = { .flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_DEFAULT_VERSION_1_2,
				    .diag = d };
	struct fy_document *doc = fy_document_build_from_string(&cfg, text, strlen(text));
	if (!doc) {
		void *it = NULL;
		struct fy_diag_error *e;
		while ((e = fy_diag_errors_iterate(d, &it)))
			if (e->type >= FYET_ERROR)
				break;
		*why = e ? xasprintf("%d:%d: %s", e->line > 0 ? e->line : 1, e->column > 0 ? e->column : 1,
				     e->msg ? e->msg : "parse error")
			 : xstrdup("1:1: not a YAML document");
	}
	fy_diag_destroy(d);
	return doc;
}

static char *scalar(struct fy_node *n)
{
	if (!n || !fy_node_is_scalar(n))
		return NULL;
	size_t len;
	const char *s = fy_node_get_scalar(n, &len);
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
	"runner", "convert", "dtype", "tensor-parallel-size", NULL
};

static void set_knob(struct deployed_role *dr, enum knob_id k, const char *v)
{
	free(dr->knobs[k]);
	char *canon = NULL;
	const char *expect = NULL;
	dr->knobs[k] = knob_canon(k, v, &canon, &expect) == 0 ? canon : xstrdup(v);
}

/* Read the vLLM flags of an interpolated argv back into knob values. */
static void knobs_from_args(struct deployed_role *dr, char **args)
{
	set_knob(dr, KNOB_FEASIBLE, "true");
	set_knob(dr, KNOB_KV_CACHE_DTYPE, "auto");
	set_knob(dr, KNOB_QUANTIZATION, "none");
	set_knob(dr, KNOB_ATTENTION_BACKEND, "auto");
	set_knob(dr, KNOB_ENFORCE_EAGER, "false");
	set_knob(dr, KNOB_MAX_NUM_SEQS, "auto");
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

static void use_add(struct deployed *d, const char *name, const char *value, const char *where)
{
	d->uses = xrealloc(d->uses, (d->n_uses + 1) * sizeof(*d->uses));
	d->uses[d->n_uses++] = (struct env_use){ xstrdup(name), value ? xstrdup(value) : NULL,
						 xstrdup(where) };
}

/* The VLLM_* names of one service's `environment:` (a mapping or a list). */
static void env_uses_of(struct deployed *d, const char *file, const char *svc, struct fy_node *sn)
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
			_cleanup_free_ char *iv = v ? interp(v, &d->env) : NULL;
			if (k && str_starts_with(k, "VLLM_"))
				use_add(d, k, iv, where);
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
			_cleanup_free_ char *iv = eq ? interp(eq + 1, &d->env) : NULL;
			use_add(d, s, iv, where);
		}
	}
}

/* Read .env and the compose files; report parse problems as deploy-dir
 * findings. */
static void deployed_read(struct deployed *d, const char *dir, struct doctor_report *r)
{
	_cleanup_free_ char *envp = xasprintf("%s/.env", dir);
	struct err *e = NULL;
	if (!fs_exists(envp)) {
		struct check *c = add(r, "deploy-dir", SEV_ERROR, "'%s' has no .env", dir);
		c->remedy = xstrdup("run `lobes init --apply` to render it");
	} else {
		_cleanup_free_ char *text = fs_read(envp, 16 << 20, NULL, &e);
		if (!text || env_parse(text, envp, &d->env, &e) < 0) {
			struct check *c = add(r, "deploy-dir", SEV_ERROR, "%s", e ? e->msg : "cannot read .env");
			c->remedy = xstrdup("fix the line, or move .env aside and run `lobes init --apply`");
			err_free(e);
			e = NULL;
		} else {
			d->env_ok = true;
		}
	}
	for (size_t i = 0; i < d->env.n; i++)
		if (str_starts_with(d->env.e[i].key, "VLLM_")) {
			_cleanup_free_ char *w = xasprintf(".env:%d", d->env.e[i].line);
			use_add(d, d->env.e[i].key, d->env.e[i].value, w);
		}
	const char *cf = env_get(&d->env, "COMPOSE_FILE");
	_cleanup_free_ char *list = xstrdup(cf && *cf ? cf : "docker-compose.yml");
	char *save = NULL;
	for (char *t = strtok_r(list, ":", &save); t; t = strtok_r(NULL, ":", &save))
		strv_push(&d->files, t);
	d->compose_ok = true;
	for (char **f = d->files; f && *f; f++) {
		_cleanup_free_ char *p = **f == '/' ? xstrdup(*f) : xasprintf("%s/%s", dir, *f);
		if (!fs_exists(p)) {
			struct check *c = add(r, "deploy-dir", SEV_ERROR,
					      "compose file '%s' (listed in .env COMPOSE_FILE) is missing", *f);
			c->remedy = xstrdup("run `lobes init --apply` to render it");
			d->compose_ok = false;
			continue;
		}
		_cleanup_free_ char *text = fs_read(p, 16 << 20, NULL, &e);
		if (!text) {
			add(r, "deploy-dir", SEV_ERROR, "%s", e->msg);
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
			struct check *c = add(r, "deploy-dir", SEV_ERROR, "%s/%s:%s; expected a compose file",
					      dir, *f, why ? why : "1:1: not a mapping with 'services'");
			c->remedy = xstrdup("fix the file, or run `lobes init --apply` to render it again "
					    "(the old one is kept as NAME.bak.N)");
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
			env_uses_of(d, *f, svc, sn);
			struct fy_node *cmd = fy_node_by_path(sn, "/command", FY_NT, FYNWF_DONT_FOLLOW);
			int role = service_role(svc, sn);
			if (role < 0 || !cmd)
				continue; /* an overlay entry (GPU attachment) or another service */
			_cleanup_strv_ char **raw = NULL;
			args_add(&raw, fy_node_by_path(sn, "/entrypoint", FY_NT, FYNWF_DONT_FOLLOW));
			args_add(&raw, cmd);
			_cleanup_strv_ char **args = NULL;
			for (char **a = raw; a && *a; a++) {
				_cleanup_free_ char *x = interp(*a, &d->env);
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
			knobs_from_args(dr, args);
		}
		fy_document_destroy(doc);
	}
	/* A role the .env marks infeasible is not started by lobes serve. */
	for (int i = 0; i < ROLE__COUNT; i++) {
		_cleanup_free_ char *k = env_key((enum role_id)i, "FEASIBLE");
		const char *v = env_get(&d->env, k);
		if (v && strcmp(v, "false") == 0)
			d->roles[i].present = false;
	}
}

/* --- predicates over the deployed values ------------------------------- */

/* The predicate inputs of the deployed values (dr NULL: fleet level). */
static void deployed_view(const struct card *card, const struct host_facts *f, int role,
			  const struct deployed_role *dr, struct fact_view *v)
{
	memset(v, 0, sizeof(*v));
	v->facts = f;
	v->card = card;
	v->role = dr ? role : -1;
	if (!dr)
		return;
	for (int k = 0; k < KNOB__COUNT; k++)
		v->knobs[k] = dr->knobs[k];
	v->attention_path = dr->attn;
	v->ckpt = &dr->ck;
}

/* The backend this role will take, as the plan derives it, but from the
 * deployed values and the DETECTED card. */
static void derive_attention(const struct card *card, enum role_id role, struct deployed_role *dr)
{
	free(dr->attn);
	free(dr->attn_why);
	dr->attn = attention_path_derive(card, role, dr->knobs[KNOB_ATTENTION_BACKEND],
					 dr->ck.hetero_head_dim, &dr->attn_why);
}

static char *evidence_text(const struct trait *t)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	for (size_t i = 0; i < t->n_evidence; i++) {
		const struct evidence *e = &t->evidence[i];
		buf_printf(&b, "%sevidence (%s%s%s%s%s): %s", i ? "\n" : "", e->kind ? e->kind : "?",
			   e->date ? ", " : "", e->date ? e->date : "", e->box ? ", " : "",
			   e->box ? e->box : "", e->observation ? e->observation : "");
	}
	return b.len ? buf_take(&b) : NULL;
}

/* --- registries ---------------------------------------------------------- */

char **vllm_env_list_parse(const char *text)
{
	char **v = NULL;
	_cleanup_free_ char *copy = xstrdup(text ? text : "");
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *s = str_strip(l);
		if (!*s || *s == '#')
			continue;
		size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (n == 0 || (s[n] && !isspace((unsigned char)s[n])))
			continue;
		s[n] = '\0';
		strv_push(&v, s);
	}
	if (!v)
		v = xcalloc(1, sizeof(char *));
	return v;
}

static const struct embedded_file *embedded(const char *path)
{
	for (size_t i = 0; i < embedded_files_count; i++)
		if (strcmp(embedded_files[i].path, path) == 0)
			return &embedded_files[i];
	return NULL;
}

/* The replacement removed.txt records for name, or NULL. Caller frees. */
static char *removed_replacement(const char *name)
{
	const struct embedded_file *f = embedded("data/vllm-env/removed.txt");
	if (!f)
		return NULL;
	_cleanup_free_ char *copy = xstrdup(f->data);
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *s = str_strip(l);
		if (*s == '#')
			continue;
		size_t n = strcspn(s, " \t");
		if (n == strlen(name) && strncmp(s, name, n) == 0)
			return xstrdup(str_strip(s + n));
	}
	return NULL;
}

/* Replace every "<NAME>"/"<VALUE>" placeholder in tmpl by value. */
static char *fill(const char *tmpl, const char *value)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	for (const char *p = tmpl; *p;) {
		if (value && *value && (str_starts_with(p, "<NAME>") || str_starts_with(p, "<VALUE>"))) {
			buf_adds(&b, value);
			p += p[1] == 'N' ? 6 : 7;
		} else {
			buf_add(&b, p++, 1);
		}
	}
	return buf_take(&b);
}

/* A trait replacement "--flag=JSON" as a shell/YAML-safe "--flag='JSON'". */
static char *quote_flag(const char *s)
{
	const char *eq = strchr(s, '=');
	if (!str_starts_with(s, "--") || !eq || eq[1] == '\'' || !strpbrk(eq, "{\" "))
		return xstrdup(s);
	return xasprintf("%.*s'%s'", (int)(eq - s + 1), s, eq + 1);
}

/* --- docker CLI ---------------------------------------------------------- */

struct run_out {
	int rc; /* -1: could not start */
	char *out, *errl, *why;
};

static void run_out_free(struct run_out *o)
{
	free(o->out);
	free(o->errl);
	free(o->why);
}

static char *first_line(const char *s)
{
	_cleanup_free_ char *c = xstrdup(s ? s : "");
	char *nl = strchr(c, '\n');
	if (nl)
		*nl = '\0';
	return xstrdup(str_strip(c));
}

static void run_cmd(char *const argv[], int timeout_ms, struct run_out *o)
{
	memset(o, 0, sizeof(*o));
	struct proc_result pr;
	struct err *e = NULL;
	if (proc_run(argv, timeout_ms, 4 << 20, &pr, &e) < 0) {
		o->rc = -1;
		o->why = xstrdup(e->msg);
		err_free(e);
		return;
	}
	o->rc = pr.timed_out ? -2 : pr.status;
	o->out = xstrdup(buf_str(&pr.out));
	o->errl = first_line(buf_str(&pr.errb));
	if (pr.timed_out)
		o->why = xasprintf("'%s' gave no answer within %d s", argv[0], timeout_ms / 1000);
	else if (pr.status != 0)
		o->why = xasprintf("'%s' exited %d%s%s", argv[0], pr.status, *o->errl ? ": " : "", o->errl);
	proc_result_free(&pr);
}

struct docker_state {
	bool reachable;
};

static void check_docker(struct doctor_report *r, const char *docker, const struct card *card,
			 struct docker_state *ds)
{
	struct run_out o;
	char *ver[] = { (char *)docker, "version", "--format", "{{.Server.Version}}", NULL };
	run_cmd(ver, DOCKER_TIMEOUT_MS, &o);
	_cleanup_free_ char *sv = first_line(o.out);
	if (o.rc == 0 && *sv) {
		ds->reachable = true;
		add(r, "docker", SEV_OK, "docker engine %s reachable (through '%s')", sv, docker);
	} else {
		struct check *c = add(r, "docker", SEV_ERROR, "docker engine not reachable: %s",
				      o.why ? o.why : "no server version in the answer");
		c->remedy = xstrdup(o.rc == -1 ? "install docker (docker.io) and start it"
					       : "start the docker daemon, or check DOCKER_HOST and the "
						 "permissions on /var/run/docker.sock");
	}
	run_out_free(&o);

	/* The same detection `lobes serve` uses (LOBES_COMPOSE, else v2, else v1). */
	_cleanup_strv_ char **ccmd = NULL;
	int cli = 0;
	_cleanup_free_ char *cver = NULL;
	struct err *e = NULL;
	if (compose_detect(&ccmd, &cli, &cver, &e) == 0) {
		_cleanup_buf_ struct buf cmd;
		buf_init(&cmd, 0);
		for (char **w = ccmd; w && *w; w++)
			buf_printf(&cmd, "%s%s", cmd.len ? " " : "", *w);
		add(r, "compose", SEV_OK, "compose %s ('%s')%s%s",
		    cli == 2 ? "v2" : cli == 1 ? "v1" : "from LOBES_COMPOSE", buf_str(&cmd),
		    cver && *cver ? " " : "", cver ? cver : "");
	} else {
		struct check *c = add(r, "compose", SEV_ERROR, "%s", e->msg);
		c->remedy = xstrdup("install the compose plugin (docker-compose-plugin) or docker-compose");
		err_free(e);
	}

	if (!ds->reachable) {
		add(r, "gpu-runtime", SEV_INFO, "not checked: the docker engine is not reachable");
		return;
	}
	char *info[] = { (char *)docker, "info", "--format", "{{json .Runtimes}}", NULL };
	run_cmd(info, DOCKER_TIMEOUT_MS, &o);
	json_auto_t *rt = o.rc == 0 ? json_loads(o.out, 0, NULL) : NULL;
	if (rt && json_is_object(rt) && json_object_get(rt, "nvidia")) {
		add(r, "gpu-runtime", SEV_OK, "docker has the nvidia runtime");
	} else {
		_cleanup_buf_ struct buf names;
		buf_init(&names, 0);
		const char *k;
		json_t *v;
		json_object_foreach(rt, k, v)
			buf_printf(&names, "%s%s", names.len ? ", " : "", k);
		struct check *c = add(r, "gpu-runtime", card ? SEV_ERROR : SEV_WARNING,
				      "docker has no nvidia runtime (runtimes: %s)%s",
				      names.len ? buf_str(&names) : o.why ? o.why : "none reported",
				      card ? "" : "; the card is unknown, so this box may have no GPU");
		c->remedy = xstrdup("install the NVIDIA Container Toolkit, run `nvidia-ctk runtime configure "
				    "--runtime=docker` and restart docker");
	}
	run_out_free(&o);
}

/* --- image probe --------------------------------------------------------- */

static bool digest_complete(const char *d)
{
	if (!str_starts_with(d, "sha256:") || strlen(d) != 71)
		return false;
	for (const char *p = d + 7; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return false;
	return true;
}

/* The image's own env registry, from the cache or by running it. NULL with
 * a warning finding when it cannot be had; *source names where it came from. */
static char **image_registry(struct doctor_report *r, const struct doctor_opts *o,
			     const char *docker, const char *image, char **source)
{
	if (!image || !*image) {
		add(r, "env-registry", SEV_WARNING,
		    "--image-probe: no LOBES_IMAGE in .env; using the recorded list");
		return NULL;
	}
	_cleanup_free_ char *digest = NULL;
	const char *at = strchr(image, '@');
	if (at && digest_complete(at + 1)) {
		digest = xstrdup(at + 1);
	} else {
		struct run_out ro;
		char *insp[] = { (char *)docker, "image", "inspect", "--format", "{{.Id}}", (char *)image, NULL };
		run_cmd(insp, DOCKER_TIMEOUT_MS, &ro);
		_cleanup_free_ char *id = first_line(ro.out);
		if (ro.rc == 0 && digest_complete(id)) {
			digest = TAKE_PTR(id);
		} else {
			struct check *c = add(r, "env-registry", SEV_WARNING,
					      "--image-probe: image '%s' is not available here (%s); it is "
					      "never pulled; using the recorded list",
					      image, ro.why ? ro.why : "no image id");
			c->remedy = xasprintf("pull or load the image yourself (docker pull %s), then run "
					      "`lobes doctor --image-probe` again", image);
			run_out_free(&ro);
			return NULL;
		}
		run_out_free(&ro);
	}
	_cleanup_free_ char *cdir = xasprintf("%s/cache/vllm-env", o->dir);
	_cleanup_free_ char *cpath = xasprintf("%s/%s.txt", cdir, digest);
	struct err *e = NULL;
	if (fs_exists(cpath)) {
		_cleanup_free_ char *text = fs_read(cpath, 4 << 20, NULL, &e);
		if (text) {
			char **v = vllm_env_list_parse(text);
			if (v[0]) {
				*source = xasprintf("image %s, cached in %s", digest, cpath);
				return v;
			}
			strv_free(v);
		}
		err_free(e);
		e = NULL;
	}
	char *argv[] = { (char *)docker, "run", "--rm", "--pull", "never", "--entrypoint", "python3",
			 (char *)image, "-c",
			 "import vllm.envs as e; print('\\n'.join(e.environment_variables))", NULL };
	struct run_out ro;
	run_cmd(argv, o->probe_timeout_ms > 0 ? o->probe_timeout_ms : PROBE_TIMEOUT_MS, &ro);
	char **v = ro.rc == 0 ? vllm_env_list_parse(ro.out) : NULL;
	if (!v || !v[0]) {
		add(r, "env-registry", SEV_WARNING,
		    "--image-probe: the image did not list its env registry (%s); using the recorded list",
		    ro.why ? ro.why : "empty answer");
		strv_free(v);
		run_out_free(&ro);
		return NULL;
	}
	run_out_free(&ro);
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	buf_printf(&b, "# vllm.envs.environment_variables of %s (%s), probed by lobes doctor\n", image,
		   digest);
	for (char **x = v; *x; x++)
		buf_printf(&b, "%s\n", *x);
	if (fs_mkdirs(cdir, 0700, &e) < 0 || fs_write_atomic(cpath, b.data, b.len, 0600, &e) < 0) {
		add(r, "env-registry", SEV_INFO, "--image-probe: the list could not be cached: %s", e->msg);
		err_free(e);
		*source = xasprintf("image %s, probed now", digest);
	} else {
		*source = xasprintf("image %s, probed now and cached in %s", digest, cpath);
	}
	return v;
}

/* --- the checks ---------------------------------------------------------- */

static void check_profile(struct doctor_report *r, const struct init_result *ir, bool ok,
			  const struct host_facts *f, const struct card *card, const char *card_why,
			  const char *env_profile, const char *asked)
{
	double gib = 0;
	_cleanup_free_ char *mem = host_facts_mem_gib(f, &gib) ? xasprintf("%.1f GiB", gib)
							       : xstrdup("memory unknown");
	_cleanup_free_ char *facts2 = xasprintf(
		"%s, compute capability %s, %s", f->gpu_name.valid ? f->gpu_name.value : "name unknown",
		f->compute_cap.valid ? f->compute_cap.value : "unknown", mem);
	if (!ok) {
		add(r, "profile", SEV_WARNING,
		    "card %s (%s): %s; the profile could not be resolved (see deploy-dir)",
		    card ? card->name : "unknown", facts2, card_why ? card_why : "");
		return;
	}
	const struct plan *p = &ir->lp.plan;
	const char *src = asked ? "--profile" : ir->profile_from_dir ? "the deploy dir's .env LOBES_PROFILE"
								    : "the detected card";
	enum check_sev sev = p->unvalidated || !card ? SEV_WARNING : SEV_OK;
	_cleanup_buf_ struct buf m;
	buf_init(&m, 0);
	buf_printf(&m, "profile '%s' (%s, from %s) on card %s (%s): %s", p->profile->name,
		   p->profile->status, src, card ? card->name : "unknown", facts2, card_why ? card_why : "");
	if (p->unvalidated)
		buf_printf(&m, "; UNVALIDATED for this card: profile '%s' is made for card '%s'",
			   p->profile->name, p->profile->card);
	if (asked && env_profile && strcmp(env_profile, asked) != 0)
		buf_printf(&m, "; the deploy dir was rendered for '%s'", env_profile);
	struct check *c = add(r, "profile", sev, "%s", buf_str(&m));
	if (p->unvalidated && card && card->profile && strcmp(card->profile, p->profile->name) != 0)
		c->remedy = xasprintf("use the profile made for this card: `lobes init --profile %s --apply`",
				      card->profile);
	else if (!card)
		c->remedy = xstrdup("no shipped card matches this box: add a card file (and a profile) "
				    "under <deploy-dir>/profiles/ or serve the conservative base profile");
}

static void check_drift(struct doctor_report *r, const struct init_result *ir)
{
	if (!ir->changed) {
		add(r, "deploy-dir", SEV_OK, "'%s' parses and matches what `lobes init` would write now",
		    ir->dir);
	} else {
		_cleanup_buf_ struct buf names;
		buf_init(&names, 0);
		for (size_t i = 0; i < ir->n_files; i++)
			if (ir->files[i].changed)
				buf_printf(&names, "%s%s%s", names.len ? ", " : "", ir->files[i].name,
					   ir->files[i].old ? "" : " (missing)");
		struct check *c = add(r, "deploy-dir", SEV_WARNING,
				      "'%s' differs from what `lobes init` would write now: %s", ir->dir,
				      buf_str(&names));
		c->detail = xstrdup(ir->diff ? ir->diff : "");
		c->remedy = xstrdup("review the diff; `lobes init --apply` re-renders (your .env edits are "
				    "kept; replaced files are kept as NAME.bak.N)");
	}
	for (size_t i = 0; i < ir->n_kept; i++) {
		const struct kept_value *k = &ir->kept[i];
		struct check *c;
		if (k->lobes)
			c = add(r, "deploy-dir", SEV_INFO, "operator override kept: %s=%s (lobes would write %s)",
				k->key, k->secret ? "<hidden>" : k->yours, k->lobes);
		else
			c = add(r, "deploy-dir", SEV_INFO, "operator key kept: %s=%s (yours only)", k->key,
				k->secret ? "<hidden>" : k->yours);
		c->name = xstrdup(k->key);
	}
}

static void check_env(struct doctor_report *r, const struct doctor_opts *o, const char *docker,
		      struct deployed *d, const struct knowledge *k, const struct card *card,
		      const struct host_facts *f)
{
	const char *ver = env_get(&d->env, "LOBES_VLLM_VERSION");
	const char *image = env_get(&d->env, "LOBES_IMAGE");
	_cleanup_free_ char *source = NULL;
	_cleanup_strv_ char **reg = o->image_probe ? image_registry(r, o, docker, image, &source) : NULL;
	bool probed = reg != NULL;
	if (!reg && ver) {
		_cleanup_free_ char *p = xasprintf("data/vllm-env/%s.txt", ver);
		const struct embedded_file *ef = embedded(p);
		if (ef) {
			reg = vllm_env_list_parse(ef->data);
			source = xasprintf("vLLM %s (recorded list)", ver);
		}
	}
	if (!reg) {
		struct check *c = add(r, "env-registry", SEV_WARNING,
				      "no registry of vLLM %s is shipped; VLLM_* names are only checked "
				      "against the names known to be dead",
				      ver ? ver : "(no LOBES_VLLM_VERSION in .env)");
		c->remedy = xstrdup("run `lobes doctor --image-probe` to ask the image itself");
	}
	const struct embedded_file *nf = embedded("data/vllm-env/image-noise.txt");
	_cleanup_strv_ char **noise = vllm_env_list_parse(nf ? nf->data : "");
	/* Dead names: the traits that declare them, evaluated at fleet level. */
	struct fact_view dc;
	deployed_view(card, f, -1, NULL, &dc);
	size_t bad = 0, n = 0;
	for (size_t i = 0; i < d->n_uses; i++) {
		const struct env_use *u = &d->uses[i];
		n++;
		const struct trait *dead_by = NULL;
		for (size_t t = 0; t < k->n_traits && !dead_by; t++) {
			const struct trait *tr = &k->traits[t];
			if (!strv_has(tr->dead_env, u->name))
				continue;
			_cleanup_free_ char *det = NULL;
			if (trait_applies(tr, trait_predicate(tr, &dc, &det)))
				dead_by = tr;
		}
		_cleanup_free_ char *removed = removed_replacement(u->name);
		bool registered = reg && strv_has(reg, u->name);
		if (probed && registered) {
			if (dead_by || removed)
				add(r, "env-registry", SEV_INFO,
				    "%s (%s) is registered in this image (%s), though it is recorded as dead "
				    "on the pinned vLLM",
				    u->name, u->where, source)->name = xstrdup(u->name);
			continue;
		}
		if (dead_by || removed) {
			_cleanup_free_ char *tmpl = dead_by && dead_by->dead_env_replacement
							    ? quote_flag(dead_by->dead_env_replacement)
							    : NULL;
			_cleanup_free_ char *rep = fill(tmpl ? tmpl : removed, u->value);
			struct check *c = add(r, "env-registry", SEV_ERROR,
					      "%s is DEAD on vLLM %s (%s): the variable is not honoured%s%s%s",
					      u->name, ver ? ver : "?", u->where,
					      dead_by ? " (trait " : "", dead_by ? dead_by->name : "",
					      dead_by ? ")" : "");
			c->name = xstrdup(u->name);
			if (dead_by)
				c->trait = xstrdup(dead_by->name);
			c->remedy = xasprintf("remove %s from %s; use %s instead%s", u->name, u->where, rep,
					      strcmp(u->name, "VLLM_ATTENTION_BACKEND") == 0
						      ? " (with lobes: set <ROLE>_ATTENTION_BACKEND in .env, "
							"then `lobes init --apply`)"
						      : "");
			bad++;
			continue;
		}
		if (strv_has(noise, u->name)) {
			add(r, "env-registry", SEV_INFO,
			    "%s (%s) is image build metadata, not registered: vLLM logs `Unknown vLLM "
			    "environment variable detected: %s` on every boot; harmless",
			    u->name, u->where, u->name)->name = xstrdup(u->name);
			continue;
		}
		if (reg && !registered) {
			struct check *c = add(r, "env-registry", SEV_WARNING,
					      "%s (%s) is not in the registry of %s: may be ignored", u->name,
					      u->where, source);
			c->name = xstrdup(u->name);
			c->remedy = xasprintf("check the name against the image (`lobes doctor --image-probe`); "
					      "vLLM logs `Unknown vLLM environment variable detected: %s` "
					      "for an unregistered name",
					      u->name);
			bad++;
		}
	}
	if (!bad)
		add(r, "env-registry", SEV_OK, "%zu VLLM_* name%s passed to the fleet, none dead or "
		    "unregistered%s%s", n, n == 1 ? "" : "s", source ? "; checked against " : "",
		    source ? source : "");
}

/* Read the checkpoint and derive the attention path of every deployed role. */
static void deployed_facts(struct deployed *d, const struct card *card)
{
	for (int i = 0; i < ROLE__COUNT; i++) {
		struct deployed_role *dr = &d->roles[i];
		if (!dr->present)
			continue;
		struct err *e = NULL;
		if (dr->knobs[KNOB_MODEL] && checkpoint_facts_read(dr->knobs[KNOB_MODEL], &dr->ck, &e) < 0) {
			checkpoint_facts_free(&dr->ck);
			dr->ck.kv_scales = TRI_UNKNOWN;
			dr->ck.hetero_head_dim = TRI_UNKNOWN;
			dr->ck.kv_scales_why = xasprintf("unreadable: %s", e->msg);
			err_free(e);
		} else if (!dr->knobs[KNOB_MODEL]) {
			dr->ck.kv_scales = TRI_UNKNOWN;
			dr->ck.hetero_head_dim = TRI_UNKNOWN;
			dr->ck.kv_scales_why = xstrdup("no model in the compose command");
		}
		dr->ck_read = true;
		derive_attention(card, (enum role_id)i, dr);
	}
}

static const char *kv_scales_word(enum tri t)
{
	return t == TRI_TRUE ? "ships KV scales" : t == TRI_FALSE ? "ships NO KV scales" : "KV scales UNKNOWN";
}

static void check_fp8(struct doctor_report *r, struct deployed *d, const struct knowledge *k,
		      const struct card *card, const struct host_facts *f)
{
	const struct trait *t = knowledge_trait(k, FP8_TRAIT);
	size_t n = 0;
	for (int i = 0; i < ROLE__COUNT; i++) {
		const struct deployed_role *dr = &d->roles[i];
		const char *kv = dr->knobs[KNOB_KV_CACHE_DTYPE];
		if (!dr->present || !kv || !str_starts_with(kv, "fp8"))
			continue;
		n++;
		const char *role = role_name((enum role_id)i);
		_cleanup_free_ char *facts = xasprintf(
			"kv_cache_dtype=%s; checkpoint '%s' %s (%s); attention path %s (%s)", kv,
			dr->knobs[KNOB_MODEL] ? dr->knobs[KNOB_MODEL] : "?", kv_scales_word(dr->ck.kv_scales),
			dr->ck.kv_scales_why ? dr->ck.kv_scales_why : "", dr->attn ? dr->attn : "unknown",
			dr->attn_why ? dr->attn_why : "");
		if (!t) {
			add(r, "fp8-kv", SEV_INFO, "%s: %s; trait '%s' is not loaded, nothing predicted", role,
			    facts, FP8_TRAIT)->role = xstrdup(role);
			continue;
		}
		struct fact_view dc;
		deployed_view(card, f, i, dr, &dc);
		_cleanup_free_ char *detail = NULL;
		enum tri truth = trait_predicate(t, &dc, &detail);
		_cleanup_free_ char *key = env_key((enum role_id)i, "KV_CACHE_DTYPE");
		struct check *c;
		if (truth == TRI_TRUE) {
			c = add(r, "fp8-kv", SEV_ERROR,
				"%s: predicted crash `assert layer.k_scale > 0.0` at boot: %s", role, facts);
			c->remedy = xasprintf("kv_cache_dtype=auto (trait %s): set %s=auto in .env, then "
					      "`lobes init --apply`",
					      t->name, key);
		} else if (truth == TRI_UNKNOWN) {
			c = add(r, "fp8-kv", SEV_WARNING,
				"%s: the `assert layer.k_scale > 0.0` crash cannot be ruled out: %s", role, facts);
			c->remedy = xasprintf("put the checkpoint in the Hugging Face cache so its KV scales can "
					      "be read, or set %s=auto in .env (trait %s)",
					      key, t->name);
		} else {
			c = add(r, "fp8-kv", SEV_OK, "%s: no fp8 KV crash predicted: %s", role, facts);
		}
		c->role = xstrdup(role);
		c->trait = xstrdup(t->name);
		c->detail = xasprintf("%s\n%s", detail, truth == TRI_FALSE ? "" : t->cause);
		char *nl = c->detail + strlen(c->detail);
		while (nl > c->detail && nl[-1] == '\n')
			*--nl = '\0';
	}
	if (!n)
		add(r, "fp8-kv", SEV_OK, "no feasible role keeps its KV cache in fp8");
}

static void check_traits(struct doctor_report *r, struct deployed *d, const struct knowledge *k,
			 const struct card *card, const struct host_facts *f)
{
	size_t findings = 0;
	for (size_t ti = 0; ti < k->n_traits; ti++) {
		const struct trait *t = &k->traits[ti];
		if (strcmp(t->name, FP8_TRAIT) == 0)
			continue; /* the fp8-kv check owns it */
		if (t->bringup && !t->n_set) {
			struct fact_view dc;
			deployed_view(card, f, -1, NULL, &dc);
			_cleanup_free_ char *detail = NULL;
			enum tri truth = trait_predicate(t, &dc, &detail);
			const char *have = env_get(&d->env, "LOBES_BRINGUP");
			if (truth == TRI_TRUE && have && strcmp(have, t->bringup) != 0) {
				struct check *c = add(r, "traits", SEV_WARNING,
						      "trait %s holds on this box (%s) but .env has "
						      "LOBES_BRINGUP=%s, not %s: %s",
						      t->name, detail, have, t->bringup, t->cause);
				c->trait = xstrdup(t->name);
				c->detail = evidence_text(t);
				c->remedy = xasprintf("set LOBES_BRINGUP=%s in .env (trait %s)", t->bringup, t->name);
				findings++;
			}
		}
		if (!t->n_set)
			continue;
		for (int i = 0; i < ROLE__COUNT; i++) {
			const struct deployed_role *dr = &d->roles[i];
			if (!dr->present || (t->roles_mask && !(t->roles_mask & (1u << i))))
				continue;
			struct fact_view dc;
			deployed_view(card, f, i, dr, &dc);
			_cleanup_free_ char *detail = NULL;
			enum tri truth = trait_predicate(t, &dc, &detail);
			if (truth == TRI_FALSE)
				continue;
			_cleanup_buf_ struct buf diff, fix;
			buf_init(&diff, 0);
			buf_init(&fix, 0);
			for (size_t s = 0; s < t->n_set; s++) {
				enum knob_id kn = t->set[s].knob;
				const char *have = dr->knobs[kn];
				if (have && strcmp(have, t->set[s].value) == 0)
					continue;
				_cleanup_free_ char *key = env_key((enum role_id)i, knob_name(kn));
				buf_printf(&diff, "%s%s=%s (the trait sets %s)", diff.len ? ", " : "",
					   knob_name(kn), have ? have : "unknown", t->set[s].value);
				buf_printf(&fix, "%s%s=%s", fix.len ? " " : "", key, t->set[s].value);
			}
			if (!diff.len)
				continue;
			const char *role = role_name((enum role_id)i);
			struct check *c;
			if (truth == TRI_TRUE)
				c = add(r, "traits", SEV_WARNING,
					"%s: trait %s holds on this box but the deployed config has %s: %s", role,
					t->name, buf_str(&diff), t->cause);
			else if (t->on_unknown && strcmp(t->on_unknown, "apply") == 0)
				c = add(r, "traits", SEV_INFO,
					"%s: trait %s could not be evaluated (a fact is unknown) and the deployed "
					"config has %s: %s",
					role, t->name, buf_str(&diff), t->cause);
			else
				continue;
			c->role = xstrdup(role);
			c->trait = xstrdup(t->name);
			_cleanup_free_ char *ev = evidence_text(t);
			c->detail = xasprintf("%s%s%s", detail, ev ? "\n" : "", ev ? ev : "");
			c->remedy = xasprintf("set %s in .env, then `lobes init --apply` (trait %s)",
					      buf_str(&fix), t->name);
			findings++;
		}
	}
	if (!findings)
		add(r, "traits", SEV_OK, "every shipped trait that holds on this box is followed by the "
		    "deployed config");
}

static void check_memory(struct doctor_report *r, const struct deployed *d, const struct host_facts *f)
{
	double sum = 0;
	size_t n = 0;
	_cleanup_buf_ struct buf parts, unknown;
	buf_init(&parts, 0);
	buf_init(&unknown, 0);
	for (int i = 0; i < ROLE__COUNT; i++) {
		const struct deployed_role *dr = &d->roles[i];
		if (!dr->present)
			continue;
		double u;
		const char *v = dr->knobs[KNOB_GPU_MEM_UTIL];
		if (!v || !str_to_double(v, &u) || u <= 0 || u > 1) {
			buf_printf(&unknown, "%s%s (%s)", unknown.len ? ", " : "", role_name((enum role_id)i),
				   v ? v : "no --gpu-memory-utilization");
			continue;
		}
		sum += u;
		n++;
		buf_printf(&parts, "%s%s %.2f", parts.len ? " + " : "", role_name((enum role_id)i), u);
	}
	if (unknown.len) {
		struct check *c = add(r, "memory", SEV_WARNING,
				      "gpu_memory_utilization is missing or not in (0,1] for: %s",
				      buf_str(&unknown));
		c->remedy = xstrdup("set <ROLE>_GPU_MEM_UTIL in .env to a number in (0,1]");
	}
	if (!n) {
		add(r, "memory", SEV_INFO, "no feasible role with a memory budget is deployed");
		return;
	}
	double gib;
	if (!host_facts_mem_gib(f, &gib)) {
		add(r, "memory", SEV_INFO,
		    "feasible roles' gpu_memory_utilization sum to %.2f (%s); the card's memory is unknown, "
		    "so it cannot be said in GiB",
		    sum, buf_str(&parts));
		return;
	}
	/* utils are given to two decimals: compare with a margin for rounding */
	enum check_sev sev = sum > 1.0 + 1e-9 ? SEV_ERROR : sum > 0.9 + 1e-9 ? SEV_WARNING : SEV_OK;
	struct check *c = add(r, "memory", sev,
			      "feasible roles' gpu_memory_utilization sum to %.2f (%s) = %.1f GiB of the "
			      "card's %.1f GiB%s",
			      sum, buf_str(&parts), sum * gib, gib,
			      sev == SEV_ERROR	   ? ": more than the card has; the last roles cannot start"
			      : sev == SEV_WARNING ? ": less than 10% left for the system and page cache"
						   : "");
	if (sev == SEV_ERROR)
		c->remedy = xasprintf("lower <ROLE>_GPU_MEM_UTIL in .env until they sum to at most 1.00 "
				      "(now %.2f, %.1f GiB over)",
				      sum, (sum - 1.0) * gib);
	else if (sev == SEV_WARNING)
		c->remedy = xstrdup("keep the sum at or below 0.90 on a shared unified-memory box");
}

/* --- run ----------------------------------------------------------------- */

int doctor_run(struct doctor_report *r, const struct doctor_opts *o, struct err **err)
{
	memset(r, 0, sizeof(*r));
	r->dir = xstrdup(o->dir);
	bool exists = fs_exists(o->dir);
	if (exists && !fs_is_dir(o->dir))
		return err_set(err, EXIT_CONFIG, "deploy dir '%s' is not a directory; expected the "
				 "directory `lobes init --apply` wrote", o->dir);
	if (exists && access(o->dir, R_OK | X_OK) < 0)
		return err_errno(err, EXIT_CONFIG, errno, "deploy dir '%s' cannot be read", o->dir);
	const char *docker = o->docker ? o->docker : getenv("LOBES_DOCKER");
	if (!docker || !*docker)
		docker = "docker";

	struct deployed d = { 0 };
	if (!exists) {
		struct check *c = add(r, "deploy-dir", SEV_ERROR, "no deploy dir at '%s'", o->dir);
		c->remedy = xstrdup("run `lobes init --apply` (or pass --dir)");
	} else {
		deployed_read(&d, o->dir, r);
	}

	/* What init would write now, the plan behind it, and the facts. */
	struct init_opts io = { .dir = o->dir, .profile = o->profile };
	struct init_result ir;
	struct err *e = NULL;
	bool ir_ok = init_prepare(&ir, &io, &e) == 0;
	struct host_facts own_facts = { 0 };
	struct knowledge own_k = { 0 };
	const struct host_facts *f = &ir.lp.facts;
	const struct knowledge *k = &ir.lp.k;
	const struct card *card = ir_ok ? ir.lp.plan.card : NULL;
	_cleanup_free_ char *card_why = NULL;
	if (!ir_ok) {
		if (exists) {
			struct check *c = add(r, "deploy-dir", SEV_ERROR, "`lobes init` cannot render over it: %s",
					      e ? e->msg : "unknown error");
			c->remedy = xstrdup("fix what the message names; then `lobes doctor` again");
		} else {
			add(r, "profile", SEV_ERROR, "%s", e ? e->msg : "the plan cannot be resolved");
		}
		err_free(e);
		e = NULL;
		struct facts_opts fo;
		facts_opts_from_env(&fo);
		host_facts_gather(&own_facts, &fo, NULL);
		_cleanup_free_ char *opdir = xasprintf("%s/profiles", o->dir);
		if (knowledge_load(&own_k, opdir, &e) < 0) {
			err_free(e);
			e = NULL;
			knowledge_load(&own_k, NULL, NULL);
		}
		f = &own_facts;
		k = &own_k;
		card = card_match(k, f, &card_why);
	}
	check_profile(r, &ir, ir_ok, f, card, ir_ok ? ir.lp.plan.card_why : card_why,
		      env_get(&d.env, "LOBES_PROFILE"), o->profile);
	if (ir_ok && exists && d.env_ok && d.compose_ok)
		check_drift(r, &ir);
	if (exists) {
		check_env(r, o, docker, &d, k, card, f);
		if (d.compose_ok) {
			deployed_facts(&d, card);
			check_fp8(r, &d, k, card, f);
			check_traits(r, &d, k, card, f);
			check_memory(r, &d, f);
		}
	}
	struct docker_state ds = { 0 };
	check_docker(r, docker, card, &ds);

	deployed_free(&d);
	init_result_free(&ir);
	host_facts_free(&own_facts);
	knowledge_free(&own_k);
	return 0;
}

void doctor_report_free(struct doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct check *c = &r->c[i];
		free(c->id);
		free(c->message);
		free(c->remedy);
		free(c->detail);
		free(c->role);
		free(c->trait);
		free(c->name);
	}
	free(r->c);
	free(r->dir);
	memset(r, 0, sizeof(*r));
}

enum check_sev doctor_worst(const struct doctor_report *r)
{
	enum check_sev w = SEV_OK;
	for (size_t i = 0; i < r->n; i++)
		if (r->c[i].sev > w)
			w = r->c[i].sev;
	return w;
}

json_t *doctor_report_json(const struct doctor_report *r)
{
	json_t *checks = json_array();
	size_t count[4] = { 0 };
	for (size_t i = 0; i < r->n; i++) {
		const struct check *c = &r->c[i];
		count[c->sev]++;
		json_t *o = json_pack("{s:s, s:s, s:s}", "id", c->id, "severity", check_sev_name(c->sev),
				      "message", c->message);
		if (c->remedy)
			json_object_set_new(o, "remedy", json_string(c->remedy));
		if (c->detail)
			json_object_set_new(o, "detail", json_string(c->detail));
		if (c->role)
			json_object_set_new(o, "role", json_string(c->role));
		if (c->trait)
			json_object_set_new(o, "trait", json_string(c->trait));
		if (c->name)
			json_object_set_new(o, "name", json_string(c->name));
		json_array_append_new(checks, o);
	}
	return json_pack("{s:s, s:b, s:{s:I, s:I, s:I, s:I}, s:o}", "dir", r->dir ? r->dir : "",
			 "healthy", doctor_worst(r) < SEV_ERROR, "summary", "ok", (json_int_t)count[0],
			 "info", (json_int_t)count[1], "warning", (json_int_t)count[2], "error",
			 (json_int_t)count[3], "checks", checks);
}
