/* fuzz_engine_json.c — Docker Engine API answers (container list, container
 * inspect, image inspect), as read from the daemon's socket. The first
 * byte picks the endpoint, the rest is the body. See fuzz.h. */
#include "../../src/lib/runtime/runtime.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	_cleanup_free_ char *body = fuzz_cstr(data + 1, size - 1);
	struct err *e = NULL;
	int rc;
	switch (data[0] % 3) {
	case 0: {
		struct engine_container_list l = { 0 };
		rc = engine_parse_list(body, &l, &e);
		fuzz_check_err(rc, e);
		engine_container_list_free(&l);
		break;
	}
	case 1: {
		struct engine_container c = { 0 };
		rc = engine_parse_inspect(body, &c, &e);
		fuzz_check_err(rc, e);
		engine_container_free(&c);
		break;
	}
	default: {
		struct engine_image im = { 0 };
		rc = engine_parse_image(body, &im, &e);
		fuzz_check_err(rc, e);
		engine_image_free(&im);
		break;
	}
	}
	return 0;
}
