# sttrace - one `make` builds everything this machine can build; `make test` runs every test.
#
# Each folder adds its programs, objects and tests through its own module.mk;
# this file holds only what they share. Everything built lands in build/.

B        := build
CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Werror
CPPFLAGS += -I. -D_GNU_SOURCE
ST_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(CPPFLAGS)
Q        := $(if $(V),,@)

# Programs built by `make` (modules append), test programs run by `make test`
# (besides every tests/*/t_*.sh), and programs those scripts use.
PROGRAMS   :=
TESTS      :=
TEST_TOOLS :=

# libsttrace (format/module.mk builds it); every program links it this way.
LIBST      := $(B)/libsttrace.a
LIBST_LIBS := -lzstd -lxxhash

# Unit tests run a second time under ASan+UBSan, built in build-asan/ with
# their own objects so flags never mix (format/module.mk: rule, libsttrace).
ASAN_B     := build-asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LIBST_ASAN := $(ASAN_B)/libsttrace.a

# BPF needs clang, bpftool and kernel BTF; without them record/ is
# skipped and format/ and analyze/ still build.
HAVE_BPF := $(shell command -v clang >/dev/null 2>&1 && command -v bpftool >/dev/null 2>&1 && \
	test -r /sys/kernel/btf/vmlinux && pkg-config --exists libbpf 2>/dev/null && echo 1)

.PHONY: all test check deps demo clean
all:

include $(sort $(wildcard */*.mk scripts/bench/module.mk))

all: $(PROGRAMS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -MMD -MP -c $< -o $@

deps:
	$(Q)scripts/install-deps.sh

# test and demo install what is missing first, then start a new make, which
# sees the tools just installed (HAVE_BPF is decided when a make starts).
test: deps
	$(Q)$(MAKE) --no-print-directory check

check: all $(TESTS) $(TEST_TOOLS)
	$(Q)tests/run.sh $(TESTS) $(sort $(wildcard tests/*/t_*.sh))

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

clean:
	rm -rf $(B) build-asan

-include $(shell find $(B) -name '*.d' 2>/dev/null)
