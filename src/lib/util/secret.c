/*
 * secret.c — the one masking rule; see secret.h.
 *
 * Text is scanned once, left to right: at each name (a run of letters,
 * digits, '_', '.', '-') followed by a separator ('=' or ':', or a space
 * after a --flag), the name decides whether the value after it is hidden;
 * Hugging Face-shaped tokens are hidden wherever they stand; so is the
 * userinfo of a URL ("http://user:password@host" prints as
 * "http://<hidden>@host"), whatever its scheme; remembered values last, by
 * plain search. The scan is linear in the text.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "err.h"
#include "cleanup.h"
#include "secret.h"
#include "strv.h"

extern char **environ;

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static char **known;
static bool environ_read;

/* True when the word ending at e (exclusive), starting after a separator
 * or at the name's start s, is one of words (any case). */
static bool word_before(const char *s, const char *e, const char *const *words)
{
	if (e <= s || !strchr("_-.", e[-1]))
		return false;
	const char *w = --e;
	while (w > s && !strchr("_-.", w[-1]))
		w--;
	for (; *words; words++)
		if (strlen(*words) == (size_t)(e - w) && strncasecmp(w, *words, (size_t)(e - w)) == 0)
			return true;
	return false;
}

/* The word starting after the separator at p is one of words. */
static bool word_after(const char *p, const char *const *words)
{
	if (!*p || !strchr("_-.", *p))
		return false;
	p++;
	size_t n = 0;
	while (p[n] && !strchr("_-.", p[n]))
		n++;
	for (; *words; words++)
		if (strlen(*words) == n && strncasecmp(p, *words, n) == 0)
			return true;
	return false;
}

/* "token" at p (in name) names a token of a tokenizer, a count or an id
 * rather than a credential: tokens, tokenizer, tokenize(d), token_id(s),
 * bos_token, classifier_from_token (a reranker's hf_overrides). */
static bool vocab_token(const char *name, const char *p)
{
	const char *a = p + 5;
	if ((a[0] == 's' || a[0] == 'S') && !isalnum((unsigned char)a[1]))
		return true; /* max_tokens, max_num_batched_tokens: a count */
	if (strncasecmp(a, "iz", 2) == 0 || strncasecmp(a, "is", 2) == 0)
		return true; /* tokenizer, tokenize, tokenisation */
	static const char *const after[] = { "id", "ids", "type", "types", "count", "len", "length",
					     "limit", "budget", "index", "num", NULL };
	static const char *const before[] = { "bos", "eos", "pad", "unk", "sep", "cls", "mask",
					      "from", "start", "end", "stop", "special", "image",
					      "video", "audio", "vision", "think", "additional", NULL };
	return word_after(a, after) || word_before(name, p, before);
}

bool secret_name(const char *name)
{
	while (*name == '-')
		name++;
	if (strcasecmp(name, "authorization") == 0)
		return true;
	/* a field that holds the name of a key ("key": "CORTEX_PORT") */
	if (strcasecmp(name, "key") == 0 || strcasecmp(name, "keys") == 0)
		return false;
	/* ...and one about a secret, not the secret: where it is kept, what it
	 * is called (key_source, api_key_file, token_env, keys.yaml: a file
	 * named in a positioned error "keys.yaml:3:5: ...") */
	const char *last = name + strlen(name);
	while (last > name && !strchr("_-.", last[-1]))
		last--;
	static const char *const about[] = { "file", "path", "source", "name", "env", "var", "set",
					       "yaml", "yml" };
	for (size_t i = 0; last > name && i < sizeof(about) / sizeof(about[0]); i++)
		if (strcasecmp(last, about[i]) == 0)
			return false;
	static const char *const stems[] = { "token", "key", "secret", "pass", "credential" };
	for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++) {
		size_t n = strlen(stems[i]);
		for (const char *p = name; (p = strcasestr(p, stems[i])); p += n) {
			if (i == 0 && vocab_token(name, p))
				continue;
			return true;
		}
	}
	return false;
}

