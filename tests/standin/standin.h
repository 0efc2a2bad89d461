/*
 * standin.h — shared state of vllm-standin, a TEST DOUBLE of `vllm serve`.
 *
 * The stand-in is not vLLM and runs no model. It takes vLLM's command line,
 * reads the checkpoint's config from the local Hugging Face cache, prints
 * vLLM-format log lines through vLLM's boot phases, checks and holds memory
 * the way vLLM does on a unified-memory box, serves vLLM's HTTP surface with
 * deterministic toy semantics, and reproduces recorded faults when told which
 * card it pretends to run on (STANDIN_CARD). lobes' tests use it in place of
 * the real server; production runs vLLM.
 *
 * Layout: main.c (command line, boot phases), fault.c (boot failures and
 * the recorded faults of a card), sys.c (clock, signals, memory, early
 * bind), log.c (vLLM log format), http.c (libmicrohttpd server, routing, SSE streaming),
 * generate.c (chat and completions: tool calls, reasoning split, stream
 * frames), logprob.c (toy token distributions, the fp8 noise), pool.c
 * (embeddings, rerank, score), model.c (toy chat, embedding and rerank
 * semantics), curl.c (the `curl` personality for container
 * healthchecks), tls_off.c (link-time stand-ins for the TLS library, which
 * the stand-in never uses).
 */
#ifndef STANDIN_H
#define STANDIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define STANDIN_DEFAULT_VERSION "0.23.1rc1.dev672+standin"

enum task { TASK_GENERATE, TASK_EMBED, TASK_CLASSIFY };

/* How a pooling or generate request behaves on the pretended card. */
enum fault {
	FAULT_NONE,
	FAULT_POOLING_HANG,     /* sm_110 + pooling + not TRITON_ATTN: never answer */
	FAULT_GRAPH_KILL,       /* sm_110 reranker with CUDA graphs: first rerank kills the engine */
	FAULT_CORRUPT_THEN_DIE, /* sm_110 + LFM2.5-1.2B: garbage, then launch failure */
	FAULT_MTP_NO_KERNEL,    /* sm_110 + GDN-hybrid Qwen + MTP: the first decode dies */
};

#define MAX_SERVED 8

/* Everything the server needs to answer, filled once by main() before the
 * listener starts; read-only afterwards except the counters in http.c. */
struct standin {
	const char *model;        /* positional MODEL (repo id or local path) */
	const char *served_name;  /* the first --served-model-name, else model */
	const char *served[MAX_SERVED]; /* every --served-model-name (a request may use any) */
	size_t n_served;
	const char *tool_parser;  /* --tool-call-parser, NULL = none */
	bool auto_tool_choice;    /* --enable-auto-tool-choice */
	const char *reasoning_parser; /* --reasoning-parser, NULL = none */
	bool thinks;              /* a thinking chat model (Qwen3 line: on unless disabled; Gemma 4: when asked) */
	bool thinks_by_default;
	bool wrong_scores;        /* classifier head not the trained one (reranker without its overrides) */
	long token_ms;            /* STANDIN_TOKEN_MS: spacing of streamed tokens */
	long first_token_ms;      /* STANDIN_FIRST_TOKEN_MS: delay of a stream's first frame */
	long fail_every;          /* STANDIN_503_EVERY: every Nth generate request is a 503 (0 off) */
	long drop_every;          /* STANDIN_DROP_EVERY: every Nth stream is cut after its first
				   * frames (0 off) */
	double fp8_noise;         /* logprob perturbation amplitude (nats) in effect: fp8 KV on a
				   * checkpoint without KV scales, else 0 (logprob.c) */
	int spec_k;               /* MTP: num_speculative_tokens, 0 = no speculative decoding */
	double spec_accept;       /* STANDIN_MTP_ACCEPT: share of draft tokens accepted */
	double spec_drift;        /* STANDIN_MTP_DRIFT: share of prompts whose answer MTP changes */
	unsigned long long gen_tokens, spec_drafts, spec_draft_tokens, spec_accepted;
	unsigned long long prompt_tokens; /* prompt tokens of every generate request */
	long max_num_seqs;        /* --max-num-seqs (default 256): more streams wait */
	long kv_tokens;           /* STANDIN_KV_TOKENS: KV-cache capacity in tokens */
	const char *host;
	int port;
	const char *api_key;      /* --api-key or VLLM_API_KEY; NULL = open */
	const char *version;
	long max_model_len;
	size_t embed_dim;         /* embedding width (config hidden_size) */
	enum task task;
	enum fault fault;
	int listen_fd;            /* bound early (like vLLM), listening at startup end */
	volatile int dead;        /* set when the engine "dies"; main exits 1 */
};

