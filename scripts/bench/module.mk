# The bench tracers scripts/bench/overhead.sh and bpf_steps.sh run next to
# st-record: bare-ring (see bare_ring.bpf.c) and bpf-steps (see
# bpf_steps.bpf.c). Built with st-record, from its vmlinux.h.

ifeq ($(HAVE_BPF),1)

$(B)/bench/%.bpf.o: scripts/bench/%.bpf.c $(B)/vmlinux.h format/lib/sttrace_events.h bpf/sttrace_bpf.h
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror -I$(B) -Ibpf -Iformat/lib \
		-c $< -o $@

.PRECIOUS: $(B)/bench/%.bpf.o

$(B)/bench/%.skel.h: $(B)/bench/%.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

$(B)/bench/bare-ring: scripts/bench/bare_ring.c scripts/bench/bench_loader.h $(B)/bench/bare_ring.skel.h
	$(Q)$(CC) $(ST_CFLAGS) -I$(B)/bench -o $@ $< $(REC_LIBS)

$(B)/bench/bpf-steps: scripts/bench/bpf_steps.c scripts/bench/bench_loader.h $(B)/bench/bpf_steps.skel.h
	$(Q)$(CC) $(ST_CFLAGS) -I$(B)/bench -o $@ $< $(REC_LIBS)

PROGRAMS += $(B)/bench/bare-ring $(B)/bench/bpf-steps

endif

# bench-codec: zstd against LZ4 on a recording's chunks (codec.c), where liblz4 is installed.
ifneq ($(shell $(PKG_CONFIG) --exists liblz4 2>/dev/null && echo 1),)

$(B)/bench/bench-codec: scripts/bench/codec.c $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $< $(LIBST) $(call pkg_libs,liblz4,-llz4) $(LIBST_LIBS)

PROGRAMS += $(B)/bench/bench-codec

endif
