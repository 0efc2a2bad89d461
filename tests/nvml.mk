# nvml.mk — the stub NVML library the detection tests dlopen through
# LOBES_NVML_LIB (see tests/stubs/nvml_stub.c). Built without sanitizers even
# under `make asan`: it is loaded into instrumented and plain binaries alike.
NVML_STUB := $(BUILD)/tests/stubs/libnvidia-ml.so.1

$(NVML_STUB): tests/stubs/nvml_stub.c tests/nvml.mk
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -fPIC -shared $(WARN) $(if $(WERROR),-Werror) \
		-include src/lib/util/banned.h -o $@ $<

test-helpers: $(NVML_STUB)
