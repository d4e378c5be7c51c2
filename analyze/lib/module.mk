# libanalyze: the analysis engine (correlator, spans, quantile sketches,
# reports, series, summaries, the input layer), analyze/lib/*.c, which
# st-analyze, st-format and st-replay link (no BPF dependency).
ANALYZE_SRCS := $(wildcard analyze/lib/*.c)
ANALYZE_OBJS := $(ANALYZE_SRCS:%.c=$(B)/%.o)
# An archive, so programs and unit tests pull in only what they use.
ANALYZE_LIB  := $(B)/analyze/libanalyze.a

$(ANALYZE_LIB): $(ANALYZE_OBJS)
	$(Q)$(ARCHIVE)

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
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LIBST_LIBS) -ljson-c -lm -pthread

$(ANALYZE_ASAN_LIB): $(ANALYZE_OBJS:$(B)/%=$(ASAN_B)/%)
	$(Q)$(ARCHIVE)

$(ANALYZE_ASAN_TESTS): $(ASAN_B)/tests/analyze/%: $(ASAN_B)/tests/analyze/%.o $(ANALYZE_ASAN_LIB) $(LIBCOMMON_ASAN) $(LIBST_ASAN)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LIBST_LIBS) -ljson-c -lm -pthread

# count-allocs.so: preloaded by t_alloc.sh, counts a program's allocation calls.
TEST_TOOLS += $(B)/tests/analyze/count-allocs.so

$(B)/tests/analyze/count-allocs.so: tests/analyze/count_allocs.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -fPIC -shared -o $@ $<
