# tests/standin.mk — the vLLM stand-in (a test double): a static binary and
# the FROM scratch image context the Docker tests build it into.
#
# It is built with its own flags, never the sanitizer ones (a -static binary
# cannot carry ASan), but with the project's warnings. libmicrohttpd is linked
# statically with TLS switched off (tests/standin/tls_off.c): Debian ships no
# static p11-kit, which a static GnuTLS would need.

DEB_PKGS += libmicrohttpd-dev curl jq

STANDIN_SRC := $(sort $(wildcard tests/standin/*.c))
STANDIN_CFLAGS := -O2 -g -std=gnu11 $(WARN) $(if $(WERROR),-Werror) -D_GNU_SOURCE \
	-include src/lib/util/banned.h

$(BUILD)/tests/standin/vllm-standin: $(STANDIN_SRC) tests/standin/standin.h
	@mkdir -p $(@D)
	$(CC) $(STANDIN_CFLAGS) -static -o $@ $(STANDIN_SRC) -lmicrohttpd -ljansson -lpthread -lm

test-helpers: $(BUILD)/tests/standin/vllm-standin