/* The parsed `vllm serve` command line (args.c). Strings point into argv. */
struct opts {
	const char *version;      /* selects the flag lists */
	const char *model, *host, *kv_dtype, *quant, *backend, *runner, *convert;
	const char *served[MAX_SERVED];
	size_t n_served;
	const char *api_key, *tool_parser, *reasoning_parser, *hf_overrides, *speculative;
	int port;
	double util;
	long max_model_len, max_num_seqs;
	bool eager, fail_env, auto_tool_choice;
	char nondefault[4096];
	size_t nd_len;
};

/* args.c — vLLM's lists of the reported version, and the command line. */
void ref_select(const char *version);
bool ref_has_env(const char *name);
bool ref_has_tool_parser(const char *name);
bool ref_has_reasoning_parser(const char *name);
bool ref_has_backend(const char *name);
/* The type vLLM records for a metric family at the reported version
 * (data/vllm/<commit>/metrics.txt: "gauge", "counter", ...), copied into
 * out; false when that version has no such family. */
bool ref_metric_kind(const char *family, char *out, size_t size);
void usage_line(FILE *f);
/* argparse's failure: usage, "vllm serve: error: MSG", exit 2. */
void usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Parse `serve` arguments (argv after "serve") into o; exits 2 on misuse. */
void parse_serve(int argc, char **argv, struct opts *o);
/* vLLM's post-parse checks (tool and reasoning parser names); exit 1. */
void validate_serve(const struct opts *o);
void help(void);
/* STANDIN_ATTENTION_ENV=honoured: an older image that still honours
 * VLLM_ATTENTION_BACKEND. */
bool attention_env_honoured(void);
/* Warn about (or with fail, exit 1 on) VLLM_* names the version's registry
 * does not have, as vLLM's validate_environ does. */
void lint_environment(bool fail);

/* ckpt.c — the checkpoint in the local Hugging Face cache. */
struct ckpt {
	char *dir;               /* snapshot directory */
	json_t *config;          /* config.json */
	const char *arch;
	char quant[64];          /* checkpoint quantization method, "" = none */
	bool kv_scales;          /* the checkpoint ships KV scales */
	long head_dim, global_head_dim, layers, kv_heads, hidden, max_pos;
	bool gemma4;
	char **weights;          /* NULL-terminated weight file paths */
	double weight_bytes;
};
/* Read the checkpoint for model; exits 1 with vLLM's error if absent. */
void read_checkpoint(const char *model, struct ckpt *c);
/* Read every weight file to the end (the page cache grows like vLLM's). */
void read_weights(const struct ckpt *c);
bool ends_with(const char *s, const char *suffix);

