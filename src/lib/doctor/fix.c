/*
 * fix.c — `lobes doctor --fix`: the heal plan for the findings that have
 * one safe fix (check.fix, set by the checks), and its commit.
 *
 * A fix touches only what its finding names: a missing file is written as
 * `lobes init` renders it now (with the operator's edits); a missing .env
 * key is appended as the render writes it; a placeholder or empty value on
 * the line the finding names becomes the value the render gives it (the
 * operator's edit of that one key dropped, like `init --reset KEY`), or the
 * line is commented out when lobes renders no such key; an unregistered
 * VLLM_* line of .env is commented out, never deleted, with a note above
 * it; a stale journal is finished. Every other byte of .env stays as it
 * is. The plan reads the files as committed and writes nothing; apply is
 * one commit of the deploy dir (deploy_put_files) that is refused when a
 * file changed since the plan. Findings without a safe fix (a dead name
 * wants a replacement, drift wants a re-render) are listed as unfixed.
 */
#include <stdlib.h>
#include <string.h>

#include "../render/render.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/strv.h"
#include "doctor_int.h"

/* One .env line of the plan: replaced (text) or kept (NULL). */
struct line_edit {
	int line;
	char *text; /* without newline; may hold two lines ("note\nline") */
};

struct fix_in {
	const struct doctor_opts *o;
	char *env;          /* .env as committed, NULL: none */
	struct env_file ef; /* ... parsed */
	struct init_result ir;
	bool ir_prepared, ir_ok;
	struct env_file renv; /* the rendered .env (with the operator's other edits) */
	struct line_edit *ed;
	size_t n_ed;
	struct buf add;     /* lines appended to .env */
};

static char *masked_line(const char *key, const char *line)
{
	return env_key_is_secret(key) ? xasprintf("%s=<hidden>", key) : xstrdup(line);
}

static struct doctor_fix *fix_add(struct doctor_fix_plan *p, const struct check *c, const char *action,
				  const char *file)
{
	p->f = xrealloc(p->f, (p->n + 1) * sizeof(*p->f));
	struct doctor_fix *f = &p->f[p->n++];
	memset(f, 0, sizeof(*f));
	f->finding = xstrdup(c->id);
	f->severity = xstrdup(check_sev_name(c->sev));
	f->message = xstrdup(c->message);
	f->name = c->name ? xstrdup(c->name) : NULL;
	f->role = c->role ? xstrdup(c->role) : NULL;
	f->action = action;
	f->file = xstrdup(file);
	return f;
}

static void put_add(struct doctor_fix_plan *p, const char *name, const char *expect, const char *data,
		    mode_t mode)
{
	p->put = xrealloc(p->put, (p->n_put + 1) * sizeof(*p->put));
	p->put[p->n_put++] = (struct doctor_fix_put){ xstrdup(name), expect ? xstrdup(expect) : NULL,
						      xstrdup(data), mode };
}

/* The .env entry on line n, or NULL. */
static const struct env_entry *entry_at(const struct env_file *ef, int n)
{
	for (size_t i = 0; i < ef->n; i++)
		if (ef->e[i].line == n)
			return &ef->e[i];
	return NULL;
}

static bool line_taken(const struct fix_in *in, int n)
{
	for (size_t i = 0; i < in->n_ed; i++)
		if (in->ed[i].line == n)
			return true;
	return false;
}

static void edit_line(struct fix_in *in, int n, char *text)
{
	in->ed = xrealloc(in->ed, (in->n_ed + 1) * sizeof(*in->ed));
	in->ed[in->n_ed++] = (struct line_edit){ n, text };
}

