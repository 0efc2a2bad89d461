/*
 * probe.c — the correctness probes; see probe.h.
 *
 * Requests go to http://127.0.0.1:<port> only, with proxies switched off and
 * plain HTTP as the only protocol. All probes are easy handles on one curl
 * multi handle, so they run at once and each is bounded by its own timeout.
 * Response bodies are read through a capped struct buf: a runaway answer
 * fails the probe ("body larger than ...") instead of exhausting memory.
 * Judging is split from transport so unit tests can feed bodies directly.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <curl/curl.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "probe.h"

#define BODY_CAP ((size_t)4 << 20) /* three 8192-float embeddings fit many times over */
#define SNIPPET 160                /* bytes of an unexpected body quoted in a reason */

/* The embedder's sentences (FACTS.md "Correctness probes"). */
static const char *const embed_inputs[3] = {
	"The cat sat on the warm windowsill.",
	"A cat was resting on the sunny windowsill.",
	"Quarterly revenue exceeded analyst expectations.",
};

/* The reranker's documents; the Paris one is not first, so a server that
 * echoes the input order fails. */
static const char *const rerank_query = "What is the capital of France?";
static const char *const rerank_docs[] = {
	"Bananas are rich in potassium and easy to digest.",
	"Paris is the capital and largest city of France.",
	"The Great Wall of China stretches across northern China.",
	"Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
};
#define PARIS_DOC 1
#define N_DOCS ARRAY_SIZE(rerank_docs)

struct chat_probe {
	const char *question;
	const char *expect; /* case-insensitive: a substring of the answer, or all of it */
	bool exact;         /* the whole answer, less surrounding spaces and punctuation */
};

static const struct chat_probe chat_probes[ROLE__COUNT] = {
	[ROLE_CORTEX] = { "What is the capital city of France? Reply with only the city name.",
			  "paris", false },
	[ROLE_SENSES] = { "What color is a cloudless daytime sky? Answer with one word.", "blue",
			  false },
	/* The hand is small: a fact it knows for sure, judged strictly, since a
	 * corrupted generation may still contain the word ("Paris Paris<garbage>"). */
	[ROLE_HAND] = { "What is the capital of France? Reply with only the city name.", "paris",
			true },
};

const char *probe_id(enum role_id r)
{
	switch (r) {
	case ROLE_CORTEX: return "chat-capital";
	case ROLE_SENSES: return "chat-sky";
	case ROLE_HAND: return "chat-known-answer";
	case ROLE_EMBEDDER: return "embed-paraphrase";
	case ROLE_RERANKER: return "rerank-order";
	default: return "?";
	}
}

const char *probe_status_name(enum probe_status s)
{
	switch (s) {
	case PROBE_PASS: return "pass";
	case PROBE_FAIL: return "fail";
	case PROBE_KNOWN_FAILURE: return "known-failure";
	case PROBE_KNOWN_FAILURE_PASSED: return "known-failure-passed";
	}
	return "?";
}

const char *probe_failure_name(enum probe_failure f)
{
	switch (f) {
	case PF_NONE: return NULL;
	case PF_WRONG: return "wrong-answer";
	case PF_TIMEOUT: return "timeout";
	case PF_REFUSED: return "refused";
	case PF_TRANSPORT: return "transport";
	case PF_HTTP: return "http";
	case PF_MALFORMED: return "malformed";
	}
	return "?";
}

const char *probe_path(enum role_id r)
{
	switch (r) {
	case ROLE_EMBEDDER: return "/v1/embeddings";
	case ROLE_RERANKER: return "/v1/rerank";
	default: return "/v1/chat/completions";
	}
}

char *probe_request_body(enum role_id r)
{
	json_auto_t *j = NULL;
	if (r == ROLE_EMBEDDER) {
		j = json_pack("{s:s, s:[s,s,s]}", "model", role_name(r), "input", embed_inputs[0],
			      embed_inputs[1], embed_inputs[2]);
	} else if (r == ROLE_RERANKER) {
		json_t *docs = json_array();
		for (size_t i = 0; i < N_DOCS; i++)
			json_array_append_new(docs, json_string(rerank_docs[i]));
		j = json_pack("{s:s, s:s, s:o}", "model", role_name(r), "query", rerank_query,
			      "documents", docs);
	} else {
		j = json_pack("{s:s, s:[{s:s, s:s}], s:i, s:f, s:{s:b}}", "model", role_name(r),
			      "messages", "role", "user", "content", chat_probes[r].question,
			      "max_tokens", 16, "temperature", 0.0, "chat_template_kwargs",
			      "enable_thinking", 0);
	}
	char *s = json_dumps(j, JSON_COMPACT);
	if (!s)
		abort(); /* only on OOM: the values are fixed */
	return s;
}

