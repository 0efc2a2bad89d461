/*
 * smi.c — GPU name and compute capability from nvidia-smi, the fallback
 * when NVML cannot answer.
 *
 * Exactly one command is run: `nvidia-smi --query-gpu=name,compute_cap
 * --format=csv,noheader`, bounded by a timeout (nvidia-smi hangs on some
 * boxes) and without a shell. Memory fields are never asked for: on Thor
 * they read [N/A]. Only the first GPU (first line) is used; a value of
 * [N/A] (or similar bracketed placeholder) is unknown, never a value.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/proc.h"
#include "host_sources.h"

#define SMI_OUT_CAP (64 * 1024)

/* A CSV cell that is a placeholder rather than a value: "[N/A]",
 * "[Not Supported]", or empty. */
static bool placeholder(const char *v)
{
	return !*v || v[0] == '[';
}

/* "major.minor", both decimal. */
static bool cc_like(const char *v)
{
	size_t a = strspn(v, "0123456789");
	if (a == 0 || v[a] != '.')
		return false;
	size_t b = strspn(v + a + 1, "0123456789");
	return b > 0 && v[a + 1 + b] == '\0';
}

/* The first line of s (modified in place), stripped. */
static char *first_line(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	return str_strip(s);
}

void smi_query(const char *smi, int timeout_ms, struct fact *name, struct fact *cc, char ***notes)
{
	char *argv[] = { (char *)smi, "--query-gpu=name,compute_cap", "--format=csv,noheader", NULL };
	const char *label = strcmp(smi, "nvidia-smi") == 0 ? "" : smi;
	struct proc_result r;
	_cleanup_err_ struct err *e = NULL;
	if (proc_run(argv, timeout_ms, SMI_OUT_CAP, &r, &e) < 0) {
		if (e->code == EXIT_CONFIG)
			facts_note(notes, "nvidia-smi: %s%s%snot found", *label ? "'" : "", label,
				   *label ? "' " : "");
		else
			facts_note(notes, "nvidia-smi: could not run: %s", e->msg);
		proc_result_free(&r);
		return;
	}
	if (r.timed_out) {
		facts_note(notes, "nvidia-smi timed out after %d ms", timeout_ms);
		proc_result_free(&r);
		return;
	}
	_cleanup_free_ char *out = buf_take(&r.out);
	_cleanup_free_ char *errs = buf_take(&r.errb);
	proc_result_free(&r);
	char *line = first_line(out);
	if (r.status != 0) {
		char *why = *line ? line : first_line(errs);
		facts_note(notes, "nvidia-smi: exited with status %d%s%s", r.status, *why ? ": " : "",
			   why);
		return;
	}
	if (!*line) {
		facts_note(notes, "nvidia-smi: no GPU listed");
		return;
	}
	char *comma = strrchr(line, ',');
	if (!comma) {
		facts_note(notes, "nvidia-smi: unexpected output \"%s\"", line);
		return;
	}
	*comma = '\0';
	char *n = str_strip(line), *c = str_strip(comma + 1);
	if (!name->valid) {
		if (placeholder(n))
			facts_note(notes, "nvidia-smi: name is \"%s\"", n);
		else
			fact_set(name, n, "nvidia-smi");
	}
	if (!cc->valid) {
		if (placeholder(c) || !cc_like(c))
			facts_note(notes, "nvidia-smi: compute_cap is \"%s\"", c);
		else
			fact_set(cc, c, "nvidia-smi");
	}
}