/* "# lobes doctor --fix: WHY" above "#LINE". */
static void comment_out(struct fix_in *in, struct doctor_fix *f, const struct env_entry *e,
			const char *why)
{
	f->action = DOCTOR_FIX_COMMENT_OUT;
	f->line = e->line;
	f->before = masked_line(e->key, e->raw);
	_cleanup_free_ char *shown = masked_line(e->key, e->raw);
	f->after = xasprintf("# lobes doctor --fix: %s\n#%s", why, shown);
	edit_line(in, e->line, xasprintf("# lobes doctor --fix: %s\n#%s", why, e->raw));
	f->what = xasprintf("comment out .env:%d (%s), keeping it for reference", e->line, e->key);
}

/* One finding's fix into the plan; false when it cannot be planned now. */
static bool plan_one(struct doctor_fix_plan *p, struct fix_in *in, const struct check *c)
{
	const char *a = c->fix;
	if (strcmp(a, DOCTOR_FIX_FINISH_COMMIT) == 0) {
		struct doctor_fix *f = fix_add(p, c, a, ".lobes-journal");
		f->what = xstrdup("finish the interrupted commit: rename its new files into place, "
				  "remove the journal");
		p->journal = true;
		return true;
	}
	if (!c->name || (!in->env && strcmp(a, DOCTOR_FIX_WRITE_FILE) != 0))
		return false;
	if (strcmp(a, DOCTOR_FIX_WRITE_FILE) == 0) {
		for (size_t i = 0; in->ir_ok && i < in->ir.n_files; i++) {
			const struct file_change *fc = &in->ir.files[i];
			if (strcmp(fc->name, c->name) != 0 || fc->old || strcmp(fc->name, ".env") == 0)
				continue;
			struct doctor_fix *f = fix_add(p, c, a, fc->name);
			f->what = xasprintf("write '%s' as `lobes init` renders it now", fc->name);
			put_add(p, fc->name, NULL, fc->new, fc->mode);
			return true;
		}
		return false;
	}
	if (strcmp(a, DOCTOR_FIX_ADD_KEY) == 0) {
		const struct env_entry *re = in->ir_ok ? env_entry_get(&in->renv, c->name) : NULL;
		if (!re || env_get(&in->ef, c->name))
			return false;
		struct doctor_fix *f = fix_add(p, c, a, ".env");
		f->after = masked_line(re->key, re->raw);
		f->what = xasprintf("append %s to .env with its rendered value", re->key);
		buf_printf(&in->add, "%s\n", re->raw);
		return true;
	}
	const struct env_entry *e = c->line ? entry_at(&in->ef, c->line) : NULL;
	if (!e || strcmp(e->key, c->name) != 0 || line_taken(in, e->line))
		return false; /* the line is not what the finding named: nothing guessed */
	if (strcmp(a, DOCTOR_FIX_SET_VALUE) == 0) {
		if (env_entry_get(&in->ef, e->key) != e)
			return false;
		const struct env_entry *re = in->ir_ok ? env_entry_get(&in->renv, e->key) : NULL;
		struct doctor_fix *f = fix_add(p, c, a, ".env");
		if (!re) {
			comment_out(in, f, e, "lobes renders no value for this key");
			return true;
		}
		f->line = e->line;
		f->before = masked_line(e->key, e->raw);
		f->after = masked_line(re->key, re->raw);
		f->what = xasprintf("set .env:%d %s to the value lobes renders", e->line, e->key);
		edit_line(in, e->line, xstrdup(re->raw));
		return true;
	}
	if (strcmp(a, DOCTOR_FIX_COMMENT_OUT) == 0) {
		struct doctor_fix *f = fix_add(p, c, a, ".env");
		_cleanup_free_ char *why = xasprintf("%s is not registered in the vLLM of the image", e->key);
		comment_out(in, f, e, why);
		return true;
	}
	return false;
}

