# tests/runtime.mk — runtime-tool: the compose CLI wrapper and the Engine
# API client driven from the Docker integration tests (tests/integration/).

$(BUILD)/tests/runtime-tool: tests/integration/runtime_tool.c $(BUILD)/liblobes.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/liblobes.a $(LDLIBS)

test-helpers: $(BUILD)/tests/runtime-tool
