# kpeek: plain Makefile. Targets: all (default), check, test, asan, fuzz,
# bench, demo, clean. Build trees: build/ (normal), build-asan/ (ASan+UBSan).
#
# The library is built with -fvisibility=hidden: only functions marked KP_API
# in include/kpeek/kpeek.h are exported, in the version node of libkpeek.map.
# The CLI sees the public header only (-Iinclude), like any other program.
CC ?= gcc
B ?= build
SAN ?=
OPT ?= -O2
SONAME_MAJOR := 0
VERSION := $(shell sed -n 's/^\#define KPEEK_VERSION_STRING "\(.*\)"/\1/p' include/kpeek/kpeek.h)

WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes
CFLAGS_BASE := -std=gnu11 $(OPT) -g $(WARN) -fPIC -D_GNU_SOURCE
ifeq ($(SAN),1)
CFLAGS_BASE += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_SAN := -fsanitize=address,undefined
endif
CFLAGS ?=
CPPFLAGS ?=
LDFLAGS ?=
ALL_CFLAGS := $(CFLAGS_BASE) $(CPPFLAGS) $(CFLAGS)
LIB_CFLAGS := -Iinclude -Isrc -fvisibility=hidden
CLI_CFLAGS := -Iinclude -Icli
TEST_CFLAGS := -Iinclude -Isrc -Itests/gen
LIBS := -lbpf -lelf -lz -lzstd -llzo2 -lsnappy -lm

LIB_SRC := $(sort $(shell find src -name "*.c"))
CLI_SRC := $(sort $(wildcard cli/*.c))
GEN_SRC := $(sort $(wildcard tests/gen/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))

LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o)
GEN_OBJ := $(GEN_SRC:%.c=$(B)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(B)/tools/%)
SO := $(B)/libkpeek.so.$(VERSION)

.PHONY: all check unit asan fuzz bench demo clean
all: $(B)/libkpeek.a $(B)/libkpeek.so $(B)/kpeek $(UNIT_BIN) $(TOOL_BIN)

$(B)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(B)/cli/%.o: cli/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CLI_CFLAGS) -MMD -MP -c $< -o $@

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) -MMD -MP -c $< -o $@

$(B)/libkpeek.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SO): $(LIB_OBJ) src/libkpeek.map
	$(CC) -shared $(LDFLAGS_SAN) $(LDFLAGS) -Wl,-soname,libkpeek.so.$(SONAME_MAJOR) \
		-Wl,--version-script=src/libkpeek.map -Wl,--no-undefined -o $@ $(LIB_OBJ) $(LIBS)

$(B)/libkpeek.so: $(SO)
	ln -sf libkpeek.so.$(VERSION) $(B)/libkpeek.so.$(SONAME_MAJOR)
	ln -sf libkpeek.so.$(SONAME_MAJOR) $@

$(B)/kpeek: $(CLI_OBJ) $(B)/libkpeek.a
	$(CC) $(LDFLAGS_SAN) $(LDFLAGS) -o $@ $(CLI_OBJ) $(B)/libkpeek.a $(LIBS)

$(B)/libkptest.a: $(GEN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/tests/%: $(B)/tests/unit/%.o $(B)/libkptest.a $(B)/libkpeek.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) $(LDFLAGS) -o $@ $< $(B)/libkptest.a $(B)/libkpeek.a $(LIBS)

$(B)/tools/%: $(B)/tests/tools/%.o $(B)/libkptest.a $(B)/libkpeek.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) $(LDFLAGS) -o $@ $< $(B)/libkptest.a $(B)/libkpeek.a $(LIBS)

# Unit tests of one build tree.
unit: all
	@tests/run-unit $(B)

# The whole suite: unit tests (plain and under ASan+UBSan), then the QEMU
# integration suite against a real Debian kernel.
check:
	@scripts/install-deps check
	$(MAKE) all
	$(MAKE) B=build-asan SAN=1 all
	$(MAKE) -C fuzz all
	scripts/cross-build arm64
	tests/check-all

asan:
	$(MAKE) B=build-asan SAN=1 all
	tests/run-unit build-asan

demo:
	@scripts/install-deps demo
	$(MAKE) all
	tests/vm/demo

fuzz:
	@scripts/install-deps fuzz
	$(MAKE) -C fuzz

bench:
	@scripts/install-deps bench
	$(MAKE) all
	bench/run

clean:
	rm -rf build build-asan build-aarch64 fuzz/build

-include $(shell find $(B) -name '*.d' 2>/dev/null)