/* .env with the line edits and the appended lines. */
static char *env_edited(const struct fix_in *in)
{
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	int n = 0;
	size_t len = strlen(in->env);
	for (const char *s = in->env; s < in->env + len;) {
		const char *nl = memchr(s, '\n', (size_t)(in->env + len - s));
		size_t k = nl ? (size_t)(nl - s) + 1 : (size_t)(in->env + len - s);
		const char *rep = NULL;
		n++;
		for (size_t i = 0; i < in->n_ed; i++)
			if (in->ed[i].line == n)
				rep = in->ed[i].text;
		if (rep)
			buf_printf(&b, "%s%s", rep, nl ? "\n" : "");
		else
			buf_add(&b, s, k);
		s += k;
	}
	if (in->add.len) {
		if (b.len && b.data[b.len - 1] != '\n')
			buf_adds(&b, "\n");
		buf_add(&b, in->add.data, in->add.len);
	}
	return buf_take(&b);
}

/* The keys whose value the plan takes from the render (set-value). */
static char **resets_of(const struct doctor_report *r)
{
	char **v = NULL;
	for (size_t i = 0; i < r->n; i++)
		if (r->c[i].fix && strcmp(r->c[i].fix, DOCTOR_FIX_SET_VALUE) == 0 && r->c[i].name &&
		    !strv_has(v, r->c[i].name))
			strv_push(&v, r->c[i].name);
	return v;
}

static int keep_of(const struct env_file *ef)
{
	const char *v = env_get(ef, "LOBES_KEEP_BACKUPS");
	char *end;
	long k = v ? strtol(v, &end, 10) : -1;
	return v && *v && !*end && k >= 0 && k <= 100000 ? (int)k : 5;
}

static void mask_into(const char *text, struct buf *b)
{
	for (const char *s = text; s && *s;) {
		const char *nl = strchr(s, '\n');
		size_t k = nl ? (size_t)(nl - s) + 1 : strlen(s);
		const char *eq = memchr(s, '=', k);
		_cleanup_free_ char *key = eq && *s != '#' ? xasprintf("%.*s", (int)(eq - s), s) : NULL;
		if (key && env_key_is_secret(key))
			buf_printf(b, "%s=<hidden>\n", key);
		else
			buf_add(b, s, k);
		s += k;
	}
}

static char *diff_of(const struct doctor_fix_plan *p)
{
	_cleanup_buf_ struct buf d;
	buf_init(&d, 0);
	for (size_t i = 0; i < p->n_put; i++) {
		_cleanup_buf_ struct buf a, b;
		buf_init(&a, 0);
		buf_init(&b, 0);
		bool env = strcmp(p->put[i].name, ".env") == 0;
		if (env) {
			mask_into(p->put[i].expect, &a);
			mask_into(p->put[i].data, &b);
		}
		_cleanup_free_ char *la = xasprintf("a/%s", p->put[i].name);
		_cleanup_free_ char *lb = xasprintf("b/%s", p->put[i].name);
		diff_unified(env ? buf_str(&a) : p->put[i].expect, env ? buf_str(&b) : p->put[i].data, la,
			     lb, &d);
	}
	return buf_take(&d);
}

static void fix_in_free(struct fix_in *in)
{
	free(in->env);
	env_file_free(&in->ef);
	if (in->ir_prepared)
		init_result_free(&in->ir);
	env_file_free(&in->renv);
	for (size_t i = 0; i < in->n_ed; i++)
		free(in->ed[i].text);
	free(in->ed);
	buf_free(&in->add);
}

