# tests/standin.mk — the vLLM stand-in (a test double): a static binary the
# shell tests run and tests/integration/docker.sh builds into a FROM scratch
# image.
#
# It is built with the project's warnings but its own flags: static, so it
# runs in an empty image. libmicrohttpd is linked statically with TLS
# switched off (tests/standin/tls_off.c): Debian ships no static p11-kit,
# which a static GnuTLS would need. Under `make asan` (sanitizers in CFLAGS)
# it is linked dynamically with the sanitizers instead, so standin.t runs it
# under ASan/UBSan; the Docker tests never use that build.

DEB_PKGS += libmicrohttpd-dev curl jq

STANDIN_SRC := $(sort $(wildcard tests/standin/*.c))
STANDIN_SAN := $(findstring -fsanitize,$(CFLAGS))
STANDIN_CFLAGS := $(if $(STANDIN_SAN),$(CFLAGS),-O2 -g -std=gnu11 $(WARN) $(if $(WERROR),-Werror) \
	-D_GNU_SOURCE -include src/lib/util/banned.h)
STANDIN_LDFLAGS := $(if $(STANDIN_SAN),$(LDFLAGS),-static)

# vLLM's lists per recorded version, embedded by args.c (.incbin, paths
# relative to the repository root, where make runs the compiler).
STANDIN_LISTS := $(wildcard data/vllm/*/*.txt)

$(BUILD)/tests/standin/vllm-standin: $(STANDIN_SRC) tests/standin/standin.h $(STANDIN_LISTS)
	@mkdir -p $(@D)
	$(CC) $(STANDIN_CFLAGS) $(STANDIN_LDFLAGS) -o $@ $(STANDIN_SRC) \
		-lmicrohttpd -ljansson -lpthread -lm

test-helpers: $(BUILD)/tests/standin/vllm-standin
