/*
 * json_parse.c — what validating a request body costs with jansson's tree
 * (the gateway's old routing pass) and with yajl's event parser (body.c),
 * on the bench's 158-byte chat and a 36 KB conversation (40 messages).
 * docs/benchmarks/gateway.md quotes it. Not built by make:
 *   cc -O2 -o json_parse tools/http-proto/json_parse.c -ljansson -lyajl
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_parse.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int any(void *c) { (void)c; return 1; }
static int b1(void *c, int b) { (void)c, (void)b; return 1; }
static int s1(void *c, const unsigned char *s, size_t l) { (void)c, (void)s, (void)l; return 1; }
static int n1(void *c, const char *s, size_t l) { (void)c, (void)s, (void)l; return 1; }
static const yajl_callbacks cb = { .yajl_null = any, .yajl_boolean = b1, .yajl_number = n1,
				   .yajl_string = s1, .yajl_start_map = any, .yajl_map_key = s1,
				   .yajl_end_map = any, .yajl_start_array = any, .yajl_end_array = any };

int main(void)
{
	const char *small = "{\"model\":\"cortex\",\"messages\":[{\"role\":\"user\",\"content\":\"What is the "
			    "capital city of France? Reply with only the city name.\"}],\"max_tokens\":16,"
			    "\"temperature\":0}";
	size_t cap = 100000, n = 0;
	char *big = malloc(cap);
	n += (size_t)snprintf(big + n, cap - n, "{\"model\":\"cortex\",\"messages\":[");
	for (int i = 0; i < 40; i++) {
		n += (size_t)snprintf(big + n, cap - n, "%s{\"role\":\"user\",\"content\":\"", i ? "," : "");
		for (int k = 0; k < 15; k++)
			n += (size_t)snprintf(big + n, cap - n, "The quick brown fox jumps over the lazy dog; lorem ipsum. ");
		n += (size_t)snprintf(big + n, cap - n, "\"}");
	}
	snprintf(big + n, cap - n, "],\"max_tokens\":16,\"stream\":true}");
	const char *bodies[2] = { small, big };
	for (int w = 0; w < 2; w++) {
		size_t len = strlen(bodies[w]);
		int reps = w ? 200 : 20000;
		double t0 = now_ns();
		for (int i = 0; i < reps; i++)
			json_decref(json_loadb(bodies[w], len, JSON_REJECT_DUPLICATES, NULL));
		double t1 = now_ns();
		for (int i = 0; i < reps; i++) {
			yajl_handle h = yajl_alloc(&cb, NULL, NULL);
			if (yajl_parse(h, (const unsigned char *)bodies[w], len) != yajl_status_ok ||
			    yajl_complete_parse(h) != yajl_status_ok)
				return 1;
			yajl_free(h);
		}
		double t2 = now_ns();
		printf("%zu bytes: jansson %.2f us (%.1f ns/byte), yajl %.2f us (%.1f ns/byte)\n", len,
		       (t1 - t0) / reps / 1e3, (t1 - t0) / reps / (double)len, (t2 - t1) / reps / 1e3,
		       (t2 - t1) / reps / (double)len);
	}
	free(big);
	return 0;
}
