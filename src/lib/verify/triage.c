/*
 * triage.c — the log matcher (see triage.h for the contract).
 *
 * Anchors: a literal signature is its own anchor; a regex contributes, per
 * top-level alternative, its longest run of bytes every match must contain
 * (a conservative walk of the pattern: groups, classes, escapes like \d and
 * optional atoms end a run; inline (?i)/(?x) options and escapes with
 * arguments such as \x41 give no anchor). A
 * signature with an alternative shorter than WM_MIN bytes is unanchored and
 * found by a full scan (its regex tried on every line, memmem over the
 * buffer for a short literal).
 *
 * Prefilter: Wu-Manber over an m-byte window of every anchor (m = the
 * shortest anchor, at most WM_MAX; the window least like common vLLM log
 * text, see background[]) with 3-byte blocks hashed into a 16 Ki-entry shift
 * table; a zero shift checks the anchors whose window ends with that block.
 * A hit names a line and a signature; the line is matched once per
 * signature (a generation counter per line deduplicates).
 *
 * Slices: input is processed in slices of whole lines of at most SLICE
 * bytes, so the unanchored scan's pending hits stay bounded. A partial last
 * line is carried (copied) into the next feed, capped at TRIAGE_LINE_CAP.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "triage.h"
#include "../util/buf.h"
#include "../util/cleanup.h"

#define WM_MIN 4          /* shortest anchor the prefilter takes */
#define WM_MAX 32         /* longest window */
#define WM_BITS 14
#define WM_TBL (1u << WM_BITS)
#define SLICE ((size_t)4 << 20)

struct anchor {
	const char *win; /* the window: m bytes of the anchor (borrowed) */
	size_t sig;
};

/* A pending hit of an unanchored signature: a line start in the slice. */
struct pending {
	size_t off;
	size_t sig;
};

struct triage {
	const struct sigset *set;
	unsigned flags;
	triage_cb cb;
	void *opaque;

	/* prefilter */
	size_t m;                 /* window length; 0 = no anchored signature */
	uint8_t shift[WM_TBL];
	uint32_t bucket[WM_TBL + 1]; /* CSR into anchors by the hash of the window's last block */
	struct anchor *anchors;
	size_t n_anchors;
	size_t *unanchored;       /* signature indices found by a full scan */
	size_t n_unanchored;
	char **owned;             /* anchor bytes extracted from regexes */
	size_t n_owned;
	pcre2_match_data *md;

	/* line state */
	uint64_t nl;              /* newlines before count_from */
	const char *count_from;   /* in the current slice */
	const char *cur_line;     /* line the generation belongs to */
	uint64_t gen;
	uint64_t *seen;           /* per signature: generation it was tried in */
	struct buf carry;         /* partial line waiting for its newline */
	bool skipping;            /* dropping the rest of an overlong line */
	bool finished;
	bool partial_last;        /* finish() matched a line without newline */

	/* results */
	uint64_t *count;
	struct triage_match *first; /* per signature; text == NULL when none */
	bool *has_first;
	long cause_specific, cause_any; /* signature index or -1 */
	struct triage_match *all;
	size_t n_all, alloc_all;
	uint64_t dropped;
	struct pending *pend;
	size_t n_pend, alloc_pend;
	size_t *hits;             /* candidate positions of the current slice */
	size_t alloc_hits;
};

/* --- anchors ---------------------------------------------------------- */

/* Skip a character class starting at re[k] == '['; returns the index after
 * its closing ']' (or the end). */
static size_t skip_class(const char *re, size_t k, size_t end)
{
	k++;
	if (k < end && re[k] == '^')
		k++;
	if (k < end && re[k] == ']')
		k++;
	while (k < end && re[k] != ']') {
		if (re[k] == '\\' && k + 1 < end)
			k++;
		else if (re[k] == '[' && k + 1 < end && re[k + 1] == ':') {
			const char *close = strstr(re + k + 2, ":]");
			if (close && (size_t)(close - re) < end)
				k = (size_t)(close - re) + 1;
		}
		k++;
	}
	return k < end ? k + 1 : end;
}