static void remember_locked(const char *value)
{
	if (!value || strlen(value) < 4 || strcmp(value, SECRET_MASK) == 0 || strv_has(known, value))
		return;
	strv_push(&known, value);
}

/* Under known_lock: the secret values of our own environment, once. */
static void read_environ_locked(void)
{
	if (environ_read)
		return;
	environ_read = true;
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xasprintf("%.*s", (int)(eq - *e), *e);
		if (secret_name(name))
			remember_locked(eq + 1);
	}
}

void secret_remember(const char *value)
{
	pthread_mutex_lock(&known_lock);
	remember_locked(value);
	pthread_mutex_unlock(&known_lock);
}

void secret_remember_named(const char *name, const char *value)
{
	if (name && secret_name(name))
		secret_remember(value);
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

/* In running text a name must look like one — an identifier with '_', '-'
 * or '.', an upper-case word, or a word that is itself a secret's name —
 * so prose ("now passes: remove the entry") keeps its words. */
static bool text_name(const char *name)
{
	while (*name == '-')
		name++;
	if (strpbrk(name, "_-."))
		return true;
	bool upper = strlen(name) > 1;
	for (const char *p = name; *p; p++)
		if (islower((unsigned char)*p))
			upper = false;
	if (upper)
		return true;
	static const char *const words[] = { "token", "secret", "password", "passwd", "pass",
					     "credential", "credentials", "apikey", "authorization" };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(name, words[i]) == 0)
			return true;
	return false;
}

/* Length of an hf_ token at p (hf_ + 20 or more letters/digits), else 0. */
static size_t hf_token_len(const char *p)
{
	if (strncmp(p, "hf_", 3) != 0)
		return 0;
	size_t n = 3;
	while (isalnum((unsigned char)p[n]))
		n++;
	return n >= 23 ? n : 0;
}

/* At p, "://": the length of "://USERINFO@" when a userinfo follows (the
 * characters before the first '@' that end no authority), else 0. A "'"
 * is one of RFC 3986's sub-delims, so it may stand in a userinfo
 * ("http://o'neil:pw@h"): only what no URL holds ('"', '<', '>', space)
 * ends one besides '/', '?', '#'. */
static size_t userinfo_len(const char *p)
{
	if (strncmp(p, "://", 3) != 0)
		return 0;
	size_t n = 3;
	while (p[n] && !isspace((unsigned char)p[n]) && !strchr("/?#@\"<>", p[n]))
		n++;
	return p[n] == '@' && n > 3 ? n + 1 : 0;
}

/* A value masked from v to e that holds a URL whose userinfo runs past e
 * (a ',' or ';' ends a value, not a userinfo: "token=http://a,b:pw@h"):
 * the end of that userinfo (its '@' stays), else e. */
static const char *userinfo_past(const char *v, const char *e)
{
	for (const char *u = v; u < e; u++) {
		size_t n = *u == ':' ? userinfo_len(u) : 0;
		if (n && u + n - 1 > e)
			return u + n - 1;
	}
	return e;
}

/* The end of a value starting at v; quote is the quote it opened with. */
static const char *value_end(const char *v, char quote)
{
	if (quote) {
		const char *e = v;
		while (*e && *e != quote && *e != '\n')
			e++;
		return e;
	}
	const char *e = v;
	while (*e && !isspace((unsigned char)*e) && !strchr(",;})]\"'", *e))
		e++;
	return e;
}

/* At s[i], a name that starts there: if a secret value follows it, append
 * the name and separator and the mask to b and return the index after the
 * value; else 0. */