void probe_init(struct probe *p, enum role_id r, int port, const struct known_failure *known)
{
	memset(p, 0, sizeof(*p));
	p->role = r;
	p->port = port;
	p->known = known;
	p->status = PROBE_FAIL;
	p->evidence = json_object();
}

const struct known_failure *probe_known_failure(const struct profile *prof, enum role_id r)
{
	for (size_t i = 0; prof && i < prof->n_known_failures; i++) {
		const struct known_failure *f = &prof->known_failures[i];
		if (f->role && f->probe && strcmp(f->role, role_name(r)) == 0 &&
		    strcmp(f->probe, probe_id(r)) == 0)
			return f;
	}
	return NULL;
}

void probe_free(struct probe *p)
{
	free(p->reason);
	free(p->summary);
	free(p->notice);
	json_decref(p->evidence);
	p->reason = p->summary = p->notice = NULL;
	p->evidence = NULL;
}

/* --- text helpers ---------------------------------------------------------- */

/* A one-line, printable copy of at most max bytes of s (n bytes): control
 * characters become spaces; with ascii_only, bytes >= 0x80 become '?' (for
 * bodies that may not be UTF-8). Cut text ends in "...". Caller frees. */
static char *oneline(const char *s, size_t n, size_t max, bool ascii_only)
{
	size_t keep = n > max ? max : n;
	if (!ascii_only)
		while (keep < n && keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
			keep--; /* never split a UTF-8 sequence */
	char *o = xcalloc(keep + 4, 1);
	for (size_t i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)s[i];
		o[i] = (char)(c < 0x20 || c == 0x7f ? ' ' : (ascii_only && c >= 0x80) ? '?' : c);
	}
	if (keep < n)
		memcpy(o + keep, "...", 3);
	return o;
}

static bool icontains(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return false;
}

/* True when answer, less surrounding whitespace and punctuation, is word
 * (case-insensitive). */
static bool is_exactly(const char *answer, const char *word)
{
	const char *b = answer, *e = answer + strlen(answer);
	while (b < e && (isspace((unsigned char)*b) || ispunct((unsigned char)*b)))
		b++;
	while (e > b && (isspace((unsigned char)e[-1]) || ispunct((unsigned char)e[-1])))
		e--;
	return (size_t)(e - b) == strlen(word) && strncasecmp(b, word, strlen(word)) == 0;
}

/* --- verdicts -------------------------------------------------------------- */

/* Apply the profile's known failure to a finished verdict. */
static void apply_known(struct probe *p)
{
	if (!p->known)
		return;
	const char *ref = p->known->ref ? p->known->ref : "(no ref)";
	if (p->status == PROBE_PASS) {
		p->status = PROBE_KNOWN_FAILURE_PASSED;
		free(p->notice);
		p->notice = xasprintf("known failure %s now passes: remove the entry "
				      "(role %s, probe %s) from the profile's known_failures",
				      ref, role_name(p->role), probe_id(p->role));
	} else if (p->status == PROBE_FAIL && p->failure == PF_WRONG) {
		p->status = PROBE_KNOWN_FAILURE;
	}
}

/* Set a FAIL with a formatted reason (and the known-failure mapping). */
static void __attribute__((format(printf, 3, 4)))
fail_with(struct probe *p, enum probe_failure f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	free(p->reason);
	p->reason = msg;
	p->status = PROBE_FAIL;
	p->failure = f;
	apply_known(p);
}

void probe_fail(struct probe *p, enum probe_failure f, const char *reason)
{
	fail_with(p, f, "%s", reason);
}

static void pass(struct probe *p)
{
	free(p->reason);
	p->reason = NULL;
	p->status = PROBE_PASS;
	p->failure = PF_NONE;
	apply_known(p);
}

static void set_summary(struct probe *p, char *s)
{
	free(p->summary);
	p->summary = s;
}