/* Skip a group starting at re[k] == '('; returns the index after its ')'. */
static size_t skip_group(const char *re, size_t k, size_t end)
{
	int depth = 0;
	while (k < end) {
		char c = re[k];
		if (c == '\\') {
			k += 2;
			continue;
		}
		if (c == '[') {
			k = skip_class(re, k, end);
			continue;
		}
		if (c == '(')
			depth++;
		else if (c == ')' && --depth == 0)
			return k + 1;
		k++;
	}
	return end;
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The longest run of required literal bytes in re[a, b) (one alternative),
 * written to out (at most outsz bytes); returns its length, or -1 when the
 * pattern uses something the walk does not follow (\Q, inline options). */
static long alt_anchor(const char *re, size_t a, size_t b, char *out, size_t outsz)
{
	char run[256];
	size_t rl = 0, best = 0;
	size_t k = a;
	while (k < b) {
		char c = re[k];
		int lit = -1;
		if (c == '\\') {
			if (k + 1 >= b)
				return -1;
			char d = re[k + 1];
			/* a one-letter class or assertion ends a run; an escape
			 * with an argument (\x41, \p{L}, \1, \k<n>, \Q...) is
			 * not followed: no anchor */
			if (is_alnum(d) && !strchr("dDsSwWbBhHvVRAzZGXKntrfea", d))
				return -1;
			if (!is_alnum(d))
				lit = (unsigned char)d;
			k += 2;
		} else if (c == '[') {
			k = skip_class(re, k, b);
		} else if (c == '(') {
			if (k + 2 < b && re[k + 1] == '?') {
				/* inline options change what a literal byte means */
				size_t j = k + 2;
				while (j < b && (is_alnum(re[j]) || re[j] == '-' || re[j] == '^')) {
					if (re[j] == 'i' || re[j] == 'x' || re[j] == 'n')
						return -1;
					j++;
				}
			}
			k = skip_group(re, k, b);
		} else if (strchr(".^$*+?{}])|", c)) {
			k++;
		} else {
			lit = (unsigned char)c;
			k++;
		}
		/* a quantifier decides whether the atom is required */
		bool optional = false, ends = false;
		if (k < b && (re[k] == '?' || re[k] == '*')) {
			optional = true;
			k++;
		} else if (k < b && re[k] == '+') {
			ends = true;
			k++;
		} else if (k < b && re[k] == '{' && k + 1 < b && re[k + 1] >= '0' && re[k + 1] <= '9') {
			optional = re[k + 1] == '0';
			ends = true;
			while (k < b && re[k] != '}')
				k++;
			k++;
		}
		if ((optional || ends) && k < b && (re[k] == '?' || re[k] == '+'))
			k++; /* lazy or possessive */
		if (lit >= 0 && !optional && rl < sizeof(run)) {
			run[rl++] = (char)lit;
			if (rl > best) {
				best = rl;
				memcpy(out, run, best < outsz ? best : outsz);
			}
		}
		if (lit < 0 || optional || ends)
			rl = 0;
	}
	return (long)(best < outsz ? best : outsz);
}

/* Split re at its top-level '|' and call alt_anchor on each alternative.
 * Fills anchors (each malloc'ed, lens) up to max; returns their number, or
 * -1 when an alternative has no anchor of at least WM_MIN bytes. */
static long regex_anchors(const char *re, char **anchors, size_t *lens, size_t max)
{
	size_t end = strlen(re), a = 0, k = 0, n = 0;
	int depth = 0;
	for (;;) {
		if (k == end || (re[k] == '|' && depth == 0)) {
			char buf[WM_MAX * 8];
			long l = alt_anchor(re, a, k, buf, sizeof(buf));
			if (l < WM_MIN || n == max) {
				for (size_t i = 0; i < n; i++)
					free(anchors[i]);
				return -1;
			}
			anchors[n] = xcalloc(1, (size_t)l + 1);
			memcpy(anchors[n], buf, (size_t)l);
			lens[n++] = (size_t)l;
			if (k == end)
				return (long)n;
			a = ++k;
			continue;
		}
		if (re[k] == '\\') {
			k = k + 2 > end ? end : k + 2;
		} else if (re[k] == '[') {
			k = skip_class(re, k, end);
		} else {
			if (re[k] == '(')
				depth++;
			else if (re[k] == ')')
				depth--;
			k++;
		}
	}
}

static inline uint32_t hash3(const unsigned char *p)
{
	uint32_t x = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
	return (x * 0x9E3779B1u) >> (32 - WM_BITS);
}

/* Text every vLLM log is full of: a window is chosen to avoid it, so that
 * common lines neither stop the walk (small shifts) nor become candidates. */
static const char background[] =
	"(APIServer pid=1) INFO 07-13 10:23:45 [loggers.py:123] Engine 000: Avg prompt "
	"throughput: 0.0 tokens/s, Avg generation throughput: 12.3 tokens/s, Running: 1 reqs, "
	"Waiting: 0 reqs, GPU KV cache usage: 0.5%, Prefix cache hit rate: 0.0%\n"
	"(APIServer pid=1) INFO:     127.0.0.1:40312 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n"
	"(APIServer pid=1) INFO:     127.0.0.1:40312 - \"GET /health HTTP/1.1\" 200 OK\n"
	"(EngineCore_DP0 pid=77) INFO 07-13 10:23:45 [gpu_model_runner.py:2602] Starting to load "
	"model Qwen/Qwen3-Embedding-0.6B...\n"
	"(EngineCore_DP0 pid=77) INFO 07-13 10:23:45 [default_loader.py:267] Loading weights took "
	"3.21 seconds\n"
	"(EngineCore_DP0 pid=77) WARNING 07-13 10:23:45 [core.py:700] Traceback (most recent call "
	"last):\n  File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py\", line "
	"711, in run_engine_core\n"
	"(APIServer pid=1) INFO 07-13 10:23:45 [chat_utils.py:560] Detected the chat template "
	"content format to be 'string'. You can set `--chat-template-content-format` to override "
	"this.\n"
	"(APIServer pid=1) INFO 07-13 10:23:45 [api_server.py:1900] Starting vLLM API server 0 on "
	"http://0.0.0.0:8000\n"
	"(APIServer pid=1) INFO 07-13 10:23:45 [launcher.py:36] Route: /v1/chat/completions, "
	"Methods: POST\n";

/* Byte weights ~ log2 of a byte's frequency in log text (rarer = lower). */
static unsigned byte_weight(unsigned char c)
{
	if (c == ' ')
		return 8;
	if (strchr("etaoinsr", c))
		return 7;
	if (c >= 'a' && c <= 'z')
		return strchr("zqxjkv", c) ? 2 : 5;
	if (c >= '0' && c <= '9')
		return 5;
	if (c >= 'A' && c <= 'Z')
		return 3;
	return 4;
}

/* The offset of the m-byte window of an anchor to index: the one least
 * like the background (not in it, fewest of its 3-byte blocks in it, then
 * the rarest bytes). */
static size_t pick_window(const char *a, size_t len, size_t m, const uint8_t *bg_blocks)
{
	size_t best = 0;
	unsigned long best_score = ~0UL;
	for (size_t o = 0; o + m <= len; o++) {
		unsigned long score = memmem(background, sizeof(background) - 1, a + o, m) ? 1000000 : 0;
		for (size_t e = o + 2; e < o + m; e++) {
			uint32_t h = hash3((const unsigned char *)a + e - 2);
			if (bg_blocks[h / 8] & (1u << (h % 8)))
				score += 1000;
		}
		for (size_t i = o; i < o + m; i++)
			score += byte_weight((unsigned char)a[i]);
		if (score < best_score) {
			best_score = score;
			best = o;
		}
	}
	return best;
}

/* Build the anchors and the Wu-Manber tables. */
static void build_prefilter(struct triage *t)
{
	const struct sigset *set = t->set;
	size_t cap = 0;
	const char **abytes = NULL;
	size_t *alens = NULL, *asig = NULL, na = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct signature *s = &set->sigs[i];
		char *got[16];
		size_t lens[16];
		long n;
		if (s->literal) {
			n = s->literal_len >= WM_MIN ? 1 : -1;
			got[0] = s->literal;
			lens[0] = s->literal_len;
		} else {
			n = regex_anchors(s->regex, got, lens, ARRAY_SIZE(got));
		}
		if (n < 0) {
			t->unanchored = xrealloc(t->unanchored, (t->n_unanchored + 1) * sizeof(size_t));
			t->unanchored[t->n_unanchored++] = i;
			continue;
		}
		for (long j = 0; j < n; j++) {
			if (na == cap) {
				cap = cap ? 2 * cap : 64;
				abytes = xrealloc(abytes, cap * sizeof(*abytes));
				alens = xrealloc(alens, cap * sizeof(*alens));
				asig = xrealloc(asig, cap * sizeof(*asig));
			}
			if (!s->literal) {
				t->owned = xrealloc(t->owned, (t->n_owned + 1) * sizeof(char *));
				t->owned[t->n_owned++] = got[j];
			}
			abytes[na] = got[j];
			alens[na] = lens[j];
			asig[na++] = i;
		}
	}
	t->n_anchors = na;
	t->m = 0;
	if (na) {
		size_t m = WM_MAX;
		for (size_t i = 0; i < na; i++)
			if (alens[i] < m)
				m = alens[i];
		t->m = m;
		uint8_t bg_blocks[WM_TBL / 8] = { 0 };
		for (size_t i = 2; i < sizeof(background) - 1; i++) {
			uint32_t h = hash3((const unsigned char *)background + i - 2);
			bg_blocks[h / 8] |= (uint8_t)(1u << (h % 8));
		}
		for (size_t i = 0; i < na; i++)
			abytes[i] += pick_window(abytes[i], alens[i], m, bg_blocks);
		uint8_t dflt = (uint8_t)(m - 3 + 1);
		memset(t->shift, dflt, sizeof(t->shift));
		uint32_t *cnt = xcalloc(WM_TBL + 1, sizeof(uint32_t));
		for (size_t i = 0; i < na; i++) {
			const unsigned char *w = (const unsigned char *)abytes[i];
			for (size_t e = 2; e < m; e++) { /* block w[e-2..e] */
				uint32_t h = hash3(w + e - 2);
				uint8_t sh = (uint8_t)(m - 1 - e);
				if (sh < t->shift[h])
					t->shift[h] = sh;
			}
			cnt[hash3(w + m - 3)]++;
		}
		/* CSR buckets of anchors by the hash of their last block */
		t->bucket[0] = 0;
		for (size_t h = 0; h < WM_TBL; h++)
			t->bucket[h + 1] = t->bucket[h] + cnt[h];
		memset(cnt, 0, (WM_TBL + 1) * sizeof(uint32_t));
		t->anchors = xcalloc(na, sizeof(*t->anchors));
		for (size_t i = 0; i < na; i++) {
			uint32_t h = hash3((const unsigned char *)abytes[i] + m - 3);
			struct anchor *a = &t->anchors[t->bucket[h] + cnt[h]++];
			a->win = abytes[i];
			a->sig = asig[i];
		}
		free(cnt);
	}
	free(abytes);
	free(alens);
	free(asig);
}

