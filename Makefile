# SPDX-License-Identifier: MIT
# kpeek: plain Makefile. Targets: all (default), test (self-contained tests,
# for packagers: no QEMU, no apt), check (the whole suite of the README),
# install, uninstall, asan, fuzz, bench, demo, clean. Build trees: build/
# (normal), build-asan/ (ASan+UBSan).
#
# Honours CC, CPPFLAGS, CFLAGS and LDFLAGS (dpkg-buildflags), PREFIX (default
# /usr/local), DESTDIR, BINDIR, LIBDIR, INCLUDEDIR, MANDIR, PKGCONFIGDIR,
# BASHCOMPDIR, PYTHONDIR. Warnings are errors only with WERROR=1 (make check sets it).
#
# The library is built with -fvisibility=hidden: only functions marked KP_API
# in include/kpeek/kpeek.h are exported, in the version node of libkpeek.map.
# The CLI sees the public header only (-Iinclude), like any other program.
CC ?= gcc
B ?= build
SAN ?=
OPT ?= -O2
SONAME_MAJOR := 0
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
VERSION := $(shell sed -n 's/^\#define KPEEK_VERSION_STRING "\(.*\)"/\1/p' include/kpeek/kpeek.h)

WARN := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes
WERROR ?=
ifeq ($(WERROR),1)
WARN += -Werror
endif
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
# Every library kpeek links ships a .pc; the literal list is the fallback
# for a system without pkg-config. (Their --cflags are not needed: the code
# includes <lzo/lzo1x.h>, and host include paths would leak into cross builds.)
# The decompressors only some dumps need (zstd, lzo, snappy) are loaded on
# first use (src/format/codecs.c): the library and the CLI do not link them;
# the tests' generators, which compress, do.
PC_DEPS := libbpf libelf zlib
LIBS := $(or $(shell pkg-config --libs $(PC_DEPS) 2>/dev/null),-lbpf -lelf -lz) -lm
PC_CODECS := libzstd lzo2 snappy
TEST_LIBS := $(LIBS) $(or $(shell pkg-config --libs $(PC_CODECS) 2>/dev/null),-lzstd -llzo2 -lsnappy)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# The Python package: Debian's path for modules of every python3 version.
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages

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

MAN_PAGES := $(B)/man/kpeek.1 $(B)/man/libkpeek.3