static size_t mask_named(const char *s, size_t i, struct buf *b)
{
	size_t j = i;
	while (name_char(s[j]))
		j++;
	_cleanup_free_ char *name = xasprintf("%.*s", (int)(j - i), s + i);
	bool flag = s[i] == '-';
	bool auth = strcasecmp(name, "authorization") == 0;
	if (!secret_name(name) || !text_name(name))
		return 0;
	size_t k = j;
	if (i > 0 && (s[i - 1] == '"' || s[i - 1] == '\'') && s[k] == s[i - 1])
		k++; /* the name's closing quote */
	while (s[k] == ' ' || s[k] == '\t')
		k++;
	/* "NAME=V", "NAME: V"; "--flag V" and "ENV_NAME V" take a space: an
	 * upper-case identifier that starts a line or a quote, as a .env line
	 * missing its '=' does when an error quotes it (not "holds ENV_NAME
	 * but ...", where a word follows the name in a sentence) */
	bool line_start = i == 0 || s[i - 1] == '\n' || s[i - 1] == '\'' || s[i - 1] == '"';
	bool env_style = line_start && strchr(name, '_') && !strpbrk(name, "abcdefghijklmnopqrstuvwxyz");
	if (s[k] == '=' || s[k] == ':')
		k++;
	else if (!((flag || (env_style && s[j] == ' ')) && k > j && s[k] && s[k] != '-' &&
		   s[k] != '\n'))
		return 0;
	while (s[k] == ' ' || s[k] == '\t')
		k++;
	if (s[k] == '[')
		k++;
	char quote = 0;
	if (s[k] == '"' || s[k] == '\'')
		quote = s[k++];
	if (auth) {
		static const char *const schemes[] = { "bearer ", "basic ", "token ", "digest " };
		for (size_t x = 0; x < 4; x++)
			if (strncasecmp(s + k, schemes[x], strlen(schemes[x])) == 0)
				k += strlen(schemes[x]);
	}
	const char *e = userinfo_past(s + k, value_end(s + k, quote));
	if (e == s + k)
		return 0;
	buf_add(b, s + i, k - i);
	buf_adds(b, SECRET_MASK);
	return (size_t)(e - s);
}

char *secret_mask_text(const char *text)
{
	if (!text)
		return NULL;
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	size_t i = 0;
	while (text[i]) {
		bool start = i == 0 || !name_char(text[i - 1]);
		size_t n;
		if ((n = userinfo_len(text + i))) {
			buf_adds(&b, "://" SECRET_MASK "@");
			i += n;
			continue;
		}
		if (start && (n = hf_token_len(text + i))) {
			buf_adds(&b, SECRET_MASK);
			i += n;
			continue;
		}
		if (start && (isalpha((unsigned char)text[i]) || text[i] == '_' || text[i] == '-')) {
			size_t next = mask_named(text, i, &b);
			if (next) {
				i = next;
				continue;
			}
			size_t j = i;
			while (name_char(text[j]))
				j++;
			buf_add(&b, text + i, j - i);
			i = j;
			continue;
		}
		buf_add(&b, text + i, 1);
		i++;
	}
	char *out = buf_take(&b);
	/* values remembered under a secret name, wherever they stand */
	pthread_mutex_lock(&known_lock);
	read_environ_locked();
	for (char **k = known; k && *k; k++) {
		char *p;
		while ((p = strstr(out, *k))) {
			char *r = xasprintf("%.*s%s%s", (int)(p - out), out, SECRET_MASK, p + strlen(*k));
			free(out);
			out = r;
		}
	}
	pthread_mutex_unlock(&known_lock);
	return out;
}

static void mask_string(json_t *s)
{
	_cleanup_free_ char *m = secret_mask_text(json_string_value(s));
	if (m && strcmp(m, json_string_value(s)) != 0)
		json_string_set(s, m);
}

void secret_mask_json(json_t *j)
{
	if (json_is_string(j)) {
		mask_string(j);
	} else if (json_is_object(j)) {
		const char *k;
		json_t *v;
		json_object_foreach(j, k, v) {
			if (json_is_string(v) && secret_name(k)) {
				json_string_set(v, SECRET_MASK);
			} else {
				secret_mask_json(v);
			}
		}
	} else if (json_is_array(j)) {
		size_t i;
		json_t *v;
		bool hide_next = false;
		json_array_foreach(j, i, v) {
			const char *s = json_string_value(v);
			if (hide_next && s) {
				secret_remember(s);
				json_string_set(v, SECRET_MASK);
				hide_next = false;
				continue;
			}
			hide_next = s && s[0] == '-' && !strchr(s, '=') && secret_name(s);
			secret_mask_json(v);
		}
	}
}