/* --- construction ----------------------------------------------------- */

struct triage *triage_new(const struct sigset *set, unsigned flags)
{
	struct triage *t = xcalloc(1, sizeof(*t));
	t->set = set;
	t->flags = flags;
	t->seen = xcalloc(set->n, sizeof(uint64_t));
	t->count = xcalloc(set->n, sizeof(uint64_t));
	t->first = xcalloc(set->n, sizeof(struct triage_match));
	t->has_first = xcalloc(set->n, sizeof(bool));
	t->cause_specific = t->cause_any = -1;
	buf_init(&t->carry, TRIAGE_LINE_CAP + 1);
	uint32_t pairs = 1;
	for (size_t i = 0; i < set->n; i++) {
		uint32_t c = 0;
		if (set->sigs[i].code &&
		    pcre2_pattern_info(set->sigs[i].code, PCRE2_INFO_CAPTURECOUNT, &c) == 0 &&
		    c + 1 > pairs)
			pairs = c + 1;
	}
	t->md = pcre2_match_data_create(pairs, NULL);
	if (!t->md)
		abort();
	build_prefilter(t);
	return t;
}

static void match_clear(struct triage_match *m)
{
	free(m->text);
	for (size_t i = 0; i < m->n_caps; i++)
		free(m->caps[i].value);
	free(m->caps);
	memset(m, 0, sizeof(*m));
}

