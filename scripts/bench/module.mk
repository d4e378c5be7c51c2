# bare-ring: the reference tracer scripts/bench/overhead.sh runs next to
# st-record (see bare_ring.bpf.c). Built with st-record, from its vmlinux.h.

ifeq ($(HAVE_BPF),1)

$(B)/bench/bare_ring.bpf.o: scripts/bench/bare_ring.bpf.c $(B)/vmlinux.h
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror -I$(B) -c $< -o $@

$(B)/bench/bare_ring.skel.h: $(B)/bench/bare_ring.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name bare_ring_bpf > $@.tmp && mv $@.tmp $@

$(B)/bench/bare-ring: scripts/bench/bare_ring.c $(B)/bench/bare_ring.skel.h
	$(Q)$(CC) $(ST_CFLAGS) -I$(B)/bench -o $@ $< $(REC_LIBS)

PROGRAMS += $(B)/bench/bare-ring

endif
