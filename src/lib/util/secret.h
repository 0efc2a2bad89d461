/*
 * secret.h — the one rule for what is a secret and how it is hidden. Every
 * output of lobes that can carry a secret-bearing value (--json, text, diffs,
 * evidence files, failure reports, triage lines) goes through these.
 *
 * A value is secret when
 *   - its NAME (an env/.env key, a JSON key, a --flag, a `name: value` or
 *     `name=value` in a log line) contains, in any case, "token", "key",
 *     "secret", "pass" or "credential" — except where "token" means a
 *     tokenizer's token, a count or an id rather than a credential
 *     (max_tokens, tokenizer, tokenize, pad_token_id, bos_token,
 *     classifier_from_token: a reranker's hf_overrides), the bare
 *     word "key" (a field holding a key's name), and names about a secret
 *     rather than holding it: ending in _file, _path, _source, _name, _env,
 *     _var or _set (key_source, api_key_file), or a .yaml/.yml file name
 *     (keys.yaml) — or is "authorization"; in
 *     running text (a log line) the name must also look like one: an
 *     identifier with '_', '-' or '.', an upper-case word, or one of
 *     token/secret/password/pass/credential(s)/apikey itself, so prose
 *     such as "now passes: remove it" keeps its words;
 *   - it follows such a flag in an argv (`--api-key X` and `--api-key=X`),
 *     or such an upper-case ENV_NAME and a space at the start of a line or
 *     a quote (a .env line without its '=', quoted by an error; "holds
 *     LOBES_GATEWAY_API_KEY but has mode 0644" keeps its words);
 *   - it is an `Authorization:` header's credentials (after Bearer/Basic);
 *   - it has the shape of a Hugging Face token (hf_ and 20 or more
 *     letters/digits; 19 are not one);
 *   - it is a value this process has seen under a secret name: in its own
 *     environment (read at first use), in a .env, in a container's env, after
 *     a secret --flag of an argv (secret_remember). Such a value is hidden
 *     wherever it appears.
 * A hidden value is written SECRET_MASK; the name stays, so an operator
 * still sees which key is set. Nothing here stores or prints a raw value.
 */
#ifndef LOBES_SECRET_H
#define LOBES_SECRET_H

#include <jansson.h>
#include <stdbool.h>

#define SECRET_MASK "<hidden>"

/* True when a value named `name` is secret (leading dashes are ignored). */
bool secret_name(const char *name);

/* Remember value (a secret seen under a secret name) so that it is hidden
 * wherever it appears later; values shorter than 4 bytes are not
 * remembered (they would hide common text). Thread-safe. */
void secret_remember(const char *value);
/* secret_remember(value) when secret_name(name). */
void secret_remember_named(const char *name, const char *value);

/* text with every secret value replaced by SECRET_MASK; caller frees. */
char *secret_mask_text(const char *text);

/* Mask a JSON value in place: strings through secret_mask_text, the value
 * of a secret-named object key, and in arrays of strings (an argv) the
 * element after a secret --flag. */
void secret_mask_json(json_t *j);

#endif