static void match_copy(struct triage_match *dst, const struct triage_match *src)
{
	*dst = *src;
	dst->text = xstrdup(src->text);
	dst->caps = src->n_caps ? xcalloc(src->n_caps, sizeof(*dst->caps)) : NULL;
	for (size_t i = 0; i < src->n_caps; i++) {
		dst->caps[i].name = src->caps[i].name;
		dst->caps[i].value = xstrdup(src->caps[i].value);
	}
}

void triage_free(struct triage *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->set->n; i++)
		match_clear(&t->first[i]);
	for (size_t i = 0; i < t->n_all; i++)
		match_clear(&t->all[i]);
	for (size_t i = 0; i < t->n_owned; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->all);
	free(t->first);
	free(t->has_first);
	free(t->count);
	free(t->seen);
	free(t->anchors);
	free(t->unanchored);
	free(t->pend);
	free(t->hits);
	pcre2_match_data_free(t->md);
	buf_free(&t->carry);
	free(t);
}

void triage_set_callback(struct triage *t, triage_cb cb, void *opaque)
{
	t->cb = cb;
	t->opaque = opaque;
}

/* --- counting newlines -------------------------------------------------- */

static uint64_t count_nl(const char *p, size_t n)
{
	typedef unsigned char v16 __attribute__((vector_size(16)));
	const v16 nl = (v16){ 0 } + '\n';
	uint64_t total = 0;
	while (n >= 16) {
		size_t blocks = n / 16 > 255 ? 255 : n / 16;
		v16 acc = { 0 };
		for (size_t i = 0; i < blocks; i++) {
			v16 x;
			memcpy(&x, p, 16);
			acc -= (v16)(x == nl);
			p += 16;
		}
		n -= blocks * 16;
		for (int j = 0; j < 16; j++)
			total += acc[j];
	}
	while (n--)
		total += *p++ == '\n';
	return total;
}

