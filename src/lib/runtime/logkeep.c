/*
 * logkeep.c — the collector of per-boot logs (logstore.h): polls the
 * Docker Engine API, not `docker logs -f`, so a pass is bounded, a
 * restarted container needs no re-attach, and the lines of a boot that
 * ended between two passes are still read (Docker keeps a container's
 * log across its restarts; timestamps say which boot a line belongs to).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "engine_api.h"
#include "logstore.h"

/* Log text read per role in one pass. A role that logged more since the
 * last pass is read in chunks: a pass takes the whole lines that fit and
 * the next pass asks again from the last one (since= its time), so a
 * flood never fails a pass, it only spreads over several. The same holds
 * for a log whose transfer outlasts the Engine API's time bound. */
#define PASS_CAP ((size_t)64 << 20)

void logkeep_init(struct logkeep *k, const char *deploy_dir, const char *project,
		  const char *const *roles, size_t n, size_t part_cap, size_t keep)
{
	memset(k, 0, sizeof(*k));
	k->dir = xstrdup(deploy_dir);
	k->project = xstrdup(project);
	for (size_t i = 0; i < n && i < 16; i++) {
		k->roles[k->n] = xstrdup(roles[i]);
		k->r[k->n].boot.fd = -1;
		k->n++;
	}
	k->part_cap = part_cap;
	k->keep = keep;
}

static void role_reset(struct logkeep_role *r)
{
	free(r->key);
	free(r->id);
	if (r->boot.dir)
		logstore_end(&r->boot);
	memset(r, 0, sizeof(*r));
	r->boot.fd = -1;
}

void logkeep_free(struct logkeep *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->roles[i]);
		role_reset(&k->r[i]);
	}
	free(k->dir);
	free(k->project);
	memset(k, 0, sizeof(*k));
}

/* "2026-12-03T14:02:11.123456789Z" → seconds and nanoseconds. */
static bool stamp(const char *s, size_t n, long long *sec, long *ns)
{
	char buf[64];
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	time_t t;
	if (engine_parse_time(buf, &t) < 0)
		return false;
	long frac = 0;
	const char *dot = strchr(buf, '.');
	if (dot) {
		int digits = 0;
		for (const char *p = dot + 1; isdigit((unsigned char)*p); p++, digits++)
			if (digits < 9)
				frac = frac * 10 + (*p - '0');
		for (; digits < 9; digits++)
			frac *= 10;
	}
	*sec = (long long)t;
	*ns = frac;
	return true;
}

static bool after(long long s1, long n1, long long s2, long n2)
{
	return s1 > s2 || (s1 == s2 && n1 > n2);
}

/* Write the lines of text stamped after r's last line: those before
 * `until` (NULL: no bound) to r's boot. Returns the first line not taken
 * (at or after until, *reached set), or the end (a last line without its
 * newline is not taken: the next pass reads it whole). */
static const char *take(struct logkeep_role *r, const char *text, const long long *until_s,
			const long *until_ns, bool *reached, size_t *lines, struct err **err)
{
	const char *p = text;
	if (reached)
		*reached = false;
	while (*p) {
		const char *nl = strchr(p, '\n');
		if (!nl)
			break; /* a partial line: the next pass reads it again */
		const char *sp = memchr(p, ' ', (size_t)(nl - p));
		long long s;
		long ns;
		if (!sp || !stamp(p, (size_t)(sp - p), &s, &ns)) {
			p = nl + 1; /* not a stamped line: nothing to place it by */
			continue;
		}
		if (until_s && !after(*until_s, *until_ns, s, ns)) {
			if (reached)
				*reached = true;
			return p;
		}
		if (after(s, ns, r->last_s, r->last_ns)) {
			if (logstore_write(&r->boot, sp + 1, (size_t)(nl - sp), err) < 0)
				return NULL;
			r->last_s = s;
			r->last_ns = ns;
			if (lines)
				(*lines)++;
		}
		p = nl + 1;
	}
	return p;
}

/* DIR/logs/ROLE/collector.state: the boot being written, so a collector
 * that restarts (or runs --once) goes on where the last one stopped. */
static char *state_path(const struct logkeep *k, size_t i)
{
	_cleanup_free_ char *d = logstore_role_dir(k->dir, k->roles[i]);
	return xasprintf("%s/collector.state", d);
}

