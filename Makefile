# lobes — build, test and setup.
#
#   make run     install missing packages (apt, when root/sudo), build, run on this machine
#   make test    same setup, then the whole suite through prove
#   make asan    build and test with AddressSanitizer + UBSan (in build-asan/)
#   make goldens regenerate tests/goldens/ from the shipped profiles (compose, and k8s/)
#   make image   build the lobes image (FROM scratch) on the docker at DOCKER_HOST
#   make coverage  line and branch coverage of src/lib/ (gcovr, build-cov/; docs/testing.md)
#   make mutate    mutation score of the core rooms (build-mut/; after make coverage)
#   make install   the binary, man page and bash/zsh/fish completions under
#                  $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall
#
# WERROR=1 turns warnings into errors (CI sets it).

BUILD ?= build
CC ?= gcc
PKGS := libfyaml jansson libcurl libpcre2-8 libmicrohttpd yajl nettle
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
	-Wno-format-nonliteral -Wno-missing-field-initializers
CFLAGS ?= -O2 -g
override CFLAGS += -std=gnu11 $(WARN) $(if $(WERROR),-Werror) $(PKG_CFLAGS) -D_GNU_SOURCE \
	-include src/lib/util/banned.h
override LDLIBS += $(PKG_LIBS) -ldl -lm -lpthread

