/* fuzz_secret_url.c — the secret rule's URL userinfo (secret.c): a URL
 * that carries a password prints as "scheme://<hidden>@host" wherever it
 * stands in a text. Input: bytes 0-2 give the lengths of the scheme, the
 * user and the host; they and the text around the URL follow. The scheme,
 * user and host are mapped onto the characters RFC 3986 allows there
 * (scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ); userinfo: unreserved,
 * pct-encoded, sub-delims and ":"; host: reg-name), the text before and
 * after is free and the URL stands between spaces, so the text is
 *   BEFORE " " SCHEME "://" USER ":" CANARY "@" HOST " " AFTER.
 * Invariant: the canary password is in no masked text (secret_mask_text and
 * secret_mask_json on a string holding it). See fuzz.h. */
#include <jansson.h>

#include "../../src/lib/util/buf.h"
#include "../../src/lib/util/secret.h"
#include "fuzz.h"

#define CANARY "Pw-c4n4ry_7e"

static const char SCHEME[] = "abcdefghijklmnopqrstuvwxyz0123456789+-.";
static const char USER[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:%";
static const char HOST[] = "abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=%";

/* n bytes of p mapped onto the characters of set (the first onto letters
 * when alpha). */
static void put_mapped(struct buf *b, const uint8_t *p, size_t n, const char *set, bool alpha)
{
	size_t k = strlen(set);
	for (size_t i = 0; i < n; i++) {
		char c = set[p[i] % (alpha && i == 0 ? 26 : k)];
		buf_add(b, &c, 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	size_t ns = 1 + data[0] % 12, nu = data[1] % 24, nh = 1 + data[2] % 24;
	const uint8_t *p = data + 3;
	size_t left = size - 3;
	if (left < ns + nu + nh)
		return 0;
	const uint8_t *sch = p, *usr = p + ns, *hst = p + ns + nu;
	p += ns + nu + nh;
	left -= ns + nu + nh;
	/* the free text: before and after split at the first NUL (or all before) */
	const uint8_t *nul = memchr(p, 0, left);
	size_t nb = nul ? (size_t)(nul - p) : left;
	_cleanup_free_ char *before = xasprintf("%.*s", (int)nb, (const char *)p);
	_cleanup_free_ char *after = nul ? fuzz_cstr(nul + 1, left - nb - 1) : xstrdup("");
	if (strstr(before, CANARY) || strstr(after, CANARY))
		return 0; /* the canary must come from the URL alone */
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	buf_adds(&b, before);
	buf_adds(&b, " ");
	put_mapped(&b, sch, ns, SCHEME, true);
	buf_adds(&b, "://");
	put_mapped(&b, usr, nu, USER, false);
	buf_adds(&b, ":" CANARY "@");
	put_mapped(&b, hst, nh, HOST, false);
	buf_adds(&b, " ");
	buf_adds(&b, after);
	_cleanup_free_ char *m = secret_mask_text(b.data);
	if (!m || strstr(m, CANARY))
		abort();
	json_t *j = json_pack("{s:s, s:[s]}", "origin", b.data, "argv", b.data);
	if (!j)
		return 0; /* not UTF-8: no JSON string holds it */
	secret_mask_json(j);
	_cleanup_free_ char *dump = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!dump || strstr(dump, CANARY))
		abort();
	return 0;
}