/* The message of an error body: vLLM's error.message, FastAPI's detail, or
 * the start of the body itself. Caller frees. */
static char *error_message(const char *body, size_t len)
{
	json_auto_t *j = json_loadb(body, len, 0, NULL);
	const json_t *e = json_object_get(j, "error");
	const char *m = json_string_value(json_object_get(e, "message"));
	if (!m)
		m = json_string_value(e);
	if (!m)
		m = json_string_value(json_object_get(j, "detail"));
	if (m)
		return oneline(m, strlen(m), SNIPPET, false);
	if (!len)
		return xstrdup("empty body");
	return oneline(body, len, SNIPPET, true);
}

static void judge_chat(struct probe *p, const json_t *j)
{
	const char *expect = chat_probes[p->role].expect;
	const json_t *choice = json_array_get(json_object_get(j, "choices"), 0);
	const json_t *msg = json_object_get(choice, "message");
	const json_t *content = json_object_get(msg, "content");
	if (!json_is_object(msg) || !(json_is_string(content) || json_is_null(content) || !content)) {
		fail_with(p, PF_MALFORMED, "malformed body: no choices[0].message.content string");
		return;
	}
	const char *answer = json_is_string(content) ? json_string_value(content) : "";
	json_object_set_new(p->evidence, "answer", json_string(answer));
	json_object_set_new(p->evidence, "expected", json_string(expect));
	const json_t *fin = json_object_get(choice, "finish_reason");
	if (json_is_string(fin))
		json_object_set_new(p->evidence, "finish_reason", json_string(json_string_value(fin)));
	const json_t *reasoning = json_object_get(msg, "reasoning_content");
	if (json_is_string(reasoning) && *json_string_value(reasoning))
		json_object_set_new(p->evidence, "reasoning",
				    json_string(json_string_value(reasoning)));
	_cleanup_free_ char *shown = oneline(answer, strlen(answer), 80, false);
	set_summary(p, xasprintf("answer '%s'", shown));
	json_object_set_new(p->evidence, "match", json_string(chat_probes[p->role].exact ? "exact"
											 : "contains"));
	bool right = chat_probes[p->role].exact ? is_exactly(answer, expect) : icontains(answer, expect);
	if (right)
		pass(p);
	else if (!*answer)
		fail_with(p, PF_WRONG, "empty answer (expected %s'%s')",
			  chat_probes[p->role].exact ? "" : "one containing ", expect);
	else if (chat_probes[p->role].exact)
		fail_with(p, PF_WRONG, "answer '%s' is not '%s'", shown, expect);
	else
		fail_with(p, PF_WRONG, "answer '%s' does not contain '%s'", shown, expect);
}

static double cosine(const double *a, const double *b, size_t n, bool *ok)
{
	double ab = 0, aa = 0, bb = 0;
	for (size_t i = 0; i < n; i++) {
		ab += a[i] * b[i];
		aa += a[i] * a[i];
		bb += b[i] * b[i];
	}
	*ok = aa > 0 && bb > 0;
	return *ok ? ab / sqrt(aa * bb) : 0;
}