/* --- matching a line ---------------------------------------------------- */

static char *capped_copy(const char *s, size_t len, size_t cap, bool *cut)
{
	if (cut)
		*cut = len > cap;
	if (len > cap) {
		len = cap;
		/* do not cut a UTF-8 sequence in half */
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
	}
	char *d = xcalloc(1, len + 1);
	memcpy(d, s, len);
	return d;
}

static void record(struct triage *t, struct triage_match *m)
{
	size_t i = m->sig_index;
	t->count[i]++;
	if (m->sig->severity == SEV_FATAL) {
		if (t->cause_any < 0)
			t->cause_any = (long)i;
		if (!m->sig->generic && t->cause_specific < 0)
			t->cause_specific = (long)i;
	}
	if (t->cb)
		t->cb(m, t->opaque);
	bool keep = (t->flags & TRIAGE_KEEP_ALL) != 0;
	if (keep && t->n_all >= TRIAGE_KEEP_MAX) {
		t->dropped++;
		keep = false;
	}
	if (keep) {
		if (t->n_all == t->alloc_all) {
			t->alloc_all = t->alloc_all ? 2 * t->alloc_all : 64;
			t->all = xrealloc(t->all, t->alloc_all * sizeof(*t->all));
		}
		if (!t->has_first[i]) {
			match_copy(&t->all[t->n_all++], m);
		} else {
			t->all[t->n_all++] = *m;
			memset(m, 0, sizeof(*m));
		}
	}
	if (!t->has_first[i]) {
		t->first[i] = *m;
		memset(m, 0, sizeof(*m));
		t->has_first[i] = true;
	}
	match_clear(m);
}

