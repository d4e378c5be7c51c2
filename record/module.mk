# st-record: the BPF probes (bpf/*.bpf.c) and the recorder. Built only
# when this machine can build BPF (HAVE_BPF, see the top Makefile).
#
# vmlinux.h comes from the running kernel's BTF (VMLINUX_BTF), or on a build
# server without one from bpf/vmlinux/ARCH/vmlinux.h (made from a 6.18 kernel's
# BTF), the way libbpf-tools builds. The BPF objects are compiled against it with
# CO-RE relocations, so the binary runs on other kernels with BTF too: they
# need BTF at run time only. Each bpf/*.bpf.c is compiled alone; bpftool links
# the objects into one, sttrace.bpf.o, and embeds it into a skeleton header
# st-record includes.

ifeq ($(HAVE_BPF),1)

BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/' \
	-e 's/s390x/s390/' -e 's/riscv64/riscv/')

REC_SRCS := $(wildcard record/*.c)
REC_OBJS := $(REC_SRCS:%.c=$(B)/%.o)
REC_LIBS := $(call pkg_libs,libbpf libelf zlib liburing json-c,-lbpf -lelf -lz -luring -ljson-c)
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

$(B)/vmlinux.h:
	@mkdir -p $(dir $@)
	$(Q)if [ -r $(VMLINUX_BTF) ]; then \
		$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@; \
	elif [ -r bpf/vmlinux/$(BPF_ARCH)/vmlinux.h ]; then cp bpf/vmlinux/$(BPF_ARCH)/vmlinux.h $@; \
	else echo "no kernel BTF ($(VMLINUX_BTF)) and no bpf/vmlinux/$(BPF_ARCH)/vmlinux.h" >&2; exit 1; fi

# The probes' files in link order: a file defining a map comes before the
# files declaring it extern (libbpf 1.1's linker leaves such an extern map at
# offset 0 of .maps, and the skeleton cannot open the object), and why.bpf.c,
# which declares the bpf_rdonly_cast kfunc in .ksyms, before the other files
# calling it (bpf/sttrace.bpf.h, CAST).
BPF_UNITS := sttrace why bio request syscalls fs io_uring proc generic
BPF_UNIT_OBJS := $(BPF_UNITS:%=$(B)/bpf/unit/%.bpf.o)

$(B)/bpf/unit/%.bpf.o: bpf/%.bpf.c $(B)/vmlinux.h
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
		-I$(B) -Ibpf -Iformat/lib -MMD -MP -c $< -o $@

$(B)/bpf/sttrace.bpf.o: $(BPF_UNIT_OBJS)
	$(Q)$(BPFTOOL) gen object $@ $^

$(B)/sttrace.skel.h: $(B)/bpf/sttrace.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name sttrace_bpf > $@.tmp && mv $@.tmp $@

$(REC_OBJS): CPPFLAGS += -I$(B)
$(REC_OBJS): $(B)/sttrace.skel.h

$(B)/st-record: $(REC_OBJS) $(LIBCOMMON) $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $(REC_OBJS) $(LIBCOMMON) $(LIBST) $(REC_LIBS) $(LIBST_LIBS)

PROGRAMS += $(B)/st-record

# st-record-static: the same objects linked statically against Debian's
# libbpf.a, libelf.a, libz.a, libzstd.a, liburing.a, libjson-c.a and
# libxxhash.a: one file to copy onto a host (tests/kernels runs it). Built
# by default when this machine has every archive; `make static` asks for it.
REC_STATIC_PKGS := libbpf libelf zlib liburing json-c libzstd libxxhash
REC_STATIC_LIBS := $(shell $(PKG_CONFIG) --static --libs $(REC_STATIC_PKGS) 2>/dev/null) -lm -pthread
HAVE_STATIC := $(if $(strip $(foreach l,bpf elf z zstd uring json-c xxhash,\
	$(if $(filter /%,$(shell $(CC) -print-file-name=lib$(l).a)),,$(l)))),,1)

$(B)/st-record-static: $(REC_OBJS) $(LIBCOMMON) $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -static -o $@ $(REC_OBJS) $(LIBCOMMON) $(LIBST) $(REC_STATIC_LIBS)

static: $(B)/st-record-static
PROGRAMS += $(if $(HAVE_STATIC),$(B)/st-record-static)
INSTALL_SBIN += $(B)/st-record
INSTALL_MAN8 += record/st-record.8

# Unit tests of the recorder's user-space parts: tests/record/test_*.c.
REC_UNITS := $(patsubst tests/record/%.c,%,$(wildcard tests/record/test_*.c))
REC_TESTS := $(REC_UNITS:%=$(B)/tests/%)
TESTS += $(REC_TESTS)

$(B)/tests/record/%.o: $(B)/sttrace.skel.h
$(B)/tests/record/%.o: CPPFLAGS += -I$(B)
$(REC_TESTS): $(B)/tests/%: $(B)/tests/record/%.o $(B)/record/meta.o $(B)/record/options.o \
		$(B)/record/flight.o $(LIBCOMMON) $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) -ljson-c $(REC_UNIT_LIBS) $(LIBST_LIBS)

# test_kinds: libsttrace's schema with a made-up type (tests/record/kind_table.c)
# before the library, st-format's perfetto writer and libanalyze (which needs
# libsttrace after it).
$(B)/tests/test_kinds: $(B)/tests/record/kind_table.o \
	$(B)/format/st-format/st_format_convert_perfetto.o $(B)/format/st-format/st_format_json.o
$(B)/tests/test_kinds: REC_UNIT_LIBS := $(ANALYZE_LIB) $(LIBST)
$(B)/tests/test_kinds: $(ANALYZE_LIB)

# test_events opens the BPF object and asks the probe selection.
$(B)/tests/test_events: $(B)/record/probes.o $(B)/record/events.o $(B)/record/tracepoint.o $(B)/record/ring.o \
			$(B)/record/kernel.o
$(B)/tests/test_events: REC_UNIT_LIBS := -lbpf -lelf -lz
# test_kernel asks kernel.c about BTF it makes with libbpf.
$(B)/tests/test_kernel: $(B)/record/kernel.o
$(B)/tests/test_kernel: REC_UNIT_LIBS := -lbpf -lelf -lz

# without-bpf: runs a command where the bpf system call fails (t_environment.sh).
TEST_TOOLS += $(B)/tests/record/without-bpf

$(B)/tests/record/without-bpf: tests/record/without_bpf.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $<

endif