LIB_SRC := $(sort $(shell find src/lib -name '*.c'))
CMD_SRC := $(sort $(wildcard src/cmd/*.c))
DATA := $(sort $(shell find data -type f))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/embedded_data.o
CMD_OBJ := $(CMD_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%.t)
# Helpers the tests build: stub NVML library, stub programs, the vLLM stand-in.
TEST_HELPERS_MK := $(wildcard tests/*.mk)

DEB_PKGS := build-essential pkg-config libfyaml-dev libjansson-dev libcurl4-openssl-dev nettle-dev \
	libpcre2-dev libcmocka-dev docker.io docker-compose perl python3-yaml prometheus \
	chromium python3-websocket libyajl-dev

.PHONY: all deps run test check asan goldens clean man image bench-triage bench-bringup unit install uninstall
all: $(BUILD)/lobes

# Install what is missing, through apt, when we may (root or sudo without a password).
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "missing packages:$$missing (run as root or install them)"; exit 3; fi; \
	  echo "installing:$$missing"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null || \
	  { $$SUDO apt-get update -q >/dev/null && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null; } ; \
	fi

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(@D)
	$(CC) -O1 -o $@ $<

$(BUILD)/embedded_data.c: $(BUILD)/tools/embed $(DATA)
	$(BUILD)/tools/embed $@ $(DATA)

$(BUILD)/embedded_data.o: $(BUILD)/embedded_data.c
	$(CC) $(filter-out -Wmissing-prototypes,$(CFLAGS)) -c -o $@ $<

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/liblobes.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/lobes: $(BUILD)/src/main.o $(CMD_OBJ) $(BUILD)/liblobes.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%.t: tests/unit/%.c $(BUILD)/liblobes.a $(CMD_OBJ) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Wno-missing-prototypes $(LDFLAGS) -o $@ $< $(CMD_OBJ) $(BUILD)/liblobes.a \
		$(LDLIBS) $(shell pkg-config --libs cmocka)

test-helpers:
.PHONY: test-helpers test-only
-include $(TEST_HELPERS_MK)

unit: $(UNIT_BIN)

run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/lobes detect
	$(BUILD)/lobes explain

TEST_ENV = LOBES_BIN=$(abspath $(BUILD)/lobes) LOBES_SRC=$(CURDIR) LOBES_BUILD=$(abspath $(BUILD)) \
	CMOCKA_MESSAGE_OUTPUT=TAP NO_COLOR=1 LOBES_COMPOSE_CACHE=0
TESTS ?= $(BUILD)/tests/*.t tests/cases/*.t tests/integration/*.t

test: deps
	@$(MAKE) --no-print-directory all unit test-helpers
	@$(MAKE) --no-print-directory test-only

test-only:
	$(TEST_ENV) prove --exec env $(PROVE_FLAGS) $$(for f in $(TESTS); do [ -e "$$f" ] && echo "$$f"; done)

check: test

ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" \
		all unit test-helpers
	$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" \
		TESTS='build-asan/tests/*.t tests/cases/*.t' test-only

# Regenerate the golden renders of every shipped profile.
goldens: $(BUILD)/lobes
	@for f in data/profiles/*.yaml; do p=$$(basename $$f .yaml); \
	  rm -rf tests/goldens/$$p; \
	  LOBES_DIR=/nonexistent $(BUILD)/lobes render --profile $$p --out tests/goldens/$$p >/dev/null || exit 1; \
	  echo "golden: tests/goldens/$$p"; done
	@rm -rf tests/goldens/k8s && \
	  LOBES_DIR=/nonexistent $(BUILD)/lobes render --target kubernetes --out tests/goldens/k8s >/dev/null && \
	  echo "golden: tests/goldens/k8s (every shipped profile, --target kubernetes)"

# The lobes image (tools/image.sh: FROM scratch, the binary and what ldd
# names), built on the docker at DOCKER_HOST; LOBES_IMAGE names it.
LOBES_IMAGE ?= lobes:latest
image: $(BUILD)/lobes
	tools/image.sh $(BUILD)/lobes $(BUILD)/image $(LOBES_IMAGE)

man: $(BUILD)/lobes
	$(BUILD)/lobes --man > docs/lobes.1

# Installed like a tool. The binary goes to $(PREFIX)/bin: with the default
# /usr/local (or /usr) it is on systemd's fixed search path, where the
# gateway unit (data/template/lobes-gateway@.service: ExecStart=lobes ...)
# finds it. The man page and the completions are generated by the binary
# itself, so they match it; each goes where its reader looks under PREFIX:
# man1/, bash-completion's completions/ (XDG_DATA_DIRS), zsh's
# site-functions (Debian's vendor-completions for /usr) and fish's
# vendor_completions.d. DESTDIR is prepended to every path (packaging).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/share/zsh/vendor-completions,$(PREFIX)/share/zsh/site-functions)
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
INSTALLED = $(BINDIR)/lobes $(MANDIR)/man1/lobes.1 $(BASHCOMPDIR)/lobes $(ZSHCOMPDIR)/_lobes \
	$(FISHCOMPDIR)/lobes.fish

$(BUILD)/share/lobes.1 $(BUILD)/share/lobes.bash $(BUILD)/share/_lobes $(BUILD)/share/lobes.fish: $(BUILD)/lobes
	@mkdir -p $(BUILD)/share
	$(BUILD)/lobes --man > $(BUILD)/share/lobes.1
	$(BUILD)/lobes completion bash > $(BUILD)/share/lobes.bash
	$(BUILD)/lobes completion zsh > $(BUILD)/share/_lobes
	$(BUILD)/lobes completion fish > $(BUILD)/share/lobes.fish

install: $(BUILD)/lobes $(BUILD)/share/lobes.1 $(BUILD)/share/lobes.bash $(BUILD)/share/_lobes $(BUILD)/share/lobes.fish
	install -D -m 0755 $(BUILD)/lobes $(DESTDIR)$(BINDIR)/lobes
	install -D -m 0644 $(BUILD)/share/lobes.1 $(DESTDIR)$(MANDIR)/man1/lobes.1
	install -D -m 0644 $(BUILD)/share/lobes.bash $(DESTDIR)$(BASHCOMPDIR)/lobes
	install -D -m 0644 $(BUILD)/share/_lobes $(DESTDIR)$(ZSHCOMPDIR)/_lobes
	install -D -m 0644 $(BUILD)/share/lobes.fish $(DESTDIR)$(FISHCOMPDIR)/lobes.fish
	@case "$(BINDIR)" in /usr/local/sbin|/usr/local/bin|/usr/sbin|/usr/bin) ;; \
	  *) echo "note: $(BINDIR) is not on systemd's search path: write $(BINDIR)/lobes into ExecStart= of lobes-gateway@.service";; esac

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

clean:
	rm -rf build build-asan build-fuzz build-cov build-mut

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
