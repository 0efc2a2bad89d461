/* fuzz_log_demux.c — the Docker log stream demultiplexer (8-byte frame
 * headers, frames split anywhere across reads). The first byte: bit 0 the
 * TTY (raw) mode, the rest the read size; the stream is fed in reads of
 * that size into a small capped buffer. See fuzz.h. */
#include "../../src/lib/runtime/runtime.h"
#include "../../src/lib/util/buf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct log_demux d;
	log_demux_init(&d, data[0] & 1);
	size_t step = (size_t)(data[0] >> 1) + 1;
	struct buf out;
	buf_init(&out, 4096);
	for (size_t i = 1; i < size; i += step) {
		size_t n = size - i < step ? size - i : step;
		if (log_demux_feed(&d, data + i, n, &out) < 0)
			break;
	}
	if (out.len > 4096)
		abort();
	buf_free(&out);
	return 0;
}
