# st-format: the trace tool (format/st-format/) with the synthetic trace
# generator (format/synth/, also linked by tests and benchmarks), on libsttrace.
# `convert` reads traces through the analyzer's input, names and correlator
# (libanalyze); `anonymize` takes its HMAC from OpenSSL's libcrypto.
ST_FORMAT_SRCS := $(wildcard format/st-format/*.c) format/synth/synth.c
ST_FORMAT_OBJS := $(ST_FORMAT_SRCS:%.c=$(B)/%.o)

$(B)/st-format: $(ST_FORMAT_OBJS) $(ANALYZE_LIB) $(LIBCOMMON) $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS) -ljson-c -lcrypto -lm

PROGRAMS += $(B)/st-format
INSTALL_BIN += $(B)/st-format
INSTALL_MAN1 += format/st-format/st-format.1

# The same under ASan+UBSan, for the hostile-file loop (tests/fuzz/module.mk).
$(ASAN_B)/st-format: $(ST_FORMAT_OBJS:$(B)/%=$(ASAN_B)/%) $(ANALYZE_ASAN_LIB) $(LIBCOMMON_ASAN) $(LIBST_ASAN)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LIBST_LIBS) -ljson-c -lcrypto -lm
