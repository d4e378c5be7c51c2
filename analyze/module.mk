# st-analyze: correlator, quantile sketches, reports (no BPF dependency).
ANALYZE_SRCS := $(wildcard analyze/*.c)
ANALYZE_OBJS := $(ANALYZE_SRCS:%.c=$(B)/%.o)
# Everything but main() in an archive, so unit tests pull in only what they use.
ANALYZE_LIB  := $(B)/analyze/libanalyze.a

PROGRAMS += $(B)/st-analyze
INSTALL_BIN += $(B)/st-analyze
INSTALL_MAN1 += analyze/st-analyze.1

$(ANALYZE_LIB): $(filter-out $(B)/analyze/main.o,$(ANALYZE_OBJS))
	$(Q)$(AR) rcs $@ $^

# --metrics serves HTTP through libmicrohttpd (scripts/install-deps.sh installs it).
MHD_LIBS := $(call pkg_libs,libmicrohttpd,-lmicrohttpd)

$(B)/st-analyze: $(B)/analyze/main.o $(ANALYZE_LIB) $(LIBCOMMON) $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS) $(MHD_LIBS) -ljson-c -lm -pthread

# C unit tests: tests/analyze/test_*.c, one program each, plain and under
# ASan+UBSan (ASAN_* in the top Makefile).
ANALYZE_TESTS := $(patsubst tests/analyze/%.c,$(B)/tests/analyze/%,$(wildcard tests/analyze/test_*.c))
ANALYZE_ASAN_TESTS := $(ANALYZE_TESTS:$(B)/%=$(ASAN_B)/%)
ANALYZE_ASAN_LIB := $(ASAN_B)/analyze/libanalyze.a
TESTS += $(ANALYZE_TESTS) $(ANALYZE_ASAN_TESTS)

# test_quantile and test_recordings write traces with st-format's synthetic generator.
$(B)/tests/analyze/test_quantile $(B)/tests/analyze/test_recordings: $(B)/format/synth/synth.o
$(ASAN_B)/tests/analyze/test_quantile $(ASAN_B)/tests/analyze/test_recordings: $(ASAN_B)/format/synth/synth.o

# Objects first: an extra object (synth.o) needs the archives after it.
$(ANALYZE_TESTS): $(B)/tests/analyze/%: $(B)/tests/analyze/%.o $(ANALYZE_LIB) $(LIBCOMMON) $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LIBST_LIBS) $(MHD_LIBS) -ljson-c -lm -pthread

$(ANALYZE_ASAN_LIB): $(patsubst $(B)/%,$(ASAN_B)/%,$(filter-out $(B)/analyze/main.o,$(ANALYZE_OBJS)))
	$(Q)$(AR) rcs $@ $^

$(ANALYZE_ASAN_TESTS): $(ASAN_B)/tests/analyze/%: $(ASAN_B)/tests/analyze/%.o $(ANALYZE_ASAN_LIB) $(LIBCOMMON_ASAN) $(LIBST_ASAN)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LIBST_LIBS) $(MHD_LIBS) -ljson-c -lm -pthread