static void judge_embed(struct probe *p, const json_t *j)
{
	const json_t *data = json_object_get(j, "data");
	if (!json_is_array(data) || json_array_size(data) != 3) {
		fail_with(p, PF_MALFORMED, "malformed body: expected 'data' with 3 embeddings, got %s",
			  json_is_array(data) ? "another count" : "none");
		return;
	}
	double *vec[3] = { NULL, NULL, NULL };
	size_t dim = 0;
	const char *bad = NULL;
	for (size_t i = 0; i < 3 && !bad; i++) {
		const json_t *item = json_array_get(data, i);
		const json_t *idx = json_object_get(item, "index");
		const json_t *emb = json_object_get(item, "embedding");
		json_int_t k = idx ? json_integer_value(idx) : (json_int_t)i;
		if ((idx && !json_is_integer(idx)) || k < 0 || k > 2 || vec[k])
			bad = "'index' is not 0, 1 and 2";
		else if (!json_is_array(emb) || !json_array_size(emb))
			bad = "an 'embedding' is not a non-empty list";
		else if (dim && json_array_size(emb) != dim)
			bad = "the embeddings differ in length";
		if (bad)
			break;
		dim = json_array_size(emb);
		vec[k] = xcalloc(dim, sizeof(double));
		for (size_t d = 0; d < dim; d++) {
			const json_t *x = json_array_get(emb, d);
			vec[k][d] = json_number_value(x);
			if (!json_is_number(x) || !isfinite(vec[k][d])) {
				bad = "an embedding holds a value that is not a finite number";
				break;
			}
		}
	}
	if (bad) {
		fail_with(p, PF_MALFORMED, "malformed body: %s", bad);
	} else {
		bool ok_p, ok_u;
		double cp = cosine(vec[0], vec[1], dim, &ok_p);
		double cu = cosine(vec[0], vec[2], dim, &ok_u);
		json_object_set_new(p->evidence, "dim", json_integer((json_int_t)dim));
		json_object_set_new(p->evidence, "cos_paraphrase", ok_p ? json_real(cp) : json_null());
		json_object_set_new(p->evidence, "cos_unrelated", ok_u ? json_real(cu) : json_null());
		if (!ok_p || !ok_u) {
			set_summary(p, xasprintf("a zero embedding (dim %zu)", dim));
			fail_with(p, PF_WRONG, "an embedding is all zeros: the cosines are undefined");
		} else {
			set_summary(p, xasprintf("cos(paraphrase)=%.3f %s cos(unrelated)=%.3f", cp,
						 cp > cu ? ">" : "<=", cu));
			if (cp > cu)
				pass(p);
			else
				fail_with(p, PF_WRONG,
					  "the paraphrase is not closer than the unrelated sentence: "
					  "cos(paraphrase)=%.3f <= cos(unrelated)=%.3f", cp, cu);
		}
	}
	for (size_t i = 0; i < 3; i++)
		free(vec[i]);
}

static void judge_rerank(struct probe *p, const json_t *j)
{
	const json_t *results = json_object_get(j, "results");
	size_t n = json_array_size(results);
	if (!json_is_array(results) || !n || n > N_DOCS) {
		fail_with(p, PF_MALFORMED, "malformed body: expected 'results' with 1 to %zu entries",
			  (size_t)N_DOCS);
		return;
	}
	json_t *ranking = json_array();
	json_object_set_new(p->evidence, "ranking", ranking);
	json_object_set_new(p->evidence, "paris_index", json_integer(PARIS_DOC));
	_cleanup_buf_ struct buf order;
	buf_init(&order, 0);
	bool seen[N_DOCS] = { false };
	size_t paris_rank = 0;
	double paris_score = 0, top_other = -INFINITY;
	size_t top_other_index = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(results, i);
		const json_t *idx = json_object_get(r, "index");
		const json_t *score = json_object_get(r, "relevance_score");
		json_int_t k = json_integer_value(idx);
		if (!json_is_integer(idx) || k < 0 || (size_t)k >= N_DOCS || seen[k] ||
		    !json_is_number(score) || !isfinite(json_number_value(score))) {
			fail_with(p, PF_MALFORMED,
				  "malformed body: results[%zu] needs a new 'index' in 0..%zu and a "
				  "numeric 'relevance_score'", i, (size_t)N_DOCS - 1);
			return;
		}
		seen[k] = true;
		double s = json_number_value(score);
		json_array_append_new(ranking, json_pack("{s:I, s:f, s:s}", "index", k, "score", s,
							 "document", rerank_docs[k]));
		buf_printf(&order, "%s%lld", i ? "," : "", (long long)k);
		if (k == PARIS_DOC) {
			paris_rank = i + 1;
			paris_score = s;
		} else if (s > top_other) {
			top_other = s;
			top_other_index = (size_t)k;
		}
	}
	json_object_set_new(p->evidence, "paris_rank",
			    paris_rank ? json_integer((json_int_t)paris_rank) : json_null());
	set_summary(p, xasprintf("ranking [%s], Paris document (%d) %s", buf_str(&order), PARIS_DOC,
				 paris_rank == 1 ? "first" : "not first"));
	if (!paris_rank)
		fail_with(p, PF_WRONG, "the Paris document is missing from the ranking [%s]",
			  buf_str(&order));
	else if (paris_rank != 1)
		fail_with(p, PF_WRONG, "the Paris document ranked %zu of %zu: ranking [%s]", paris_rank,
			  n, buf_str(&order));
	else if (top_other > paris_score)
		fail_with(p, PF_WRONG,
			  "the Paris document is served first but document %zu scores higher "
			  "(%.4f > %.4f)", top_other_index, top_other, paris_score);
	else
		pass(p);
}

