/*
 * triage_anchor.c — anchors and the prefilter (see triage.h, triage_int.h).
 *
 * Anchors: a literal signature is its own anchor; a regex contributes, per
 * top-level alternative, its longest run of bytes every match must contain
 * (a conservative walk of the pattern: groups, classes, escapes like \d and
 * optional atoms end a run; inline (?i)/(?x) options and escapes with
 * arguments such as \x41 give no anchor). A signature with an alternative
 * shorter than WM_MIN bytes is unanchored and found by a full scan.
 *
 * Prefilter: Wu-Manber over an m-byte window of every anchor (m = the
 * shortest anchor, at most WM_MAX; the window least like common vLLM log
 * text, see background[], above all in its last block, whose every
 * occurrence is a hit to check) with 3-byte blocks hashed into a 16 Ki-entry shift
 * table; a zero shift checks the anchors whose window ends with that block.
 * An anchor of at least 2m (and WM_SPLIT) bytes gets two windows, one in
 * each half, so a message wrapped over two lines still has a window intact
 * in one of them (the record it belongs to is then matched joined). A
 * window hit is a candidate only when the whole anchor is there, or when
 * the anchor would cross a line end (a wrap). Anchors shorter than WM_FAST
 * bytes would make the windows short and the walk slow: they are found by
 * a vector scan for their first two bytes instead. The traceback header is
 * an anchor of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "triage_int.h"
#include "../util/cleanup.h"

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

uint32_t wm_hash3(const unsigned char *p)
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
	"Methods: POST\n"
	"(EngineCore_DP0 pid=77) INFO 07-13 10:23:45 [backends.py:548] Using cache directory: "
	"/root/.cache/vllm/torch_compile_cache/3f2a/rank_0_0/backbone for vLLM's torch.compile\n"
	"(EngineCore_DP0 pid=77) INFO 07-13 10:23:45 [backends.py:559] Dynamo bytecode transform "
	"time: 12.34 s\n"
	"(APIServer pid=1) INFO 07-13 10:23:45 [model.py:1510] Using max model len 32768\n"
	"(APIServer pid=1) INFO 07-13 10:23:45 [scheduler.py:226] Chunked prefill is enabled with "
	"max_num_batched_tokens=8192.\n"
	"(EngineCore_DP0 pid=77) INFO 07-13 10:23:45 [monitor.py:34] torch.compile takes 45.6 s in "
	"total\n"
	"Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:03<00:03,  1.52s/it]\n"
	"(EngineCore_DP0 pid=77) WARNING 07-13 10:23:45 [topk_topp_sampler.py:66] FlashInfer is not "
	"available. Falling back to the PyTorch-native implementation of top-p & top-k sampling.\n"
	"(EngineCore_DP0 pid=77) INFO 07-13 10:23:45 [parallel_state.py:1004] rank 0 in world size 1 "
	"is assigned as DP rank 0, PP rank 0, TP rank 0\n"
	"(APIServer pid=1) INFO 07-13 10:23:45 [api_server.py:1880] non-default args: {'model': "
	"'Qwen/Qwen3-8B', 'trust_remote_code': True, 'max_model_len': 32768}\n";

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
			uint32_t h = wm_hash3((const unsigned char *)a + e - 2);
			if (bg_blocks[h / 8] & (1u << (h % 8)))
				score += 1000;
		}
		for (size_t i = o; i < o + m; i++)
			score += byte_weight((unsigned char)a[i]);
		/* the last block is the one with a zero shift: each of its
		 * occurrences in the text is a hit to check */
		uint32_t hl = wm_hash3((const unsigned char *)a + o + m - 3);
		if (bg_blocks[hl / 8] & (1u << (hl % 8)))
			score += 20000;
		for (size_t i = o + m - 3; i < o + m; i++)
			score += 50 * byte_weight((unsigned char)a[i]);
		if (score < best_score) {
			best_score = score;
			best = o;
		}
	}
	return best;
}

/* Build the anchors and the Wu-Manber tables. Anchors shorter than
 * WM_FAST go to the short list (a vector scan for their first two bytes). */