# The Python bindings (python/): the extension kpeek._kpeek over the public
# API (libkpeek.a linked in, so PYTHONPATH=$(B)/python is enough) and the
# kpeek package's Python files, into $(B)/python/kpeek/. Built when
# python3-config (python3-dev) is there.
PYTHON ?= /usr/bin/python3
PYTHON_CONFIG ?= $(PYTHON)-config
PY_INCLUDES := $(shell $(PYTHON_CONFIG) --includes 2>/dev/null)
PY_EXT_SRC := $(sort $(wildcard python/ext/*.c))
PY_EXT_OBJ := $(PY_EXT_SRC:%.c=$(B)/%.o)
PY_FILES := $(sort $(shell find python/kpeek -name "*.py"))
PY_OUT := $(PY_FILES:python/%=$(B)/python/%)
ifneq ($(PY_INCLUDES),)
PY_ALL := $(B)/python/kpeek/_kpeek.so $(PY_OUT)
endif

.PHONY: all check test unit asan fuzz bench demo clean install uninstall pyext
# Objects of test programs are intermediate files: keep them, so that a
# second make rebuilds nothing.
.SECONDARY:
all: $(B)/libkpeek.a $(B)/libkpeek.so $(B)/kpeek $(UNIT_BIN) $(TOOL_BIN) $(MAN_PAGES) $(PY_ALL)

$(B)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(B)/cli/%.o: cli/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CLI_CFLAGS) -MMD -MP -c $< -o $@

# Python's headers trip -Wmissing-prototypes / -Wshadow in their inline
# functions: the extension is checked without those two.
$(B)/python/ext/%.o: python/ext/%.c python/ext/kpy.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Wstrict-prototypes,$(ALL_CFLAGS)) -fvisibility=hidden -Iinclude \
		$(PY_INCLUDES) -MMD -MP -c $< -o $@

$(B)/python/kpeek/_kpeek.so: $(PY_EXT_OBJ) $(B)/libkpeek.a
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_SAN) $(LDFLAGS) -o $@ $(PY_EXT_OBJ) $(B)/libkpeek.a $(LIBS)

# The bindings alone (scripts/cross-build, with another PY_INCLUDES).
pyext: $(PY_ALL)

$(B)/python/%.py: python/%.py
	@mkdir -p $(dir $@)
	cp $< $@

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

# What make install installs as kpeek: the same CLI on the shared library it
# installs beside it (one copy of the library on a system; the start-up
# cost, measured in the README, is within the noise). $(B)/kpeek, static,
# is the one the tests and the QEMU guests run from the build tree.
$(B)/kpeek-shared: $(CLI_OBJ) $(SO)
	$(CC) $(LDFLAGS_SAN) $(LDFLAGS) -o $@ $(CLI_OBJ) $(SO) -lm

$(B)/libkptest.a: $(GEN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/tests/%: $(B)/tests/unit/%.o $(B)/libkptest.a $(B)/libkpeek.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) $(LDFLAGS) -o $@ $< $(B)/libkptest.a $(B)/libkpeek.a $(TEST_LIBS)

$(B)/tools/%: $(B)/tests/tools/%.o $(B)/libkptest.a $(B)/libkpeek.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) $(LDFLAGS) -o $@ $< $(B)/libkptest.a $(B)/libkpeek.a $(TEST_LIBS)

# Unit tests of one build tree.
unit: all
	@tests/run-unit $(B)

# The self-contained tests, for packagers: unit, CLI goldens, the library's
# shape, the man pages, an install into a temporary DESTDIR used through
# pkg-config. No QEMU, no apt, no root.
test: all
	tests/run-unit $(B)
	tests/cli/run $(B)
	tests/structure/run $(B)
	tests/packaging/run $(B)

# Man pages: kpeek(1) is generated from the CLI's own --help texts (so it
# cannot drift from them); libkpeek(3) from doc/libkpeek.3.in with the
# example program pasted in.
$(B)/man/kpeek.1: $(B)/kpeek scripts/mkman
	@mkdir -p $(dir $@)
	scripts/mkman $(B)/kpeek $(VERSION) >$@.tmp && mv $@.tmp $@

$(B)/man/libkpeek.3: doc/libkpeek.3.in examples/comm.c
	@mkdir -p $(dir $@)
	sed 's/\\/\\e/g' examples/comm.c >$(B)/man/comm.c.roff
	sed -e 's/@VERSION@/$(VERSION)/' -e '/@EXAMPLE@/{r $(B)/man/comm.c.roff' -e 'd}' \
		doc/libkpeek.3.in >$@.tmp && mv $@.tmp $@

install: all $(B)/kpeek-shared
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/kpeek \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(B)/kpeek-shared $(DESTDIR)$(BINDIR)/kpeek
	install -m 644 $(SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libkpeek.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libkpeek.so.$(SONAME_MAJOR)
	ln -sf libkpeek.so.$(SONAME_MAJOR) $(DESTDIR)$(LIBDIR)/libkpeek.so
	install -m 644 $(B)/libkpeek.a $(DESTDIR)$(LIBDIR)/
	install -m 644 include/kpeek/kpeek.h $(DESTDIR)$(INCLUDEDIR)/kpeek/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|; s|@REQUIRES@|$(PC_DEPS)|' kpeek.pc.in \
		>$(DESTDIR)$(PKGCONFIGDIR)/kpeek.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/kpeek.pc
	install -m 644 $(B)/man/kpeek.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(B)/man/libkpeek.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 scripts/kpeek.bash-completion $(DESTDIR)$(BASHCOMPDIR)/kpeek
ifneq ($(PY_ALL),)
	for f in $(PY_FILES:python/%=%); do \
		install -D -m 644 python/$$f $(DESTDIR)$(PYTHONDIR)/$$f || exit 1; done
	install -m 644 $(B)/python/kpeek/_kpeek.so $(DESTDIR)$(PYTHONDIR)/kpeek/
endif

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/kpeek $(DESTDIR)$(LIBDIR)/libkpeek.so* \
		$(DESTDIR)$(LIBDIR)/libkpeek.a $(DESTDIR)$(INCLUDEDIR)/kpeek/kpeek.h \
		$(DESTDIR)$(PKGCONFIGDIR)/kpeek.pc $(DESTDIR)$(MANDIR)/man1/kpeek.1 \
		$(DESTDIR)$(MANDIR)/man3/libkpeek.3 $(DESTDIR)$(BASHCOMPDIR)/kpeek
	-rmdir $(DESTDIR)$(INCLUDEDIR)/kpeek
	rm -rf $(DESTDIR)$(PYTHONDIR)/kpeek

# The whole suite: unit tests (plain and under ASan+UBSan), then the QEMU
# integration suite against a real Debian kernel.
# Builds use every core (CI has two): the builds are minutes of the
# check's budget.
check:
	@scripts/install-deps check
	$(MAKE) -j$(JOBS) WERROR=1 all
	$(MAKE) -j$(JOBS) WERROR=1 B=build-asan SAN=1 all
	$(MAKE) -j$(JOBS) -C fuzz all
	scripts/cross-build arm64
	tests/check-all

asan:
	$(MAKE) B=build-asan SAN=1 all
	tests/run-unit build-asan

# make demo: the library and the CLI only, on every core; tests/vm/demo
# then installs what the path it takes needs (scripts/install-deps demo-vm)
# when this machine's /proc/kcore cannot be read.
demo:
	@scripts/install-deps demo-live
	$(MAKE) -j$(JOBS) $(B)/libkpeek.so $(B)/kpeek
	tests/vm/demo

fuzz:
	@scripts/install-deps fuzz
	$(MAKE) -C fuzz

bench:
	@scripts/install-deps bench
	$(MAKE) all
	scripts/cross-build arm64
	bench/run

clean:
	rm -rf build build-asan build-aarch64 fuzz/build

-include $(shell find $(B) -name '*.d' 2>/dev/null)