/* Try signature si on the line [ls, le) of the current slice. */
static void try_line(struct triage *t, const char *ls, const char *le, size_t si)
{
	if (ls != t->cur_line) {
		t->nl += count_nl(t->count_from, (size_t)(ls - t->count_from));
		t->count_from = ls;
		t->cur_line = ls;
		t->gen++;
	}
	if (t->seen[si] == t->gen)
		return;
	t->seen[si] = t->gen;
	size_t len = (size_t)(le - ls);
	if (len && ls[len - 1] == '\r')
		len--;
	const struct signature *s = &t->set->sigs[si];
	if (s->literal) {
		if (!memmem(ls, len, s->literal, s->literal_len))
			return;
	} else if (pcre2_match(s->code, (PCRE2_SPTR)ls, len, 0, 0, t->md, NULL) < 0) {
		return;
	}
	struct triage_match m = {
		.line_no = t->nl + 1,
		.sig_index = si,
		.sig = s,
	};
	m.text = capped_copy(ls, len, TRIAGE_TEXT_CAP, &m.truncated);
	if (s->n_captures) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(t->md);
		uint32_t pairs = pcre2_get_ovector_count(t->md);
		m.caps = xcalloc(s->n_captures, sizeof(*m.caps));
		for (size_t c = 0; c < s->n_captures; c++) {
			uint32_t g = (uint32_t)s->capture_groups[c];
			if (g >= pairs || ov[2 * g] == PCRE2_UNSET)
				continue;
			m.caps[m.n_caps].name = s->captures[c];
			m.caps[m.n_caps++].value =
				capped_copy(ls + ov[2 * g], ov[2 * g + 1] - ov[2 * g], TRIAGE_CAPTURE_CAP, NULL);
		}
	}
	record(t, &m);
}

/* The line of the slice [s, e) holding p. */
static void line_of(const char *s, const char *e, const char *p, const char **ls, const char **le)
{
	const char *a = p > s ? memrchr(s, '\n', (size_t)(p - s)) : NULL;
	*ls = a ? a + 1 : s;
	const char *b = memchr(p, '\n', (size_t)(e - p));
	*le = b ? b : e;
}

static int pend_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->sig < y->sig ? -1 : x->sig > y->sig;
}

static void pend_add(struct triage *t, size_t off, size_t si)
{
	if (t->n_pend == t->alloc_pend) {
		t->alloc_pend = t->alloc_pend ? 2 * t->alloc_pend : 64;
		t->pend = xrealloc(t->pend, t->alloc_pend * sizeof(*t->pend));
	}
	t->pend[t->n_pend++] = (struct pending){ off, si };
}

/* Full scans of the unanchored signatures over the slice [s, s+n): their
 * hit lines (sorted) go to t->pend. A short literal is searched with
 * memmem over the slice; a regex is tried on every line (per-line
 * semantics: ^ and $ are the line's). */
static void scan_unanchored(struct triage *t, const char *s, size_t n)
{
	t->n_pend = 0;
	for (size_t u = 0; u < t->n_unanchored; u++) {
		size_t si = t->unanchored[u];
		const struct signature *sig = &t->set->sigs[si];
		size_t off = 0;
		while (off < n) {
			const char *ls, *le;
			if (sig->literal) {
				const char *hit = memmem(s + off, n - off, sig->literal, sig->literal_len);
				if (!hit)
					break;
				line_of(s, s + n, hit, &ls, &le);
				pend_add(t, (size_t)(ls - s), si);
			} else {
				ls = s + off;
				le = memchr(ls, '\n', n - off);
				if (!le)
					le = s + n;
				if (pcre2_match(sig->code, (PCRE2_SPTR)ls, (size_t)(le - ls), 0, 0, t->md,
						NULL) >= 0)
					pend_add(t, off, si);
			}
			off = (size_t)(le - s) + 1;
		}
	}
	if (t->n_unanchored > 1)
		qsort(t->pend, t->n_pend, sizeof(*t->pend), pend_cmp);
}

