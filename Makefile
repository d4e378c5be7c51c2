# sttrace - one `make` builds everything this machine can build; `make test` runs every test.
#
# Each folder adds its programs, objects and tests through its own module.mk;
# this file holds only what they share. Everything built lands in build/.

B        := build
CC       ?= cc
CFLAGS   ?= -O2 -g
# Tools and places a packager overrides (make CLANG=clang-16 PREFIX=/usr DESTDIR=...).
PKG_CONFIG ?= pkg-config
CLANG    ?= clang
BPFTOOL  ?= bpftool
PREFIX   ?= /usr/local
DESTDIR  ?=
WARN     := -Wall -Wextra -Werror
CPPFLAGS += -I. -D_GNU_SOURCE
ST_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(CPPFLAGS)
Q        := $(if $(V),,@)
# An archive made anew each time: `ar rcs` keeps the members of sources gone
# since (a renamed file's old object, which the linker would still take first).
ARCHIVE   = rm -f $@ && $(AR) rcs $@ $^

# Programs built by `make` (modules append), test programs run by `make test`
# (besides every tests/*/t_*.sh), and programs those scripts use.
PROGRAMS   :=
TESTS      :=
TEST_TOOLS :=

# libsttrace (format/lib/module.mk builds it); every program links it this way.
LIBST      := $(B)/libsttrace.a
# pkg-config's answer, or the plain names where a distribution ships no .pc file.
pkg_libs    = $(or $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null),$(2))
LIBST_LIBS := $(call pkg_libs,libzstd libxxhash,-lzstd -lxxhash) -lm -pthread
# What the programs share on the command line and in outputs (common/module.mk).
LIBCOMMON  := $(B)/libcommon.a

# Unit tests run a second time under ASan+UBSan, built in build-asan/ with
# their own objects so flags never mix (the rule below; libsttrace's in format/lib/module.mk).
ASAN_B     := build-asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LIBST_ASAN := $(ASAN_B)/libsttrace.a
LIBCOMMON_ASAN := $(ASAN_B)/libcommon.a

# BPF needs clang, bpftool and libbpf; without them record/ is skipped and
# format/ and analyze/ still build. Kernel BTF is needed only at run time: a
# build server without it compiles against bpf/vmlinux/ (record/module.mk).
HAVE_BPF := $(shell command -v $(CLANG) >/dev/null 2>&1 && command -v $(BPFTOOL) >/dev/null 2>&1 && \
	$(PKG_CONFIG) --exists libbpf 2>/dev/null && echo 1)

# What `make install` copies (modules append): programs for users, programs
# for root (section 8), man pages, and libsttrace's files.
INSTALL_BIN  :=
INSTALL_SBIN :=
INSTALL_MAN1 :=
INSTALL_MAN8 :=
VERSION := $(shell sed -n 's/^\#define ST_VERSION "\(.*\)"/\1/p' format/lib/sttrace.h)

.PHONY: all test check deps demo clean install static test-kernels
all:

include $(sort $(wildcard */*.mk */*/module.mk))

all: $(PROGRAMS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -MMD -MP -c $< -o $@

$(ASAN_B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -MMD -MP -c $< -o $@

deps:
	$(Q)scripts/install-deps.sh

# test and demo install what is missing first, then start a new make, which
# sees the tools just installed (HAVE_BPF is decided when a make starts).
test: deps
	$(Q)$(MAKE) --no-print-directory check

# `make check T=NAME` runs the tests whose file name contains NAME
# (t_fio, test_format_writer, tests/cli/).
ALL_TESTS = $(TESTS) $(sort $(wildcard tests/*/t_*.sh))
check: all $(TESTS) $(TEST_TOOLS)
	$(Q)tests/run.sh $(if $(T),$(foreach t,$(ALL_TESTS),$(if $(findstring $(T),$(t)),$(t))),$(ALL_TESTS))

# `make test-kernels K=6.1` runs the kernel matrix (tests/kernels/t_matrix.sh,
# which `make test` runs on every kernel) on one kernel: 5.10, 6.1, 6.12 or host.
test-kernels: all
	$(Q)KERNELS="$(or $(K),5.10 6.1 6.12 host)" tests/run.sh tests/kernels/t_matrix.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(INSTALL_BIN) $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(INSTALL_MAN1) $(DESTDIR)$(PREFIX)/share/man/man1
	$(if $(INSTALL_SBIN),install -d $(DESTDIR)$(PREFIX)/sbin && \
		install -m 755 $(INSTALL_SBIN) $(DESTDIR)$(PREFIX)/sbin)
	$(if $(INSTALL_MAN8),install -d $(DESTDIR)$(PREFIX)/share/man/man8 && \
		install -m 644 $(INSTALL_MAN8) $(DESTDIR)$(PREFIX)/share/man/man8)
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/sttrace
	install -m 644 $(LIBST) $(DESTDIR)$(PREFIX)/lib
	install -m 644 $(LIBST_HEADERS) $(DESTDIR)$(PREFIX)/include/sttrace
	sed -e 's#@PREFIX@#$(PREFIX)#' -e 's#@VERSION@#$(VERSION)#' format/lib/sttrace.pc.in \
		>$(DESTDIR)$(PREFIX)/lib/pkgconfig/sttrace.pc
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	for p in $(notdir $(INSTALL_BIN) $(INSTALL_SBIN)); do \
		install -m 644 scripts/bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$p; done

clean:
	rm -rf $(B) build-asan

-include $(shell find $(B) $(ASAN_B) -name '*.d' 2>/dev/null)