/* log.c — vLLM's format: "LEVEL MM-DD HH:MM:SS [file.py:NNN] message". */
enum level { LV_DEBUG, LV_INFO, LV_WARNING, LV_ERROR };
void log_init(void);
void vlog(enum level lv, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A line as uvicorn prints it ("INFO:     message"). */
void uvlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Raw lines to stdout or stderr, no prefix. */
void raw(bool to_stderr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A Python traceback logged by vLLM's engine core: headline, then
 * "Traceback (most recent call last):", the NULL-terminated frame lines and
 * the exception line, each prefixed like every vLLM ERROR line. */
void vtraceback(const char *where, const char *headline, const char *const frames[],
		const char *exception);

/* model.c — deterministic toy semantics. */
/* Write the assistant's reply to prompt into out[size] (NUL-terminated). */
void model_chat_reply(const char *prompt, char *out, size_t size);
/* A garbled reply, for the corrupted-generation fault; static storage. */
const char *model_garbage_reply(void);
/* Fill vec[dim] with a normalised hashed bag of words of text. */
void model_embed(const char *text, float *vec, size_t dim);
/* Relevance in [0,1] of doc to query by word overlap. */
double model_relevance(const char *query, const char *doc);
/* Rough token count: words plus punctuation marks. */
int model_count_tokens(const char *text);

/* curl.c — `curl -fsS URL` for healthchecks, when invoked as curl. */
int curl_main(int argc, char **argv);

/* A response the HTTP layer sends: status and a JSON body, or SSE frames
 * (each a complete "data: ...\n\n" event) sent one by one, spaced by
 * S->token_ms after the first, with id naming the request for the abort
 * log. Filled by the route handlers in generate.c and pool.c. */
struct reply {
	unsigned status;
	json_t *body;             /* owned; NULL with frames or hang */
	char **frames;            /* owned, n_frames strings */
	size_t n_frames;
	bool *now;                /* owned, n_frames flags: send without waiting (not a token) */
	size_t cut_after;         /* > 0: drop the connection after this many frames */
	char id[64];
	bool hang;                /* accepted, never answered (the sm_110 pooling hang) */
	char *text;               /* owned; a text/plain body (/metrics) instead of body */
	long kv_tokens;           /* tokens it holds in the KV cache while it streams */
};
void reply_json(struct reply *r, unsigned status, json_t *body);
void reply_error(struct reply *r, unsigned status, const char *param, const char *msg);
void reply_frame(struct reply *r, json_t *event);  /* event stolen; NULL = "[DONE]" */
/* A frame that carries no token (usage, [DONE]): sent as soon as it is due,
 * without the token spacing. */
void reply_frame_now(struct reply *r, json_t *event);
/* STANDIN_503_EVERY / STANDIN_DROP_EVERY: count a generate request and say
 * whether it is answered 503 (reply put in r) or its stream is cut. */
bool injected_503(struct reply *r);
void maybe_cut(struct reply *r);
/* The request's "model" names a served name (or is absent); else a 404 is
 * put in r and false returned. */
bool model_ok(struct reply *r, json_t *req);
/* The engine dies on this request: vLLM's launch-failure lines (or, for
 * FAULT_MTP_NO_KERNEL, the missing-kernel error), a 500. */
void engine_dies(struct reply *r);
extern struct standin *S;

/* metrics.c — speculative decoding (MTP) and GET /metrics. */
int spec_tokens(const char *speculative);  /* num_speculative_tokens of an MTP config, else 0 */
void spec_setup(struct standin *s, const char *speculative); /* spec_k, spec_accept; scales token_ms */
void spec_observe(int completion_tokens);  /* count one finished generation */
void spec_drift(const char *prompt, char *text, size_t size); /* STANDIN_MTP_DRIFT's change */
/* A generate request's prompt tokens, counted when it is answered. */
void prompt_observe(int prompt_tokens);
/* A stream starts (holding kv tokens of the KV cache) and ends: running,
 * waiting and KV usage on /metrics follow the streams open. */
void stream_begin(long kv);
void stream_end(long kv);
void api_metrics(struct reply *r);

/* generate.c / pool.c — route handlers (req borrowed). */
void api_chat(struct reply *r, json_t *req);
void api_completions(struct reply *r, json_t *req);
void api_responses(struct reply *r, json_t *req);
void api_embeddings(struct reply *r, json_t *req);
void api_rerank(struct reply *r, json_t *req);
void api_score(struct reply *r, json_t *req);

/* logprob.c — the toy model's token distributions, for prompt_logprobs. */
/* prompt_logprobs for prompt with top-k entries per position (vLLM's shape:
 * null for the first token, then {token_id: {logprob, rank, decoded_token}}),
 * perturbed by S->fp8_noise; *n_tokens gets the prompt's token count. */
json_t *toy_prompt_logprobs(const char *prompt, int k, int *n_tokens);
/* POST /tokenize: the toy token ids of "prompt". */
void api_tokenize(struct reply *r, json_t *req);

/* sys.c — host facilities. */
#define GiB (1024.0 * 1024.0 * 1024.0)
double now_s(void); /* monotonic seconds */
/* A non-negative integer from the environment, def when unset or bad. */
long env_long(const char *name, long def);
/* A non-negative number from the environment, def when unset or bad. */
double env_double(const char *name, double def);
/* A byte count with an optional K/M/G/T (binary) suffix; -1 if bad. */
double parse_bytes(const char *v);
/* Block SIGTERM/SIGINT (taken in nap()), ignore SIGPIPE. */
void signals_init(void);
/* Log vLLM's (and, when serving, uvicorn's) shutdown lines, stop, exit. */
void shutdown_and_exit(int code, bool serving) __attribute__((noreturn));
/* Sleep ms milliseconds; SIGTERM/SIGINT meanwhile end the process (0). */
void nap(long ms, bool serving);
/* MemTotal or MemFree from /proc/meminfo in bytes; 0 if unreadable. */
double meminfo(const char *key);
/* n bytes allocated and touched (resident); NULL when n is 0 or on failure. */
char *hold(double n);
/* Bind host:port now (vLLM binds before starting the engine); exits 1 on
 * failure with Python's error line. */
int bind_early(const char *host, int port);

/* fault.c — vLLM's failures (each exits 1) and the card's faults. */
void engine_failed(void) __attribute__((noreturn));
void oom(double bytes) __attribute__((noreturn));
void fail_free_memory(double free0, double total, double util, double requested)
	__attribute__((noreturn));
void fail_fp8_assert(void) __attribute__((noreturn));
void fail_no_cache_blocks(void) __attribute__((noreturn));
/* The fault requests meet on the pretended card (FAULT_NONE off Thor). */
enum fault card_fault(bool thor, enum task task, const char *backend, bool eager,
		      const char *model, const char *speculative);
/* A classifier whose head is not the trained one (the original
 * Qwen3-Reranker without vLLM's documented --hf-overrides). */
bool wrong_scores(enum task task, const char *arch, const char *hf_overrides);
/* The compute capability the card's GPU reports, as "sm_NNN". */
const char *card_sm(const char *card);

/* http.c — start serving on s->listen_fd; returns 0 or -1 (logged). */
int http_start(struct standin *s);
void http_stop(void);

#endif
