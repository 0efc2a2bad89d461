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
 * Layout: main.c (command line, boot phases, faults), log.c (vLLM log
 * format), http.c (libmicrohttpd server and routes), model.c (toy chat,
 * embedding and rerank semantics), curl.c (the `curl` personality for
 * container healthchecks), tls_off.c (link-time stand-ins for the TLS
 * library, which the stand-in never uses).
 */
#ifndef STANDIN_H
#define STANDIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STANDIN_DEFAULT_VERSION "0.23.1rc1.dev672+standin"

enum task { TASK_GENERATE, TASK_EMBED, TASK_CLASSIFY };

/* How a pooling or generate request behaves on the pretended card. */
enum fault {
	FAULT_NONE,
	FAULT_POOLING_HANG,     /* sm_110 + pooling + not TRITON_ATTN: never answer */
	FAULT_GRAPH_KILL,       /* sm_110 reranker with CUDA graphs: first rerank kills the engine */
	FAULT_WRONG_ORDER,      /* sm_110 reranker, eager: serves, ordering wrong (known failure) */
	FAULT_CORRUPT_THEN_DIE, /* sm_110 + LFM2.5-1.2B: garbage, then launch failure */
};

/* Everything the server needs to answer, filled once by main() before the
 * listener starts; read-only afterwards except the counters in http.c. */
struct standin {
	const char *model;        /* positional MODEL (repo id or local path) */
	const char *served_name;  /* --served-model-name, else model */
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

/* http.c — start serving on s->listen_fd; returns 0 or -1 (logged). */
int http_start(struct standin *s);
void http_stop(void);

#endif