static int save_state(const struct logkeep *k, size_t i, struct err **err)
{
	const struct logkeep_role *r = &k->r[i];
	_cleanup_free_ char *p = state_path(k, i);
	_cleanup_free_ char *s = xasprintf("%u %s %s %lld %ld %lld %ld\n", r->boot.no, r->key, r->id,
					   r->start_s, r->start_ns, r->last_s, r->last_ns);
	return fs_write_atomic(p, s, strlen(s), 0600, err);
}

/* Pick up the boot the state file names (the pass then sees whether it is
 * still running or was restarted). */
static void load_state(struct logkeep *k, size_t i)
{
	struct logkeep_role *r = &k->r[i];
	_cleanup_free_ char *p = state_path(k, i);
	struct err *e = NULL;
	_cleanup_free_ char *s = fs_read(p, 4096, NULL, &e);
	err_free(e);
	char skey[512], sid[128];
	unsigned no;
	long long ss, ls;
	long sns, lns;
	if (!s || sscanf(s, "%u %511s %127s %lld %ld %lld %ld", &no, skey, sid, &ss, &sns, &ls,
			 &lns) != 7)
		return;
	if (logstore_reopen(&r->boot, k->dir, k->roles[i], no, k->part_cap, k->keep, NULL) < 0)
		return;
	r->key = xstrdup(skey);
	r->id = xstrdup(sid);
	r->start_s = ss;
	r->start_ns = sns;
	r->last_s = ls;
	r->last_ns = lns;
}

static int pass_role(struct logkeep *k, size_t i, struct engine *en,
		     const struct engine_container *c, size_t *lines, struct err **err)
{
	struct logkeep_role *r = &k->r[i];
	long long st_s;
	long st_ns;
	if (!*c->started_at || !stamp(c->started_at, strlen(c->started_at), &st_s, &st_ns))
		return 0; /* never started */
	_cleanup_free_ char *key = xasprintf("%s@%s", c->id, c->started_at);
	if (!r->key)
		load_state(k, i);
	bool new_boot = !r->key || strcmp(r->key, key) != 0;
	/* lines since the last one taken (this container), else since its start */
	bool same_ctr = r->id && strcmp(r->id, c->id) == 0;
	struct engine_log_opts o = { .tail = -1, .timestamps = true, .cap = PASS_CAP };
	o.since = (time_t)(same_ctr ? r->last_s : st_s);
	o.since_ns = same_ctr ? r->last_ns : st_ns;
	_cleanup_free_ char *text = NULL;
	bool cut = false;
	if (engine_logs_upto(en, c->id, &o, &text, &cut, err) < 0)
		return -1;
	const char *rest = text;
	if (new_boot && same_ctr) { /* the boot Docker restarted: its last lines first */
		bool reached;
		rest = take(r, text, &st_s, &st_ns, &reached, lines, err);
		if (!rest)
			return -1;
		if (cut && !reached) /* the old boot's lines go on past this chunk */
			return save_state(k, i, err);
	}
	if (new_boot) {
		role_reset(r);
		if (logstore_begin(&r->boot, k->dir, k->roles[i], c->id, c->started_at, k->part_cap,
				   k->keep, err) < 0)
			return -1;
		r->key = xstrdup(key);
		r->id = xstrdup(c->id);
		r->start_s = st_s;
		r->start_ns = st_ns;
		/* from its start on (a line stamped at the start instant included) */
		r->last_s = st_ns ? st_s : st_s - 1;
		r->last_ns = st_ns ? st_ns - 1 : 999999999;
	}
	if (!take(r, rest, NULL, NULL, NULL, lines, err))
		return -1;
	return save_state(k, i, err);
}

int logkeep_pass(struct logkeep *k, struct engine *en, size_t *lines, struct err **err)
{
	struct engine_container_list l;
	if (engine_list_project(en, k->project, &l, err) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < k->n && rc == 0; i++) {
		const struct engine_container *c = engine_container_for_role(&l, k->roles[i]);
		if (c)
			rc = pass_role(k, i, en, c, lines, err);
	}
	engine_container_list_free(&l);
	return rc;
}
