/*
 * findings.c — the report doctor builds: appending findings, the worst
 * severity, the --json shape, and the helpers several check families share
 * (trait evidence as text, embedded data files, bounded docker CLI runs).
 */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "../knowledge/knowledge.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/proc.h"
#include "doctor_int.h"

const char *check_sev_name(enum check_sev s)
{
	static const char *const n[] = { "ok", "info", "warning", "error" };
	return (unsigned)s < ARRAY_SIZE(n) ? n[s] : "?";
}

/* Append a finding; the returned pointer is valid until the next add. */
struct check *doc_add(struct doctor_report *r, const char *id, enum check_sev sev, const char *fmt, ...)
{
	r->c = xrealloc(r->c, (r->n + 1) * sizeof(*r->c));
	struct check *c = &r->c[r->n++];
	memset(c, 0, sizeof(*c));
	c->id = xstrdup(id);
	c->sev = sev;
	va_list ap;
	va_start(ap, fmt);
	c->message = xvasprintf(fmt, ap);
	va_end(ap);
	return c;
}

char *trait_evidence_text(const struct trait *t)
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


const struct embedded_file *doc_embedded(const char *path)
{
	for (size_t i = 0; i < embedded_files_count; i++)
		if (strcmp(embedded_files[i].path, path) == 0)
			return &embedded_files[i];
	return NULL;
}


void run_out_free(struct run_out *o)
{
	free(o->out);
	free(o->errl);
	free(o->why);
}

char *first_line(const char *s)
{
	_cleanup_free_ char *c = xstrdup(s ? s : "");
	char *nl = strchr(c, '\n');
	if (nl)
		*nl = '\0';
	return xstrdup(str_strip(c));
}

void run_cmd(char *const argv[], int timeout_ms, struct run_out *o)
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

bool digest_complete(const char *d)
{
	if (!str_starts_with(d, "sha256:") || strlen(d) != 71)
		return false;
	for (const char *p = d + 7; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return false;
	return true;
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
		if (c->fix)
			json_object_set_new(o, "fix", json_string(c->fix));
		if (c->line)
			json_object_set_new(o, "line", json_integer(c->line));
		json_array_append_new(checks, o);
	}
	return json_pack("{s:s, s:b, s:{s:I, s:I, s:I, s:I}, s:o}", "dir", r->dir ? r->dir : "",
			 "healthy", doctor_worst(r) < SEV_ERROR, "summary", "ok", (json_int_t)count[0],
			 "info", (json_int_t)count[1], "warning", (json_int_t)count[2], "error",
			 (json_int_t)count[3], "checks", checks);
}