struct prefilter *prefilter_build(const struct sigset *set)
{
	struct prefilter *pf = xcalloc(1, sizeof(*pf));
	size_t cap = 0;
	const char **abytes = NULL;
	size_t *alens = NULL, *asig = NULL, na = 0;
	for (size_t i = 0; i <= set->n + LC_MARKERS; i++) {
		const struct signature *s = i < set->n ? &set->sigs[i] : NULL;
		char *got[16];
		size_t lens[16];
		long n;
		if (!s) { /* the traceback header, the lifecycle markers */
			n = 1;
			got[0] = (char *)(i == set->n ? TB_TEXT : lc_marker_text(i - set->n - 1));
			lens[0] = strlen(got[0]);
		} else if (s->literal) {
			n = s->literal_len >= WM_MIN ? 1 : -1;
			got[0] = s->literal;
			lens[0] = s->literal_len;
		} else {
			n = regex_anchors(s->regex, got, lens, ARRAY_SIZE(got));
		}
		if (n < 0) {
			pf->unanchored = xrealloc(pf->unanchored, (pf->n_unanchored + 1) * sizeof(size_t));
			pf->unanchored[pf->n_unanchored++] = i;
			continue;
		}
		for (long j = 0; j < n; j++) {
			if (s && !s->literal) {
				pf->owned = xrealloc(pf->owned, (pf->n_owned + 1) * sizeof(char *));
				pf->owned[pf->n_owned++] = got[j];
			}
			if (lens[j] < WM_FAST) {
				pf->shorts = xrealloc(pf->shorts, (pf->n_shorts + 1) * sizeof(*pf->shorts));
				pf->shorts[pf->n_shorts++] = (struct anchor){ got[j], i, got[j], lens[j], 0 };
				continue;
			}
			if (na == cap) {
				cap = cap ? 2 * cap : 64;
				abytes = xrealloc(abytes, cap * sizeof(*abytes));
				alens = xrealloc(alens, cap * sizeof(*alens));
				asig = xrealloc(asig, cap * sizeof(*asig));
			}
			abytes[na] = got[j];
			alens[na] = lens[j];
			asig[na++] = i;
		}
	}
	pf->m = 0;
	if (na) {
		size_t m = WM_MAX;
		for (size_t i = 0; i < na; i++)
			if (alens[i] < m)
				m = alens[i];
		pf->m = m;
		uint8_t bg_blocks[WM_TBL / 8] = { 0 };
		for (size_t i = 2; i < sizeof(background) - 1; i++) {
			uint32_t h = wm_hash3((const unsigned char *)background + i - 2);
			bg_blocks[h / 8] |= (uint8_t)(1u << (h % 8));
		}
		/* windows: one per anchor, and a second (one per half) for an
		 * anchor long enough that a wrap may split it */
		size_t nw = na;
		for (size_t i = 0; i < na; i++)
			nw += alens[i] >= 2 * m && alens[i] >= WM_SPLIT;
		struct anchor *w = xcalloc(nw, sizeof(*w));
		for (size_t i = 0, k = na; i < na; i++) {
			w[i] = (struct anchor){ NULL, asig[i], abytes[i], alens[i], 0 };
			if (alens[i] >= 2 * m && alens[i] >= WM_SPLIT) {
				size_t h = alens[i] / 2;
				w[k] = w[i];
				w[k++].woff = h + pick_window(abytes[i] + h, alens[i] - h, m, bg_blocks);
				w[i].woff = pick_window(abytes[i], h, m, bg_blocks);
			} else {
				w[i].woff = pick_window(abytes[i], alens[i], m, bg_blocks);
			}
		}
		for (size_t i = 0; i < nw; i++)
			w[i].win = w[i].anchor + w[i].woff;
		uint8_t dflt = (uint8_t)(m - 3 + 1);
		memset(pf->shift, dflt, sizeof(pf->shift));
		uint32_t *cnt = xcalloc(WM_TBL + 1, sizeof(uint32_t));
		for (size_t i = 0; i < nw; i++) {
			const unsigned char *win = (const unsigned char *)w[i].win;
			for (size_t e = 2; e < m; e++) { /* block win[e-2..e] */
				uint32_t h = wm_hash3(win + e - 2);
				uint8_t sh = (uint8_t)(m - 1 - e);
				if (sh < pf->shift[h])
					pf->shift[h] = sh;
			}
			cnt[wm_hash3(win + m - 3)]++;
		}
		/* CSR buckets of windows by the hash of their last block */
		pf->bucket[0] = 0;
		for (size_t h = 0; h < WM_TBL; h++)
			pf->bucket[h + 1] = pf->bucket[h] + cnt[h];
		memset(cnt, 0, (WM_TBL + 1) * sizeof(uint32_t));
		pf->anchors = xcalloc(nw, sizeof(*pf->anchors));
		for (size_t i = 0; i < nw; i++) {
			uint32_t h = wm_hash3((const unsigned char *)w[i].win + m - 3);
			pf->anchors[pf->bucket[h] + cnt[h]++] = w[i];
		}
		pf->n_anchors = nw;
		free(cnt);
		free(w);
	}
	free(abytes);
	free(alens);
	free(asig);
	return pf;
}