/* Match the pending unanchored hits on lines starting before `upto`. */
static size_t flush_pending(struct triage *t, size_t k, const char *s, size_t n, size_t upto)
{
	for (; k < t->n_pend && t->pend[k].off <= upto; k++) {
		const char *ls = s + t->pend[k].off;
		const char *le = memchr(ls, '\n', n - t->pend[k].off);
		try_line(t, ls, le ? le : s + n, t->pend[k].sig);
	}
	return k;
}

/* Collect into t->hits the window-end positions in [from, to) whose last
 * block has a zero shift (candidates), in order. The serial dependency of
 * one Wu-Manber walk (load, hash, table, add) bounds its speed, so STREAMS
 * independent walks over consecutive stripes run interleaved; their hit
 * lists are concatenated in stripe order. */
#define STREAMS 4
#define WM_STEP(k)                                                  \
	do {                                                        \
		uint8_t sh_ = shift[hash3(p + pos##k - 2)];         \
		if (__builtin_expect(sh_ == 0, 0)) {                \
			*out##k++ = pos##k;                         \
			sh_ = 1;                                    \
		}                                                   \
		pos##k += sh_;                                      \
	} while (0)

/* One walk over window ends [pos, end): hits to out; returns the new out. */
static size_t *wm_walk(const uint8_t *shift, const unsigned char *p, size_t pos0, size_t end,
		       size_t *out0)
{
	while (pos0 < end)
		WM_STEP(0);
	return out0;
}

static size_t wm_collect(struct triage *t, const unsigned char *p, size_t from, size_t to)
{
	const uint8_t *shift = t->shift;
	/* each stream writes its own region of the hit buffer: a stream has
	 * at most one hit per position of its stripe */
	size_t need = to - from + STREAMS;
	if (t->alloc_hits < need) {
		free(t->hits);
		t->alloc_hits = need;
		t->hits = xcalloc(need, sizeof(*t->hits));
	}
	size_t stripe = (to - from) / STREAMS;
	size_t pos0 = from, pos1 = pos0 + stripe, pos2 = pos1 + stripe, pos3 = pos2 + stripe;
	const size_t end0 = pos1, end1 = pos2, end2 = pos3, end3 = to;
	size_t *const b0 = t->hits, *const b1 = b0 + stripe + 1, *const b2 = b1 + stripe + 1,
		     *const b3 = b2 + stripe + 1;
	size_t *out0 = b0, *out1 = b1, *out2 = b2, *out3 = b3;
	while (pos0 < end0 && pos1 < end1 && pos2 < end2 && pos3 < end3) {
		WM_STEP(0);
		WM_STEP(1);
		WM_STEP(2);
		WM_STEP(3);
	}
	out0 = wm_walk(shift, p, pos0, end0, out0);
	out1 = wm_walk(shift, p, pos1, end1, out1);
	out2 = wm_walk(shift, p, pos2, end2, out2);
	out3 = wm_walk(shift, p, pos3, end3, out3);
	/* concatenate in stripe order */
	size_t total = (size_t)(out0 - b0);
	size_t *const bs[] = { b1, b2, b3 }, *const os[] = { out1, out2, out3 };
	for (int k = 0; k < 3; k++) {
		memmove(t->hits + total, bs[k], (size_t)(os[k] - bs[k]) * sizeof(*t->hits));
		total += (size_t)(os[k] - bs[k]);
	}
	return total;
}

/* Match the whole lines in [s, s+n) (the last may lack its newline). */
static void scan_slice(struct triage *t, const char *s, size_t n)
{
	t->count_from = s;
	t->cur_line = NULL;
	size_t k = 0;
	if (t->n_unanchored)
		scan_unanchored(t, s, n);
	const size_t m = t->m;
	if (m && n >= m) {
		const unsigned char *p = (const unsigned char *)s;
		size_t nh = wm_collect(t, p, m - 1, n);
		for (size_t i = 0; i < nh; i++) {
			const size_t pos = t->hits[i], start = pos + 1 - m;
			const uint32_t h = hash3(p + pos - 2);
			for (uint32_t b = t->bucket[h]; b < t->bucket[h + 1]; b++) {
				const struct anchor *a = &t->anchors[b];
				if (memcmp(p + start, a->win, m) != 0)
					continue;
				const char *ls, *le;
				line_of(s, s + n, s + start, &ls, &le);
				k = flush_pending(t, k, s, n, (size_t)(ls - s));
				try_line(t, ls, le, a->sig);
			}
		}
	}
	flush_pending(t, k, s, n, n);
	t->nl += count_nl(t->count_from, (size_t)(s + n - t->count_from));
	t->count_from = NULL;
	t->cur_line = NULL;
}

/* Match a buffer of whole lines in slices of about SLICE bytes. */
static void scan_lines(struct triage *t, const char *s, size_t n)
{
	while (n > 0) {
		size_t take = n;
		if (take > SLICE) {
			const char *nl = memchr(s + SLICE, '\n', n - SLICE);
			take = nl ? (size_t)(nl - s) + 1 : n;
		}
		scan_slice(t, s, take);
		s += take;
		n -= take;
	}
}

/* Append to the carried partial line; at the cap, match what is there and
 * drop the rest of the line. */
static void carry_add(struct triage *t, const char *p, size_t n)
{
	if (t->skipping)
		return;
	size_t room = TRIAGE_LINE_CAP - t->carry.len;
	if (n < room) {
		buf_add(&t->carry, p, n);
		return;
	}
	buf_add(&t->carry, p, room);
	scan_slice(t, t->carry.data, t->carry.len);
	buf_reset(&t->carry);
	t->skipping = true;
}

void triage_feed(struct triage *t, const char *data, size_t len)
{
	if (t->finished || len == 0)
		return;
	if (t->carry.len || t->skipping) {
		const char *nl = memchr(data, '\n', len);
		if (!nl) {
			carry_add(t, data, len);
			return;
		}
		size_t head = (size_t)(nl - data) + 1;
		if (t->skipping) {
			t->skipping = false;
			t->nl++;
		} else {
			carry_add(t, data, head);
			if (t->skipping) { /* the newline itself hit the cap */
				t->skipping = false;
				t->nl++;
			} else {
				scan_slice(t, t->carry.data, t->carry.len);
				buf_reset(&t->carry);
			}
		}
		data += head;
		len -= head;
	}
	const char *last = len ? memrchr(data, '\n', len) : NULL;
	size_t whole = last ? (size_t)(last - data) + 1 : 0;
	scan_lines(t, data, whole);
	if (whole < len)
		carry_add(t, data + whole, len - whole);
}

void triage_finish(struct triage *t)
{
	if (t->finished)
		return;
	t->finished = true;
	if (t->carry.len) {
		scan_slice(t, t->carry.data, t->carry.len);
		buf_reset(&t->carry);
		t->partial_last = true;
	} else if (t->skipping) {
		t->partial_last = true;
	}
}

/* --- results ---------------------------------------------------------- */

uint64_t triage_lines(const struct triage *t)
{
	return t->nl + (t->partial_last ? 1 : 0);
}

uint64_t triage_count(const struct triage *t, size_t i)
{
	return i < t->set->n ? t->count[i] : 0;
}

const struct triage_match *triage_first(const struct triage *t, size_t i)
{
	return i < t->set->n && t->has_first[i] ? &t->first[i] : NULL;
}

const struct triage_match *triage_cause(const struct triage *t)
{
	long i = t->cause_specific >= 0 ? t->cause_specific : t->cause_any;
	return i >= 0 ? &t->first[i] : NULL;
}

const struct triage_match *triage_matches(const struct triage *t, size_t *n)
{
	*n = t->n_all;
	return t->all;
}

uint64_t triage_dropped(const struct triage *t)
{
	return t->dropped;
}

size_t triage_unanchored(const struct triage *t)
{
	return t->n_unanchored;
}