void probe_judge(struct probe *p, long http_status, const char *body, size_t len)
{
	p->http_status = http_status;
	if (http_status < 200 || http_status > 299) {
		_cleanup_free_ char *m = error_message(body, len);
		fail_with(p, PF_HTTP, "HTTP %ld: %s", http_status, m);
		return;
	}
	json_error_t je;
	json_auto_t *j = json_loadb(body, len, 0, &je);
	if (!json_is_object(j)) {
		if (j) {
			fail_with(p, PF_MALFORMED, "malformed body: not a JSON object");
		} else {
			_cleanup_free_ char *snip = oneline(body, len, 60, true);
			fail_with(p, PF_MALFORMED, "malformed body: %s (body '%s')", je.text, snip);
		}
		return;
	}
	if (p->role == ROLE_EMBEDDER)
		judge_embed(p, j);
	else if (p->role == ROLE_RERANKER)
		judge_rerank(p, j);
	else
		judge_chat(p, j);
}

/* --- transport ------------------------------------------------------------- */

struct xfer {
	struct probe *p;
	CURL *h;
	struct curl_slist *headers;
	char *request;
	char *url;
	struct buf body;
	bool too_large;
	char errbuf[CURL_ERROR_SIZE];
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct xfer *x = userdata;
	size_t n = size * nmemb;
	if (buf_add(&x->body, ptr, n) < 0) {
		x->too_large = true;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	return n;
}

/* Configure x's easy handle for its probe; -1 when curl refuses an option. */
static int xfer_setup(struct xfer *x, long timeout_ms)
{
	enum role_id r = x->p->role;
	x->request = probe_request_body(r);
	x->url = xasprintf("http://127.0.0.1:%d%s", x->p->port, probe_path(r));
	buf_init(&x->body, BODY_CAP);
	x->h = curl_easy_init();
	if (!x->h)
		return -1;
	x->headers = curl_slist_append(NULL, "Content-Type: application/json");
	x->headers = curl_slist_append(x->headers, "Expect:");
	CURLcode c = CURLE_OK;
#define SET(opt, val) \
	if (c == CURLE_OK) \
	c = curl_easy_setopt(x->h, opt, val)
	SET(CURLOPT_URL, x->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http");
#else
	SET(CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTP);
#endif
	SET(CURLOPT_PROXY, "");     /* loopback only: never through a proxy from the environment */
	SET(CURLOPT_NOPROXY, "*");
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_HTTPHEADER, x->headers);
	SET(CURLOPT_POSTFIELDS, x->request);
	SET(CURLOPT_TIMEOUT_MS, timeout_ms);
	SET(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	SET(CURLOPT_WRITEFUNCTION, on_data);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_ERRORBUFFER, x->errbuf);
	SET(CURLOPT_PRIVATE, x);
	SET(CURLOPT_USERAGENT, "lobes-probe");
#undef SET
	return c == CURLE_OK ? 0 : -1;
}

static void xfer_free(struct xfer *x)
{
	if (x->h)
		curl_easy_cleanup(x->h);
	curl_slist_free_all(x->headers);
	free(x->request);
	free(x->url);
	buf_free(&x->body);
}

/* Turn a finished transfer (curl result rc) into the probe's verdict. */
static void xfer_done(struct xfer *x, CURLcode rc, double timeout_s)
{
	struct probe *p = x->p;
	long status = 0, oserr = 0;
	curl_off_t total_us = 0;
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(x->h, CURLINFO_OS_ERRNO, &oserr);
	if (curl_easy_getinfo(x->h, CURLINFO_TOTAL_TIME_T, &total_us) == CURLE_OK)
		p->latency_ms = (long)(total_us / 1000);
	p->http_status = status;
	const char *detail = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
	switch (rc) {
	case CURLE_OK:
		probe_judge(p, status, buf_str(&x->body), x->body.len);
		break;
	case CURLE_OPERATION_TIMEDOUT:
		if (!status && !x->body.len)
			fail_with(p, PF_TIMEOUT, "timed out after %g s: no answer", timeout_s);
		else
			fail_with(p, PF_TIMEOUT, "timed out after %g s: the answer was incomplete "
				  "(HTTP %ld, %zu bytes)", timeout_s, status, x->body.len);
		break;
	case CURLE_COULDNT_CONNECT:
		if (oserr == ECONNREFUSED)
			fail_with(p, PF_REFUSED, "connection refused: nothing listening on 127.0.0.1:%d",
				  p->port);
		else
			fail_with(p, PF_TRANSPORT, "could not connect to 127.0.0.1:%d: %s", p->port,
				  detail);
		break;
	case CURLE_WRITE_ERROR:
		if (x->too_large) {
			fail_with(p, PF_MALFORMED, "malformed body: larger than %zu bytes", BODY_CAP);
			break;
		}
		fail_with(p, PF_TRANSPORT, "%s", detail);
		break;
	case CURLE_GOT_NOTHING:
		fail_with(p, PF_TRANSPORT, "the connection closed without an answer");
		break;
	default:
		fail_with(p, PF_TRANSPORT, "%s", detail);
		break;
	}
}

int probe_run(struct probe *ps, size_t n, double timeout_s, struct err **err)
{
	if (!n)
		return 0;
	if (!(timeout_s > 0))
		return err_set(err, EXIT_INTERNAL, "probe timeout must be positive");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return err_set(err, EXIT_INTERNAL, "cannot initialise the HTTP client");
	int ret = 0;
	long timeout_ms = (long)ceil(timeout_s * 1000);
	struct xfer *xs = xcalloc(n, sizeof(*xs));
	CURLM *m = curl_multi_init();
	if (!m) {
		ret = err_set(err, EXIT_INTERNAL, "cannot initialise the HTTP client");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		xs[i].p = &ps[i];
		if (xfer_setup(&xs[i], timeout_ms) < 0 || curl_multi_add_handle(m, xs[i].h) != CURLM_OK) {
			ret = err_set(err, EXIT_INTERNAL, "cannot set up the HTTP request for role '%s'",
				      role_name(ps[i].role));
			goto out;
		}
	}
	int running = (int)n;
	while (running > 0) {
		CURLMcode mc = curl_multi_perform(m, &running);
		if (mc == CURLM_OK && running > 0)
			mc = curl_multi_poll(m, NULL, 0, 1000, NULL);
		if (mc != CURLM_OK) {
			ret = err_set(err, EXIT_INTERNAL, "HTTP client: %s", curl_multi_strerror(mc));
			goto out;
		}
	}
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(m, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		struct xfer *x = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		if (x)
			xfer_done(x, msg->data.result, timeout_s);
	}
out:
	for (size_t i = 0; i < n; i++) {
		if (m && xs[i].h)
			curl_multi_remove_handle(m, xs[i].h);
		xfer_free(&xs[i]);
	}
	if (m)
		curl_multi_cleanup(m);
	free(xs);
	curl_global_cleanup();
	return ret;
}

/* --- output ---------------------------------------------------------------- */

json_t *probe_json(const struct probe *p)
{
	const char *failure = probe_failure_name(p->failure);
	_cleanup_free_ char *url = xasprintf("http://127.0.0.1:%d%s", p->port, probe_path(p->role));
	json_t *known = json_null();
	if (p->known)
		known = json_pack("{s:o, s:o}", "reason",
				  p->known->reason ? json_string(p->known->reason) : json_null(), "ref",
				  p->known->ref ? json_string(p->known->ref) : json_null());
	json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:o, s:o, s:I, s:I, s:s, s:o, s:O, s:o}",
			      "role", role_name(p->role), "probe", probe_id(p->role),
			      "status", probe_status_name(p->status),
			      "ok", p->status != PROBE_FAIL,
			      "failure", failure ? json_string(failure) : json_null(),
			      "reason", p->reason ? json_string(p->reason) : json_null(),
			      "http_status", (json_int_t)p->http_status,
			      "latency_ms", (json_int_t)p->latency_ms, "url", url,
			      "summary", p->summary ? json_string(p->summary) : json_null(),
			      "evidence", p->evidence, "known_failure", known);
	if (o && p->notice)
		json_object_set_new(o, "notice", json_string(p->notice));
	return o;
}