void prefilter_free(void *p)
{
	struct prefilter *pf = p;
	if (!pf)
		return;
	for (size_t i = 0; i < pf->n_owned; i++)
		free(pf->owned[i]);
	free(pf->owned);
	free(pf->anchors);
	free(pf->unanchored);
	free(pf->shorts);
	free(pf);
}

bool anchor_hit(const struct anchor *a, const char *s, const char *e, const char *win)
{
	const char *as = win - a->woff, *ae = as + a->alen;
	if (as < s || ae > e || memchr(as, '\n', a->alen))
		return true; /* it would cross a line or the slice: a wrap may split it */
	return memcmp(as, a->anchor, a->alen) == 0;
}

/* Lines holding a short anchor: a vector scan for its first two bytes, then
 * a compare; each hit goes to t->pend. */
void scan_shorts(struct triage *t, const char *s, size_t n,
		 void (*add)(struct triage *, size_t, size_t))
{
	typedef unsigned char v16 __attribute__((vector_size(16)));
	for (size_t k = 0; k < t->pf->n_shorts; k++) {
		const struct anchor *a = &t->pf->shorts[k];
		const v16 c0 = (v16){ 0 } + (unsigned char)a->anchor[0];
		const v16 c1 = (v16){ 0 } + (unsigned char)a->anchor[1];
		size_t i = 0;
		while (i + 17 <= n) {
			v16 x, y;
			memcpy(&x, s + i, 16);
			memcpy(&y, s + i + 1, 16);
			v16 hit = (x == c0) & (y == c1);
			uint64_t lo, hi;
			memcpy(&lo, &hit, 8);
			memcpy(&hi, (char *)&hit + 8, 8);
			if (!(lo | hi)) {
				i += 16;
				continue;
			}
			for (size_t j = i; j < i + 16; j++) {
				if (j + a->alen <= n && memcmp(s + j, a->anchor, a->alen) == 0) {
					const char *ls = j ? memrchr(s, '\n', j) : NULL;
					add(t, ls ? (size_t)(ls + 1 - s) : 0, a->sig);
				}
			}
			i += 16;
		}
		for (; i + a->alen <= n; i++)
			if (memcmp(s + i, a->anchor, a->alen) == 0) {
				const char *ls = i ? memrchr(s, '\n', i) : NULL;
				add(t, ls ? (size_t)(ls + 1 - s) : 0, a->sig);
			}
	}
}

/* Collect into t->hits the window-end positions in [from, to) whose last
 * block has a zero shift (candidates), in order. The serial dependency of
 * one Wu-Manber walk (load, hash, table, add) bounds its speed, so STREAMS
 * independent walks over consecutive stripes run interleaved; their hit
 * lists are concatenated in stripe order. */
#define STREAMS 4
#define WM_STEP(k)                                                  \
	do {                                                        \
		uint8_t sh_ = shift[wm_hash3(p + pos##k - 2)];         \
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

size_t wm_collect(struct triage *t, const unsigned char *p, size_t from, size_t to)
{
	const uint8_t *shift = t->pf->shift;
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


void wm_each(struct triage *t, const char *text, size_t n, void (*fn)(struct triage *, size_t))
{
	const size_t m = t->pf->m;
	const unsigned char *p = (const unsigned char *)text;
	if (!m || n < m)
		return;
	for (size_t pos = m - 1; pos < n;) {
		uint32_t h = wm_hash3(p + pos - 2);
		uint8_t sh = t->pf->shift[h];
		if (sh) {
			pos += sh;
			continue;
		}
		for (uint32_t b = t->pf->bucket[h]; b < t->pf->bucket[h + 1]; b++)
			if (memcmp(p + pos + 1 - m, t->pf->anchors[b].win, m) == 0)
				fn(t, t->pf->anchors[b].sig);
		pos++;
	}
}