int doctor_fix_plan(struct doctor_fix_plan *p, const struct doctor_opts *o,
		    const struct doctor_report *r, struct err **err)
{
	memset(p, 0, sizeof(*p));
	p->dir = xstrdup(o->dir);
	p->unfixed = json_array();
	struct fix_in in = { .o = o };
	buf_init(&in.add, 0);
	size_t len = 0;
	in.env = r->no_dir ? NULL : deploy_file_get(o->dir, ".env", &len, err);
	if (!in.env && err && *err) {
		fix_in_free(&in);
		return -1;
	}
	if (in.env && (strlen(in.env) != len || env_parse_len(in.env, len, ".env", &in.ef, NULL) < 0)) {
		free(in.env); /* a .env doctor reports as unreadable: no line edit on it */
		in.env = NULL;
	}
	/* what init renders now, the placeholder keys' edits dropped */
	_cleanup_strv_ char **resets = resets_of(r);
	struct init_opts io = { .dir = o->dir, .profile = o->profile, .reset = resets, .keep_backups = -1 };
	struct err *e = NULL;
	in.ir_prepared = !r->no_dir;
	in.ir_ok = in.ir_prepared && init_prepare(&in.ir, &io, &e) == 0;
	err_free(e);
	for (size_t i = 0; in.ir_ok && i < in.ir.n_files; i++)
		if (strcmp(in.ir.files[i].name, ".env") == 0 &&
		    env_parse(in.ir.files[i].new, ".env (rendered)", &in.renv, NULL) < 0)
			in.ir_ok = false;
	for (size_t i = 0; i < r->n; i++) {
		const struct check *c = &r->c[i];
		if (c->sev < SEV_WARNING)
			continue;
		if (c->fix && plan_one(p, &in, c))
			continue;
		json_t *u = json_pack("{s:s, s:s, s:s}", "id", c->id, "severity", check_sev_name(c->sev),
				      "message", c->message);
		if (c->remedy)
			json_object_set_new(u, "remedy", json_string(c->remedy));
		if (c->name)
			json_object_set_new(u, "name", json_string(c->name));
		json_array_append_new(p->unfixed, u);
	}
	if (in.env && (in.n_ed || in.add.len)) {
		_cleanup_free_ char *now = env_edited(&in);
		put_add(p, ".env", in.env, now, 0600);
	}
	p->keep = keep_of(&in.ef);
	p->diff = diff_of(p);
	fix_in_free(&in);
	return 0;
}

int doctor_fix_apply(const struct doctor_fix_plan *p, struct err **err)
{
	if (!p->n)
		return 0;
	struct deploy_put *dp = xcalloc(p->n_put ? p->n_put : 1, sizeof(*dp));
	for (size_t i = 0; i < p->n_put; i++)
		dp[i] = (struct deploy_put){ p->put[i].name, p->put[i].expect, p->put[i].data,
					     p->put[i].mode };
	int rc = deploy_put_files(p->dir, dp, p->n_put, p->keep, err);
	free(dp);
	return rc < 0 ? err_wrap(err, "doctor --fix") : 0;
}

json_t *doctor_fix_json(const struct doctor_fix_plan *p)
{
	json_t *fixes = json_array();
	for (size_t i = 0; i < p->n; i++) {
		const struct doctor_fix *f = &p->f[i];
		json_array_append_new(fixes,
				      json_pack("{s:{s:s, s:s, s:s, s:s?, s:s?}, s:s, s:s, s:o, s:s?, s:s?, s:s}",
						"finding", "id", f->finding, "severity", f->severity,
						"message", f->message, "name", f->name, "role", f->role,
						"action", f->action, "file", f->file, "line",
						f->line ? json_integer(f->line) : json_null(), "before",
						f->before, "after", f->after, "what", f->what));
	}
	return json_pack("{s:s, s:o, s:O, s:s}", "dir", p->dir, "fixes", fixes, "unfixed", p->unfixed,
			 "diff", p->diff ? p->diff : "");
}

void doctor_fix_plan_free(struct doctor_fix_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct doctor_fix *f = &p->f[i];
		free(f->finding);
		free(f->severity);
		free(f->message);
		free(f->name);
		free(f->role);
		free(f->file);
		free(f->before);
		free(f->after);
		free(f->what);
	}
	free(p->f);
	for (size_t i = 0; i < p->n_put; i++) {
		free(p->put[i].name);
		free(p->put[i].expect);
		free(p->put[i].data);
	}
	free(p->put);
	free(p->dir);
	free(p->diff);
	json_decref(p->unfixed);
	memset(p, 0, sizeof(*p));
}
